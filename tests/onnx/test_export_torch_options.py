"""torch.onnx.export's own options (dynamo=False, export_params=True, ...) as programs written for
torch pass them: accepted at the values that describe what graphgrad writes, refused otherwise."""

import io

import pytest

import graphgrad as torch


def test_torch_options_at_graphgrads_values_are_accepted():
    buf = io.BytesIO()
    torch.onnx.export(torch.nn.Linear(3, 2), (torch.zeros(4, 3),), buf, dynamo=False,
                      export_params=True, keep_initializers_as_inputs=False, external_data=True)
    assert buf.getvalue()


@pytest.mark.parametrize("option, value, error", [
    ("export_params", False, NotImplementedError),
    ("dynamic_shapes", {"x": {0: "b"}}, NotImplementedError),
    ("no_such_option", 1, TypeError),
])
def test_other_values_are_refused(option, value, error):
    with pytest.raises(error, match=option):
        torch.onnx.export(torch.nn.Linear(3, 2), (torch.zeros(4, 3),), io.BytesIO(),
                          **{option: value})
