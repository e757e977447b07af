"""PyTorch's definitions of the cases of graph's TestMathMatchesTorch, for
internal/torchtest/cases.py: CASES maps a case's name to a function of its
parameters (and an unused mask) giving the output.
"""
import torch
import torch.nn.functional as F


def layer_norm_from_parts(p, m):
    x = p["x"]
    c = x - x.mean(-1, keepdim=True)
    v = (c * c).mean(-1, keepdim=True)
    return c / torch.sqrt(v + 1e-5) * torch.sigmoid(p["g"])


CASES = {
    "add, b broadcast": lambda p, m: p["a"] + p["b"],
    "add, a broadcast": lambda p, m: p["a"] + p["b"],
    "add, both broadcast": lambda p, m: p["a"] + p["b"],
    "sub, both broadcast": lambda p, m: p["a"] - p["b"],
    "sub, equal": lambda p, m: p["a"] - p["b"],
    "mul, equal": lambda p, m: p["a"] * p["b"],
    "mul, both broadcast": lambda p, m: p["a"] * p["b"],
    "mul by a scalar": lambda p, m: p["a"] * -0.75,
    "div, b broadcast": lambda p, m: p["a"] / p["b"],
    "div, a broadcast": lambda p, m: p["a"] / p["b"],
    "exp": lambda p, m: torch.exp(p["x"]),
    "log": lambda p, m: torch.log(p["x"]),
    "sqrt": lambda p, m: torch.sqrt(p["x"]),
    "tanh": lambda p, m: torch.tanh(p["x"]),
    "sigmoid": lambda p, m: torch.sigmoid(p["x"]),
    "silu": lambda p, m: F.silu(p["x"]),
    "gelu": lambda p, m: F.gelu(p["x"]),
    "reshape": lambda p, m: p["x"].reshape(4, -1),
    "transpose": lambda p, m: p["x"].permute(2, 0, 1),
    "transpose, last axis kept": lambda p, m: p["x"].permute(1, 0, 2),
    "slice": lambda p, m: p["x"][:, 1:4],
    "slice, last axis": lambda p, m: p["x"][..., 3:6],
    "concat": lambda p, m: torch.cat([p["a"], p["b"]], 1),
    "concat, last axis": lambda p, m: torch.cat([p["a"], p["b"], p["c"]], -1),
    "sum": lambda p, m: p["x"].sum(1),
    "sum, kept": lambda p, m: p["x"].sum(-1, keepdim=True),
    "mean": lambda p, m: p["x"].mean(0),
    "max": lambda p, m: p["x"].max(1, keepdim=True).values,
    "max, last axis": lambda p, m: p["x"].max(-1).values,
    "batched matmul, matrix b": lambda p, m: p["a"] @ p["b"],
    "batched matmul, both broadcast": lambda p, m: p["a"] @ p["b"].transpose(-1, -2),
    "batched matmul, grouped heads": lambda p, m: p["q"] @ p["k"].transpose(-1, -2),
    "batched matmul, a transposed, broadcast": lambda p, m: p["a"].transpose(-1, -2) @ p["b"],
    "composition": layer_norm_from_parts,
}

