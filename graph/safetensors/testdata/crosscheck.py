"""Cross-checks the Go safetensors package against PyTorch.

Usage: crosscheck.py write PATH   writes tensors to PATH and prints them
       crosscheck.py read PATH    reads PATH and prints its tensors

Both modes print a JSON report: the implementation used, the metadata, and
for each tensor its dtype, shape, raw bytes and (for float types) its values
as little-endian float64, both in hex. The reference `safetensors` package
does the file handling when it is installed; otherwise a minimal reader and
writer of the format below does, and torch still decides the element bytes.
"""

import json
import struct
import sys

import torch

DTYPES = {
    torch.float64: "F64",
    torch.float32: "F32",
    torch.float16: "F16",
    torch.bfloat16: "BF16",
    torch.int64: "I64",
    torch.int32: "I32",
    torch.int16: "I16",
    torch.int8: "I8",
    torch.uint8: "U8",
    torch.bool: "BOOL",
}
TORCH_DTYPES = {name: dtype for dtype, name in DTYPES.items()}

try:
    from safetensors import safe_open
    from safetensors.torch import load_file, save_file

    IMPL = "safetensors"
except ImportError:
    IMPL = "minimal"


def minimal_save(tensors, path, metadata):
    header = {"__metadata__": metadata}
    chunks, offset = [], 0
    for name in sorted(tensors):
        data = raw_bytes(tensors[name])
        header[name] = {
            "dtype": DTYPES[tensors[name].dtype],
            "shape": list(tensors[name].shape),
            "data_offsets": [offset, offset + len(data)],
        }
        chunks.append(data)
        offset += len(data)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(chunks))


def minimal_load(path):
    with open(path, "rb") as f:
        data = f.read()
    (size,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + size])
    buf = data[8 + size :]
    metadata = header.pop("__metadata__", None)
    tensors = {}
    for name, info in header.items():
        begin, end = info["data_offsets"]
        dtype = TORCH_DTYPES[info["dtype"]]
        if begin == end:
            tensors[name] = torch.empty(info["shape"], dtype=dtype)
        else:
            flat = torch.frombuffer(bytearray(buf[begin:end]), dtype=dtype)
            tensors[name] = flat.reshape(info["shape"])
    return tensors, metadata


def raw_bytes(t):
    return t.contiguous().reshape(-1).view(torch.uint8).numpy().tobytes()


def describe(tensors, metadata):
    out = {}
    for name, t in tensors.items():
        d = {"dtype": DTYPES[t.dtype], "shape": list(t.shape), "raw": raw_bytes(t).hex()}
        if t.is_floating_point():
            d["float64"] = t.to(torch.float64).reshape(-1).numpy().tobytes().hex()
        out[name] = d
    return {"impl": IMPL, "metadata": metadata, "tensors": out}


def sample():
    inf = float("inf")
    return {
        "f32": (torch.arange(6, dtype=torch.float32) / 3).reshape(2, 3),
        "f64": torch.tensor([[0.1, -2.5e300], [inf, -0.0]], dtype=torch.float64),
        "f16": torch.tensor([1, -0.0, 65504, 6e-8, 1 / 3, inf, -inf], dtype=torch.float16),
        "bf16": torch.tensor([1.5, 3e38, 1e-40, -7.25, 1 / 3], dtype=torch.bfloat16),
        "i64": torch.tensor([-1, 2**62, 3], dtype=torch.int64),
        "i32": torch.tensor([[1, -2], [3, 2**31 - 1]], dtype=torch.int32),
        "u8": torch.tensor([1, 2, 255], dtype=torch.uint8),
        "bool": torch.tensor([True, False, True]),
        "scalar": torch.tensor(2.5, dtype=torch.float32),
        "empty": torch.zeros((0, 4), dtype=torch.float32),
    }


def write(path):
    tensors = sample()
    metadata = {"format": "pt", "note": "written by torch"}
    if IMPL == "safetensors":
        save_file(tensors, path, metadata=metadata)
    else:
        minimal_save(tensors, path, metadata)
    return describe(tensors, metadata)


def read(path):
    if IMPL == "safetensors":
        with safe_open(path, framework="pt") as f:
            metadata = f.metadata()
        return describe(load_file(path), metadata)
    return describe(*minimal_load(path))


def main():
    mode, path = sys.argv[1:3]
    report = write(path) if mode == "write" else read(path)
    json.dump(report, sys.stdout)


if __name__ == "__main__":
    main()
