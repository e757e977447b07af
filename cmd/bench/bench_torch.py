"""PyTorch timings for cmd/bench: the same model sizes, batches and decoding as the Go side.

Timed as carefully as the Go side: `warmup` untimed runs, then the median of `runs` timed ones;
the training step uses the fused F.cross_entropy with label smoothing 0.1 and
zero_grad(set_to_none=True); decoding keeps a key/value cache per layer, as the Go decoder does.
Prints one JSON object with the measurement and the process's peak RSS.

With precision bf16 everything runs under torch.autocast(device, dtype=torch.bfloat16) (the backward pass
outside it, as PyTorch recommends). On the CPU, torch 1.13's fused attention fast path fails under autocast
("expected scalar type BFloat16 but found Float"), so passes without a backward (the forward row, the
decoder's encoder pass) run with autograd enabled, which sends the modules down their generic path; the
forward row then records a backward graph it never runs. On cuda, every timed run ends with
torch.cuda.synchronize(), and TF32 is off, as on the Go side.

Usage:
  python3 bench_torch.py train  precision device d_model heads d_ff layers vocab warmup runs batch len
  python3 bench_torch.py decode precision device d_model heads d_ff layers vocab warmup runs method batch src_len max_len
(precision: float32 or bf16; device: cpu or cuda; method: greedy or beam4)
"""
import contextlib
import json
import math
import resource
import statistics
import sys
import time

import torch
import torch.nn.functional as F
from torch import nn

PAD, BOS, EOS = 0, 1, 2
BF16 = False  # set by main from the precision argument
DEVICE = "cpu"  # set by main from the device argument


def autocast():
    """torch.autocast to bfloat16 with precision bf16, else nothing."""
    return torch.autocast(DEVICE, dtype=torch.bfloat16) if BF16 else contextlib.nullcontext()


def inference():
    """No autograd, except under autocast on the CPU, where only autograd avoids the fast path that fails."""
    return torch.enable_grad() if BF16 and DEVICE == "cpu" else torch.no_grad()


def sync():
    """Wait for the device to finish what it was given."""
    if DEVICE == "cuda":
        torch.cuda.synchronize()


def sinusoids(n, d):
    pos = torch.arange(n, dtype=torch.float32)[:, None]
    div = torch.exp(torch.arange(0, d, 2, dtype=torch.float32) * (-math.log(10000.0) / d))
    pe = torch.zeros(n, d)
    pe[:, 0::2], pe[:, 1::2] = torch.sin(pos * div), torch.cos(pos * div)
    return pe


class Model(nn.Module):
    """The paper's encoder-decoder: post-norm, ReLU, shared embedding and output projection."""

    def __init__(self, d, heads, dff, layers, vocab, dropout):
        super().__init__()
        self.d, self.heads = d, heads
        self.embed = nn.Embedding(vocab, d)
        self.transformer = nn.Transformer(d, heads, layers, layers, dff, dropout=dropout, batch_first=True)
        self.register_buffer("pe", sinusoids(1024, d))

    def embed_at(self, ids, start=0):
        return self.embed(ids) * math.sqrt(self.d) + self.pe[start:start + ids.shape[1]]

    def logits(self, src, tgt):
        n = tgt.shape[1]
        causal = torch.triu(torch.full((n, n), float("-inf"), device=DEVICE), diagonal=1)
        out = self.transformer(self.embed_at(src), self.embed_at(tgt), tgt_mask=causal)
        return out @ self.embed.weight.T


def median_seconds(fn, warmup, runs):
    for _ in range(warmup):
        fn()
    sync()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def bench_train(model, vocab, warmup, runs, batch, length):
    opt = torch.optim.Adam(model.parameters(), lr=1e-4, betas=(0.9, 0.98), eps=1e-9)
    g = torch.Generator().manual_seed(1)
    src, tgt, gold = (torch.randint(4, vocab, (batch, length), generator=g).to(DEVICE) for _ in range(3))

    def train():
        model.train()
        opt.zero_grad(set_to_none=True)
        with autocast():
            loss = F.cross_entropy(model.logits(src, tgt).reshape(-1, vocab), gold.reshape(-1), label_smoothing=0.1)
        loss.backward()
        opt.step()

    def forward():
        model.eval()
        with inference(), autocast():
            F.cross_entropy(model.logits(src, tgt).reshape(-1, vocab), gold.reshape(-1), label_smoothing=0.1)

    tokens = batch * length
    return {"train_tokens_per_s": tokens / median_seconds(train, warmup, runs),
            "forward_tokens_per_s": tokens / median_seconds(forward, warmup, runs)}


