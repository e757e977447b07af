"""Encodes and decodes texts with SentencePiece's Python binding
(python3-sentencepiece), for TestPythonBinding.

Reads from stdin a JSON object {"models": [path, ...], "texts": [hex, ...]}
(the texts as hex of their bytes, which need not be UTF-8) and writes a
JSON list, one entry a model, each a list with one entry a text:
{"pieces": [hex, ...], "ids": [int, ...], "decoded": hex}, the pieces and
ids of the text and the decoding of the ids."""
import json
import sys

import sentencepiece as spm


def main():
    req = json.load(sys.stdin)
    texts = [bytes.fromhex(t) for t in req["texts"]]
    out = []
    for path in req["models"]:
        sp = spm.SentencePieceProcessor(model_file=path)
        results = []
        for text in texts:
            pieces = sp.encode(text, out_type=str)
            ids = sp.encode(text)
            results.append({
                "pieces": [p.hex() for p in pieces],
                "ids": ids,
                "decoded": sp.decode(ids).encode().hex(),
            })
        out.append(results)
    json.dump(out, sys.stdout)


main()
