"""A PyTorch replica of cmd/train's Multi30k recipe, to rank changes to it quickly on a GPU.

The model is model/'s: post-norm, ReLU, a tied embedding scaled by sqrt(d), sinusoids, residual and
embedding dropout, optional attention dropout, Xavier-uniform weights, an N(0, 1/d) embedding. Training is
cmd/train's: Adam (0.9, 0.98, 1e-9; AdamW's decoupled decay with wd), the paper's schedule, the
label-smoothed loss over non-pad targets, batches of at most max_tokens padded positions in length buckets
of 8, under torch.autocast to bfloat16 on a GPU. A checkpoint every `every` updates; the last N of them
averaged for each N of `average`; beam 4 with GNMT's length penalty at each α of `alphas` on the whole
validation set, scored by sacreBLEU. It is not bit-exact with cmd/train (other batches, other random
draws): it ranks changes, and a change it ranks high is then run with cmd/train.

Settings (JSON, defaults the README's command): d 256, heads 8, dff 1024, enc 3, dec 3, dropout 0.1,
attn_dropout 0, ls 0.1, lr 1 (cmd/train's -lr-factor), warmup 1000, max_tokens 2048, epochs 16,
bpe 8000 (DATA/bpe8000 from scripts/sweep/ids), seed 1, wd 0, average [5, 10], alphas [1.0, 1.6],
every 200; max_steps and val_n (0: all) shorten a smoke test.

Usage: python3 sweep.py DATA OUT NAME JSON   (prints, and writes to OUT/NAME.json, one line of results)
"""
import json
import math
import random
import sys
import time

import torch
import torch.nn.functional as F
from torch import nn

PAD, BOS, EOS = 0, 1, 2


def load(path):
    return [list(map(int, l.split())) for l in open(path)]


def sinusoids(n, d):
    pos = torch.arange(n, dtype=torch.float32)[:, None]
    div = torch.exp(torch.arange(0, d, 2, dtype=torch.float32) * (-math.log(10000.0) / d))
    pe = torch.zeros(n, d)
    pe[:, 0::2], pe[:, 1::2] = torch.sin(pos * div), torch.cos(pos * div)
    return pe


class Attention(nn.Module):
    def __init__(self, d, h, drop):
        super().__init__()
        self.h, self.drop = h, drop
        self.q, self.k, self.v, self.o = (nn.Linear(d, d) for _ in range(4))

    def forward(self, x, mem, mask):
        b, n, d = x.shape
        split = lambda t: t.view(b, -1, self.h, d // self.h).transpose(1, 2)
        q, k, v = split(self.q(x)), split(self.k(mem)), split(self.v(mem))
        p = self.drop if self.training else 0.0
        mask = mask.to(q.dtype)
        if hasattr(F, "scaled_dot_product_attention"):
            a = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=p)
        else:
            w = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1]) + mask, -1)
            a = F.dropout(w, p, self.training) @ v
        return self.o(a.transpose(1, 2).reshape(b, n, d))


class Layer(nn.Module):
    def __init__(self, d, h, dff, drop, adrop, cross):
        super().__init__()
        self.drop = drop
        self.self_attn = Attention(d, h, adrop)
        self.cross = Attention(d, h, adrop) if cross else None
        self.ff1, self.ff2 = nn.Linear(d, dff), nn.Linear(dff, d)
        self.norms = nn.ModuleList(nn.LayerNorm(d, eps=1e-5) for _ in range(3 if cross else 2))

    def forward(self, x, mask, mem=None, mem_mask=None):
        dr = lambda t: F.dropout(t, self.drop, self.training)
        x = self.norms[0](x + dr(self.self_attn(x, x, mask)))
        if self.cross is not None:
            x = self.norms[1](x + dr(self.cross(x, mem, mem_mask)))
        return self.norms[-1](x + dr(self.ff2(F.relu(self.ff1(x)))))


class Model(nn.Module):
    def __init__(self, c, vocab):
        super().__init__()
        d = self.d = c["d"]
        self.drop = c["dropout"]
        self.embed = nn.Embedding(vocab, d)
        self.enc = nn.ModuleList(Layer(d, c["heads"], c["dff"], c["dropout"], c["attn_dropout"], False) for _ in range(c["enc"]))
        self.dec = nn.ModuleList(Layer(d, c["heads"], c["dff"], c["dropout"], c["attn_dropout"], True) for _ in range(c["dec"]))
        self.register_buffer("pe", sinusoids(512, d))
        for name, p in self.named_parameters():
            if name == "embed.weight":
                nn.init.normal_(p, 0, d ** -0.5)
            elif p.dim() == 2:
                nn.init.xavier_uniform_(p)
            elif name.endswith("bias"):
                nn.init.zeros_(p)

    def embed_at(self, ids):
        return F.dropout(self.embed(ids) * math.sqrt(self.d) + self.pe[:ids.shape[1]], self.drop, self.training)

    def encode(self, src):
        pad = torch.zeros(src.shape, dtype=torch.float32, device=src.device).masked_fill(src == PAD, float("-inf"))
        mask = pad[:, None, None, :]
        x = self.embed_at(src)
        for l in self.enc:
            x = l(x, mask)
        return x, mask

    def decode(self, tgt, mem, mem_mask):
        n = tgt.shape[1]
        causal = torch.triu(torch.full((n, n), float("-inf"), device=tgt.device), diagonal=1)
        y = self.embed_at(tgt)
        for l in self.dec:
            y = l(y, causal, mem, mem_mask)
        return y @ self.embed.weight.T

    def forward(self, src, tgt):
        mem, mask = self.encode(src)
        return self.decode(tgt, mem, mask)