class CachedDecoder:
    """Incremental decoding with the model's weights: one position per step against per-layer caches of the
    earlier positions' self-attention keys and values, and the memory's cross-attention keys and values
    computed once."""

    def __init__(self, model, src):
        self.m, self.h = model, model.heads
        self.layers = model.transformer.decoder.layers
        with inference(), autocast():
            memory = model.transformer.encoder(model.embed_at(src)).detach()
        d = model.d
        self.mem_kv = []
        for layer in self.layers:
            w, b = layer.multihead_attn.in_proj_weight, layer.multihead_attn.in_proj_bias
            k, v = F.linear(memory, w[d:], b[d:]).chunk(2, dim=-1)
            self.mem_kv.append((self.split(k), self.split(v)))
        self.cache = [None] * len(self.layers)
        self.t = 0

    def split(self, x):  # [rows, n, d] -> [rows, heads, n, d/heads]
        rows, n, d = x.shape
        return x.view(rows, n, self.h, d // self.h).transpose(1, 2)

    def attend(self, q, k, v, proj):
        a = F.scaled_dot_product_attention(q, k, v) if hasattr(F, "scaled_dot_product_attention") else \
            torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1]), dim=-1) @ v
        rows = a.shape[0]
        return proj(a.transpose(1, 2).reshape(rows, 1, -1))

    def repeat(self, k):
        """Repeat every source's memory k times (for beam search)."""
        self.mem_kv = [(mk.repeat_interleave(k, 0), mv.repeat_interleave(k, 0)) for mk, mv in self.mem_kv]

    def reorder(self, rows):
        self.cache = [(k.index_select(0, rows), v.index_select(0, rows)) for k, v in self.cache]

    def step(self, tokens):
        """Log-probabilities [rows, vocab] of the next token after tokens [rows]."""
        m, d = self.m, self.m.d
        x = m.embed_at(tokens[:, None], self.t)
        for i, layer in enumerate(self.layers):
            sa = layer.self_attn
            q, k, v = F.linear(x, sa.in_proj_weight, sa.in_proj_bias).chunk(3, dim=-1)
            k, v = self.split(k), self.split(v)
            if self.cache[i] is not None:
                k, v = torch.cat([self.cache[i][0], k], 2), torch.cat([self.cache[i][1], v], 2)
            self.cache[i] = (k, v)
            x = layer.norm1(x + self.attend(self.split(q), k, v, sa.out_proj))
            ca = layer.multihead_attn
            q = F.linear(x, ca.in_proj_weight[:d], ca.in_proj_bias[:d])
            x = layer.norm2(x + self.attend(self.split(q), *self.mem_kv[i], ca.out_proj))
            x = layer.norm3(x + layer.linear2(F.relu(layer.linear1(x))))
        x = m.transformer.decoder.norm(x)
        self.t += 1
        return torch.log_softmax(x[:, 0] @ m.embed.weight.T, dim=-1)


def greedy(model, src, max_len):
    dec = CachedDecoder(model, src)
    rows = src.shape[0]
    tokens, done, produced = torch.full((rows,), BOS, device=DEVICE), torch.zeros(rows, dtype=torch.bool, device=DEVICE), 0
    for _ in range(max_len):
        lp = dec.step(tokens)
        lp[:, PAD], lp[:, BOS] = float("-inf"), float("-inf")
        tokens = lp.argmax(-1)
        produced += int((~done).sum())
        done |= tokens == EOS
        if done.all():
            break
    return produced


def beam4(model, src, max_len, k=4, alpha=0.6):
    dec = CachedDecoder(model, src)
    dec.repeat(k)
    n = src.shape[0]
    scores = torch.full((n, k), float("-inf"), device=DEVICE)
    scores[:, 0] = 0
    tokens, lengths = torch.full((n * k,), BOS, device=DEVICE), torch.zeros(n, k, dtype=torch.long, device=DEVICE)
    finished = [[] for _ in range(n)]
    for t in range(max_len):
        lp = dec.step(tokens)
        lp[:, PAD], lp[:, BOS] = float("-inf"), float("-inf")
        vocab = lp.shape[1]
        cand = (scores.view(-1, 1) + lp).view(n, k * vocab)
        top, idx = cand.topk(k, dim=1)
        parent, tok = idx // vocab, idx % vocab
        rows = (parent + torch.arange(n, device=DEVICE)[:, None] * k).view(-1)
        lengths = lengths.gather(1, parent) + 1
        ended = tok == EOS
        for i, j in ended.nonzero().tolist():
            if len(finished[i]) < k:
                finished[i].append((top[i, j].item() / ((5 + lengths[i, j].item()) / 6) ** alpha, lengths[i, j].item()))
        scores = top.masked_fill(ended, float("-inf"))
        if all(len(f) >= k for f in finished) or torch.isinf(scores).all():
            break
        dec.reorder(rows)
        tokens = tok.view(-1)
    produced = 0
    for i in range(n):
        if finished[i]:
            produced += max(finished[i])[1]
        else:
            produced += int(lengths[i].max())
    return produced


def bench_decode(model, vocab, warmup, runs, method, batch, src_len, max_len):
    g = torch.Generator().manual_seed(3)
    src = torch.randint(4, vocab, (batch, src_len), generator=g)
    src[:, -1] = EOS
    src = src.to(DEVICE)
    decode = greedy if method == "greedy" else beam4
    model.eval()
    with torch.no_grad():  # as the Go side: outputs never end, all run to max_len
        model.embed.weight[EOS] = 0
    produced = []

    def run():
        with torch.no_grad(), autocast():
            produced.append(decode(model, src, max_len))

    seconds = median_seconds(run, warmup, runs)
    return {"decode_tokens_per_s": statistics.median(produced) / seconds}


def main():
    global BF16, DEVICE
    mode, precision, DEVICE = sys.argv[1:4]
    if precision not in ("float32", "bf16"):
        sys.exit(f"precision {precision!r}: want float32 or bf16")
    if DEVICE not in ("cpu", "cuda"):
        sys.exit(f"device {DEVICE!r}: want cpu or cuda")
    BF16 = precision == "bf16"
    if DEVICE == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = False
    d, heads, dff, layers, vocab, warmup, runs = map(int, sys.argv[4:11])
    torch.manual_seed(0)
    if mode == "train":
        batch, length = int(sys.argv[11]), int(sys.argv[12])
        model = Model(d, heads, dff, layers, vocab, 0.1).to(DEVICE)
        out = bench_train(model, vocab, warmup, runs, batch, length)
    else:
        method, batch, src_len, max_len = sys.argv[11], int(sys.argv[12]), int(sys.argv[13]), int(sys.argv[14])
        model = Model(d, heads, dff, layers, vocab, 0.0).to(DEVICE)
        out = bench_decode(model, vocab, warmup, runs, method, batch, src_len, max_len)
    out["threads"] = torch.get_num_threads()
    out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(out))


if __name__ == "__main__":
    main()
