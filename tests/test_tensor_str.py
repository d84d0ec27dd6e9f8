"""Byte-for-byte comparison of graphgrad's tensor repr against torch's, which is the oracle."""

import importlib.util
import math
from pathlib import Path

import numpy as np
import pytest
import torch

try:
    from graphgrad._tensor_str import format_tensor, get_printoptions, set_printoptions
except ImportError:  # the package may not be importable yet; this module needs only numpy
    _path = Path(__file__).resolve().parents[1] / "src" / "graphgrad" / "_tensor_str.py"
    _spec = importlib.util.spec_from_file_location("graphgrad_tensor_str", _path)
    _module = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(_module)
    format_tensor = _module.format_tensor
    get_printoptions = _module.get_printoptions
    set_printoptions = _module.set_printoptions

_rng = np.random.default_rng(20240517)
_NAN, _INF = math.nan, math.inf


def _normal(*shape, scale=1.0):
    return _rng.standard_normal(shape) * scale


def _ints(*shape, low=-50, high=50):
    return _rng.integers(low, high, size=shape)


# (id, data, dtype_name); data is built once here so torch and graphgrad see identical values.
CASES = [
    # 0-d
    ("scalar_neg_int_valued", np.array(-12.0), "float32"),
    ("scalar_int64", np.array(3), "int64"),
    ("scalar_bool", np.array(True), "bool"),
    ("scalar_fraction", np.array(0.123456), "float32"),
    ("scalar_nan", np.array(_NAN), "float32"),
    ("scalar_inf", np.array(-_INF), "float32"),
    ("scalar_tiny", np.array(1e-5), "float32"),
    ("scalar_huge", np.array(1e10), "float32"),
    ("scalar_zero", np.array(0.0), "float32"),
    ("scalar_neg_zero", np.array(-0.0), "float32"),
    ("scalar_int32", np.array(-7), "int32"),
    ("scalar_float64", np.array(2.5), "float64"),
    ("scalar_float16", np.array(0.3333), "float16"),
    ("scalar_uint8", np.array(200), "uint8"),
    # 1-d floats
    ("int_valued", np.array([1.0, 2.0]), "float32"),
    ("fixed_point", np.array([0.12345, 2.0]), "float32"),
    ("one_element", np.array([4.5]), "float32"),
    ("random_5", _normal(5), "float32"),
    ("negatives_alignment", np.array([-1.5, 2.25, -100.125, 7.0]), "float32"),
    ("sci_tiny", np.array([1e-5, 1.0]), "float32"),
    ("sci_ratio", np.array([1e5, 1.0, 3.0]), "float32"),
    ("sci_huge_int_valued", np.array([1e9, 2.0]), "float32"),
    ("int_valued_ratio_ok", np.array([999.0, 1.0, -5.0]), "float32"),
    ("nan_inf_mixed", np.array([_NAN, 1.5, _INF, -_INF, -2.0]), "float32"),
    ("nan_inf_int_valued", np.array([_NAN, 1.0, _INF, -_INF]), "float32"),
    ("only_nonfinite", np.array([_NAN, _INF, -_INF]), "float32"),
    ("all_zeros", np.zeros(4), "float32"),
    ("zeros_and_neg_zero", np.array([0.0, -0.0, 3.0]), "float32"),
    ("sci_with_nan", np.array([1e-7, _NAN, 5.0]), "float32"),
    ("float64_values", _normal(6, scale=10), "float64"),
    ("float64_int_valued", np.array([1.0, -2.0, 30.0]), "float64"),
    ("float16_values", _normal(6), "float16"),
    ("float16_sci", np.array([1e-3, 60000.0]), "float16"),
    ("long_row_wraps", _normal(50), "float32"),
    ("long_row_sci_wraps", _normal(40, scale=1e6), "float32"),
    # 1-d ints and bools
    ("int64_values", _ints(8), "int64"),
    ("int32_values", _ints(8), "int32"),
    ("int16_values", _ints(6, low=-30000, high=30000), "int16"),
    ("int8_values", _ints(6, low=-128, high=127), "int8"),
    ("uint8_values", _ints(6, low=0, high=255), "uint8"),
    ("bool_values", np.array([True, False, True]), "bool"),
    ("long_int_row_wraps", _ints(100, low=-1000, high=1000), "int64"),
    # empty
    ("empty_float32", np.zeros((0,)), "float32"),
    ("empty_int64", np.zeros((0,)), "int64"),
    ("empty_bool", np.zeros((0,)), "bool"),
    ("empty_float64", np.zeros((0,)), "float64"),
    ("empty_int32", np.zeros((0,)), "int32"),
    ("empty_0x3", np.zeros((0, 3)), "float32"),
    ("empty_0x3_int64", np.zeros((0, 3)), "int64"),
    ("empty_2x0x3", np.zeros((2, 0, 3)), "float32"),
    ("empty_2x0x3_uint8", np.zeros((2, 0, 3)), "uint8"),
    # n-d
    ("matrix_2x3", _normal(2, 3), "float32"),
    ("matrix_int_valued", np.array([[1.0, 2.0, 3.0], [-4.0, 5.0, 60.0]]), "float32"),
    ("matrix_sci", np.array([[1e-6, 2.0], [3.0, 4e4]]), "float32"),
    ("cube_2x3x4", _normal(2, 3, 4), "float32"),
    ("rank4_2x2x2x2", _normal(2, 2, 2, 2), "float32"),
    ("rank4_ints", _ints(2, 2, 2, 2), "int64"),
    ("matrix_int32", _ints(3, 4), "int32"),
    ("matrix_bool", _rng.integers(0, 2, size=(3, 4)).astype(bool), "bool"),
    ("matrix_float64", _normal(3, 2), "float64"),
    ("matrix_float16", _normal(2, 4), "float16"),
    ("column_5x1", _normal(5, 1), "float32"),
    ("wide_matrix_wraps", _normal(3, 30), "float32"),
    # summarisation
    ("summarised_2000", _normal(2000), "float32"),
    ("summarised_1100_ints", _ints(1100), "int64"),
    ("summarised_arange", np.arange(1100.0), "float32"),
    ("summarised_40x40", _normal(40, 40), "float32"),
    ("summarised_3x1000", _normal(3, 1000), "float32"),
    ("summarised_12x12x12", _normal(12, 12, 12), "float64"),
    ("summarised_hidden_outlier", np.concatenate([np.ones(5), [1e9], np.ones(1100)]), "float32"),
    ("summarised_bool", _rng.integers(0, 2, size=(1200,)).astype(bool), "bool"),
]

