"""``torch.signal.windows``: SciPy-style windows (``sym=`` instead of ``periodic=``)."""

from ._windows import (
    bartlett,
    blackman,
    cosine,
    exponential,
    gaussian,
    general_cosine,
    general_hamming,
    hamming,
    hann,
    kaiser,
    nuttall,
)

__all__ = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine",
           "general_hamming", "hamming", "hann", "kaiser", "nuttall"]
