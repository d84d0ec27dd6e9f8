"""repr of sparse tensors, as torch 2.13 prints them (indices and values as nested tensors)."""

from __future__ import annotations

from .. import _tensor_str as S
from ..ops.tensor_extras import sparse_coo

__all__ = ["sparse_repr"]

_INDENT = len("tensor(")


def _part(prefix, arr):
    """``prefix`` + the tensor body of ``arr``, indented as torch nests it."""
    if arr.size == 0:
        return f"{prefix}[], size={tuple(arr.shape)})"
    return prefix + S._body_str(arr, _INDENT + len(prefix)) + ")"


def _suffixes(text, suffixes, force_newline):
    parts = [text]
    last = len(text) - text.rfind("\n") + 1  # torch's measure (see _tensor_str._add_suffixes)
    width = S._OPTS.linewidth
    for suffix in suffixes:
        if force_newline or last + len(suffix) + 2 > width:
            parts.append(",\n" + " " * _INDENT + suffix)
            last = _INDENT + len(suffix)
            force_newline = False
        else:
            parts.append(", " + suffix)
            last += len(suffix) + 2
    parts.append(")")
    return "".join(parts)


def sparse_repr(t) -> str:
    vals = t._svals._data
    pad = ",\n" + " " * _INDENT
    if t._slayout is sparse_coo:
        body = _part("indices=tensor(", t._sidx) + pad + _part("values=tensor(", vals)
    else:
        body = (_part("crow_indices=tensor(", t._scrow) + pad
                + _part("col_indices=tensor(", t._sidx[1]) + pad + _part("values=tensor(", vals))
    suffixes = [f"size={tuple(t._ssize)}", f"nnz={t._sidx.shape[1]}"]
    name = vals.dtype.name
    default = S._default_dtype_name()
    implied = S._IMPLIED_DTYPES if default == S._DEFAULT_DTYPE else (default, "int64", "bool",
                                                                       "complex128")
    if name not in implied:
        suffixes.append(f"dtype=torch.{name}")
    suffixes.append(f"layout={t._slayout}")
    fn = t.grad_fn
    if fn is not None:
        suffixes.append(f"grad_fn=<{type(fn).__name__}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    return _suffixes("tensor(" + body, suffixes, t._slayout is sparse_coo)