_IDS = [case[0] for case in CASES]


@pytest.fixture(autouse=True)
def _default_printoptions():
    set_printoptions(profile="default")
    torch.set_printoptions(profile="default")
    yield
    set_printoptions(profile="default")
    torch.set_printoptions(profile="default")


def _prepare(data, dtype_name):
    """Cast once with numpy so both sides hold exactly the same element values."""
    array = np.ascontiguousarray(np.asarray(data).astype(dtype_name))
    return array, torch.from_numpy(array.copy())


@pytest.mark.parametrize("case_id, data, dtype_name", CASES, ids=_IDS)
def test_repr_matches_torch(case_id, data, dtype_name):
    array, tensor = _prepare(data, dtype_name)
    assert tensor.dtype == getattr(torch, dtype_name)
    assert format_tensor(array, dtype_name=dtype_name) == repr(tensor)


def test_str_equals_repr_in_torch():
    tensor = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    assert str(tensor) == repr(tensor) == format_tensor(tensor.numpy(), dtype_name="float32")


def test_documented_pow_backward_example():
    t = torch.tensor(3.0, requires_grad=True)
    expected = repr(t ** 2)
    assert expected == "tensor(9., grad_fn=<PowBackward0>)"
    got = format_tensor(np.array(9.0, np.float32), dtype_name="float32",
                        grad_fn_name="PowBackward0", is_leaf=False)
    assert got == expected


def test_multiline_float64_requires_grad_layout():
    tensor = torch.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=torch.float64, requires_grad=True)
    expected = "tensor([[1., 2.],\n        [3., 4.]], dtype=torch.float64, requires_grad=True)"
    assert repr(tensor) == expected
    got = format_tensor(np.array([[1.0, 2.0], [3.0, 4.0]]), dtype_name="float64",
                        requires_grad=True)
    assert got == expected


