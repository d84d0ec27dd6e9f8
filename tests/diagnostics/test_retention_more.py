"""The retention detector, part two: one warning per leaking line (a second leak later in the
same process is reported), the line that made a container's tensors, loops without an
optimizer (step boundaries from backward()) and evaluation loops without no_grad (from
DataLoader batches); correct versions of the same loops stay silent."""

import warnings

import pytest

import graphgrad as torch
from graphgrad import memory, nn
from graphgrad.utils.data import DataLoader, TensorDataset

STEPS = 10


@pytest.fixture(autouse=True)
def fresh_detector():
    memory.reset_retention_check()
    yield
    memory.reset_retention_check()


def _warnings(loop):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        loop()
    return [str(w.message) for w in caught if issubclass(w.category,
                                                        memory.GraphRetentionWarning)]


def _model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 1))


def _data():
    return [(torch.randn(8, 6), torch.randn(8, 1)) for _ in range(STEPS)]


def _train_step(model, opt, x, y):
    opt.zero_grad()
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    opt.step()
    return loss


def test_a_second_leak_in_the_same_process_is_reported():
    def loops():
        model = _model()
        opt = torch.optim.SGD(model.parameters(), lr=0.01)
        first = 0
        for x, y in _data():
            first += _train_step(model, opt, x, y)  # FIRST LEAK
        second = []
        for x, y in _data():
            second.append(_train_step(model, opt, x, y) * 2)  # SECOND LEAK
    found = _warnings(loops)
    assert len(found) == 2
    assert "FIRST LEAK" in found[0] and "SECOND LEAK" in found[1]


def test_the_same_leak_warns_once_however_long_it_runs():
    def loop():
        model = _model()
        opt = torch.optim.SGD(model.parameters(), lr=0.01)
        total = 0
        for _ in range(4):
            for x, y in _data():
                total += _train_step(model, opt, x, y)  # ONE LEAK
    assert len(_warnings(loop)) == 1


def test_a_list_of_losses_names_the_line_that_made_them():
    def loop():
        model = _model()
        opt = torch.optim.SGD(model.parameters(), lr=0.01)
        history = []
        for x, y in _data():
            opt.zero_grad()
            loss = ((model(x) - y) ** 2).mean()  # MADE HERE
            loss.backward()
            opt.step()
            history.append(loss)
    (msg,) = _warnings(loop)
    assert "the list 'history'" in msg and "MADE HERE" in msg


def test_hand_written_sgd_without_an_optimizer():
    def loop(leak):
        torch.manual_seed(0)
        w = torch.randn(6, 1, requires_grad=True)
        total = 0
        for x, y in _data():
            loss = ((x @ w - y) ** 2).mean()
            loss.backward()
            with torch.no_grad():
                w -= 0.01 * w.grad
                w.grad.zero_()
            total = total + (loss if leak else loss.item())  # SGD LEAK
    (msg,) = _warnings(lambda: loop(True))
    assert "SGD LEAK" in msg
    assert _warnings(lambda: loop(False)) == []


def test_evaluation_loop_without_no_grad():
    def loop(no_grad):
        model = _model()
        loader = DataLoader(TensorDataset(torch.randn(80, 6), torch.randn(80, 1)), batch_size=8)
        total = 0
        ctx = torch.no_grad() if no_grad else torch.enable_grad()
        with ctx:
            for x, y in loader:
                total += ((model(x) - y) ** 2).mean()  # EVAL LEAK
        return total
    (msg,) = _warnings(lambda: loop(False))
    assert "EVAL LEAK" in msg and "no_grad" in msg
    assert _warnings(lambda: loop(True)) == []


def test_correct_loader_loops_stay_silent():
    def loop():
        model = _model()
        opt = torch.optim.SGD(model.parameters(), lr=0.01)
        loader = DataLoader(TensorDataset(torch.randn(80, 6), torch.randn(80, 1)), batch_size=8)
        total = 0.0
        for _ in range(2):
            for i, (x, y) in enumerate(loader):
                loss = ((model(x) - y) ** 2).mean() / 2
                loss.backward()  # gradient accumulation over two batches
                if i % 2:
                    opt.step()
                    opt.zero_grad()
                total += loss.item()
    assert _warnings(loop) == []
