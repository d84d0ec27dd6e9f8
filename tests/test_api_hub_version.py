"""torch.hub's cache directory and cached-checkpoint loading, TorchVersion's comparisons,
``Tensor.map2_`` and the ``sym_constrain_range`` checks, against torch 2.13."""

import pytest
import torch
from torch.torch_version import TorchVersion as TorchTV

import graphgrad as gg
from graphgrad.torch_version import TorchVersion

PAIRS = [("2.13.0", "2.1"), ("0.1.0", "0.10"), ("1.0.0", "1.0"), ("2.13.0+cpu", "2.13.0"),
         ("2.0.0a0", "2.0.0"), ("2.13.0", (2, 9)), ("0.1.0", (0, 1, 0)), ("1.10", "1.9.9"),
         ("2.1.0rc1", "2.1.0"), ("3", "2.99")]


@pytest.mark.parametrize("a,b", PAIRS)
def test_torch_version_compares_as_torch(a, b):
    ours, theirs = TorchVersion(a), TorchTV(a)
    for op in ("__lt__", "__le__", "__gt__", "__ge__", "__eq__"):
        assert getattr(ours, op)(b) == getattr(theirs, op)(b), (a, op, b)
    assert str(ours) == a and isinstance(gg.__version__, str) and gg.__version__ >= "0.1"


def test_hub_dir_follows_torch_home(monkeypatch, tmp_path):
    for env in ({"TORCH_HOME": str(tmp_path / "th")}, {"XDG_CACHE_HOME": str(tmp_path / "x")}):
        monkeypatch.delenv("TORCH_HOME", raising=False)
        monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
        for k, v in env.items():
            monkeypatch.setenv(k, v)
        assert gg.hub.get_dir() == torch.hub.get_dir()
    gg.hub.set_dir(tmp_path / "mine")
    try:
        assert gg.hub.get_dir() == str(tmp_path / "mine")
    finally:
        gg.hub._hub_dir = None


def test_load_state_dict_from_url_reads_the_cache(tmp_path):
    state = {"w": gg.arange(6.0).reshape(2, 3), "b": gg.ones(3)}
    gg.save(state, str(tmp_path / "net-abc123.pt"))
    got = gg.hub.load_state_dict_from_url("https://example.invalid/models/net-abc123.pt",
                                          model_dir=str(tmp_path))
    assert set(got) == {"w", "b"} and got["w"].tolist() == state["w"].tolist()
    from graphgrad.utils import model_zoo

    assert model_zoo.load_url is gg.hub.load_state_dict_from_url
    with pytest.raises(NotImplementedError, match="hubconf"):
        gg.hub.load("pytorch/vision", "resnet18")


def test_map2_and_sym_constrain_range():
    a, b, c = [1.0, 2.0], [3.0, 4.0], [5.0]
    fn = lambda x, y, z: x + y * z  # noqa: E731
    assert gg.tensor(a).map2_(gg.tensor(b), gg.tensor(c), fn).tolist() == \
        torch.tensor(a).map2_(torch.tensor(b), torch.tensor(c), fn).tolist()
    for args in ((3, None, None), (3, 0, 5), (3, 4, 5), (7, 0, 5)):
        outcome = []
        for m in (gg, torch):
            try:
                outcome.append(m.sym_constrain_range(args[0], min=args[1], max=args[2]))
            except RuntimeError as e:
                outcome.append(str(e))
        assert outcome[0] == outcome[1], args
    assert gg.sym_fresh_size(5) == torch.sym_fresh_size(5)
    assert gg.thread_safe_generator() is torch.thread_safe_generator() is None
