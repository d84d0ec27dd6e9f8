"""graphgrad.random: torch.random's seeding functions and fork_rng, on the same calls as torch.

Streams differ from torch's (graphgrad draws from PCG64), so tests compare behaviour: what a
seed, a saved state or a forked block reproduces.
"""

import pytest
import torch

import graphgrad as gg


@pytest.mark.parametrize("name", ["manual_seed", "seed", "initial_seed", "get_rng_state",
                                  "set_rng_state", "fork_rng", "Generator", "default_generator"])
def test_names(name):
    assert hasattr(torch.random, name) and hasattr(gg.random, name)


def test_same_objects_as_top_level():
    assert gg.random.manual_seed is gg.manual_seed
    assert gg.random.default_generator is gg.default_generator


@pytest.mark.parametrize("m", [torch, gg])
def test_manual_seed_and_initial_seed(m):
    m.random.manual_seed(123)
    assert m.random.initial_seed() == 123 == m.initial_seed()
    a = m.rand(3).tolist()
    m.random.manual_seed(123)
    assert m.rand(3).tolist() == a


@pytest.mark.parametrize("m", [torch, gg])
def test_state_round_trip(m):
    m.manual_seed(0)
    state = m.random.get_rng_state()
    a = m.rand(4).tolist()
    m.random.set_rng_state(state)
    assert m.rand(4).tolist() == a
    assert str(state.dtype) == "torch.uint8"


@pytest.mark.parametrize("m", [torch, gg])
def test_fork_rng_restores(m):
    m.manual_seed(5)
    before = m.random.get_rng_state()
    with m.random.fork_rng():
        inside = m.rand(3).tolist()
    after = m.rand(3).tolist()
    assert inside == after
    m.random.set_rng_state(before)
    assert m.rand(3).tolist() == inside


@pytest.mark.parametrize("m", [torch, gg])
def test_fork_rng_disabled_and_exception(m):
    m.manual_seed(5)
    with m.random.fork_rng(enabled=False):
        first = m.rand(2).tolist()
    assert m.rand(2).tolist() != first
    m.manual_seed(5)
    with pytest.raises(ValueError), m.random.fork_rng():
        m.rand(2)
        raise ValueError
    assert m.rand(2).tolist() == first


def test_fork_rng_devices():
    for m in (torch, gg):
        with m.random.fork_rng(devices=[]):
            m.rand(1)
        with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"), \
                m.random.fork_rng(devices=[0]):
            pass


@pytest.mark.parametrize("m", [torch, gg])
def test_seed_returns_int(m):
    s = m.random.seed()
    assert isinstance(s, int) and m.random.initial_seed() == s
