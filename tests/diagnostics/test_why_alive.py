"""memory.why_alive: the shortest chain from a root to the bytes, on five holders (a list on
an object, a module-level list, a dict cache, a hook's closure, a ctx attribute cycle) and
for the largest live buffers."""

import gc

import pytest

import graphgrad as torch
from graphgrad import memory

HISTORY = []


@pytest.fixture(autouse=True)
def track_everything():
    before = memory.min_tracked_bytes()
    memory.set_min_tracked_bytes(0)
    gc.collect()
    yield
    memory.set_min_tracked_bytes(before)
    HISTORY.clear()


class Trainer:
    def __init__(self):
        self.history = []
        self.cache = {}


def _graph(n=128):
    x = torch.randn(64, n, requires_grad=True)
    return x, (x * 3).sum()


def test_a_list_on_an_object_through_the_graph_to_a_saved_tensor():
    trainer = Trainer()
    x, loss = _graph(1000)
    trainer.history.append(loss)
    del loss
    r = memory.why_alive(x)
    assert str(r).startswith("x ->")  # the local itself is the shortest chain
    del x
    r = memory.why_alive(top=1)[0]
    text = str(r)
    assert text.startswith("trainer.history[-1] -> Tensor[] -> SumBackward0 -> MulBackward0"), text
    assert "saved[0] -> Tensor[64, 1000] -> 250.0 KiB" in text and r.root == "local"


def test_a_module_level_list():
    x, loss = _graph(1100)
    HISTORY.append(loss)
    del loss, x
    text = str(memory.why_alive(top=1)[0])
    assert text.split(" -> ")[0].endswith("HISTORY[-1]"), text
    assert "module-level name" in text


def test_a_dict_cache_and_a_hook_closure():
    trainer = Trainer()
    trainer.cache["features"] = torch.randn(300, 300)
    r = memory.why_alive(trainer.cache["features"])
    assert str(r).startswith("trainer.cache['features'] -> Tensor[300, 300] -> 351.6 KiB")

    def make_hook():
        captured = torch.randn(200, 100)
        return lambda g: g * captured.mean()
    hooks = [make_hook()]
    r = memory.why_alive(hooks[0].__closure__[0].cell_contents)
    assert "closure 'captured'" in str(r) and str(r).startswith("hooks[-1]")


def test_a_ctx_attribute_cycle_is_collectable():
    class Keep(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x * 2
            ctx.y = y  # a cycle once y is the output: node -> ctx -> y -> node
            return y

        @staticmethod
        def backward(ctx, g):
            return g * 2

    gc.collect()
    w = torch.randn(250, 250, requires_grad=True)
    Keep.apply(w)
    del w
    r = memory.why_alive(top=1)[0]
    assert r.root is None and r.collectable, str(r)
    assert "unreachable cycle, collectable" in str(r)
    gc.collect()
