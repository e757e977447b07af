"""PyTorch's values for graph's TestMathMatchesTorch.

Reads a JSON list of cases from stdin, each {name, params: {name: {shape,
data}}, proj}; for each computes out = CASES[name](params) in float64 and
L = sum(out * proj), and prints a JSON list of {out, grads: {name: dL/dparam}}.
"""
import json
import sys

import torch
import torch.nn.functional as F


def layer_norm_from_parts(p):
    x = p["x"]
    c = x - x.mean(-1, keepdim=True)
    v = (c * c).mean(-1, keepdim=True)
    return c / torch.sqrt(v + 1e-5) * torch.sigmoid(p["g"])


CASES = {
    "add, b broadcast": lambda p: p["a"] + p["b"],
    "add, a broadcast": lambda p: p["a"] + p["b"],
    "add, both broadcast": lambda p: p["a"] + p["b"],
    "sub, both broadcast": lambda p: p["a"] - p["b"],
    "sub, equal": lambda p: p["a"] - p["b"],
    "mul, equal": lambda p: p["a"] * p["b"],
    "mul, both broadcast": lambda p: p["a"] * p["b"],
    "mul by a scalar": lambda p: p["a"] * -0.75,
    "div, b broadcast": lambda p: p["a"] / p["b"],
    "div, a broadcast": lambda p: p["a"] / p["b"],
    "exp": lambda p: torch.exp(p["x"]),
    "log": lambda p: torch.log(p["x"]),
    "sqrt": lambda p: torch.sqrt(p["x"]),
    "tanh": lambda p: torch.tanh(p["x"]),
    "sigmoid": lambda p: torch.sigmoid(p["x"]),
    "silu": lambda p: F.silu(p["x"]),
    "gelu": lambda p: F.gelu(p["x"]),
    "reshape": lambda p: p["x"].reshape(4, -1),
    "transpose": lambda p: p["x"].permute(2, 0, 1),
    "transpose, last axis kept": lambda p: p["x"].permute(1, 0, 2),
    "slice": lambda p: p["x"][:, 1:4],
    "slice, last axis": lambda p: p["x"][..., 3:6],
    "concat": lambda p: torch.cat([p["a"], p["b"]], 1),
    "concat, last axis": lambda p: torch.cat([p["a"], p["b"], p["c"]], -1),
    "sum": lambda p: p["x"].sum(1),
    "sum, kept": lambda p: p["x"].sum(-1, keepdim=True),
    "mean": lambda p: p["x"].mean(0),
    "max": lambda p: p["x"].max(1, keepdim=True).values,
    "max, last axis": lambda p: p["x"].max(-1).values,
    "batched matmul, matrix b": lambda p: p["a"] @ p["b"],
    "batched matmul, both broadcast": lambda p: p["a"] @ p["b"].transpose(-1, -2),
    "batched matmul, grouped heads": lambda p: p["q"] @ p["k"].transpose(-1, -2),
    "batched matmul, a transposed, broadcast": lambda p: p["a"].transpose(-1, -2) @ p["b"],
    "composition": layer_norm_from_parts,
}


def answer(case):
    params = {
        name: torch.tensor(t["data"], dtype=torch.float64).reshape(t["shape"]).requires_grad_()
        for name, t in case["params"].items()
    }
    out = CASES[case["name"]](params)
    proj = torch.tensor(case["proj"], dtype=torch.float64).reshape(out.shape)
    (out * proj).sum().backward()
    return {
        "out": out.detach().flatten().tolist(),
        "grads": {name: p.grad.flatten().tolist() for name, p in params.items()},
    }


json.dump([answer(c) for c in json.load(sys.stdin)], sys.stdout)
