"""check.py runs ONNX's checker, with full_check (shape inference too), on
every ONNX model file named on its command line, for package onnxtest."""
import sys

import onnx

for path in sys.argv[1:]:
    onnx.checker.check_model(onnx.load(path), full_check=True)
    print(path, "ok")
