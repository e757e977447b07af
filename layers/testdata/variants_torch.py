"""PyTorch references for layers' TestVariantsMatchTorch, for
internal/torchtest/cases.py: rotary position embedding, the SwiGLU
feed-forward network, grouped-query attention and ALiBi, written from their papers
(and Hugging Face's LLaMA conventions) without reference to the Go code.
CASES maps a case's name to a function of its parameters and mask giving the
output.
"""
import math

import torch
import torch.nn.functional as F

D_MODEL, HEADS = 8, 4


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat([-x[..., half:], x[..., :half]], dim=-1)


def rope(x, positions, base=10000.0):
    """x: [..., len, d] rotated at positions [len] (pairs j, j + d/2)."""
    d = x.shape[-1]
    inv_freq = 1.0 / base ** (torch.arange(0, d, 2, dtype=torch.float64) / d)
    freqs = torch.outer(positions.to(torch.float64), inv_freq)
    emb = torch.cat([freqs, freqs], dim=-1)
    return x * emb.cos() + rotate_half(x) * emb.sin()


def linear(p, name, x):
    y = x @ p[name + ".weight"].T
    if name + ".bias" in p:
        y = y + p[name + ".bias"]
    return y


def alibi_slopes(n):
    """The head slopes of ALiBi (Press et al., 2022, and its code)."""
    def power_of_2(n):
        start = 2 ** (-(2 ** -(math.log2(n) - 3)))
        return [start * start ** i for i in range(n)]
    if math.log2(n).is_integer():
        return power_of_2(n)
    closest = 2 ** math.floor(math.log2(n))
    return power_of_2(closest) + alibi_slopes(2 * closest)[0::2][: n - closest]


def gqa(p, mask, kv_heads, rotary, query="x", key_value="x", alibi=False):
    q_in, kv_in = p[query], p[key_value]
    b, len_q, _ = q_in.shape
    len_k = kv_in.shape[1]
    dk = D_MODEL // HEADS
    q = linear(p, "q_proj", q_in).view(b, len_q, HEADS, dk).transpose(1, 2)
    k = linear(p, "k_proj", kv_in).view(b, len_k, kv_heads, dk).transpose(1, 2)
    v = linear(p, "v_proj", kv_in).view(b, len_k, kv_heads, dk).transpose(1, 2)
    if rotary:
        q = rope(q, torch.arange(len_q))
        k = rope(k, torch.arange(len_k))
    # Query head i reads key/value head i // (HEADS // kv_heads).
    k = k.repeat_interleave(HEADS // kv_heads, dim=1)
    v = v.repeat_interleave(HEADS // kv_heads, dim=1)
    scores = q @ k.transpose(-1, -2) / math.sqrt(dk)
    if alibi:
        # -m_h |i - j| for query i and key j
        distance = (torch.arange(len_q)[:, None] - torch.arange(len_k)[None, :]).abs().to(torch.float64)
        slopes = torch.tensor(alibi_slopes(HEADS), dtype=torch.float64)
        scores = scores - (slopes[:, None, None] * distance).to(scores.dtype)
    if mask is not None:
        scores = scores.masked_fill(mask, float("-inf"))
    heads = torch.softmax(scores, dim=-1) @ v
    return linear(p, "out_proj", heads.transpose(1, 2).reshape(b, len_q, D_MODEL))


CASES = {
    "rotary": lambda p, m: rope(p["x"], torch.arange(p["x"].shape[-2])),
    "rotary at positions, base 100": lambda p, m: rope(p["x"], torch.tensor([4, 0, 2]), base=100.0),
    "swiglu": lambda p, m: linear(p, "down_proj", F.silu(linear(p, "gate_proj", p["x"])) * linear(p, "up_proj", p["x"])),
    "grouped-query self-attention, causal, rotary": lambda p, m: gqa(p, m, 2, True),
    "multi-query cross-attention": lambda p, m: gqa(p, m, 1, False, query="y"),
    "multi-head as grouped-query, rotary, no bias": lambda p, m: gqa(p, m, 4, True),
    "alibi grouped-query self-attention, causal": lambda p, m: gqa(p, m, 2, False, alibi=True),
    "alibi multi-head self-attention, padding": lambda p, m: gqa(p, m, 4, False, alibi=True),
}

