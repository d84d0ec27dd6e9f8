"""ModuleInfo records for ``CTCLoss``, ``MultiLabelMarginLoss`` and
``TripletMarginWithDistanceLoss``, loaded by tests/nn/moduleinfo.py (``_family``).

CTC inputs are (log_probs, targets, input_lengths, target_lengths): integer arrays stay
integer tensors without gradients. Functional forms, errors and the CTC decomposition are in
tests/nn/test_loss_extra.py; the CTC op's own samples are in tests/opinfo/ctc.py.
"""

from __future__ import annotations

import sys

import numpy as np

_mi = sys.modules["_gg_moduleinfo"]
ModuleInfo = _mi.ModuleInfo

_rng = np.random.default_rng(4321)
_LP = _rng.standard_normal((6, 3, 5))
_LP = _LP - np.log(np.exp(_LP).sum(2, keepdims=True))
_TARGETS = np.array([[1, 2, 2], [3, 4, 0], [4, 1, 1]])
_CONCAT = np.array([1, 2, 2, 3, 4, 4, 1])
_IL = np.array([6, 5, 4])
_TL = np.array([3, 2, 2])
_ML_TARGET = np.array([[3, 0, -1, 1], [1, 2, 3, 0], [2, -1, 0, 0]])


def _loss(name, inputs, kwargs=None, variant="", **kw):
    return ModuleInfo(name, kwargs=kwargs or {}, inputs=inputs, variant=variant, **kw)


def _cosine_distance(m):
    return m.nn.CosineSimilarity()


INFOS = [
    _loss("CTCLoss", (_LP, _TARGETS, _IL, _TL)),
    _loss("CTCLoss", (_LP, _CONCAT, _IL, _TL), {"reduction": "sum", "blank": 0}, "concat_sum"),
    _loss("CTCLoss", (_LP[:3], _TARGETS, np.array([3, 3, 2]), _TL),
          {"reduction": "none", "zero_infinity": True}, "zero_infinity"),
    _loss("MultiLabelMarginLoss", ((3, 4), _ML_TARGET)),
    _loss("MultiLabelMarginLoss", ((3, 4), _ML_TARGET), {"reduction": "none"}, "none"),
    _loss("MultiLabelMarginLoss", ((4,), _ML_TARGET[0]), {"reduction": "sum"}, "1d"),
    _loss("TripletMarginWithDistanceLoss", ((4, 3), (4, 3), (4, 3))),
    _loss("TripletMarginWithDistanceLoss", ((4, 3), (4, 3), (4, 3)),
          {"margin": 2.0, "swap": True, "reduction": "none"}, "swap"),
    _loss("TripletMarginWithDistanceLoss", ((4, 3), (4, 3), (4, 3)),
          {"distance_function": _cosine_distance, "reduction": "sum"}, "module_distance"),
]
