"""ModuleInfo records for the recurrent layers (RNN, LSTM, GRU and their cells) and attention
(MultiheadAttention, TransformerEncoderLayer, TransformerEncoder).

Loaded by tests/nn/moduleinfo.py (``_family``), which appends ``INFOS`` to ``MODULE_INFOS``.
Configurations with dropout run in eval mode, where dropout is off and values must match.
"""

from __future__ import annotations

import sys

import numpy as np

ModuleInfo = sys.modules["_gg_moduleinfo"].ModuleInfo

# A recurrence feeds each step's rounding into the next: float32 drifts a little from torch.
_F32 = {np.float32: (2e-5, 2e-5)}


def _info(name, args, kwargs=None, inputs=((4, 2, 3),), variant="", **kw):
    return ModuleInfo(name, args, kwargs or {}, inputs=inputs, variant=variant, tol=_F32,
                      needs=("linear",), **kw)


def _with_state(inner, wrapper="_WithState"):
    """A layer taking its state as a tuple ``(h, c)``, fed from two positional leaves."""
    def build(m):
        class _Wrap(m.nn.Module):
            def __init__(self):
                super().__init__()
                self.rnn = inner(m)

            def forward(self, x, h, c):
                return self.rnn(x, (h, c))

        _Wrap.__name__ = _Wrap.__qualname__ = wrapper
        return _Wrap()
    return build


RECURRENT = [
    _info("RNN", (3, 5)),
    _info("RNN", (3, 5), {"nonlinearity": "relu", "num_layers": 2}, variant="relu_2layers"),
    _info("RNN", (3, 5, 2, "relu"), variant="positional_nonlinearity"),
    _info("RNN", (3, 5), {"bidirectional": True, "num_layers": 2}, variant="bidirectional"),
    _info("RNN", (3, 5), {"batch_first": True, "bias": False}, inputs=((2, 4, 3),),
          variant="batch_first_no_bias"),
    _info("RNN", (3, 5), inputs=((4, 3),), variant="unbatched"),
    _info("RNN", (3, 5), {"num_layers": 2}, inputs=((4, 2, 3), (2, 2, 5)), variant="h0"),
    _info("RNN", (3, 5), inputs=((4, 3), (1, 5)), variant="unbatched_h0"),
    _info("GRU", (3, 5)),
    _info("GRU", (3, 5), {"num_layers": 2, "bidirectional": True}, variant="bidirectional"),
    _info("GRU", (3, 5), {"batch_first": True}, inputs=((2, 4, 3), (1, 2, 5)),
          variant="batch_first_h0"),
    _info("GRU", (3, 5), {"bias": False}, inputs=((4, 3),), variant="unbatched_no_bias"),
    _info("GRU", (3, 5), {"num_layers": 3, "dropout": 0.5}, train=False, variant="dropout_eval"),
    _info("LSTM", (3, 5)),
    _info("LSTM", (3, 5), {"num_layers": 2}, variant="2layers"),
    _info("LSTM", (3, 5), {"bidirectional": True, "num_layers": 2}, variant="bidirectional"),
    _info("LSTM", (3, 5), {"batch_first": True, "bias": False}, inputs=((2, 4, 3),),
          variant="batch_first_no_bias"),
    _info("LSTM", (3, 5), {"proj_size": 2, "num_layers": 2, "bidirectional": True},
          variant="proj"),
    _info("LSTM", (3, 5), inputs=((4, 3),), variant="unbatched"),
    _info("LSTM", (3, 5), {"num_layers": 2, "dropout": 0.3}, train=False,
          variant="dropout_eval"),
    ModuleInfo("LSTM", constructor=_with_state(lambda m: m.nn.LSTM(3, 5, 2)),
               inputs=((4, 2, 3), (2, 2, 5), (2, 2, 5)), tol=_F32, variant="h0_c0"),
    ModuleInfo("LSTM", constructor=_with_state(lambda m: m.nn.LSTM(3, 5, proj_size=3)),
               inputs=((4, 3), (1, 3), (1, 5)), tol=_F32, variant="unbatched_proj_h0_c0"),
]

CELLS = [
    _info("RNNCell", (3, 5), inputs=((2, 3),)),
    _info("RNNCell", (3, 5), {"nonlinearity": "relu"}, inputs=((2, 3), (2, 5)),
          variant="relu_hx"),
    _info("RNNCell", (3, 5), {"bias": False}, inputs=((3,),), variant="unbatched_no_bias"),
    _info("GRUCell", (3, 5), inputs=((2, 3),)),
    _info("GRUCell", (3, 5), inputs=((3,), (5,)), variant="unbatched_hx"),
    _info("LSTMCell", (3, 5), inputs=((2, 3),)),
    _info("LSTMCell", (3, 5), {"bias": False}, inputs=((3,),), variant="unbatched_no_bias"),
    ModuleInfo("LSTMCell", constructor=_with_state(lambda m: m.nn.LSTMCell(3, 5)),
               inputs=((2, 3), (2, 5), (2, 5)), tol=_F32, variant="hx"),
]

INFOS = RECURRENT + CELLS
