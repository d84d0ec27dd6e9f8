"""why_no_grad names the first cut between the loss and a tensor at the user's line: one small
program per cut kind, the line known from a marker comment; correct models give no report."""

import inspect
import math

import pytest

import graphgrad as torch
import graphgrad.nn as nn
from graphgrad.autograd import why_no_grad


def _line(marker):
    src, start = inspect.getsourcelines(inspect.getmodule(_line))
    for i, text in enumerate(src):
        if f"# <{marker}>" in text:
            return f"{__file__}:{start + i if start else i + 1}"
    raise AssertionError(marker)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(4, 4)
        self.dec = nn.Linear(4, 1)
        self.aux = nn.Linear(4, 4)


@pytest.fixture
def net():
    torch.manual_seed(0)
    return Net(), torch.randn(3, 4)


def test_detach(net):
    m, x = net
    h = m.enc(x).detach()  # <detach>
    m.dec(h).sum().backward()
    r = why_no_grad(m.enc.weight)
    assert (r.kind, r.site) == ("detach", _line("detach"))
    assert "enc.weight" in str(r) and "detach" in str(r)


def test_data(net):
    m, x = net
    h = m.enc(x).data  # <data>
    m.dec(h).sum().backward()
    assert (why_no_grad(m.enc.bias).kind, why_no_grad(m.enc.bias).site) == ("data", _line("data"))


def test_item_rebuilt_into_a_tensor(net):
    m, x = net
    v = m.enc(x).sum().item()  # <item>
    loss = (m.dec(x) * torch.tensor(v)).sum()
    loss.backward()
    r = why_no_grad(m.enc.weight, loss)
    assert (r.kind, r.site) == ("item", _line("item"))


def test_numpy_rebuilt_into_a_tensor(net):
    m, x = net
    a = m.enc(x).detach().numpy()  # <numpy>
    loss = m.dec(torch.from_numpy(a)).sum()
    loss.backward()
    r = why_no_grad(m.enc.weight)
    assert r.site == _line("numpy") and r.kind == "detach"  # numpy() needs detach() first


def test_no_grad_block(net):
    m, x = net
    with torch.no_grad():  # <no_grad>
        h = m.enc(x)
    m.dec(h).sum().backward()
    r = why_no_grad(m.enc.weight)
    assert (r.kind, r.site) == ("no_grad", _line("no_grad"))


def test_non_differentiable_op(net):
    m, x = net
    idx = m.enc(x).argmax(1)  # <argmax>
    loss = (m.dec(x).squeeze(1) * idx.float()).sum()
    loss.backward()
    r = why_no_grad(m.enc.weight)
    assert (r.kind, r.site) == ("non_differentiable", _line("argmax"))
    assert "argmax" in str(r)


def test_comparison_is_a_cut(net):
    m, x = net
    mask = (m.enc(x) > 0).float()  # <gt>
    loss = (m.dec(x) * mask.sum()).sum()
    loss.backward()
    assert why_no_grad(m.enc.weight).site == _line("gt")


def test_module_never_called_and_output_unused(net):
    m, x = net
    m.aux(x)  # called, result dropped
    loss = m.dec(m.enc(x)).sum()
    loss.backward()
    r = why_no_grad(m.aux.weight)
    assert r.kind == "unused" and "aux" in str(r) and "did not reach the loss" in str(r)
    loss = m.dec(m.enc(x)).sum()
    loss.backward()
    r = why_no_grad(m.aux.weight)
    assert r.kind == "unused" and "was not called" in str(r)


def test_requires_grad_false(net):
    m, x = net
    m.enc.bias.requires_grad = False  # <rgf>
    m.dec(m.enc(x)).sum().backward()
    r = why_no_grad(m.enc.bias)
    assert (r.kind, r.site) == ("requires_grad_false", _line("rgf"))


def test_zero_gradient_reasons():
    torch.manual_seed(0)
    x = torch.randn(3, 4)
    w = torch.randn(4, 4, requires_grad=True)
    loss = torch.relu(x @ w - 100).sum()
    loss.backward(retain_graph=True)
    r = why_no_grad(w, loss)
    assert r.kind == "zero" and "dead ReLU" in str(r) and "100%" in str(r)
    w2 = torch.randn(4, requires_grad=True)
    loss = torch.sigmoid(w2 * 1000 + 1e4).sum()
    loss.backward(retain_graph=True)
    assert "saturated" in str(why_no_grad(w2, loss))
    w3 = torch.randn(4, requires_grad=True)
    loss = (w3 * torch.zeros(4)).sum()
    loss.backward(retain_graph=True)
    assert "multiplied by zero" in str(why_no_grad(w3, loss))
    w4 = torch.randn(4, requires_grad=True)
    loss = torch.relu(w4 - 100).sum()
    loss.backward()  # saved values freed: the path's suspects, and how to get the exact cause
    r = why_no_grad(w4)
    assert r.kind == "zero" and "ReluBackward0" in str(r) and "retain_graph" in str(r)
    del loss
    assert why_no_grad(w4).kind == "zero"  # the loss is gone: what .grad tells


def test_correct_models_give_no_report():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(3):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(torch.randn(5, 4)), torch.tensor([0, 1] * 2 + [0]))
        print(loss.item())  # logging is not a cut
        loss.backward()
        opt.step()
    assert all(why_no_grad(p) is None for p in model.parameters())
    assert not math.isnan(loss.item())


def test_without_backward_the_loss_is_required():
    import threading

    out = []
    t = threading.Thread(target=lambda: out.append(pytest.raises(ValueError, why_no_grad,
                                                                 torch.ones(1))))
    t.start()
    t.join()
    assert "pass the loss" in str(out[0].value)
