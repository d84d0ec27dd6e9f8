"""ModuleInfo records for the remaining torch.nn layers: AdaptiveLogSoftmaxWithLoss (forward,
log_prob, predict), CrossMapLRN2d, NLLLoss2d, DataParallel and SyncBatchNorm (single process).

Loaded by tests/nn/moduleinfo.py (``_family``), which appends ``INFOS`` to ``MODULE_INFOS``.
"""

from __future__ import annotations

import sys

import numpy as np

_mi = sys.modules["_gg_moduleinfo"]
ModuleInfo, Long = _mi.ModuleInfo, _mi.Long

_F32 = {np.float32: (1e-5, 1e-5)}


def _asm_method(method, **kwargs):
    """An AdaptiveLogSoftmaxWithLoss whose forward is its ``method`` (log_prob or predict)."""
    def build(m):
        class ASMMethod(m.nn.AdaptiveLogSoftmaxWithLoss):
            def forward(self, x):
                return getattr(self, method)(x)
        return ASMMethod(8, 20, [5, 12], div_value=2.0, **kwargs)
    return build


INFOS = [
    ModuleInfo("AdaptiveLogSoftmaxWithLoss", (8, 20, [5, 12]), {"div_value": 2.0},
               inputs=((7, 8), Long((7,), 20)), tol=_F32),
    ModuleInfo("AdaptiveLogSoftmaxWithLoss", (6, 10, [3]), {"head_bias": True},
               inputs=((5, 6), Long((5,), 10)), variant="head_bias", tol=_F32),
    ModuleInfo("AdaptiveLogSoftmaxWithLoss", (6, 10, [3]), {"head_bias": True},
               inputs=((6,), np.array(7)), variant="unbatched", tol=_F32),
    ModuleInfo("AdaptiveLogSoftmaxWithLoss", constructor=_asm_method("log_prob"),
               inputs=((5, 8),), variant="log_prob", tol=_F32),
    ModuleInfo("AdaptiveLogSoftmaxWithLoss", constructor=_asm_method("predict", head_bias=True),
               inputs=((9, 8),), variant="predict", grad=False),
    ModuleInfo("CrossMapLRN2d", (3,), {"alpha": 0.5, "beta": 0.75, "k": 1.5},
               inputs=((2, 6, 3, 3),), tol=_F32),
    ModuleInfo("CrossMapLRN2d", (5,), inputs=((2, 7, 2, 3),), variant="size5", tol=_F32),
    ModuleInfo("CrossMapLRN2d", (2, 0.1, 0.5, 2.0), inputs=((1, 4, 2, 2),), variant="even",
               tol=_F32),
    ModuleInfo("NLLLoss2d", inputs=((2, 3, 4, 4), Long((2, 4, 4), 3))),
    ModuleInfo("NLLLoss2d", kwargs={"reduction": "sum", "ignore_index": 1},
               inputs=((2, 3, 4, 4), Long((2, 4, 4), 3)), variant="sum_ignore"),
    ModuleInfo("DataParallel", constructor=lambda m: m.nn.DataParallel(m.nn.Linear(4, 3)),
               inputs=((5, 4),)),
    ModuleInfo("SyncBatchNorm", (4,), inputs=((5, 4, 3),), tol=_F32),
    ModuleInfo("SyncBatchNorm", (4,), {"momentum": None}, inputs=((6, 4, 2, 2),),
               variant="cumulative", tol=_F32),
    ModuleInfo("SyncBatchNorm", (4,), {"affine": False, "track_running_stats": False},
               inputs=((5, 4),), variant="stateless", tol=_F32),
    ModuleInfo("SyncBatchNorm", (4,), inputs=((5, 4, 3),), train=False, variant="eval"),
]
