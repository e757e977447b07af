"""PyTorch timings for cmd/bench: the same model sizes and batches as the Go benchmarks.

Prints one JSON object per line: {"preset", "vocab", "train_tokens_per_s", "forward_tokens_per_s"}.
Usage: python3 bench_torch.py d_model heads d_ff layers vocab preset steps
"""
import json
import math
import sys
import time

import torch
from torch import nn


class Model(nn.Module):
    def __init__(self, d, heads, dff, layers, vocab):
        super().__init__()
        self.d = d
        self.embed = nn.Embedding(vocab, d)
        self.transformer = nn.Transformer(d, heads, layers, layers, dff, dropout=0.1, batch_first=True)

    def forward(self, src, tgt):
        n = tgt.shape[1]
        causal = torch.triu(torch.full((n, n), float("-inf")), diagonal=1)
        x = self.embed(src) * math.sqrt(self.d)
        y = self.embed(tgt) * math.sqrt(self.d)
        out = self.transformer(x, y, tgt_mask=causal)
        return torch.log_softmax(out @ self.embed.weight.T, dim=-1)


def timed(fn, steps):
    fn()
    start = time.perf_counter()
    for _ in range(steps):
        fn()
    return (time.perf_counter() - start) / steps


def main():
    d, heads, dff, layers, vocab = map(int, sys.argv[1:6])
    preset, steps = sys.argv[6], int(sys.argv[7])
    torch.manual_seed(0)
    model = Model(d, heads, dff, layers, vocab)
    opt = torch.optim.Adam(model.parameters(), lr=1e-4, betas=(0.9, 0.98), eps=1e-9)
    loss_fn = nn.NLLLoss()
    src = torch.randint(4, vocab, (32, 32))
    tgt = torch.randint(4, vocab, (32, 32))
    gold = torch.randint(4, vocab, (32, 32))

    def train():
        model.train()
        opt.zero_grad()
        loss = loss_fn(model(src, tgt).reshape(-1, vocab), gold.reshape(-1))
        loss.backward()
        opt.step()

    def forward():
        model.eval()
        with torch.no_grad():
            model(src, tgt)

    tokens = 32 * 32
    print(json.dumps({"preset": preset, "vocab": vocab, "threads": torch.get_num_threads(),
                      "train_tokens_per_s": tokens / timed(train, steps),
                      "forward_tokens_per_s": tokens / timed(forward, steps)}))


if __name__ == "__main__":
    main()
