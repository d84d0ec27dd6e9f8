"""ModuleInfo records for the normalization, dropout, embedding and distance layers.

Loaded by tests/nn/moduleinfo.py (``_family``), which appends ``INFOS`` to ``MODULE_INFOS``.
Norm layers run in train mode (the running buffers are compared after the forward) and in eval
mode with non-trivial running statistics; dropout runs in eval mode and in train mode with
p=0 (its random masks are tested statistically in tests/nn/test_dropout.py).
"""

from __future__ import annotations

import sys

import numpy as np

_mi = sys.modules["_gg_moduleinfo"]
ModuleInfo, Long = _mi.ModuleInfo, _mi.Long

# a mean and a variance then a normalization: float32 differs from torch in the last bits
_F32 = {np.float32: (1e-5, 1e-5)}


def _with_stats(name, c, **kwargs):
    """``m.nn.<name>(c, **kwargs)`` whose running statistics are fixed non-trivial values."""
    def build(m):
        mod = getattr(m.nn, name)(c, **kwargs)
        rng = np.random.default_rng(7)
        with m.no_grad():
            mod.running_mean.copy_(m.tensor(rng.standard_normal(c).astype(np.float32)))
            mod.running_var.copy_(m.tensor(rng.uniform(0.5, 2.0, c).astype(np.float32)))
            mod.num_batches_tracked.fill_(3)
        return mod
    return build


def _norm(name, args=(), kwargs=None, inputs=((4, 3),), variant="", **kw):
    return ModuleInfo(name, args, kwargs or {}, inputs=inputs, variant=variant, tol=_F32, **kw)


NORMS = [
    _norm("BatchNorm1d", (3,)),
    _norm("BatchNorm1d", (3,), inputs=((4, 3, 5),), variant="3d"),
    _norm("BatchNorm1d", (3,), {"affine": False, "momentum": None}, variant="cumulative"),
    _norm("BatchNorm1d", (3,), {"track_running_stats": False}, variant="no_stats"),
    _norm("BatchNorm1d", (3,), {"bias": False, "eps": 1e-3}, variant="no_bias"),
    _norm("BatchNorm1d", constructor=_with_stats("BatchNorm1d", 3), inputs=((4, 3, 5),),
          train=False, variant="eval"),
    _norm("BatchNorm1d", (3,), {"track_running_stats": False}, train=False,
          variant="eval_no_stats"),
    _norm("BatchNorm2d", (3,), inputs=((2, 3, 4, 5),)),
    _norm("BatchNorm2d", (3,), {"momentum": 0.3, "affine": False}, inputs=((2, 3, 4, 5),),
          variant="no_affine"),
    _norm("BatchNorm2d", constructor=_with_stats("BatchNorm2d", 3), inputs=((2, 3, 4, 5),),
          train=False, variant="eval"),
    _norm("BatchNorm3d", (2,), inputs=((2, 2, 3, 2, 2),)),
    _norm("InstanceNorm1d", (3,), inputs=((2, 3, 5),)),
    _norm("InstanceNorm1d", (3,), {"affine": True, "track_running_stats": True},
          inputs=((2, 3, 5),), variant="affine_stats"),
    _norm("InstanceNorm1d", (3,), {"affine": True}, inputs=((3, 5),), variant="unbatched"),
    _norm("InstanceNorm2d", (3,), {"affine": True}, inputs=((2, 3, 4, 4),)),
    _norm("InstanceNorm2d", constructor=_with_stats("InstanceNorm2d", 3,
                                                    track_running_stats=True),
          inputs=((2, 3, 4, 4),), train=False, variant="eval_stats"),
    _norm("LayerNorm", (4,), inputs=((3, 4),)),
    _norm("LayerNorm", ((3, 4),), inputs=((2, 3, 4),), variant="2dims"),
    _norm("LayerNorm", (4,), {"elementwise_affine": False}, inputs=((2, 3, 4),),
          variant="no_affine"),
    _norm("LayerNorm", (5,), {"bias": False, "eps": 1e-3}, inputs=((2, 5),), variant="no_bias"),
    _norm("LayerNorm", (4,), inputs=((3, 4),), train=False, variant="eval"),
    _norm("GroupNorm", (2, 4), inputs=((3, 4, 5),)),
    _norm("GroupNorm", (3, 6), {"affine": False}, inputs=((2, 6, 2, 2),), variant="no_affine"),
    _norm("GroupNorm", (1, 4), {"bias": False}, inputs=((2, 4, 3),), variant="one_group"),
    _norm("RMSNorm", (4,), inputs=((3, 4),)),
    _norm("RMSNorm", ((2, 3),), {"eps": 1e-3, "elementwise_affine": False},
          inputs=((4, 2, 3),), variant="no_affine"),
    _norm("LocalResponseNorm", (3,), inputs=((2, 5, 4),)),
    _norm("LocalResponseNorm", (2,), {"alpha": 0.1, "k": 2.0}, inputs=((2, 4, 3, 3),),
          variant="4d"),
]

DROPOUT = [
    ModuleInfo(name, (0.4,), inputs=(shape,), train=False, variant="eval")
    for name, shape in (("Dropout", (3, 4)), ("Dropout1d", (2, 3, 4)), ("Dropout2d", (2, 3, 2, 2)),
                        ("Dropout3d", (2, 3, 2, 2, 2)), ("AlphaDropout", (3, 4)),
                        ("FeatureAlphaDropout", (2, 3, 4)))
] + [
    ModuleInfo("Dropout", (0.0,), inputs=((3, 4),), variant="p0"),
    ModuleInfo("Dropout2d", (0.0,), {"inplace": True}, inputs=((2, 3, 2, 2),),
               variant="p0_inplace", grad=False),
    ModuleInfo("AlphaDropout", (0.0,), inputs=((3, 4),), variant="p0"),
]


def _pretrained(m):
    w = np.random.default_rng(3).standard_normal((6, 3))
    return m.nn.Embedding.from_pretrained(m.tensor(w, dtype=m.float32), freeze=False,
                                          padding_idx=0)


EMBEDDING = [
    ModuleInfo("Embedding", (10, 3), inputs=(Long((2, 4), 10),)),
    ModuleInfo("Embedding", (10, 3), {"padding_idx": 2}, inputs=(Long((3, 5), 4),),
               variant="padding"),
    ModuleInfo("Embedding", (6, 2), {"scale_grad_by_freq": True}, inputs=(Long((8,), 3),),
               variant="freq"),
    ModuleInfo("Embedding", (6, 4), {"max_norm": 1.0}, inputs=(Long((2, 3), 6),),
               variant="max_norm"),
    ModuleInfo("Embedding", constructor=_pretrained, inputs=(Long((2, 3), 6),),
               variant="pretrained"),
]

DISTANCE = [
    ModuleInfo("CosineSimilarity", inputs=((3, 4), (3, 4))),
    ModuleInfo("CosineSimilarity", (0, 1e-6), inputs=((4, 3), (4, 1)), variant="dim0"),
    ModuleInfo("PairwiseDistance", inputs=((3, 4), (3, 4))),
    ModuleInfo("PairwiseDistance", (1.0, 1e-3, True), inputs=((3, 4), (4,)), variant="l1"),
]

INFOS = NORMS + DROPOUT + EMBEDDING + DISTANCE
