"""The ModuleInfo table: one record per layer configuration, run by tests/nn/test_modules.py.

A record says how to build the layer for a module ``m`` (torch or graphgrad), which inputs to
feed it, the mode (train/eval) and the tolerance. The test builds the torch twin, copies its
state_dict into graphgrad's (through NumPy), then compares outputs, input gradients, parameter
gradients, buffers, state_dict keys and repr. Adding a layer is one ``ModuleInfo(...)`` line in
``MODULE_INFOS`` (or in a family list appended to it).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["ModuleInfo", "MODULE_INFOS", "Long", "build", "make_inputs"]

# (rtol, atol) by dtype, torch's assert_close defaults; a record may loosen them.
DEFAULT_TOL = {np.float64: (1e-7, 1e-7), np.float32: (1.3e-6, 1e-5)}


class Long:
    """An integer input (indices, targets): ``Long(shape, high)`` draws from ``[0, high)``; it
    is passed as an int64 tensor and gets no gradient."""

    def __init__(self, shape, high):
        self.shape, self.high = tuple(shape), high


@dataclass
class ModuleInfo:
    """One layer configuration.

    ``name``: the class in ``m.nn``; ``args``/``kwargs``: constructor arguments, where a value
    ``lambda m: ...`` is resolved against the module (for nested layers); ``constructor``: a
    ``lambda m: module`` replacing ``m.nn.<name>(*args, **kwargs)``; ``inputs``: shapes (float
    inputs that require grad), ``Long`` records, or arrays; ``kwargs_inputs``: extra forward
    keyword arguments (plain values); ``train``: run in train mode (else eval); ``tol``:
    ``{np.float32: (rtol, atol)}`` overrides; ``needs``: ``graphgrad.nn.functional`` names the
    forward calls (the test skips, naming them, while they are missing); ``variant``: test-id
    suffix; ``dtypes``: the float dtypes to run; ``grad``: compare gradients.
    """

    name: str
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)
    inputs: tuple = ((3, 4),)
    kwargs_inputs: dict = field(default_factory=dict)
    constructor: Callable[[Any], Any] | None = None
    train: bool = True
    tol: dict = field(default_factory=dict)
    needs: tuple = ()
    variant: str = ""
    dtypes: tuple = (np.float64, np.float32)
    grad: bool = True
    seed: int = 0

    @property
    def id(self) -> str:
        return self.name + (f"_{self.variant}" if self.variant else "")

    def tolerance(self, dtype):
        return self.tol.get(dtype, DEFAULT_TOL[dtype])


def build(info: ModuleInfo, m):
    """The layer described by ``info`` built with module ``m`` (torch or graphgrad)."""
    if info.constructor is not None:
        return info.constructor(m)

    def resolve(v):
        return v(m) if callable(v) and not isinstance(v, type) else v

    args = tuple(resolve(a) for a in info.args)
    kwargs = {k: resolve(v) for k, v in info.kwargs.items()}
    return getattr(m.nn, info.name)(*args, **kwargs)


def make_inputs(info: ModuleInfo, dtype):
    """The inputs as NumPy arrays (float ones in ``dtype``), deterministic per record."""
    rng = np.random.default_rng(info.seed)
    out = []
    for spec in info.inputs:
        if isinstance(spec, Long):
            out.append(rng.integers(0, spec.high, spec.shape).astype(np.int64))
        elif isinstance(spec, np.ndarray):
            out.append(spec.astype(dtype) if spec.dtype.kind == "f" else spec)
        else:
            out.append(rng.standard_normal(spec).astype(dtype))
    return out


def _seq(m):
    return m.nn.Sequential(m.nn.Linear(4, 5), m.nn.Tanh(), m.nn.Linear(5, 2))


def _nested(m):
    from collections import OrderedDict

    inner = m.nn.Sequential(OrderedDict([("fc", m.nn.Linear(4, 3)), ("act", m.nn.GELU())]))
    return m.nn.Sequential(inner, m.nn.Flatten(0), m.nn.Unflatten(0, (3, 3)))


LINEAR = [
    ModuleInfo("Linear", (4, 3), needs=("linear",)),
    ModuleInfo("Linear", (4, 3), {"bias": False}, needs=("linear",), variant="no_bias"),
    ModuleInfo("Linear", (4, 2), inputs=((4,),), needs=("linear",), variant="1d"),
    ModuleInfo("Linear", (4, 2), inputs=((2, 3, 4),), needs=("linear",), variant="3d"),
    ModuleInfo("Bilinear", (3, 4, 2), inputs=((5, 3), (5, 4)), needs=("bilinear",)),
    ModuleInfo("Bilinear", (3, 4, 2), {"bias": False}, inputs=((5, 3), (5, 4)),
               needs=("bilinear",), variant="no_bias"),
    ModuleInfo("Identity", (54,), {"unused": "x"}),
    ModuleInfo("Flatten", inputs=((2, 3, 4),)),
    ModuleInfo("Flatten", (0, 1), inputs=((2, 3, 4),), variant="0_1"),
    ModuleInfo("Unflatten", (1, (2, 2)), inputs=((3, 4),)),
    ModuleInfo("Sequential", constructor=_seq, needs=("linear",)),
    ModuleInfo("Sequential", constructor=_nested, needs=("linear",), variant="nested"),
]

_ACT_INPUT = ((3, 5),)
ACTIVATIONS = [
    ModuleInfo("ReLU", inputs=_ACT_INPUT),
    ModuleInfo("ReLU6", inputs=(np.array([[-1.5, 0.5, 3.0], [6.5, 2.0, -0.1]]),)),
    ModuleInfo("LeakyReLU", (0.2,), inputs=_ACT_INPUT),
    ModuleInfo("ELU", kwargs={"alpha": 0.5}, inputs=_ACT_INPUT),
    ModuleInfo("CELU", (1.5,), inputs=_ACT_INPUT),
    ModuleInfo("SELU", inputs=_ACT_INPUT),
    ModuleInfo("GELU", inputs=_ACT_INPUT),
    ModuleInfo("GELU", kwargs={"approximate": "tanh"}, inputs=_ACT_INPUT, variant="tanh"),
    ModuleInfo("SiLU", inputs=_ACT_INPUT),
    ModuleInfo("Mish", inputs=_ACT_INPUT),
    ModuleInfo("Sigmoid", inputs=_ACT_INPUT),
    ModuleInfo("Tanh", inputs=_ACT_INPUT),
    ModuleInfo("Hardtanh", (-0.5, 0.5), inputs=_ACT_INPUT),
    ModuleInfo("Hardsigmoid", inputs=(np.array([[-4.0, -1.0, 0.5], [2.0, 3.5, -2.5]]),)),
    ModuleInfo("Hardswish", inputs=(np.array([[-4.0, -1.0, 0.5], [2.0, 3.5, -2.5]]),)),
    ModuleInfo("Softplus", kwargs={"beta": 2.0, "threshold": 1.5}, inputs=_ACT_INPUT),
    ModuleInfo("Softsign", inputs=_ACT_INPUT),
    ModuleInfo("Tanhshrink", inputs=_ACT_INPUT),
    ModuleInfo("LogSigmoid", inputs=_ACT_INPUT),
    ModuleInfo("Softmax", kwargs={"dim": 1}, inputs=_ACT_INPUT),
    ModuleInfo("Softmax", kwargs={"dim": 0}, inputs=((4, 2, 3),), variant="dim0"),
    ModuleInfo("LogSoftmax", kwargs={"dim": -1}, inputs=_ACT_INPUT),
    ModuleInfo("Softmax2d", inputs=((2, 3, 2, 2),)),
    ModuleInfo("Softmin", kwargs={"dim": 1}, inputs=_ACT_INPUT, needs=("softmin",)),
    ModuleInfo("Threshold", (0.1, 20.0), inputs=_ACT_INPUT, needs=("threshold",)),
    ModuleInfo("Hardshrink", inputs=_ACT_INPUT, needs=("hardshrink",)),
    ModuleInfo("Softshrink", (0.3,), inputs=_ACT_INPUT, needs=("softshrink",)),
    ModuleInfo("GLU", inputs=((3, 4),), needs=("glu",)),
    ModuleInfo("GLU", (0,), inputs=((4, 3),), needs=("glu",), variant="dim0"),
    ModuleInfo("PReLU", inputs=_ACT_INPUT, needs=("prelu",)),
    ModuleInfo("PReLU", (3,), inputs=((2, 3, 4),), needs=("prelu",), variant="channels"),
    ModuleInfo("RReLU", (0.1, 0.3), inputs=_ACT_INPUT, train=False, needs=("rrelu",),
               variant="eval"),
]



def _family(name: str) -> list[ModuleInfo]:
    """``INFOS`` of the family file tests/nn/<name>.py (it reads ``ModuleInfo`` from this module,
    registered in ``sys.modules`` as ``_gg_moduleinfo`` by test_modules.py)."""
    import importlib.util
    import pathlib
    import sys

    spec = importlib.util.spec_from_file_location(f"_gg_{name}",
                                                  pathlib.Path(__file__).parent / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    # pytest's --doctest-modules imports this file as "moduleinfo": lend it the name the family
    # files read while they load.
    lent = "_gg_moduleinfo" not in sys.modules
    if lent:
        sys.modules["_gg_moduleinfo"] = sys.modules[__name__]
    try:
        spec.loader.exec_module(module)
    finally:
        if lent:
            del sys.modules["_gg_moduleinfo"]
    return module.INFOS


MODULE_INFOS: list[ModuleInfo] = LINEAR + ACTIVATIONS
MODULE_INFOS += _family("moduleinfo_conv")
MODULE_INFOS += _family("moduleinfo_rnn")
MODULE_INFOS += _family("moduleinfo_loss")
MODULE_INFOS += _family("moduleinfo_loss_extra")
MODULE_INFOS += _family("moduleinfo_normalization")
MODULE_INFOS += _family("moduleinfo_structures")
MODULE_INFOS += _family("moduleinfo_3d")
MODULE_INFOS += _family("moduleinfo_remaining")
