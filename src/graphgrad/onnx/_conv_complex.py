"""Why complex numbers, the FFTs and stft/istft have no ONNX mapping: ONNX tensors of complex
element type are not supported by its operators (exporting complex is out of scope here)."""

from __future__ import annotations

from .ops import unsupported

unsupported(["real", "imag", "view_as_real", "view_as_complex", "complex", "polar", "conj",
             "conj_physical", "angle"],
            "ONNX operators do not accept complex64/complex128 tensors, and graphgrad's exporter "
            "does not rewrite complex values as (real, imag) pairs; keep complex arithmetic "
            "outside the exported model")
unsupported(["fft_c2c", "fft_r2c", "fft_c2r"],
            "ONNX's DFT operator works on real (..., 2) pairs with its own onesided/inverse "
            "conventions, and graphgrad does not map its complex FFT primitives onto it; "
            "compute spectra outside the exported model")
unsupported(["overlap_add"],
            "the overlap-add of istft frames (col2im) has no ONNX operator for this 1-d layout "
            "and comes with complex inputs; run istft outside the exported model")
