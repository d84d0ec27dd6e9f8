"""The graph-retention detector: true positives (graphs carried across optimizer steps) and
true negatives (correct loops, gradient accumulation, detached histories, retain_graph used on
purpose), each on a small real training loop."""

import warnings

import pytest

import graphgrad as torch
from graphgrad import memory, nn

STEPS = 8


@pytest.fixture(autouse=True)
def fresh_detector():
    memory.reset_retention_check()
    yield
    memory.reset_retention_check()


def _setup():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    data = [(torch.randn(8, 6), torch.randn(8, 1)) for _ in range(STEPS)]
    return model, opt, data


def _step(model, opt, x, y):
    opt.zero_grad()
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    opt.step()
    return loss


def _run(loop):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        loop()
    return [w for w in caught if issubclass(w.category, (memory.GraphRetentionWarning,
                                                         memory.RetainedGraphWarning))]


def _single_retention_warning(found):
    assert [w.category for w in found] == [memory.GraphRetentionWarning]
    return str(found[0].message)


# -- true positives -------------------------------------------------------------------------------
def test_running_total_of_losses():
    def loop():
        model, opt, data = _setup()
        total = 0
        for x, y in data:
            loss = _step(model, opt, x, y)
            total += loss  # LEAK
    msg = _single_retention_warning(_run(loop))
    assert "total += loss  # LEAK" in msg
    assert "'total' in loop()" in msg
    assert "loss.item()" in msg
    assert "earlier training steps" in msg


def test_list_of_losses():
    def loop():
        model, opt, data = _setup()
        losses = []
        for x, y in data:
            losses.append(_step(model, opt, x, y))
    msg = _single_retention_warning(_run(loop))
    assert "the list 'losses' in loop()" in msg


def test_running_average_of_losses():
    def loop():
        model, opt, data = _setup()
        avg = None
        for x, y in data:
            loss = _step(model, opt, x, y)
            avg = loss if avg is None else 0.9 * avg + 0.1 * loss  # LEAK
    msg = _single_retention_warning(_run(loop))
    assert "avg = loss if avg is None else 0.9 * avg + 0.1 * loss  # LEAK" in msg


def test_tensor_carried_across_steps_with_its_history():
    def loop():
        model, opt, data = _setup()
        ema = torch.zeros(1)
        for x, y in data:
            _step(model, opt, x, y)
            ema = 0.9 * ema + 0.1 * model(x).mean()  # LEAK: a statistic with history
    msg = _single_retention_warning(_run(loop))
    assert "ema = 0.9 * ema + 0.1 * model(x).mean()  # LEAK" in msg
    assert "'ema' in loop()" in msg


def test_hidden_state_carried_into_backward_fails_on_the_updated_weights():
    """Backward through an earlier step's graph meets weights that optimizer.step() changed
    since: torch refuses; graphgrad also names the line that changed them."""
    def prog(m):
        m.manual_seed(0)
        cell = m.nn.Linear(4, 4)
        opt = m.optim.SGD(cell.parameters(), lr=0.01)
        h = m.zeros(1, 4)
        for _ in range(3):
            opt.zero_grad()
            h = m.tanh(cell(h) + 0.1)
            h.sum().backward(retain_graph=True)
            opt.step()  # CHANGES

    import torch as real_torch
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        prog(real_torch)
    with pytest.raises(RuntimeError, match="modified by an inplace operation") as info:
        prog(torch)
    assert "changed at: test_retention.py" in str(info.value)
    assert "opt.step()  # CHANGES" in str(info.value)


def test_warns_once_within_a_few_steps():
    seen_at = []

    def loop():
        model, opt, data = _setup()
        total = 0
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for i, (x, y) in enumerate(data * 3):
                total = total + _step(model, opt, x, y)
                if caught and not seen_at:
                    seen_at.append(i)
            assert len([w for w in caught
                        if w.category is memory.GraphRetentionWarning]) == 1
    _run(loop)
    assert seen_at and seen_at[0] <= 6


# -- true negatives -------------------------------------------------------------------------------
def test_correct_loop_with_item():
    def loop():
        model, opt, data = _setup()
        total = 0.0
        for x, y in data * 2:
            total += _step(model, opt, x, y).item()
    assert _run(loop) == []


def test_gradient_accumulation_over_micro_batches():
    def loop():
        model, opt, data = _setup()
        for i in range(0, len(data) * 2, 4):
            opt.zero_grad()
            for x, y in (data * 2)[i:i + 4]:
                loss = ((model(x) - y) ** 2).mean() / 4
                loss.backward()
            opt.step()
    assert _run(loop) == []


def test_detached_history():
    def loop():
        torch.manual_seed(0)
        cell = nn.Linear(4, 4)
        opt = torch.optim.SGD(cell.parameters(), lr=0.01)
        h = torch.zeros(1, 4)
        for _ in range(STEPS * 2):
            opt.zero_grad()
            h = torch.tanh(cell(h.detach()) + 0.1)
            h.sum().backward()
            opt.step()
    assert _run(loop) == []


def test_retain_graph_used_on_purpose_within_a_step():
    def loop():
        model, opt, data = _setup()
        for x, y in data * 2:
            opt.zero_grad()
            out = model(x)
            ((out - y) ** 2).mean().backward(retain_graph=True)
            out.abs().mean().backward()  # the same graph, a second time, then released
            opt.step()
    assert _run(loop) == []


def test_one_old_graph_that_does_not_grow():
    def loop():
        model, opt, data = _setup()
        first = None
        for x, y in data * 2:
            loss = _step(model, opt, x, y)
            if first is None:
                first = loss  # kept, but only one: not a leak that grows
    assert _run(loop) == []


def test_retained_graph_never_used_again():
    def loop():
        model, opt, data = _setup()
        kept = None
        for i, (x, y) in enumerate(data):
            opt.zero_grad()
            loss = ((model(x) - y) ** 2).mean()
            loss.backward(retain_graph=(i == 0))  # KEPT
            if i == 0:
                kept = loss
            opt.step()
        return kept
    found = _run(loop)
    assert [w.category for w in found] == [memory.RetainedGraphWarning]
    assert "loss.backward(retain_graph=(i == 0))  # KEPT" in str(found[0].message)


def test_detector_can_be_turned_off():
    memory.set_retention_check(False)
    try:
        assert not memory.is_retention_check_enabled()

        def loop():
            model, opt, data = _setup()
            total = 0
            for x, y in data:
                total += _step(model, opt, x, y)
        assert _run(loop) == []
    finally:
        memory.set_retention_check(True)


def test_the_report_does_not_pin_the_loop_locals():
    """Naming the holder reads the running frames' locals; that must not keep this step's
    activations alive (a function frame's f_locals snapshot would, until the loop returns)."""
    storage = []

    def loop():
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(256, 256), nn.Tanh(), nn.Linear(256, 1))
        opt = torch.optim.SGD(model.parameters(), lr=0.01)
        total = 0
        for _ in range(10):
            x, y = torch.randn(64, 256), torch.randn(64, 1)
            total += _step(model, opt, x, y)
            del x, y
            storage.append(memory.storage_allocated())

    found = _run(loop)
    assert [w.category for w in found] == [memory.GraphRetentionWarning]
    # every step ends with the same live storage: parameters, grads, momentum-free SGD; a
    # pinned step would add its 64x256 activations (64 KiB each) from the warning on
    assert max(storage[2:]) - min(storage[2:]) < 64 * 256 * 4
