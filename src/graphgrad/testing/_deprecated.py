"""``torch.testing.assert_allclose``, deprecated since torch 1.12 and still present in 2.13:
``assert_close`` with looser per-dtype tolerances, ``expected`` converted to ``actual``'s
dtype, and no dtype check."""

from __future__ import annotations

import warnings

from ._comparison import assert_close

# (rtol, atol) by dtype name, as torch's assert_allclose (float32 looser than assert_close's)
_PRECISIONS = {"float16": (1e-3, 1e-3), "bfloat16": (1.6e-2, 1e-5), "float32": (1e-4, 1e-5),
               "float64": (1e-5, 1e-8)}


def assert_allclose(actual, expected, rtol=None, atol=None, equal_nan=True, msg=""):
    from .._tensor import Tensor
    from ..ops.creation import as_tensor, tensor

    warnings.warn("`torch.testing.assert_allclose()` is deprecated since 1.12 and will be "
                  "removed in a future release. Please use `torch.testing.assert_close()` "
                  "instead. You can find detailed upgrade instructions in "
                  "https://github.com/pytorch/pytorch/issues/61844.", FutureWarning,
                  stacklevel=2)
    if not isinstance(actual, Tensor):
        actual = tensor(actual)
    if not isinstance(expected, Tensor):
        expected = tensor(expected, dtype=actual.dtype)
    expected = as_tensor(expected, dtype=actual.dtype)
    if rtol is None and atol is None:
        rtol, atol = _PRECISIONS.get(actual._data.dtype.name, (0.0, 0.0))
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan,
                 check_device=True, check_dtype=False, check_stride=False, msg=msg or None)
