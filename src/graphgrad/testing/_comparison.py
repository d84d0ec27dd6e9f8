"""``assert_close``: torch.testing's comparison of tensors, numbers and nested containers.

Containers are walked as torch walks them (sequences by index, mappings by sorted key); each
leaf pair is compared as None, bools, numbers or tensor-likes, and the first failure raises with
torch's message ("Tensor-likes are not close!", mismatch count, greatest differences, the item).
"""

from __future__ import annotations

import cmath
import collections.abc
import contextlib

import numpy as np

from .. import _dtype
from .._tensor import Tensor
from ..ops.creation import as_tensor

__all__ = ["assert_close", "default_tolerances"]

# {dtype name: (rtol, atol)}, torch's table; other dtypes compare exactly.
_PRECISIONS = {"float16": (0.001, 1e-5), "float32": (1.3e-6, 1e-5), "float64": (1e-7, 1e-7)}
_NUMBER_DTYPES = {int: "int64", float: "float64", complex: "complex128"}
_NUMBER_PRECISIONS = {**_PRECISIONS, "complex128": (1e-7, 1e-7)}


class _Failure(Exception):
    def __init__(self, type_, msg, id_=()):
        super().__init__(msg)
        self.type, self.msg, self.id = type_, msg, id_

    def to_error(self, msg=None) -> Exception:
        if isinstance(msg, str):
            return self.type(msg)
        generated = self.msg
        if self.id:
            generated += ("\n\nThe failure occurred for item "
                          f"{''.join(str([item]) for item in self.id)}")
        return self.type(msg(generated) if callable(msg) else generated)


class _Unsupported(Exception):
    pass


def default_tolerances(*dtype_names) -> tuple[float, float]:
    rtols, atols = zip(*[_NUMBER_PRECISIONS.get(n, (0.0, 0.0)) for n in dtype_names])
    return max(rtols), max(atols)


def _tolerances(names, rtol, atol, id_):
    if (rtol is None) ^ (atol is None):
        raise _Failure(ValueError, "Both 'rtol' and 'atol' must be either specified or omitted, "
                       f"but got no {'rtol' if rtol is None else 'atol'}.", id_)
    if rtol is not None:
        return rtol, atol
    return default_tolerances(*names)


def _mismatch_msg(identifier, extra, abs_diff, abs_idx, atol, rel_diff, rel_idx, rtol) -> str:
    equality = rtol == 0 and atol == 0

    def diff_msg(kind, diff, idx, tol):
        if idx is None:
            msg = f"{kind.title()} difference: {diff}"
        else:
            msg = f"Greatest {kind} difference: {diff} at index {idx}"
        if not equality:
            msg += f" (up to {tol} allowed)"
        return msg + "\n"

    msg = f"{identifier} are not {'equal' if equality else 'close'}!\n\n"
    if extra:
        msg += f"{extra.strip()}\n"
    msg += diff_msg("absolute", abs_diff, abs_idx, atol)
    msg += diff_msg("relative", rel_diff, rel_idx, rtol)
    return msg.strip()


def _scalar_msg(actual, expected, rtol, atol) -> str:
    abs_diff = abs(actual - expected)
    rel_diff = float("inf") if expected == 0 else abs_diff / abs(expected)
    return _mismatch_msg("Scalars", f"Expected {expected} but got {actual}.", abs_diff, None,
                         atol, rel_diff, None, rtol)


def _tensor_msg(a: np.ndarray, b: np.ndarray, matches: np.ndarray):
    """The mismatch summary and the greatest differences (flat indices), as torch computes them."""
    total = matches.size
    mismatches = total - int(matches.sum())
    extra = f"Mismatched elements: {mismatches} / {total} ({mismatches / total:.1%})"
    a, b, matches = a.ravel(), b.ravel(), matches.ravel()
    if a.dtype.kind != "f":
        # torch upcasts integers to int64; its int / int division gives the default float dtype.
        a, b = a.astype(np.int64), b.astype(np.int64)
    with np.errstate(all="ignore"):
        abs_diff = np.abs(a - b)
        abs_diff[matches] = 0
        rel_diff = abs_diff / np.abs(b)
    if a.dtype.kind != "f":
        rel_diff = rel_diff.astype(_dtype.get_default_dtype().np)
    rel_diff[matches] = 0
    i, j = int(np.argmax(abs_diff)), int(np.argmax(rel_diff))
    return extra, abs_diff[i].item(), i, rel_diff[j].item(), j


