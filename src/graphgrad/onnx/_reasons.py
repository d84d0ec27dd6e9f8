"""Why some ops of the table have no ONNX mapping (the coverage test reads this table).

Each reason says what is missing in ONNX (or in a fixed graph) and, where one exists, how the
op decomposes, so a user knows what to change in the model.
"""

from __future__ import annotations

_BACKWARD = ("appears only in backward graphs (it is the derivative of a forward op); export "
             "writes inference graphs of the forward pass")
_RANDOM = ("draws from graphgrad's generator; ONNX's RandomUniform/RandomNormal cannot "
           "reproduce those numbers, and an exported inference graph should be deterministic "
           "(export in eval mode; the audit lists random ops found in train mode)")
_LINALG = ("ONNX has no {what} operator (only Det); a model that needs it at inference can "
           "precompute it, or use onnxruntime's contrib ops outside the standard domain")
_DATA_SIZE = ("its output's size depends on the input values, which a graph with fixed "
              "shapes cannot express without NonZero/Unique-style data-dependent ops")

REASONS = {
    "copy_slices": ("an in-place write through a view into its base: the capture records the "
                    "write as a store, and an inference graph has no mutable tensors"),
    "as_strided": ("arbitrary strides over storage have no ONNX equivalent (ONNX tensors have "
                   "no storage); rewrite the model with reshape/slice/expand"),
    "uniform": _RANDOM, "normal": _RANDOM, "bernoulli": _RANDOM, "exponential": _RANDOM,
    "random": _RANDOM,
    "histc": ("with min == max the bin edges come from the data (a data-dependent range); "
              "with fixed edges it decomposes into Less+ReduceSum, not written yet"),
    "bincount": _DATA_SIZE,
    "unique": _DATA_SIZE,
    "scatter_add": ("an accumulating scatter with an index computed in Python; it maps to "
                    "ScatterElements(reduction='add') with a baked index, not written yet"),
    "scatter.reduce": ("an accumulating scatter; it maps to ScatterElements with a reduction "
                       "and a baked index, not written yet"),
    "scatter_reduce.two": ("an accumulating scatter; it maps to ScatterElements with a "
                           "reduction and a baked index, not written yet"),
    "index_add": ("an accumulating scatter; it maps to ScatterND(reduction='add') with a baked "
                  "index, not written yet"),
    "mode": ("the most frequent value needs a per-row histogram of the values (data-dependent "
             "counts); no ONNX operator computes it"),
    "linalg_slogdet": _LINALG.format(what="sign/log-determinant"),
    "linalg_inv_ex": _LINALG.format(what="matrix inverse"),
    "linalg_solve": _LINALG.format(what="linear solve"),
    "linalg_solve_triangular": _LINALG.format(what="triangular solve"),
    "linalg_pinv": _LINALG.format(what="pseudo-inverse (SVD)"),
    "linalg_cholesky_ex": _LINALG.format(what="Cholesky"),
    "linalg_qr": _LINALG.format(what="QR"),
    "linalg_svd": _LINALG.format(what="SVD"),
    "linalg_eigh": _LINALG.format(what="eigendecomposition"),
}
for _name in ("index_put_backward", "index_backward", "pad_backward", "convolution_weight",
              "max_pool_scatter", "avg_pool2d_backward", "adaptive_avg_pool2d_backward",
              "upsample_nearest1d_backward", "upsample_nearest2d_backward",
              "upsample_nearest3d_backward", "upsample_nearest_exact1d_backward",
              "upsample_nearest_exact2d_backward", "upsample_nearest_exact3d_backward",
              "upsample_linear1d_backward", "upsample_bilinear2d_backward",
              "upsample_trilinear3d_backward", "upsample_bicubic2d_backward",
              "_upsample_bilinear2d_aa_backward", "_upsample_bicubic2d_aa_backward"):
    REASONS[_name] = _BACKWARD
