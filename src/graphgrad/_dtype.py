"""dtypes and PyTorch's type-promotion rules.

A `dtype` wraps a NumPy dtype. Promotion follows torch: categories bool < integer < floating
< complex; dimensioned tensors outrank 0-d tensors, which outrank Python scalars, and a
lower-priority operand only changes the result when it belongs to a higher category (see
Note [Weak operands]).
"""

from __future__ import annotations

import builtins

import numpy as np

__all__ = [
    "dtype", "float16", "half", "float32", "float", "float64", "double", "int8", "int16", "short",
    "int32", "int", "int64", "long", "uint8", "bool", "get_default_dtype", "set_default_dtype",
    "promote_types", "result_type", "can_cast", "complex64", "cfloat", "complex128", "cdouble",
    "bfloat16",
]

_BOOL, _INT, _FLOAT, _COMPLEX = 0, 1, 2, 3
_CATEGORY = {"f": _FLOAT, "b": _BOOL, "c": _COMPLEX}


class dtype:
    """A tensor element type, printed as PyTorch prints it (``torch.float32``)."""

    __slots__ = ("name", "np", "itemsize", "is_floating_point", "is_signed", "_category")

    def __init__(self, name: str, np_dtype):
        self.name = name
        self.np = np.dtype(np_dtype)
        self.itemsize = self.np.itemsize
        kind = self.np.kind
        self._category = _CATEGORY.get(kind, _INT)
        self.is_floating_point = self._category == _FLOAT
        self.is_signed = kind in "fic"

    @property
    def is_complex(self) -> bool:
        return self._category == _COMPLEX

    def to_real(self) -> dtype:
        """The real dtype of a complex one (complex64 -> float32); real dtypes are returned."""
        return _NAMES[_TO_REAL.get(self.name, self.name)]

    def to_complex(self) -> dtype:
        """The complex dtype of a floating one (float64 -> complex128)."""
        return _NAMES[_TO_COMPLEX.get(self.name, self.name)]

    def __repr__(self) -> str:
        # NOTE: printed as torch's so that `import graphgrad as torch` programs print the same.
        return f"torch.{self.name}"

    def __reduce__(self):
        return (_by_name, (self.name,))


class _OptionalDtype(dtype):
    """A dtype whose NumPy type comes from an optional package (bfloat16: ``ml_dtypes``): the
    attribute exists without it; using it imports the package or says which extra installs it.

    Note [bfloat16]: NumPy has no bfloat16; ``ml_dtypes`` (from the JAX project) registers one
    whose arrays store the 16 bits and cast to and from float32 with round-to-nearest-even. Its
    kind is 'V', not 'f', so ops do not run on it directly: the dispatcher hands every op with a
    bfloat16 operand to ``ops/_narrow.py``, which computes in float32 and rounds the result to
    bfloat16, as torch's CPU kernels do (views and casts keep the 16-bit storage).
    """

    __slots__ = ("_module", "_attr", "_extra")

    def __init__(self, name, itemsize, module, attr, extra):  # noqa: D107
        self.name = name
        self.itemsize = itemsize
        self._category = _FLOAT
        self.is_floating_point = True
        self.is_signed = True
        self._module, self._attr, self._extra = module, attr, extra

    @property
    def np(self):
        np_dtype = _OPTIONAL_NP.get(self.name)
        if np_dtype is None:
            np_dtype = _load_optional(self)
        return np_dtype


_OPTIONAL_NP: dict = {}


def _load_optional(d):
    import importlib

    try:
        module = importlib.import_module(d._module)
    except ImportError:
        raise ModuleNotFoundError(
            f"torch.{d.name} needs the '{d._module}' package, which is not installed: install "
            f"the extra with `pip install graphgrad[{d._extra}]`") from None
    np_dtype = np.dtype(getattr(module, d._attr))
    _OPTIONAL_NP[d.name] = np_dtype
    _FROM_NP[np_dtype] = d
    from .ops import _dispatch, _narrow

    _dispatch._narrow = _narrow  # from now on the dispatcher checks for bfloat16 operands
    return np_dtype


float16 = half = dtype("float16", np.float16)
bfloat16 = _OptionalDtype("bfloat16", 2, "ml_dtypes", "bfloat16", "bf16")
float32 = dtype("float32", np.float32)
float64 = double = dtype("float64", np.float64)
int8 = dtype("int8", np.int8)
int16 = short = dtype("int16", np.int16)
int32 = dtype("int32", np.int32)
int64 = long = dtype("int64", np.int64)
uint8 = dtype("uint8", np.uint8)
bool = dtype("bool", np.bool_)  # noqa: A001 - torch.bool
complex64 = cfloat = dtype("complex64", np.complex64)
complex128 = cdouble = dtype("complex128", np.complex128)
float = float32  # noqa: A001 - torch.float
int = int32  # noqa: A001 - torch.int

_ALL = (float16, float32, float64, int8, int16, int32, int64, uint8, bool, complex64, complex128)
# NOTE: torch's complex32 (chalf) is not provided; float16 meets complex as complex64 here.
_TO_COMPLEX = {"float16": "complex64", "bfloat16": "complex64", "float32": "complex64",
               "float64": "complex128"}
_TO_REAL = {"complex64": "float32", "complex128": "float64"}
_FROM_NP = {d.np: d for d in _ALL}
_NAMES = {d.name: d for d in _ALL}
_NAMES["bfloat16"] = bfloat16


def _by_name(name: str) -> dtype:
    return _NAMES[name]


class _Defaults:
    __slots__ = ("float",)

    def __init__(self):
        self.float = float32


_defaults = _Defaults()