def _close(a: np.ndarray, b: np.ndarray, rtol, atol, equal_nan) -> np.ndarray:
    if a.dtype.kind == "b" or (rtol == 0 and atol == 0 and a.dtype.kind in "iu"):
        eq = a == b
    else:
        if a.dtype.kind in "iu":  # no wrap-around in the difference of unsigned values
            a, b = a.astype(np.int64), b.astype(np.int64)
        with np.errstate(all="ignore"):
            # As torch.isclose: non-finite values match only by equality.
            diff = np.abs(a - b)
            eq = (a == b) | (np.isfinite(diff) & (diff <= atol + rtol * np.abs(b)))
    if equal_nan and a.dtype.kind == "f":
        eq |= np.isnan(a) & np.isnan(b)
    return eq


def _compare_tensors(actual, expected, id_, rtol, atol, equal_nan, check_device, check_dtype,
                     check_stride, **_):
    def fail(attr, x, y):
        raise _Failure(AssertionError,
                       f"The values for attribute '{attr}' do not match: {x} != {y}.", id_)

    if actual.shape != expected.shape:
        fail("shape", actual.shape, expected.shape)
    if check_stride and actual.stride() != expected.stride():
        fail("stride()", actual.stride(), expected.stride())
    if check_device and actual.device != expected.device:
        fail("device", actual.device, expected.device)
    if check_dtype and actual.dtype is not expected.dtype:
        fail("dtype", actual.dtype, expected.dtype)
    a, b = actual._data, expected._data
    if actual.dtype is not expected.dtype:
        common = _dtype.promote_types(actual.dtype, expected.dtype).np
        a, b = a.astype(common), b.astype(common)
    matches = _close(a, b, rtol, atol, equal_nan)
    if matches.all():
        return
    if a.ndim == 0:
        raise _Failure(AssertionError, _scalar_msg(a.item(), b.item(), rtol, atol), id_)
    extra, abs_diff, i, rel_diff, j = _tensor_msg(a, b, matches)
    idx = tuple(int(k) for k in np.unravel_index(i, a.shape))
    rel_idx = tuple(int(k) for k in np.unravel_index(j, a.shape))
    raise _Failure(AssertionError, _mismatch_msg("Tensor-likes", extra, abs_diff, idx, atol,
                                                 rel_diff, rel_idx, rtol), id_)


def _compare_numbers(actual, expected, id_, rtol, atol, equal_nan, check_dtype=False, **_):
    if check_dtype and type(actual) is not type(expected):
        raise _Failure(AssertionError,
                       f"The (d)types do not match: {type(actual)} != {type(expected)}.", id_)
    if actual == expected:
        return
    if equal_nan and cmath.isnan(actual) and cmath.isnan(expected):
        return
    abs_diff = abs(actual - expected)
    if cmath.isfinite(abs_diff) and abs_diff <= atol + rtol * abs(expected):
        return
    raise _Failure(AssertionError, _scalar_msg(actual, expected, rtol, atol), id_)


def _number(x):
    if isinstance(x, np.number):
        return x.item()
    if isinstance(x, (int, float, complex)) and not isinstance(x, bool):
        return x
    raise _Unsupported


def _tensor_like(x) -> Tensor:
    if isinstance(x, Tensor):
        return x
    try:
        return as_tensor(x)
    except Exception:  # noqa: BLE001 - any failure means "not a tensor-like"
        raise _Unsupported from None


