"""F.embedding_bag and nn.EmbeddingBag beyond the ModuleInfo records: the argument errors
torch raises, ``from_pretrained`` (EmbeddingBag and Embedding) and the functional form with
per-sample weights, compared with torch.
"""

import importlib.util
import pathlib

import numpy as np
import pytest

_spec = importlib.util.spec_from_file_location(
    "_gg_test_helpers", pathlib.Path(__file__).parents[1] / "autograd" / "_helpers.py")
h = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(h)

W = np.random.default_rng(0).standard_normal((6, 3))


def _bag(m, input, offsets=None, **kw):
    w = m.tensor(W)
    off = None if offsets is None else m.tensor(offsets)
    return m.nn.functional.embedding_bag(m.tensor(input), w, off, **kw)


ERRORS = [
    ("2d_with_offsets", lambda m: _bag(m, [[1, 2]], [0]), "offsets has to be None"),
    ("1d_no_offsets", lambda m: _bag(m, [1, 2]), "offsets has to be a 1D Tensor"),
    ("2d_offsets", lambda m: _bag(m, [1, 2], [[0]]), "offsets has to be a 1D Tensor"),
    ("3d_input", lambda m: _bag(m, [[[1]]]), "input has to be 1D or 2D"),
    ("mode", lambda m: _bag(m, [[1, 2]], mode="min"), "mode has to be one of"),
    ("max_freq", lambda m: _bag(m, [[1, 2]], mode="max", scale_grad_by_freq=True),
     "max mode does not support"),
    ("psw_mean", lambda m: _bag(m, [[1, 2]], per_sample_weights=m.ones(1, 2, dtype=m.float64)),
     "per_sample_weights is only supported"),
    ("psw_shape", lambda m: _bag(m, [[1, 2]], mode="sum", per_sample_weights=m.ones(2)),
     "must have the same shape"),
    ("first_offset", lambda m: _bag(m, [1, 2, 3], [1, 2]), "offsets[0] has to be 0"),
    ("last_offset", lambda m: _bag(m, [1, 2, 3], [0, 4]), "can not be greater"),
    ("padding_idx", lambda m: _bag(m, [[1, 2]], padding_idx=6), "padding_idx must be within"),
    ("weight_dim", lambda m: m.nn.functional.embedding_bag(m.tensor([[1]]), m.ones(3)),
     "weight has to be a 2D Tensor"),
    ("module_padding", lambda m: m.nn.EmbeddingBag(4, 2, padding_idx=4), "padding_idx"),
    ("pretrained_dim", lambda m: m.nn.EmbeddingBag.from_pretrained(m.ones(3)), "2-dimensional"),
]


@pytest.mark.parametrize("name, prog, phrase", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_match_torch(name, prog, phrase):
    h.raises_like(prog, phrase)


@pytest.mark.parametrize("kw", [{"mode": "sum"}, {"mode": "mean"}, {"mode": "max"},
                                {"mode": "sum", "padding_idx": 1},
                                {"include_last_offset": True, "mode": "mean"}])
def test_functional_matches_torch(kw):
    h.same(lambda m: _bag(m, [1, 1, 4, 0, 5, 2, 1], [0, 3, 3, 7], **kw))


def test_per_sample_weights_gradient():
    def prog(m):
        w = m.tensor(W, requires_grad=True)
        psw = m.tensor([0.5, -1.0, 2.0, 3.0, 1.5], dtype=m.float64, requires_grad=True)
        out = m.nn.functional.embedding_bag(m.tensor([1, 3, 3, 0, 1]), w, m.tensor([0, 2]),
                                            mode="sum", per_sample_weights=psw, padding_idx=0)
        (out * m.tensor([[1.0, 2.0, -1.0], [0.5, 0.0, 3.0]], dtype=m.float64)).sum().backward()
        return out, w.grad, psw.grad
    h.same(prog)


@pytest.mark.parametrize("cls", ["EmbeddingBag", "Embedding"])
@pytest.mark.parametrize("freeze", [True, False])
def test_from_pretrained(cls, freeze):
    def prog(m):
        layer = getattr(m.nn, cls).from_pretrained(m.tensor(W), freeze=freeze, padding_idx=2)
        out = layer(m.tensor([[0, 2, 5], [1, 1, 3]]))
        return out, layer.weight.requires_grad, repr(layer)
    h.same(prog)
