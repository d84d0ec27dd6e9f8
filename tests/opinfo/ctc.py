"""OpInfos for the CTC loss (ops/ctc.py), as ``F.ctc_loss`` and ``torch.ctc_loss``.

Log-probabilities are raw (not normalised) in most samples: torch's gradient assumes a
log_softmax before the loss (Note [CTC gradient]), so it is compared with torch's, not with
finite differences (``gradcheck=False``), and torch has no second derivative. The true gradient
through log_softmax is checked by finite differences in tests/nn/test_loss_extra.py.
"""

from __future__ import annotations

import numpy as np

from .core import FLOAT, ErrorInput, OpInfo, SampleInput


def _ctc(m):
    return m.nn.functional.ctc_loss


def _torch_ctc(m):
    return m.ctc_loss


def _lp(rng, dtype, shape, normalise=True):
    x = rng.standard_normal(shape)
    if normalise:
        x = x - np.log(np.exp(x).sum(-1, keepdims=True))
    return x.astype(dtype)


def _i(a):
    return np.asarray(a, dtype=np.int64)


def _samples(dtype, rng):
    T, N, C = 6, 3, 5
    padded = _i([[1, 2, 2], [3, 0, 0], [4, 1, 1]])
    il, tl = _i([6, 5, 4]), _i([3, 1, 2])
    for red in ("none", "mean", "sum"):
        yield SampleInput(_lp(rng, dtype, (T, N, C)), (padded, il, tl), {"reduction": red},
                          name=f"padded_{red}", gradcheck=False)
    yield SampleInput(_lp(rng, dtype, (T, N, C), False), (padded, il, tl),
                      {"reduction": "none"}, name="raw_logits", gradcheck=False)
    concat = _i([1, 2, 2, 3, 4, 1])
    yield SampleInput(_lp(rng, dtype, (T, N, C)), (concat, (6, 5, 4), (3, 1, 2)),
                      name="concat_tuples", gradcheck=False)
    # a target never holds the blank (torch's docs); blank 2 is not in these
    yield SampleInput(_lp(rng, dtype, (T, N, C)), (_i([[1, 3, 3], [0, 4, 4], [4, 1, 0]]), il, tl),
                      {"blank": 2}, name="blank2", gradcheck=False)
    yield SampleInput(_lp(rng, dtype, (T, 2, C)), (_i([[1, 1], [2, 3]]), _i([6, 6]),
                                                   _i([0, 2])), {"reduction": "none"},
                      name="empty_target", gradcheck=False)
    # "1 1 1" needs 5 steps; 3 are given: no alignment, inf (zeroed with zero_infinity)
    impossible = (_i([[1, 1, 1], [2, 0, 0]]), _i([3, 4]), _i([3, 1]))
    yield SampleInput(_lp(rng, dtype, (4, 2, 3)), impossible, {"reduction": "none"},
                      name="impossible", grad=False)
    yield SampleInput(_lp(rng, dtype, (4, 2, 3)), impossible,
                      {"reduction": "none", "zero_infinity": True}, name="zero_infinity",
                      gradcheck=False)
    yield SampleInput(_lp(rng, dtype, (5, C)), (_i([1, 3]), (5,), (2,)), {"reduction": "none"},
                      name="unbatched", gradcheck=False)
    yield SampleInput(_lp(rng, dtype, (5, C)), (_i([1, 3]), _i(4), _i(2)),
                      name="unbatched_tensors", gradcheck=False)


def _torch_samples(dtype, rng):
    padded = _i([[1, 2], [3, 3]])
    yield SampleInput(_lp(rng, dtype, (5, 2, 4)), (padded, _i([5, 4]), _i([2, 2]), 0, 2),
                      name="sum", gradcheck=False)
    yield SampleInput(_lp(rng, dtype, (5, 2, 4)), (padded, (5, 3), (2, 1), 1, 0, True),
                      name="none_blank1", gradcheck=False)


def _errors():
    lp = np.zeros((5, 2, 4))
    pad = _i([[1, 2], [3, 3]])

    def e(args, kind, name, kwargs=None):
        return ErrorInput(SampleInput(lp, args, kwargs or {}), kind, name)

    yield e((pad, _i([5, 6]), _i([2, 2])), RuntimeError, "input_too_long")
    yield e((pad, _i([5, 5]), _i([2, 3])), RuntimeError, "targets_too_short")
    yield e((pad, _i([5]), _i([2, 2])), RuntimeError, "input_lengths_size")
    yield e((pad, _i([5, 5]), _i([2])), RuntimeError, "target_lengths_size")
    yield e((pad, _i([5, 5]), _i([-1, 2])), RuntimeError, "negative_target_length")
    yield e((_i([1, 2, 3]), _i([5, 5]), _i([2, 2])), RuntimeError, "concat_size")
    yield e((pad, _i([5, 5]), _i([2, 2])), RuntimeError, "blank_range", {"blank": 4})
    yield e((pad, _i([5, 5]), _i([2, 2])), ValueError, "reduction", {"reduction": "x"})
    yield e((pad, _i([5, 5]), (2, 2)), TypeError, "mixed_lengths")


def op_db() -> list[OpInfo]:
    return [
        OpInfo("ctc_loss", _ctc, _samples, dtypes=FLOAT, errors=_errors,
               supports_gradgrad=False),
        OpInfo("torch.ctc_loss", _torch_ctc, _torch_samples, dtypes=FLOAT, variant=True,
               supports_gradgrad=False),
    ]