_GRAD_CASES = [
    ("leaf_scalar", np.array(2.0), "float32", None),
    ("leaf_vector", _normal(4), "float32", None),
    ("leaf_matrix_float64", _normal(3, 3), "float64", None),
    ("leaf_float16", _normal(3), "float16", None),
    ("leaf_long_row", _normal(60), "float32", None),
    ("leaf_summarised", _normal(2000), "float32", None),
    ("pow_vector", _normal(5), "float32", lambda t: t ** 2),
    ("mul_matrix_float64", _normal(2, 3), "float64", lambda t: t * 3),
    ("sum_scalar", _normal(4), "float32", lambda t: t.sum()),
    ("add_long_row", _normal(45), "float64", lambda t: t + 1),
    ("exp_cube", _normal(2, 2, 3), "float32", lambda t: t.exp()),
    # A suffix that would overrun linewidth moves to its own line under the opening bracket.
    ("suffix_wraps", _normal(9, scale=1e3), "float64", lambda t: t.tanh() * 1e3),
]


@pytest.mark.parametrize("case_id, data, dtype_name, op", _GRAD_CASES,
                         ids=[case[0] for case in _GRAD_CASES])
def test_autograd_suffixes_match_torch(case_id, data, dtype_name, op):
    _, tensor = _prepare(data, dtype_name)
    tensor.requires_grad_(True)
    result = tensor if op is None else op(tensor)
    grad_fn_name = None if result.grad_fn is None else type(result.grad_fn).__name__
    got = format_tensor(result.detach().numpy(), dtype_name=dtype_name,
                        requires_grad=result.requires_grad, grad_fn_name=grad_fn_name,
                        is_leaf=result.is_leaf)
    assert got == repr(result)


_OPTION_CASES = [
    ({"precision": 2}, _normal(2, 3)),
    ({"precision": 6}, _normal(5)),
    ({"precision": 0}, np.array([0.6, 1.4, 2.5])),
    ({"sci_mode": False}, np.array([1e-5, 1.0])),
    ({"sci_mode": False}, np.array([1e10, 1.0])),
    ({"sci_mode": True}, np.array([0.5, 1.0, 2.0])),
    ({"sci_mode": True}, np.array([1.0, 2.0])),
    ({"threshold": 5}, np.arange(10.0)),
    ({"threshold": 5}, _normal(4, 4)),
    ({"linewidth": 40}, _normal(20)),
    ({"linewidth": 200}, _normal(3, 30)),
    ({"linewidth": 10}, _normal(6)),
    ({"edgeitems": 1}, _normal(2000)),
    ({"edgeitems": 0}, _normal(2000)),
    ({"edgeitems": 0}, _normal(40, 40)),
    ({"edgeitems": 0}, _normal(5)),
    ({"profile": "full"}, _normal(1100)),
    ({"profile": "full"}, _normal(40, 30)),
    ({"profile": "short"}, _normal(2000)),
    ({"profile": "short"}, _normal(3, 3)),
    ({"profile": "default"}, _normal(2000)),
    ({"profile": "short", "precision": 3}, _normal(3, 3)),
]


@pytest.mark.parametrize("options, data", _OPTION_CASES,
                         ids=[f"{i}-{sorted(opts.items())}" for i, (opts, _) in
                              enumerate(_OPTION_CASES)])
def test_printoptions_match_torch(options, data):
    set_printoptions(**options)
    torch.set_printoptions(**options)
    assert get_printoptions() == _torch_options()
    for dtype_name in ("float32", "int64"):
        array, tensor = _prepare(data if dtype_name == "float32" else data * 10, dtype_name)
        assert format_tensor(array, dtype_name=dtype_name) == repr(tensor)


def _torch_options():
    return torch._tensor_str.get_printoptions()


def test_omitting_sci_mode_resets_it():
    set_printoptions(sci_mode=True)
    torch.set_printoptions(sci_mode=True)
    set_printoptions(precision=3)
    torch.set_printoptions(precision=3)
    assert get_printoptions() == _torch_options()
    array, tensor = _prepare(np.array([0.5, 2.0]), "float32")
    assert format_tensor(array, dtype_name="float32") == repr(tensor)


def test_default_printoptions_values():
    assert get_printoptions() == {"precision": 4, "threshold": 1000, "edgeitems": 3,
                                  "linewidth": 80, "sci_mode": None}
    assert get_printoptions() == _torch_options()
