"""torch.nn.utils.prune against torch: masks, the weight_orig/weight_mask re-parametrization,
state_dict keys, forward outputs and gradients, iterative pruning, removal and errors."""

import numpy as np
import pytest
import torch
import torch.nn.utils.prune  # noqa: F401 - torch does not import the submodule itself
from tests.autograd._helpers import data, raises_like, same

import graphgrad as gg


def _linear(m, i=5, o=4, seed=0, bias=True):
    lin = m.nn.Linear(i, o, bias=bias)
    with m.no_grad():
        lin.weight.copy_(m.tensor(data((o, i), seed)))
        if bias:
            lin.bias.copy_(m.tensor(data((o,), seed + 1)))
    return lin


def _conv(m, seed=3):
    conv = m.nn.Conv2d(3, 4, 2)
    with m.no_grad():
        conv.weight.copy_(m.tensor(data((4, 3, 2, 2), seed)))
        conv.bias.copy_(m.tensor(data((4,), seed + 1)))
    return conv


def _summary(m, mod, x_shape=(2, 5)):
    """Mask, pruned weight, state_dict keys, output and the gradient reaching weight_orig."""
    x = m.tensor(data(x_shape, 9))
    out = mod(x)
    out.sum().backward()
    keys = sorted(mod.state_dict().keys())
    params = sorted(n for n, _ in mod.named_parameters())
    buffers = sorted(n for n, _ in mod.named_buffers())
    return (mod.weight_mask, mod.weight, out, mod.weight_orig.grad, keys, params, buffers,
            mod.weight.requires_grad, mod.weight.is_leaf)


@pytest.mark.parametrize("amount", [0, 3, 0.35, 1.0, 20])
def test_l1_unstructured(amount):
    same(lambda m: _summary(m, m.nn.utils.prune.l1_unstructured(_linear(m), "weight",
                                                                  amount=amount)))


def test_l1_unstructured_importance_scores():
    def prog(m):
        scores = m.tensor(data((4, 5), 11))
        mod = m.nn.utils.prune.l1_unstructured(_linear(m), "weight", 7, importance_scores=scores)
        return _summary(m, mod)
    same(prog)


@pytest.mark.parametrize("n,dim,amount", [(1, 0, 2), (2, -1, 0.4), (float("inf"), 1, 1),
                                          ("fro", 0, 0.5), (2, 0, 0)])
def test_ln_structured(n, dim, amount):
    same(lambda m: _summary(m, m.nn.utils.prune.ln_structured(_linear(m), "weight", amount,
                                                                n=n, dim=dim)))


def test_ln_structured_conv():
    def prog(m):
        mod = m.nn.utils.prune.ln_structured(_conv(m), "weight", amount=0.5, n=2, dim=0)
        return _summary(m, mod, (1, 3, 4, 4))
    same(prog)


def test_iterative_pruning_uses_a_container():
    def prog(m):
        p = m.nn.utils.prune
        mod = _linear(m, 6, 5)
        p.l1_unstructured(mod, "weight", amount=5)
        p.ln_structured(mod, "weight", amount=1, n=1, dim=0)
        p.l1_unstructured(mod, "weight", amount=0.25)
        p.l1_unstructured(mod, "bias", amount=2)
        hooks = [type(h).__name__ for h in mod._forward_pre_hooks.values()]
        container = [h for h in mod._forward_pre_hooks.values()
                     if isinstance(h, p.PruningContainer)][0]
        return (_summary(m, mod, (2, 6)), mod.bias_mask, hooks,
                [type(x).__name__ for x in container], len(container))
    same(prog)


def test_custom_from_mask_and_identity():
    def prog(m):
        p = m.nn.utils.prune
        mod = _linear(m)
        p.identity(mod, "bias")
        mask = m.tensor(data((4, 5), 2)) > 0
        p.custom_from_mask(mod, "weight", mask)
        return _summary(m, mod), mod.bias_mask, mod.bias
    same(prog)


def test_global_unstructured():
    def prog(m):
        p = m.nn.utils.prune
        a, b = _linear(m, 5, 4, 0), _linear(m, 4, 3, 5)
        p.l1_unstructured(a, "weight", 2)
        pairs = [(a, "weight"), (b, "weight"), (b, "bias")]
        p.global_unstructured(pairs, pruning_method=p.L1Unstructured, amount=0.3)
        return a.weight_mask, b.weight_mask, b.bias_mask, a.weight, b.bias
    same(prog)


