"""Reference scores from PyTorch for the Go model's parity test.

Builds a small encoder-decoder from torch.nn.TransformerEncoderLayer and
TransformerDecoderLayer (batch_first, post-norm, ReLU, no final stack norm) with a
tied embedding and sinusoidal positions, gives it random weights, and writes to
OUT:

  model.safetensors  the weights, under the names model.ImportTorch reads
  src.txt, tgt.txt   ragged token-id sequences, one per line (0 is padding;
                     target lines start with the start token 1)
  expected.txt       for each pair, sum over t >= 1 of log p(tgt[t] | tgt[<t], src)

Usage: python3 torch_parity.py OUT [seed]
"""
import json
import math
import struct
import sys

import torch
from torch import nn

V, D, HEADS, DFF, LAYERS, PAIRS = 53, 32, 4, 64, 2, 12


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(V, D)
        enc = nn.TransformerEncoderLayer(D, HEADS, DFF, dropout=0.0, batch_first=True)
        dec = nn.TransformerDecoderLayer(D, HEADS, DFF, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(enc, LAYERS, enable_nested_tensor=False)
        self.decoder = nn.TransformerDecoder(dec, LAYERS)

    def embed_positions(self, ids):
        n = ids.shape[1]
        pos = torch.arange(n, dtype=torch.float32).unsqueeze(1)
        div = torch.pow(10000.0, torch.arange(0, D, 2, dtype=torch.float32) / D)
        pe = torch.zeros(n, D)
        pe[:, 0::2] = torch.sin(pos / div)
        pe[:, 1::2] = torch.cos(pos / div)
        return self.embed(ids) * math.sqrt(D) + pe

    def forward(self, src, tgt_in):
        src_pad, tgt_pad = src == 0, tgt_in == 0
        n = tgt_in.shape[1]
        causal = torch.triu(torch.full((n, n), float("-inf")), diagonal=1)
        memory = self.encoder(self.embed_positions(src), src_key_padding_mask=src_pad)
        out = self.decoder(self.embed_positions(tgt_in), memory, tgt_mask=causal,
                           tgt_key_padding_mask=tgt_pad, memory_key_padding_mask=src_pad)
        return torch.log_softmax(out @ self.embed.weight.T, dim=-1)


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


def save_safetensors(path, tensors):
    header, offset, blobs = {}, 0, []
    for name in sorted(tensors):
        data = tensors[name].detach().contiguous().float().numpy().tobytes()
        header[name] = {"dtype": "F32", "shape": list(tensors[name].shape),
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
    gen = torch.Generator().manual_seed(seed)
    model = Model().eval()
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


if __name__ == "__main__":
    main()
