"""Text formatting of tensors, reproducing PyTorch's ``repr(tensor)`` byte for byte.

Only numpy and the standard library are used, so this module can be imported before the rest
of the package. ``format_tensor`` renders an ndarray plus the autograd facts torch shows.
"""

import dataclasses
import math

import numpy as np

_NUMPY_DTYPES = {
    "float16": np.float16,
    "float32": np.float32,
    "float64": np.float64,
    "int8": np.int8,
    "int16": np.int16,
    "int32": np.int32,
    "int64": np.int64,
    "uint8": np.uint8,
    "bool": np.bool_,
    "complex64": np.complex64,
    "complex128": np.complex128,
}
# torch leaves the dtype out of a non-empty tensor's repr when it can be inferred from the text.
_IMPLIED_DTYPES = ("float32", "int64", "bool", "complex64")
# The default dtype: the only one an empty tensor's repr leaves out.
_DEFAULT_DTYPE = "float32"


def _default_dtype_name() -> str:
    """``get_default_dtype()``'s short name: set_default_dtype changes what a repr leaves out."""
    from . import _dtype  # here, so that this module still imports before the package

    return _dtype.get_default_dtype().np.name


@dataclasses.dataclass
class _PrintOptions:
    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: bool | None = None


_OPTS = _PrintOptions()

_PROFILES = {
    "default": {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80},
    "short": {"precision": 2, "threshold": 1000, "edgeitems": 2, "linewidth": 80},
    "full": {"precision": 4, "threshold": math.inf, "edgeitems": 3, "linewidth": 80},
}


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None,
                     profile=None, sci_mode=None) -> None:
    """Set printing options; same semantics as ``torch.set_printoptions``."""
    # torch silently ignores an unknown profile name, so an unknown one is no error here either.
    for name, value in _PROFILES.get(profile, {}).items():
        setattr(_OPTS, name, value)
    for name, value in (("precision", precision), ("threshold", threshold),
                        ("edgeitems", edgeitems), ("linewidth", linewidth)):
        if value is not None:
            setattr(_OPTS, name, value)
    # Unlike the others, torch always assigns sci_mode, so omitting it resets it to automatic.
    _OPTS.sci_mode = sci_mode


def get_printoptions() -> dict:
    """Return the current options as a dict that can be passed back to ``set_printoptions``."""
    return dataclasses.asdict(_OPTS)


class _Formatter:
    """Chooses one notation and one column width for every element of a tensor."""

    def __init__(self, values: np.ndarray):
        self.floating = values.dtype.kind == "f"
        self.int_mode = True
        self.sci_mode = False
        self.width = 1
        if not self.floating:
            for value in set(values.tolist()):
                self.width = max(self.width, len(str(value)))
            return
        values = values.astype(np.float64)
        finite = values[np.isfinite(values) & (values != 0)]
        if finite.size == 0:
            # nan, inf and zero alone never widen the column.
            return
        magnitudes = np.abs(finite)
        smallest, largest = float(magnitudes.min()), float(magnitudes.max())
        self.int_mode = bool(np.all(finite == np.ceil(finite)))
        if _OPTS.sci_mode is None:
            self.sci_mode = largest / smallest > 1000.0 or largest > 1.0e8 or smallest < 1.0e-4
        else:
            self.sci_mode = _OPTS.sci_mode
        precision = _OPTS.precision
        if self.sci_mode:
            spec, extra = f".{precision}e", 0
        elif self.int_mode:
            # One more column for the trailing "." that marks a float.
            spec, extra = ".0f", 1
        else:
            spec, extra = f".{precision}f", 0
        for value in set(finite.tolist()):
            self.width = max(self.width, len(format(value, spec)) + extra)

    def format(self, value) -> str:
        if not self.floating:
            text = str(value)
        elif self.sci_mode:
            text = format(value, f"{self.width}.{_OPTS.precision}e")
        elif self.int_mode:
            text = format(value, ".0f")
            if math.isfinite(value):
                text += "."
        else:
            text = format(value, f".{_OPTS.precision}f")
        return text.rjust(self.width)


class _ComplexFormatter:
    """torch's complex layout: the real and imaginary parts get a formatter each; the real part
    is right-justified, the imaginary part follows with its sign (or "+") and a "j"."""

    def __init__(self, values: np.ndarray):
        self.real = _Formatter(values.real)
        self.imag = _Formatter(values.imag)
        # torch counts the imaginary width plus one column for the "j".
        self.width = self.real.width + self.imag.width + 1

    def format(self, value) -> str:
        value = complex(value)
        real = self.real.format(value.real)
        imag = (self.imag.format(value.imag) + "j").lstrip()
        return real + imag if imag[0] in "+-" else real + "+" + imag


