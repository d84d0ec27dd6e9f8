"""Transformer, TransformerDecoder(Layer) beyond the ModuleInfo records: the causal mask, its
detection, input checks, xavier initialisation and loading a whole torch Transformer's
state_dict (compared with torch's output).
"""

import importlib.util
import pathlib

import numpy as np
import pytest
import torch

import graphgrad as gg

_spec = importlib.util.spec_from_file_location(
    "_gg_test_helpers", pathlib.Path(__file__).parents[1] / "autograd" / "_helpers.py")
h = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(h)


@pytest.mark.parametrize("sz", [1, 3, 5])
def test_generate_square_subsequent_mask(sz):
    h.same(lambda m: m.nn.Transformer.generate_square_subsequent_mask(sz))
    h.same(lambda m: m.nn.Transformer.generate_square_subsequent_mask(sz, dtype=m.float64))
    h.same(lambda m: m.nn.Transformer(8, 2, 1, 1, 16).generate_square_subsequent_mask(sz))


def _model(m, **kw):
    m.manual_seed(0)
    return m.nn.Transformer(8, 2, 1, 1, 16, dropout=0.0, **kw)


def test_input_checks():
    h.raises_like(lambda m: _model(m)(m.ones(5, 3, 8), m.ones(4, 2, 8)), "batch number")
    h.raises_like(lambda m: _model(m, batch_first=True)(m.ones(3, 5, 8), m.ones(2, 4, 8)),
                  "batch number")
    h.raises_like(lambda m: _model(m)(m.ones(5, 3, 8), m.ones(4, 3, 6)), "feature number")
    h.raises_like(lambda m: m.nn.TransformerDecoderLayer(8, 2, activation="tanh"),
                  "activation should be relu/gelu")
    # tgt_is_causal=True is a hint about a mask: without the mask torch refuses.
    h.raises_like(lambda m: _model(m)(m.ones(5, 3, 8), m.ones(4, 3, 8), tgt_is_causal=True),
                  "attn_mask")


def test_load_torch_state_dict_and_causal_detection():
    torch.manual_seed(1)
    t_model = torch.nn.Transformer(8, 2, 2, 2, 16, dropout=0.0).double()
    g_model = gg.nn.Transformer(8, 2, 2, 2, 16, dropout=0.0).double()
    g_model.load_state_dict({k: gg.tensor(v.numpy()) for k, v in t_model.state_dict().items()})
    rng = np.random.default_rng(0)
    src, tgt = rng.standard_normal((5, 3, 8)), rng.standard_normal((4, 3, 8))
    t_mask = torch.nn.Transformer.generate_square_subsequent_mask(4, dtype=torch.float64)
    g_mask = gg.nn.Transformer.generate_square_subsequent_mask(4, dtype=gg.float64)
    for hint in (None, True, False):  # None detects the causal mask; the result is the same
        expected = t_model(torch.tensor(src), torch.tensor(tgt), tgt_mask=t_mask,
                           tgt_is_causal=hint)
        actual = g_model(gg.tensor(src), gg.tensor(tgt), tgt_mask=g_mask, tgt_is_causal=hint)
        np.testing.assert_allclose(actual.detach().numpy(), expected.detach().numpy(),
                                   rtol=1e-10, atol=1e-10)


def test_detect_is_causal_mask():
    from torch.nn.modules.transformer import _detect_is_causal_mask as torch_detect

    from graphgrad.nn.modules.transformer_decoder import _detect_is_causal_mask

    for mask in [np.triu(np.full((4, 4), -np.inf), 1), np.zeros((4, 4)),
                 np.triu(np.full((3, 3), -np.inf), 1)]:
        for hint in (None, True, False):
            assert _detect_is_causal_mask(gg.tensor(mask), hint, 4) == torch_detect(
                torch.tensor(mask), hint, 4)
    assert _detect_is_causal_mask(None, None, 4) is torch_detect(None, None, 4)


def test_xavier_initialisation_and_structure():
    model = gg.nn.Transformer(16, 4, 1, 1, 32)
    t_model = torch.nn.Transformer(16, 4, 1, 1, 32)
    assert list(model.state_dict()) == list(t_model.state_dict())
    w = model.decoder.layers[0].linear1.weight.detach().numpy()
    bound = np.sqrt(6.0 / (16 + 32))
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.8 * bound
    # One-dimensional parameters keep their layer's initialisation (LayerNorm: ones).
    assert (model.decoder.norm.weight.detach().numpy() == 1).all()
    assert (model.d_model, model.nhead, model.batch_first) == (16, 4, False)


def test_dropout_trains_and_backward_reaches_every_parameter():
    model = gg.nn.Transformer(8, 2, 1, 1, 16, dropout=0.5)
    out = model(gg.randn(5, 3, 8), gg.randn(4, 3, 8))
    out.sum().backward()
    assert all(p.grad is not None for p in model.parameters())
