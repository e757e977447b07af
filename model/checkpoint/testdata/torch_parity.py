"""Reference scores, loss and gradients from PyTorch for the Go model's parity tests.

Builds a small encoder-decoder from torch.nn.TransformerEncoderLayer and
TransformerDecoderLayer (batch_first, ReLU) with a tied embedding and sinusoidal
positions: post-norm without a final stack norm, or with "pre-norm" norm_first
layers and a final LayerNorm on each stack. It gives it random weights and writes
to OUT:

  model.safetensors  the weights (float32), under the names model.ImportTorch reads
  src.txt, tgt.txt   ragged token-id sequences, one per line (0 is padding;
                     target lines start with the start token 1)
  expected.txt       for each pair, sum over t >= 1 of log p(tgt[t] | tgt[<t], src)
  loss.txt           the label-smoothed (0.1) cross-entropy of the whole batch,
                     F.cross_entropy over the non-pad targets, in float64
  grads.safetensors  its gradient with respect to every weight (float64), under
                     the weights' names

Usage: python3 torch_parity.py OUT [seed] [pre-norm]
"""
import json
import math
import struct
import sys

import torch
import torch.nn.functional as F
from torch import nn

V, D, HEADS, DFF, LAYERS, PAIRS = 53, 32, 4, 64, 2, 12


class Model(nn.Module):
    def __init__(self, pre_norm):
        super().__init__()
        self.embed = nn.Embedding(V, D)
        enc = nn.TransformerEncoderLayer(D, HEADS, DFF, dropout=0.0, batch_first=True, norm_first=pre_norm)
        dec = nn.TransformerDecoderLayer(D, HEADS, DFF, dropout=0.0, batch_first=True, norm_first=pre_norm)
        enc_norm, dec_norm = (nn.LayerNorm(D), nn.LayerNorm(D)) if pre_norm else (None, None)
        self.encoder = nn.TransformerEncoder(enc, LAYERS, norm=enc_norm, enable_nested_tensor=False)
        self.decoder = nn.TransformerDecoder(dec, LAYERS, norm=dec_norm)

    def embed_positions(self, ids):
        n, dt = ids.shape[1], self.embed.weight.dtype
        pos = torch.arange(n, dtype=dt).unsqueeze(1)
        div = torch.pow(10000.0, torch.arange(0, D, 2, dtype=dt) / D)
        pe = torch.zeros(n, D, dtype=dt)
        pe[:, 0::2] = torch.sin(pos / div)
        pe[:, 1::2] = torch.cos(pos / div)
        return self.embed(ids) * math.sqrt(D) + pe

    def forward(self, src, tgt_in):
        return torch.log_softmax(self.logits(src, tgt_in), dim=-1)

    def logits(self, src, tgt_in):
        src_pad, tgt_pad = src == 0, tgt_in == 0
        n = tgt_in.shape[1]
        causal = torch.triu(torch.full((n, n), float("-inf"), dtype=self.embed.weight.dtype), diagonal=1)
        memory = self.encoder(self.embed_positions(src), src_key_padding_mask=src_pad)
        out = self.decoder(self.embed_positions(tgt_in), memory, tgt_mask=causal,
                           tgt_key_padding_mask=tgt_pad, memory_key_padding_mask=src_pad)
        return out @ self.embed.weight.T


def randomize(model, gen):
    for name, p in model.named_parameters():
        with torch.no_grad():
            if "norm" in name and name.endswith("weight"):
                p.copy_(1 + 0.2 * torch.randn(p.shape, generator=gen))
            elif name == "embed.weight":
                p.copy_(torch.randn(p.shape, generator=gen) / math.sqrt(D))
            elif name.endswith("bias"):
                p.copy_(0.1 * torch.randn(p.shape, generator=gen))
            else:
                bound = math.sqrt(6 / sum(p.shape[:2]))
                p.copy_((torch.rand(p.shape, generator=gen) * 2 - 1) * bound)


def save_safetensors(path, tensors, f64=False):
    header, offset, blobs = {}, 0, []
    for name in sorted(tensors):
        t = tensors[name].detach().contiguous()
        data = (t.double() if f64 else t.float()).numpy().tobytes()
        header[name] = {"dtype": "F64" if f64 else "F32", "shape": list(tensors[name].shape),
                        "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
        blobs.append(data)
    head = json.dumps(header).encode()
    head += b" " * (-len(head) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(head)))
        f.write(head)
        for b in blobs:
            f.write(b)


def main():
    out = sys.argv[1]
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    pre_norm = len(sys.argv) > 3 and sys.argv[3] == "pre-norm"
    gen = torch.Generator().manual_seed(seed)
    model = Model(pre_norm).eval()
    randomize(model, gen)
    save_safetensors(f"{out}/model.safetensors", dict(model.named_parameters()))

    srcs, tgts = [], []
    for _ in range(PAIRS):
        ls = int(torch.randint(1, 11, (1,), generator=gen))
        lt = int(torch.randint(1, 10, (1,), generator=gen))
        srcs.append(torch.randint(4, V, (ls,), generator=gen).tolist())
        tgts.append([1] + torch.randint(4, V, (lt,), generator=gen).tolist())
    ms, mt = max(map(len, srcs)), max(map(len, tgts))
    src = torch.tensor([s + [0] * (ms - len(s)) for s in srcs])
    tgt = torch.tensor([t + [0] * (mt - len(t)) for t in tgts])
    with torch.no_grad():
        logp = model(src, tgt[:, :-1])
    gold = logp.gather(2, tgt[:, 1:].unsqueeze(2)).squeeze(2)
    scores = (gold * (tgt[:, 1:] != 0)).sum(1)

    with open(f"{out}/src.txt", "w") as f:
        f.writelines(" ".join(map(str, s)) + "\n" for s in srcs)
    with open(f"{out}/tgt.txt", "w") as f:
        f.writelines(" ".join(map(str, t)) + "\n" for t in tgts)
    with open(f"{out}/expected.txt", "w") as f:
        f.writelines(f"{v:.9g}\n" for v in scores.tolist())

    # The training loss and its gradients, in float64 from the same float32 weights.
    model = model.double().train()
    logits = model.logits(src, tgt[:, :-1])
    loss = F.cross_entropy(logits.reshape(-1, V), tgt[:, 1:].reshape(-1), ignore_index=0, label_smoothing=0.1)
    loss.backward()
    with open(f"{out}/loss.txt", "w") as f:
        f.write(f"{loss.item():.17g}\n")
    save_safetensors(f"{out}/grads.safetensors", {n: p.grad for n, p in model.named_parameters()}, f64=True)


if __name__ == "__main__":
    main()
