"""Array backends behind one small interface; NumPy is the only one so far.

A backend is a module exposing ``xp`` (an array namespace with NumPy's API, such as numpy or
cupy), ``name`` and ``asarray``. Op forwards are written against ``xp``; the dispatcher picks
the backend from the device.
"""

# Beside the array backend, torch.backends' switch modules (cudnn.benchmark,
# cuda.matmul.allow_tf32, ...) that scripts set.
from . import cuda, cudnn, mkl, mkldnn, mps, openmp
from . import numpy as numpy_backend

__all__ = ["get_backend", "numpy_backend", "cuda", "cudnn", "mkl", "mkldnn", "mps", "openmp"]


def get_backend(device):
    from .._device import check_device

    check_device(device)
    return numpy_backend
