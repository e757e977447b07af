"""Runs the cases of a torchtest reference script in PyTorch.

Usage: python3 cases.py SCRIPT < cases.json > answers.json

SCRIPT defines CASES, a dict from a case's name to a function of its
parameters (float64 tensors that require gradients) and its mask (a bool
tensor, True where a key is hidden, or None) returning the output. For each
case {name, params: {name: {shape, data}}, mask, proj} this prints
{out, grads: {name: dL/dparam}} with L = sum(out * proj).
"""
import json
import runpy
import sys

import torch


def tensor(t):
    return torch.tensor(t["data"], dtype=torch.float64).reshape(t["shape"])


def answer(cases, case):
    params = {name: tensor(t).requires_grad_() for name, t in case["params"].items()}
    mask = tensor(case["mask"]) > 0 if case["mask"] else None
    out = cases[case["name"]](params, mask)
    proj = torch.tensor(case["proj"], dtype=torch.float64).reshape(out.shape)
    (out * proj).sum().backward()
    return {
        "out": out.detach().flatten().tolist(),
        "grads": {name: p.grad.flatten().tolist() for name, p in params.items()},
    }


CASES = runpy.run_path(sys.argv[1])["CASES"]
json.dump([answer(CASES, c) for c in json.load(sys.stdin)], sys.stdout)
