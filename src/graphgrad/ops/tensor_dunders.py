"""Python protocol methods of torch.Tensor not bound by an op family: in-place bitwise
operators, ``reversed``, ``in``, ``del t[i]`` (refused), the Python 2 aliases, NumPy's
``__array_wrap__`` (a ufunc applied to a tensor returns a tensor) and DLPack export.
"""

from __future__ import annotations

import numbers

import numpy as np

from .._tensor import Tensor, wrap

__all__: list[str] = []


def __reversed__(self):
    """Reverses along dimension 0 (a 0-d tensor is returned as is)."""
    if self._data.ndim == 0:
        return self
    return self.flip(0)


def __contains__(self, element) -> bool:
    if isinstance(element, (Tensor, numbers.Number, np.generic)):
        return bool((element == self).any().item())
    raise RuntimeError("Tensor.__contains__ only supports Tensor or scalar, but you passed in a "
                       f"{type(element)}.")


def __delitem__(self, key):
    raise TypeError("Tensor does not support deleting items")


def __array_wrap__(self, array, context=None, return_scalar=False):
    """NumPy calls this with a ufunc's result: torch returns it as a tensor, with bool results
    as uint8 (torch's behaviour, kept for parity)."""
    if array.dtype == np.bool_:
        array = array.astype(np.uint8)
    return wrap(np.asarray(array), False, None)


def __dlpack__(self, stream=None, *, max_version=None, dl_device=None, copy=None):
    if self.requires_grad:
        raise BufferError("Can't export tensors that require gradient, use tensor.detach()")
    kwargs = {}
    if max_version is not None:
        kwargs["max_version"] = max_version
    if dl_device is not None:
        kwargs["dl_device"] = dl_device
    if copy is not None:
        kwargs["copy"] = copy
    return self._data.__dlpack__(stream=stream, **kwargs)


def __dlpack_device__(self):
    return (1, 0)  # kDLCPU, device 0 (torch returns the same pair as an IntEnum)


def _bind():
    T = Tensor
    T.__reversed__ = __reversed__
    T.__contains__ = __contains__
    T.__delitem__ = __delitem__
    T.__array_wrap__ = __array_wrap__
    T.__dlpack__ = __dlpack__
    T.__dlpack_device__ = __dlpack_device__
    T.__iand__ = T.bitwise_and_
    T.__ior__ = T.bitwise_or_
    T.__ixor__ = T.bitwise_xor_
    T.__nonzero__ = T.__bool__
    T.__long__ = T.__int__
    T.__div__ = T.__truediv__
    T.__rdiv__ = T.__rtruediv__
    T.__idiv__ = T.__itruediv__


_bind()