def test_global_unstructured_importance_scores_and_errors():
    def prog(m):
        p = m.nn.utils.prune
        a = _linear(m)
        scores = {(a, "weight"): m.tensor(data((4, 5), 21))}
        p.global_unstructured([(a, "weight")], p.L1Unstructured, importance_scores=scores,
                              amount=6)
        return a.weight_mask
    same(prog)
    raises_like(lambda m: m.nn.utils.prune.global_unstructured(
        [(_linear(m), "weight")], m.nn.utils.prune.LnStructured, amount=1, n=1, dim=0),
        "unstructured")
    raises_like(lambda m: m.nn.utils.prune.global_unstructured(
        [(_linear(m), "weight")], m.nn.utils.prune.L1Unstructured, importance_scores=[1],
        amount=1), "must be of type dict")
    raises_like(lambda m: m.nn.utils.prune.global_unstructured(
        3, m.nn.utils.prune.L1Unstructured, amount=1), "not an Iterable")


def test_remove_and_is_pruned():
    def prog(m):
        p = m.nn.utils.prune
        mod = m.nn.Sequential(_linear(m), m.nn.ReLU())
        before = p.is_pruned(mod)
        p.l1_unstructured(mod[0], "weight", 8)
        during = p.is_pruned(mod)
        p.remove(mod[0], "weight")
        after = p.is_pruned(mod)
        keys = sorted(mod.state_dict().keys())
        return (before, during, after, keys, mod[0].weight, type(mod[0].weight).__name__,
                mod[0].weight.is_leaf, len(mod[0]._forward_pre_hooks))
    same(prog)
    raises_like(lambda m: m.nn.utils.prune.remove(_linear(m), "weight"), "has to be pruned")


def test_hook_follows_weight_orig():
    def prog(m):
        mod = m.nn.utils.prune.l1_unstructured(_linear(m), "weight", 0.5)
        with m.no_grad():
            mod.weight_orig.mul_(3.0)
        out = mod(m.tensor(data((2, 5), 4)))
        return mod.weight, out
    same(prog)


def test_pruning_method_prune_and_apply():
    def prog(m):
        p = m.nn.utils.prune
        t = m.tensor(data((3, 4), 6))
        a = p.L1Unstructured(amount=5).prune(t)
        b = p.LnStructured(amount=1, n=2, dim=1).prune(t)
        c = p.L1Unstructured(amount=2).prune(t, importance_scores=m.tensor(data((3, 4), 7)))
        mod = _linear(m)
        method = p.LnStructured.apply(mod, "weight", amount=1, n=1, dim=0)
        return a, b, c, type(method).__name__, method._tensor_name, method.amount, method.dim
    same(prog)


@pytest.mark.parametrize("kwargs,cls", [
    ({"amount": -1}, ValueError), ({"amount": 1.5}, ValueError), ({"amount": "x"}, TypeError),
    ({"amount": 30}, ValueError)])
def test_amount_errors(kwargs, cls):
    with pytest.raises(cls):
        torch.nn.utils.prune.l1_unstructured(_linear(torch), "weight", **kwargs)
    with pytest.raises(cls):
        gg.nn.utils.prune.l1_unstructured(_linear(gg), "weight", **kwargs)


def test_failed_pruning_restores_parameter():
    def prog(m):
        mod = _linear(m)
        try:
            m.nn.utils.prune.l1_unstructured(mod, "weight", amount=50)
        except ValueError:
            pass
        return sorted(mod.state_dict().keys()), mod.weight
    same(prog)


def test_structured_errors():
    raises_like(lambda m: m.nn.utils.prune.ln_structured(_linear(m), "bias", 1, n=1, dim=0),
                "multidimensional")
    raises_like(lambda m: m.nn.utils.prune.ln_structured(_linear(m), "weight", 1, n=1, dim=2),
                "Invalid index")
    raises_like(lambda m: m.nn.utils.prune.l1_unstructured(
        _linear(m), "weight", 1, importance_scores=m.ones(3)), "same shape")


