"""The op table: ``OP_DB`` lists every OpInfo, family by family.

Each family module (elementwise, reduce, movement, linalg, nn) builds its OpInfos; the generic
tests in tests/ops run all of them against torch as the oracle.
"""

from . import (
    activation,
    activation_extra,
    bitshift,
    complex_fft,
    contraction,
    conv,
    conv3d,
    ctc,
    elementwise,
    elementwise_special,
    gather,
    inplace,
    linalg,
    linalg_ext,
    linalg_lu,
    linalg_more,
    loss,
    misc,
    movement,
    nn,
    normalization,
    pooling,
    pooling3d,
    reduce,
    rnn,
    shaping,
    sorting,
    spatial_extra,
    statistics,
    structure,
)
from .core import ErrorInput, OpInfo, SampleInput

OP_DB: list[OpInfo] = (
    elementwise.op_db() + reduce.op_db() + movement.op_db() + linalg.op_db() + nn.op_db()
    + gather.op_db() + sorting.op_db() + activation.op_db() + structure.op_db()
    + contraction.op_db() + inplace.op_db() + conv.op_db() + pooling.op_db()
)
OP_DB += activation_extra.op_db()
OP_DB += normalization.op_db()
OP_DB += loss.op_db()
OP_DB += linalg_ext.op_db()
OP_DB += linalg_lu.op_db() + linalg_more.op_db()
OP_DB += misc.op_db()
OP_DB += rnn.op_db()
OP_DB += ctc.op_db()
OP_DB += statistics.op_db()
OP_DB += shaping.op_db()
OP_DB += conv3d.op_db() + pooling3d.op_db() + spatial_extra.op_db()
OP_DB += elementwise_special.op_db()
OP_DB += bitshift.op_db()
OP_DB += complex_fft.op_db()

_names = [op.name for op in OP_DB]
if len(set(_names)) != len(_names):
    _dups = sorted({n for n in _names if _names.count(n) > 1})
    raise RuntimeError(f"duplicate OpInfo names: {_dups}")

__all__ = ["OP_DB", "OpInfo", "SampleInput", "ErrorInput"]
