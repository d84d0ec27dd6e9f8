"""``python -m graphgrad.onnx MODULE:FACTORY --input-shape 1,40,51 [-o model.onnx]``.

Builds the model with ``FACTORY()`` (a callable in an importable module), exports it in eval
mode on a zero input of that shape (float32) with a dynamic batch axis, and prints the audit;
``--audit-only`` writes nothing. The exit status is 1 when the audit finds errors.
"""

from __future__ import annotations

import argparse
import importlib
import sys


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m graphgrad.onnx", description=__doc__)
    ap.add_argument("factory", help="MODULE:CALLABLE returning the model")
    ap.add_argument("--input-shape", required=True, help="comma-separated, batch first")
    ap.add_argument("-o", "--output", default="model.onnx")
    ap.add_argument("--opset", type=int, default=None)
    ap.add_argument("--static-batch", action="store_true", help="no dynamic batch axis")
    ap.add_argument("--audit-only", action="store_true")
    args = ap.parse_args(argv)

    import graphgrad as torch
    from graphgrad import onnx as gx

    module, _, name = args.factory.partition(":")
    model = getattr(importlib.import_module(module), name or "model")()
    model.eval()
    x = torch.zeros(*[int(s) for s in args.input_shape.split(",")])
    axes = None if args.static_batch else {"input": {0: "batch"}, "output": {0: "batch"}}
    if args.audit_only:
        report = gx.audit(model, (x,), input_names=["input"], output_names=["output"],
                          dynamic_axes=axes, opset_version=args.opset)
    else:
        try:
            report = gx.export(model, (x,), args.output, input_names=["input"],
                               output_names=["output"], dynamic_axes=axes,
                               opset_version=args.opset)
        except gx.ExportError as err:
            print(err, file=sys.stderr)
            return 1
        print(f"wrote {args.output}")
    print(report)
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