def batches(src, tgt, max_tokens, rng):
    buckets = {}
    for i, (s, t) in enumerate(zip(src, tgt)):
        n = (max(len(s), len(t)) + 8) // 8 * 8
        buckets.setdefault(n, []).append(i)
    out = []
    for n, idx in buckets.items():
        rng.shuffle(idx)
        rows = max(1, max_tokens // n)
        out += [idx[i:i + rows] for i in range(0, len(idx), rows)]
    rng.shuffle(out)
    return out


def tensors(idx, src, tgt, dev):
    S = max(len(src[i]) for i in idx) + 1
    T = max(len(tgt[i]) for i in idx) + 1
    s = torch.zeros(len(idx), S, dtype=torch.long)
    ti = torch.zeros(len(idx), T, dtype=torch.long)
    to = torch.zeros(len(idx), T, dtype=torch.long)
    for r, i in enumerate(idx):
        a, b = src[i], tgt[i]
        s[r, :len(a) + 1] = torch.tensor(a + [EOS])
        ti[r, :len(b) + 1] = torch.tensor([BOS] + b)
        to[r, :len(b) + 1] = torch.tensor(b + [EOS])
    return s.to(dev), ti.to(dev), to.to(dev)


@torch.no_grad()
def beam(model, src, k, alpha, dev, chunk=200):
    model.eval()
    order = sorted(range(len(src)), key=lambda i: len(src[i]))
    result = [None] * len(src)
    for c0 in range(0, len(order), chunk):
        ids = order[c0:c0 + chunk]
        n = len(ids)
        s, _, _ = tensors(ids, src, [[]] * len(src), dev)
        with torch.autocast(dev, dtype=torch.bfloat16, enabled=dev == "cuda"):
            mem, mask = model.encode(s)
        mem, mask = mem.repeat_interleave(k, 0), mask.repeat_interleave(k, 0)
        tokens = torch.full((n * k, 1), BOS, device=dev)
        scores = torch.full((n, k), float("-inf"), device=dev)
        scores[:, 0] = 0
        finished = [[] for _ in range(n)]
        for t in range(s.shape[1] + 50):
            with torch.autocast(dev, dtype=torch.bfloat16, enabled=dev == "cuda"):
                logits = model.decode(tokens, mem, mask)[:, -1]
            lp = torch.log_softmax(logits.float(), -1)
            lp[:, PAD] = lp[:, BOS] = float("-inf")
            V = lp.shape[1]
            cand = (scores[:, :, None] + lp.view(n, k, V)).view(n, k * V)
            top, idx = cand.topk(2 * k, dim=1)
            parent, tok = idx // V, idx % V
            ended = (tok == EOS) & torch.isfinite(top)
            lpen = ((5 + t + 1) / 6) ** alpha
            for i, j in (ended[:, :k]).nonzero().tolist():
                if len(finished[i]) < k:
                    seq = tokens[i * k + parent[i, j]].tolist()[1:]
                    finished[i].append((top[i, j].item() / lpen, seq))
            alive = top.masked_fill(tok == EOS, float("-inf"))
            a_top, a_pos = alive.topk(k, dim=1)
            par = parent.gather(1, a_pos)
            rows = (par + torch.arange(n, device=dev)[:, None] * k).view(-1)
            tokens = torch.cat([tokens[rows], tok.gather(1, a_pos).view(-1, 1)], 1)
            scores = a_top
            done = [len(f) >= k for f in finished]
            if all(done):
                break
            scores[torch.tensor(done, device=dev)] = float("-inf")
        for i in range(n):
            if finished[i]:
                result[ids[i]] = max(finished[i])[1]
            else:
                result[ids[i]] = tokens[i * k].tolist()[1:]
    return result


def detok(ids, vocab):
    out = ""
    for i in ids:
        tok = vocab[i]
        if tok.startswith("\u2581") and len(tok) > 1:
            out += " "
            tok = tok[1:]
        out += tok
    return out.lstrip(" ")


@torch.no_grad()
def val_loss(model, src, tgt, dev, ls):
    model.eval()
    tot, cnt = 0.0, 0
    order = sorted(range(len(src)), key=lambda i: len(src[i]))
    for c in range(0, len(order), 100):
        s, ti, to = tensors(order[c:c + 100], src, tgt, dev)
        logits = model(s, ti).float()
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), to.reshape(-1), ignore_index=PAD, reduction="sum", label_smoothing=ls)
        tot += loss.item()
        cnt += int((to != PAD).sum())
    return tot / cnt