def get_default_dtype() -> dtype:
    return _defaults.float


def set_default_dtype(d: dtype) -> None:
    if not isinstance(d, dtype) or not d.is_floating_point:
        raise TypeError(f"only floating-point types are supported as the default type, got {d}")
    _defaults.float = d


def from_numpy_dtype(np_dtype) -> dtype:
    """The graphgrad dtype of a NumPy dtype; raises TypeError for unsupported ones."""
    try:
        return _FROM_NP[np.dtype(np_dtype)]
    except KeyError:
        if np.dtype(np_dtype).name == "bfloat16":  # an ml_dtypes array made outside graphgrad
            bfloat16.np  # noqa: B018 - registers it
            return bfloat16
        raise TypeError(
            f"can't convert np.ndarray of type numpy.{np.dtype(np_dtype)}. The only supported "
            "types are: float64, float32, float16, complex64, complex128, int64, int32, int16, "
            "int8, uint8, and bool."
        ) from None


def to_dtype(d) -> dtype:
    """Accepts a graphgrad dtype, a NumPy dtype, or a Python type (float, int, bool)."""
    if isinstance(d, dtype):
        return d
    if d is builtins.float:
        return _defaults.float
    if d is builtins.int:
        return int64
    if d is builtins.bool:
        return bool
    if d is builtins.complex:
        return default_complex()
    return from_numpy_dtype(d)


def default_complex() -> dtype:
    """torch's default complex dtype: complex128 when the default float is float64."""
    return complex128 if _defaults.float is float64 else complex64


# Torch's promotion of two dtypes within and across categories. NumPy agrees everywhere except
# where floats or complex meet wide ints (torch keeps the float: int64 + float16 -> float16,
# int64 + complex64 -> complex64); float meeting complex keeps the wider precision, as NumPy.
_PROMOTE: dict[tuple[dtype, dtype], dtype] = {}
for _a in _ALL:
    for _b in _ALL:
        if {_a._category, _b._category} == {_FLOAT, _COMPLEX}:
            _PROMOTE[_a, _b] = _FROM_NP[np.promote_types(_a.np, _b.np)]
        elif _a._category != _b._category:
            hi, lo = (_a, _b) if _a._category > _b._category else (_b, _a)
            _PROMOTE[_a, _b] = hi
        else:
            _PROMOTE[_a, _b] = _FROM_NP[np.promote_types(_a.np, _b.np)]


# bfloat16 (Note [bfloat16]): above bool and the integers, with itself bfloat16; with float16
# float32 (neither holds the other); with the wider floats and complex, those.
for _d in _ALL + (bfloat16,):
    if _d is bfloat16:
        _r = bfloat16
    elif _d._category in (_BOOL, _INT):
        _r = bfloat16
    elif _d is float16:
        _r = float32
    else:
        _r = _d
    _PROMOTE[bfloat16, _d] = _PROMOTE[_d, bfloat16] = _r


def promote_types(a: dtype, b: dtype) -> dtype:
    """The smallest dtype both ``a`` and ``b`` convert to, as ``torch.promote_types``."""
    return _PROMOTE[a, b]


def scalar_category(value) -> int:
    t = type(value)
    if t is builtins.bool or t is np.bool_:
        return _BOOL
    if t is builtins.int or isinstance(value, np.integer):
        return _INT
    if t is builtins.complex or isinstance(value, np.complexfloating):
        return _COMPLEX
    return _FLOAT


def scalar_dtype(value) -> dtype:
    """The dtype ``tensor(value)`` gets for a Python scalar."""
    c = scalar_category(value)
    if c == _COMPLEX:
        return default_complex()
    return bool if c == _BOOL else (int64 if c == _INT else _defaults.float)


# See Note [Weak operands]
def combine(dims, zeros, scalars) -> dtype:
    """Promote dimensioned dtypes, then 0-d dtypes, then Python-scalar categories.

    Note [Weak operands]: a 0-d tensor or a Python scalar only matters when its category is
    higher than every operand of higher priority: ``int64[3] + float64 0-d -> float64`` but
    ``float32[3] + float64 0-d -> float32``; a Python float with an int tensor gives the default
    float dtype.
    """
    result = None
    for d in dims:
        result = d if result is None else _PROMOTE[result, d]
    zres = None
    for d in zeros:
        zres = d if zres is None else _PROMOTE[zres, d]
    if zres is not None:
        if result is None or zres._category > result._category:
            # A complex 0-d operand keeps a floating result's precision (torch's
            # combine_categories): float64[3] + complex64 0-d -> complex128.
            if zres._category == _COMPLEX and result is not None and result.is_floating_point:
                result = result.to_complex()
            else:
                result = zres
    cat = -1
    for s in scalars:
        c = scalar_category(s)
        if c > cat:
            cat = c
    if cat >= 0 and (result is None or cat > result._category):
        if cat == _COMPLEX:
            result = result.to_complex() if result is not None and result.is_floating_point \
                else default_complex()
        else:
            result = bool if cat == _BOOL else (int64 if cat == _INT else _defaults.float)
    return result


def result_type(a, b) -> dtype:
    """``torch.result_type`` for two tensors or scalars."""
    from ._tensor import Tensor

    dims, zeros, scalars = [], [], []
    for x in (a, b):
        if isinstance(x, Tensor):
            (dims if x.ndim else zeros).append(x.dtype)
        else:
            scalars.append(x)
    return combine(dims, zeros, scalars)


def can_cast(from_: dtype, to: dtype) -> bool:
    """Torch's rule: no cast to a lower category (float -> int, int -> bool)."""
    return from_._category <= to._category
