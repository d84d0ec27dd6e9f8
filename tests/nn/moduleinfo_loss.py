"""ModuleInfo records for the loss modules, loaded by tests/nn/moduleinfo.py (``_family``).

Inputs are (input, target[, ...]): class-index targets are ``Long`` (no gradient), float targets
get one as in torch; class weights are buffers, built as ``lambda m: m.tensor(...)``. Functional
forms, errors and second derivatives are in tests/nn/test_losses.py.
"""

from __future__ import annotations

import sys

import numpy as np

_mi = sys.modules["_gg_moduleinfo"]
ModuleInfo, Long = _mi.ModuleInfo, _mi.Long

_rng = np.random.default_rng(1234)
_W3 = np.array([0.5, 2.0, 1.25])
_PROBS = _rng.uniform(0.05, 0.95, (4, 3))
_BITS = (_rng.random((4, 3)) < 0.5).astype(np.float64)
_SOFT = np.exp(_rng.standard_normal((4, 3)))
_SOFT = _SOFT / _SOFT.sum(1, keepdims=True)
_LOGP = _rng.standard_normal((4, 3))
_LOGP = _LOGP - np.log(np.exp(_LOGP).sum(1, keepdims=True))
_SIGNS = np.where(_rng.random(4) < 0.5, -1.0, 1.0)
_COUNTS = _rng.integers(0, 5, (4, 3)).astype(np.float64)
_IGNORED = np.array([0, 2, -100, 1])


def _weight(values):
    return lambda m: m.tensor(values)


def _loss(name, inputs, kwargs=None, variant="", **kw):
    return ModuleInfo(name, kwargs=kwargs or {}, inputs=inputs, variant=variant, **kw)


_REG = ((4, 3), (4, 3))
LOSSES = [
    _loss("MSELoss", _REG),
    _loss("MSELoss", _REG, {"reduction": "none"}, "none"),
    _loss("L1Loss", _REG),
    _loss("L1Loss", _REG, {"size_average": False}, "legacy_sum"),
    _loss("SmoothL1Loss", _REG, {"beta": 0.5}),
    _loss("HuberLoss", _REG, {"delta": 0.7, "reduction": "sum"}),
    _loss("NLLLoss", ((4, 3), Long((4,), 3))),
    _loss("NLLLoss", ((4, 3), _IGNORED), {"weight": _weight(_W3)}, "weight_ignore"),
    _loss("NLLLoss", ((2, 3, 2, 2), Long((2, 2, 2), 3)), {"reduction": "none"}, "spatial"),
    _loss("CrossEntropyLoss", ((4, 3), Long((4,), 3))),
    _loss("CrossEntropyLoss", ((4, 3), _IGNORED),
          {"weight": _weight(_W3), "label_smoothing": 0.2}, "weight_smoothing_ignore"),
    _loss("CrossEntropyLoss", ((3,), np.array(1)), {"ignore_index": 0}, "unbatched"),
    _loss("CrossEntropyLoss", ((2, 3, 4), Long((2, 4), 3)), {"reduction": "sum"}, "3d"),
    _loss("CrossEntropyLoss", ((4, 3), _SOFT), {"label_smoothing": 0.1}, "probabilities"),
    _loss("BCELoss", (_PROBS, _BITS)),
    _loss("BCELoss", (_PROBS, _PROBS[::-1].copy()), {"weight": _weight(_W3)}, "weight"),
    _loss("BCEWithLogitsLoss", ((4, 3), _BITS)),
    _loss("BCEWithLogitsLoss", ((4, 3), _PROBS),
          {"weight": _weight(_W3), "pos_weight": _weight(_W3[::-1].copy())}, "pos_weight"),
    _loss("KLDivLoss", (_LOGP, _SOFT), {"reduction": "batchmean"}),
    _loss("KLDivLoss", (_LOGP, np.log(_SOFT)), {"reduction": "sum", "log_target": True},
          "log_target"),
    _loss("PoissonNLLLoss", ((4, 3), _COUNTS), {"full": True}),
    _loss("PoissonNLLLoss", (_PROBS, _COUNTS), {"log_input": False}, "rate"),
    _loss("GaussianNLLLoss", ((4, 3), (4, 3), _PROBS), {"full": True}),
    _loss("HingeEmbeddingLoss", ((4,), _SIGNS), {"margin": 0.5}),
    # torch has no derivative for soft_margin_loss's target: an integer one gets none
    _loss("SoftMarginLoss", ((4,), _SIGNS.astype(np.int64))),
    _loss("MultiLabelSoftMarginLoss", ((4, 3), _BITS), {"weight": _weight(_W3)}),
    _loss("CosineEmbeddingLoss", ((4, 3), (4, 3), _SIGNS), {"margin": 0.2}),
    _loss("MarginRankingLoss", ((4,), (4,), _SIGNS), {"margin": 0.1}),
    _loss("MultiMarginLoss", ((4, 3), Long((4,), 3)), {"p": 2, "weight": _weight(_W3)}),
    _loss("TripletMarginLoss", ((4, 3), (4, 3), (4, 3)), {"margin": 0.5, "swap": True}),
]

INFOS = LOSSES
