"""nn.ReLU(inplace=True) after a convolution stays in the compiled graph (the conv's output is
a NumPy view of its own temporary, which nothing else holds); a write into a real view still
breaks the graph. Values and trained parameters equal eager's."""

import warnings

import numpy as np

import graphgrad as torch


def _model():
    torch.manual_seed(0)
    nn = torch.nn
    return nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(inplace=True), nn.MaxPool2d(2),
                         nn.Conv2d(8, 8, 3, padding=1), nn.ReLU(inplace=True), nn.Flatten(),
                         nn.Linear(8 * 4 * 4, 10))


def test_inplace_relu_after_conv_compiles_and_trains_as_eager():
    eager, compiled = _model(), _model()
    step = torch.compile(compiled)
    opts = [torch.optim.SGD(m.parameters(), lr=0.1) for m in (eager, compiled)]
    torch.manual_seed(1)
    xs = [torch.randn(4, 3, 8, 8) for _ in range(4)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a graph break warns
        for x in xs:
            for f, opt in ((eager, opts[0]), (step, opts[1])):
                opt.zero_grad()
                f(x).square().mean().backward()
                opt.step()
    for a, b in zip(eager.parameters(), compiled.parameters()):
        assert np.allclose(a.detach().numpy(), b.detach().numpy(), atol=1e-6)


def test_a_write_into_a_real_view_still_breaks_the_graph():
    def f(x):
        y = x * 2
        y[0].relu_()
        return y
    x = torch.randn(3, 4)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = torch.compile(f)(x)
    assert np.allclose(out.numpy(), f(x).numpy())
    assert any("in-place write into a view" in str(w.message) for w in caught)