def test_container_errors():
    def prog(m):
        p = m.nn.utils.prune
        a = p.L1Unstructured(1)
        a._tensor_name = "weight"
        b = p.L1Unstructured(1)
        b._tensor_name = "bias"
        p.PruningContainer(a).add_pruning_method(b)
    raises_like(prog, "Can only add pruning methods")

    def prog2(m):
        method = m.nn.utils.prune.Identity()
        method._tensor_name = "weight"
        m.nn.utils.prune.PruningContainer(method).add_pruning_method(3)
    raises_like(prog2, "BasePruningMethod")


@pytest.mark.parametrize("amount", [3, 0.5])
def test_random_unstructured_counts(amount):
    gg.manual_seed(0)
    counts = []
    for _ in range(200):
        mod = gg.nn.utils.prune.random_unstructured(_linear(gg), "weight", amount=amount)
        mask = mod.weight_mask.numpy()
        want = amount if isinstance(amount, int) else round(amount * 20)
        assert int((mask == 0).sum()) == want
        counts.append(mask == 0)
    # every entry is chosen with the same probability, want / 20
    freq = np.mean(counts, axis=0)
    assert abs(freq.mean() - want / 20) < 1e-9
    assert np.all(np.abs(freq - want / 20) < 0.15)


def test_random_structured_counts():
    gg.manual_seed(0)
    chosen = np.zeros(4)
    for _ in range(200):
        mod = gg.nn.utils.prune.random_structured(_conv(gg), "weight", amount=0.5, dim=0)
        mask = mod.weight_mask.numpy()
        per_channel = mask.reshape(4, -1)
        assert set(per_channel.min(1)) <= {0, 1}
        assert np.all(per_channel.min(1) == per_channel.max(1))  # whole channels
        assert int((per_channel[:, 0] == 0).sum()) == 2
        chosen += per_channel[:, 0] == 0
    assert np.all(np.abs(chosen / 200 - 0.5) < 0.15)
    # the torch twin prunes the same number of whole channels
    mod = torch.nn.utils.prune.random_structured(_conv(torch), "weight", amount=0.5, dim=0)
    assert int((mod.weight_mask.reshape(4, -1)[:, 0] == 0).sum()) == 2


def test_random_after_l1_keeps_earlier_mask():
    gg.manual_seed(1)
    p = gg.nn.utils.prune
    mod = p.l1_unstructured(_linear(gg), "weight", 5)
    first = mod.weight_mask.numpy().copy()
    p.random_unstructured(mod, "weight", amount=4)
    second = mod.weight_mask.numpy()
    assert np.all(second[first == 0] == 0)
    assert int((second == 0).sum()) == 9
    ref = torch.nn.utils.prune.l1_unstructured(_linear(torch), "weight", 5)
    torch.nn.utils.prune.random_unstructured(ref, "weight", amount=4)
    assert int((ref.weight_mask == 0).sum()) == 9


def test_state_dict_loads_into_torch_twin():
    gmod = gg.nn.utils.prune.l1_unstructured(_linear(gg), "weight", 6)
    tmod = torch.nn.utils.prune.l1_unstructured(torch.nn.Linear(5, 4), "weight", 1)
    tmod.load_state_dict({k: torch.tensor(v.numpy()) for k, v in gmod.state_dict().items()})
    x = data((3, 5), 1)
    np.testing.assert_allclose(tmod(torch.tensor(x)).detach().numpy(),
                               gmod(gg.tensor(x)).detach().numpy(), rtol=1e-6)


def test_training_updates_weight_orig_and_deepcopy():
    def prog(m):
        import copy

        mod = m.nn.utils.prune.l1_unstructured(_linear(m), "weight", 0.4)
        opt = m.optim.SGD(mod.parameters(), lr=0.1, momentum=0.9)
        x = m.tensor(data((6, 5), 8))
        for _ in range(3):
            opt.zero_grad()
            mod(x).pow(2).mean().backward()
            opt.step()
        twin = copy.deepcopy(mod)
        return (mod.weight_orig, mod.weight, mod(x), twin(x), twin.weight_mask,
                m.nn.utils.prune.is_pruned(twin), [n for n, _ in twin.named_parameters()])
    same(prog)