def _summarized_values(data: np.ndarray) -> np.ndarray:
    """Flat array of the elements that remain visible once the tensor is summarised."""
    edge = _OPTS.edgeitems
    if data.ndim == 0:
        return data.reshape(-1)
    if data.ndim == 1:
        # With edge == 0, data[-0:] is the whole array; torch has the same quirk.
        return np.concatenate((data[:edge], data[-edge:])) if data.shape[0] > 2 * edge else data
    if not edge:
        return data[:0].reshape(-1)
    rows = range(data.shape[0])
    if data.shape[0] > 2 * edge:
        rows = list(rows[:edge]) + list(rows[-edge:])
    return np.concatenate([_summarized_values(data[i]) for i in rows])


def _vector_str(data: np.ndarray, indent: int, summarize: bool, fmt: _Formatter) -> str:
    edge = _OPTS.edgeitems
    # Each element takes its width plus the ", " separating it from the next one.
    per_line = max(1, math.floor((_OPTS.linewidth - indent) / (fmt.width + 2)))
    if summarize and not edge:
        items = ["..."]
    elif summarize and data.shape[0] > 2 * edge:
        items = ([fmt.format(v) for v in data[:edge].tolist()] + [" ..."]
                 + [fmt.format(v) for v in data[-edge:].tolist()])
    else:
        items = [fmt.format(v) for v in data.tolist()]
    lines = [", ".join(items[i:i + per_line]) for i in range(0, len(items), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _nested_str(data: np.ndarray, indent: int, summarize: bool, fmt: _Formatter) -> str:
    if data.ndim == 0:
        return fmt.format(data.item())
    if data.ndim == 1:
        return _vector_str(data, indent, summarize, fmt)
    edge = _OPTS.edgeitems
    count = data.shape[0]
    if summarize and count > 2 * edge:
        slices = ([_nested_str(data[i], indent + 1, summarize, fmt) for i in range(edge)]
                  + ["..."]
                  + [_nested_str(data[i], indent + 1, summarize, fmt)
                     for i in range(count - edge, count)])
    else:
        slices = [_nested_str(data[i], indent + 1, summarize, fmt) for i in range(count)]
    # Blocks of rank k are separated by k - 1 blank-line-producing newlines.
    return "[" + ("," + "\n" * (data.ndim - 1) + " " * (indent + 1)).join(slices) + "]"


def _body_str(data: np.ndarray, indent: int) -> str:
    summarize = data.size > _OPTS.threshold
    values = _summarized_values(data) if summarize else data.reshape(-1)
    fmt = _ComplexFormatter(values) if data.dtype.kind == "c" else _Formatter(values)
    return _nested_str(data, indent, summarize, fmt)


def _add_suffixes(text: str, suffixes: list[str], indent: int) -> str:
    parts = [text]
    # torch measures the last line as if it were two characters longer; kept for identical wraps.
    last_line_len = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if last_line_len + len(suffix) + 2 > _OPTS.linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last_line_len = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last_line_len += len(suffix) + 2
    parts.append(")")
    return "".join(parts)


def format_tensor(data: "np.ndarray", *, dtype_name: str, requires_grad: bool = False,
                  grad_fn_name: str | None = None, is_leaf: bool = True) -> str:
    """Return what torch's repr() prints for a CPU tensor holding `data`.
    dtype_name is the short name: 'float32', 'float64', 'float16', 'int8', 'int16', 'int32',
    'int64', 'uint8', 'bool'. grad_fn_name e.g. 'PowBackward0' (None for leaves).
    is_leaf is accepted for symmetry with Tensor; the grad_fn alone decides what is shown."""
    # bfloat16 (ml_dtypes, not importable here) prints from its exact float32 values, as torch
    data = np.asarray(data, dtype=_NUMPY_DTYPES.get(dtype_name, np.float32))
    prefix = "tensor("
    indent = len(prefix)
    suffixes = []
    default = _default_dtype_name()
    if data.size == 0:
        if data.ndim != 1:
            suffixes.append(f"size={tuple(data.shape)}")
        if dtype_name != default:
            suffixes.append(f"dtype=torch.{dtype_name}")
        body = "[]"
    else:
        if not _OPTS.edgeitems:
            suffixes.append(f"size={tuple(data.shape)}")
        if dtype_name not in (_IMPLIED_DTYPES if default == _DEFAULT_DTYPE else
                              (default, "int64", "bool", "complex128")):
            suffixes.append(f"dtype=torch.{dtype_name}")
        body = _body_str(data, indent)
    # A grad_fn (non-leaf) takes the place of requires_grad=True, which only leaves show.
    if grad_fn_name is not None:
        suffixes.append(f"grad_fn=<{grad_fn_name}>")
    elif requires_grad:
        suffixes.append("requires_grad=True")
    return _add_suffixes(prefix + body, suffixes, indent)