def train(model, c, src, tgt, vocab, dev):
    """Trains model by c's recipe; returns the last checkpoints (max of c["average"]), one every c["every"]
    updates, the number of updates and the last logged loss."""
    opt = torch.optim.AdamW(model.parameters(), lr=1.0, betas=(0.9, 0.98), eps=1e-9, weight_decay=c["wd"])
    rng = random.Random(c["seed"])
    step, kept, last = 0, [], None
    for _ in range(c["epochs"]):
        model.train()
        for idx in batches(src, tgt, c["max_tokens"], rng):
            step += 1
            lr = c["lr"] * c["d"] ** -0.5 * min(step ** -0.5, step * c["warmup"] ** -1.5)
            for g in opt.param_groups:
                g["lr"] = lr
            s, ti, to = tensors(idx, src, tgt, dev)
            with torch.autocast(dev, dtype=torch.bfloat16, enabled=dev == "cuda"):
                logits = model(s, ti)
            loss = F.cross_entropy(logits.float().reshape(-1, len(vocab)), to.reshape(-1), ignore_index=PAD, label_smoothing=c["ls"])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            if step % c["every"] == 0:
                kept = (kept + [{k: v.detach().clone() for k, v in model.state_dict().items()}])[-max(c["average"]):]
                last = (step, round(loss.item(), 4))
            if step == c["max_steps"]:
                return kept, step, last
    return kept, step, last


def bleu(hyps, refs):
    """sacreBLEU of hyps, or None (saying so) where sacrebleu is not installed."""
    try:
        import sacrebleu
    except ImportError:
        print("sweep.py: sacrebleu is not installed (pip install sacrebleu): BLEU not scored", file=sys.stderr)
        return None
    return round(sacrebleu.corpus_bleu(hyps, [refs]).score, 2)


def score(model, c, kept, vsrc, vtgt, refs, vocab, dev, out, name):
    """Validation loss and BLEU of the average of the last n checkpoints for each n of c["average"] (every α of
    c["alphas"] for the first n, the first α for the others); writes the translations to OUT."""
    res = {}
    for n in c["average"]:
        model.load_state_dict({k: sum(sd[k].float() for sd in kept[-n:]) / len(kept[-n:]) for k in kept[-1]})
        res[f"avg{n}_val_loss"] = round(val_loss(model, vsrc, vtgt, dev, c["ls"]), 4)
        for a in c["alphas"] if n == c["average"][0] else c["alphas"][:1]:
            hyps = [detok(h, vocab) for h in beam(model, vsrc, 4, a, dev)]
            res[f"avg{n}_a{a}"] = bleu(hyps, refs)
            with open(f"{out}/{name}.avg{n}.a{a}.en", "w", encoding="utf-8") as f:
                f.write("\n".join(hyps) + "\n")
    return res


def main():
    data, out, name, cfg = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
    c = dict(d=256, heads=8, dff=1024, enc=3, dec=3, dropout=0.1, attn_dropout=0.0, ls=0.1, lr=1.0, warmup=1000,
             max_tokens=2048, epochs=16, bpe=8000, seed=1, wd=0.0, average=[5, 10], alphas=[1.0, 1.6], every=200,
             max_steps=0, val_n=0)
    c.update(cfg)
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    torch.set_num_threads(1 if dev == "cuda" else 2)
    torch.manual_seed(c["seed"])
    d = f"{data}/bpe{c['bpe']}"
    src, tgt, vsrc, vtgt = load(f"{d}/train.src"), load(f"{d}/train.tgt"), load(f"{d}/val.src"), load(f"{d}/val.tgt")
    vocab = [l.rstrip("\n") for l in open(f"{d}/vocab.txt", encoding="utf-8")]
    refs = [l.rstrip("\n") for l in open(f"{data}/val.en", encoding="utf-8")]
    if c["val_n"]:
        vsrc, vtgt, refs = vsrc[:c["val_n"]], vtgt[:c["val_n"]], refs[:c["val_n"]]
    model = Model(c, len(vocab)).to(dev)
    start = time.time()
    kept, steps, last = train(model, c, src, tgt, vocab, dev)
    res = dict(name=name, cfg=cfg, steps=steps, train_s=round(time.time() - start, 1), final_train_loss=last)
    res.update(score(model, c, kept, vsrc, vtgt, refs, vocab, dev, out, name))
    res["total_s"] = round(time.time() - start, 1)
    print(json.dumps(res), flush=True)
    with open(f"{out}/{name}.json", "w") as f:
        json.dump(res, f)


if __name__ == "__main__":
    main()
