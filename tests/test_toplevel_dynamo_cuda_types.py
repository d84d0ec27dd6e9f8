"""torch._dynamo's pre-torch.compiler names and torch.cuda's legacy tensor types, as a CPU-only
torch 2.13 answers them (the torch.compile tutorial calls torch._dynamo.reset(); DCGAN-era
programs test isinstance(x, torch.cuda.FloatTensor))."""

import pytest
import torch

import graphgrad as gg
import graphgrad._dynamo  # noqa: F401 - torch._dynamo is imported explicitly too


@pytest.mark.parametrize("name", ["FloatTensor", "DoubleTensor", "HalfTensor", "LongTensor",
                                  "BFloat16Tensor", "BoolTensor"])
def test_cuda_legacy_types(name):
    ours, theirs = getattr(gg.cuda, name), getattr(torch.cuda, name)
    assert isinstance(gg.ones(2), ours) == isinstance(torch.ones(2), theirs) is False
    for _lib, cls in ((gg, ours), (torch, theirs)):
        with pytest.raises(TypeError, match="not compiled with CUDA enabled"):
            cls(2)


def test_dynamo_reset_and_config():
    f = gg.compile(lambda x: x * 2)
    f(gg.ones(3))
    gg._dynamo.reset()
    assert gg._dynamo.config.cache_size_limit == torch._dynamo.config.cache_size_limit
    assert gg._dynamo.is_compiling() is torch._dynamo.is_compiling() is False
    assert "inductor" in gg._dynamo.list_backends()
    assert gg.allclose(gg._dynamo.optimize("inductor")(lambda x: x + 1)(gg.ones(2)),
                       gg.full((2,), 2.0))