def _make_pair(actual, expected, id_, options):
    """The comparison of one leaf pair, trying torch's pair types in order: None, bool, number,
    tensor-like. Unsupported inputs and bad tolerances raise here, before any comparison."""
    if actual is None or expected is None:
        def compare():
            if not (actual is None and expected is None):
                raise _Failure(AssertionError, f"None mismatch: {actual} is not {expected}", id_)
        return compare
    bools = (bool, np.bool_)
    if isinstance(actual, bools) and isinstance(expected, bools):
        a, b = bool(actual), bool(expected)

        def compare():
            if a is not b:
                raise _Failure(AssertionError, f"Booleans mismatch: {a} is not {b}", id_)
        return compare
    try:
        a, b = _number(actual), _number(expected)
    except _Unsupported:
        pass
    else:
        rtol, atol = _tolerances([_NUMBER_DTYPES[type(x)] for x in (a, b)], options["rtol"],
                                 options["atol"], id_)
        return lambda: _compare_numbers(a, b, id_, **{**options, "rtol": rtol, "atol": atol})
    related = isinstance(actual, type(expected)) or isinstance(expected, type(actual))
    if related and (options["allow_subclasses"] or type(actual) is type(expected)):
        try:
            a, b = _tensor_like(actual), _tensor_like(expected)
        except _Unsupported:
            pass
        else:
            rtol, atol = _tolerances([a.dtype.name, b.dtype.name], options["rtol"],
                                     options["atol"], id_)
            return lambda: _compare_tensors(a, b, id_,
                                            **{**options, "rtol": rtol, "atol": atol})
    raise _Failure(TypeError, f"No comparison pair was able to handle inputs of type "
                   f"{type(actual)} and {type(expected)}.", id_)


def _walk(actual, expected, id_, leaves):
    seq, mapping = collections.abc.Sequence, collections.abc.Mapping
    if (isinstance(actual, seq) and not isinstance(actual, str)
            and isinstance(expected, seq) and not isinstance(expected, str)):
        if len(actual) != len(expected):
            raise _Failure(AssertionError, f"The length of the sequences mismatch: "
                           f"{len(actual)} != {len(expected)}", id_)
        for i in range(len(actual)):
            _walk(actual[i], expected[i], (*id_, i), leaves)
    elif isinstance(actual, mapping) and isinstance(expected, mapping):
        ak, ek = set(actual.keys()), set(expected.keys())
        if ak != ek:
            raise _Failure(AssertionError, "The keys of the mappings do not match:\n"
                           f"Missing keys in the actual mapping: {sorted(ek - ak)}\n"
                           f"Additional keys in the actual mapping: {sorted(ak - ek)}", id_)
        keys = ak
        with contextlib.suppress(Exception):
            keys = sorted(keys)
        for k in keys:
            _walk(actual[k], expected[k], (*id_, k), leaves)
    else:
        leaves.append((actual, expected, id_))


def assert_close(actual, expected, *, allow_subclasses=True, rtol=None, atol=None,
                 equal_nan=False, check_device=True, check_dtype=True, check_layout=True,
                 check_stride=False, msg=None):
    """Asserts ``|actual - expected| <= atol + rtol * |expected|`` elementwise, with torch's
    default tolerances per dtype, its attribute checks and its error messages.

    >>> import graphgrad as torch
    >>> torch.testing.assert_close(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 2.0 + 1e-7]))
    """
    __tracebackhide__ = True
    options = {"allow_subclasses": allow_subclasses, "rtol": rtol, "atol": atol,
               "equal_nan": equal_nan, "check_device": check_device, "check_dtype": check_dtype,
               "check_stride": check_stride}
    leaves = []
    try:
        _walk(actual, expected, (), leaves)
        pairs = [_make_pair(a, b, id_, options) for a, b, id_ in leaves]
    except _Failure as failure:
        raise failure.to_error() from None
    for compare in pairs:
        try:
            compare()
        except _Failure as failure:
            raise failure.to_error(msg) from None
