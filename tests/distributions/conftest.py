"""Both libraries validate distribution arguments by default (torch's ``__debug__`` default);
a test elsewhere in the same worker process that switched either off must not change what the
error-parity tests here compare."""

import pytest
import torch

import graphgrad as gg


@pytest.fixture(autouse=True)
def default_validation():
    before = (torch.distributions.Distribution._validate_args,
              gg.distributions.Distribution._validate_args)
    torch.distributions.Distribution.set_default_validate_args(True)
    gg.distributions.Distribution.set_default_validate_args(True)
    yield
    torch.distributions.Distribution.set_default_validate_args(before[0])
    gg.distributions.Distribution.set_default_validate_args(before[1])
