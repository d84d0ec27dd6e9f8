"""torch.func (grad, grad_and_value, vjp, jvp, jacrev, jacfwd, hessian, vmap, functional_call,
stack_module_state) and torch.nn.utils.stateless against torch.func on the same programs,
including the per-sample-gradient and model-ensembling recipes of torch's tutorials.
"""

import copy
import importlib.util
import pathlib
import warnings

import numpy as np
import pytest

_spec = importlib.util.spec_from_file_location(
    "_gg_test_helpers", pathlib.Path(__file__).parent / "autograd" / "_helpers.py")
h = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(h)


def _data(shape, seed=0, dtype=np.float64):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def T(m, shape, seed=0, **kw):
    return m.tensor(_data(shape, seed), **kw)


def f_scalar(m):
    return lambda x, y: (m.sin(x) * y.exp()).sum() + (x * x).sum()


# -- grad / grad_and_value --------------------------------------------------------------------
@pytest.mark.parametrize("argnums", [0, 1, (0, 1), (1, 0), -1])
def test_grad_argnums(argnums):
    h.same(lambda m: m.func.grad(f_scalar(m), argnums=argnums)(T(m, (3,), 1), T(m, (3,), 2)))
    h.same(lambda m: m.func.grad_and_value(f_scalar(m), argnums)(T(m, (3,), 1), T(m, (3,), 2)))


def test_grad_has_aux_pytree_args_and_kwargs():
    def prog(m):
        def loss(params, x, scale=1.0):
            y = (params["w"] * x).sum() + params["b"][0] * scale
            return y, {"pred": y * 2, "n": [y.detach()]}
        p = {"w": T(m, (4,), 1), "b": T(m, (2,), 2)}
        g, aux = m.func.grad(loss, has_aux=True)(p, T(m, (4,), 3), scale=3.0)
        gv = m.func.grad_and_value(loss, has_aux=True)(p, T(m, (4,), 3))
        return g, aux, gv, p["w"].requires_grad, g["w"].requires_grad
    h.same(prog)
    h.raises_like(lambda m: m.func.grad(lambda x: (x.sum(), 3), has_aux=True)(T(m, (3,), 1)),
                  "Expected tensors, got unsupported type")


def test_grad_nested_and_with_outer_autograd():
    h.same(lambda m: m.func.grad(m.func.grad(lambda x: (x ** 4).sum()))(T(m, (), 1)))
    h.same(lambda m: m.func.grad(m.func.grad(m.func.grad(m.sin)))(T(m, (), 1)))

    def mixed(m):
        # d/dx of d/dy (x*y)^2 at y, then regular autograd through the result.
        def outer(x):
            return m.func.grad(lambda y: (x * y).pow(2).sum())(T(m, (2,), 2)).sum()
        x = T(m, (2,), 1, requires_grad=True)
        g = m.func.grad(outer)(x)
        z = m.func.grad(lambda v: (v ** 3).sum())(x)
        z.sum().backward()
        return g, z, x.grad, z.requires_grad
    h.same(mixed)


def test_grad_independent_output_and_errors():
    h.same(lambda m: m.func.grad(lambda x, y: (y * 2).sum())(T(m, (3,), 1), T(m, (3,), 2)))
    h.raises_like(lambda m: m.func.grad(lambda x: x * 2)(T(m, (3,), 1)),
                  "Expected f(*args) to return a scalar Tensor")
    h.raises_like(lambda m: m.func.grad(lambda x: 1.0)(T(m, (3,), 1)),
                  "Expected f(*args) to return a Tensor")
    h.raises_like(lambda m: m.func.grad(lambda x: x.sum(), has_aux=True)(T(m, (3,), 1)),
                  "should be a tuple: (output, aux)")
    h.raises_like(lambda m: m.func.grad(lambda x: x.sum(), argnums=2)(T(m, (3,), 1)),
                  "Got argnum=2, but only 1 positional inputs")
    h.raises_like(lambda m: m.func.grad(lambda x, y: x.sum(), argnums=(0, 0))(
        T(m, (3,), 1), T(m, (3,), 1)), "argnums elements must be unique")
    h.raises_like(lambda m: m.func.grad(lambda x: x.sum(), argnums=1.0)(T(m, (3,), 1)),
                  "argnums must be int or Tuple")
    h.raises_like(lambda m: m.func.grad(lambda x, n: x.sum() * n, argnums=1)(
        T(m, (3,), 1), 2.0), "Thing passed to transform API must be Tensor")


# -- vjp / jvp ---------------------------------------------------------------------------------
def test_vjp():
    def prog(m):
        def f(x, y):
            return m.sin(x) * y, (x @ y).exp()
        out, fn = m.func.vjp(f, T(m, (3,), 1), T(m, (3,), 2))
        ct = (T(m, (3,), 3), T(m, (), 4))
        return out, fn(ct), fn(ct), out[0].requires_grad
    h.same(prog)

    def aux(m):
        out, fn, a = m.func.vjp(lambda x: (x.exp(), x.sum()), T(m, (2, 2), 1), has_aux=True)
        return out, fn(m.ones(2, 2)), a
    h.same(aux)
    h.raises_like(lambda m: m.func.vjp(lambda x: (x, x), T(m, (2,), 1))[1](m.ones(2)),
                  "Expected pytree structure of cotangents")


def test_jvp():
    def prog(m):
        def f(x, y):
            return m.tanh(x) * y.sum(), x.exp()
        return m.func.jvp(f, (T(m, (3,), 1), T(m, (2,), 2)), (T(m, (3,), 3), T(m, (2,), 4)))
    h.same(prog)
    h.same(lambda m: m.func.jvp(lambda x: x, (T(m, (3,), 1),), (T(m, (3,), 2),)))
    h.same(lambda m: m.func.jvp(lambda x: (x * 3, x.sum()), (T(m, (3,), 1),),
                                (T(m, (3,), 2),), has_aux=True))
    h.same(lambda m: m.func.jvp(lambda x, y: y * 2, (T(m, (3,), 1), T(m, (3,), 1)),
                                (T(m, (3,), 2), T(m, (3,), 3))))
    h.raises_like(lambda m: m.func.jvp(m.sin, T(m, (3,), 1), (T(m, (3,), 2),)),
                  "Expected primals to be a tuple")
    h.raises_like(lambda m: m.func.jvp(m.sin, (T(m, (3,), 1),), [T(m, (3,), 2)]),
                  "Expected primals and tangents to have the same python structure")
    h.same(lambda m: m.func.jvp(m.func.grad(lambda x: (x ** 3).sum()), (T(m, (3,), 1),),
                                (T(m, (3,), 2),)))


# -- jacrev / jacfwd / hessian -----------------------------------------------------------------
@pytest.mark.parametrize("api", ["jacrev", "jacfwd"])
def test_jacobians(api):
    def f(m):
        return lambda x, y: (m.sin(x)[:, None] * y, (x ** 2).sum())
    h.same(lambda m: getattr(m.func, api)(m.sin)(T(m, (3,), 1)))
    h.same(lambda m: getattr(m.func, api)(f(m), argnums=(0, 1))(T(m, (3,), 1), T(m, (2,), 2)))
    h.same(lambda m: getattr(m.func, api)(f(m), argnums=1)(T(m, (3,), 1), T(m, (2,), 2)))
    h.same(lambda m: getattr(m.func, api)(lambda p: p["a"] @ p["b"])(
        {"a": T(m, (2, 3), 1), "b": T(m, (3,), 2)}))
    h.same(lambda m: getattr(m.func, api)(lambda x: (x.exp(), x.sum()), has_aux=True)(
        T(m, (2, 2), 1)))
    h.same(lambda m: getattr(m.func, api)(lambda x, y: y.sum())(T(m, (2,), 1), T(m, (3,), 2)))


def test_hessian_and_composition():
    h.same(lambda m: m.func.hessian(lambda x: (x.sin() * x.prod()).sum())(T(m, (3,), 1)))
    h.same(lambda m: m.func.hessian(lambda x, y: (x * y.exp()).sum() ** 2, argnums=(0, 1))(
        T(m, (2,), 1), T(m, (2,), 2)))
    h.same(lambda m: m.func.jacrev(m.func.jacrev(m.tanh))(T(m, (2,), 1)))
    h.same(lambda m: m.func.jacfwd(m.func.jacfwd(lambda x: x.pow(3)))(T(m, (2,), 1)))
    h.same(lambda m: m.func.vmap(m.func.jacrev(m.sin))(T(m, (4, 3), 1)))
    h.same(lambda m: m.func.jacrev(m.func.vmap(lambda x: x.sin().sum()))(T(m, (4, 3), 1)))
    h.same(lambda m: m.func.grad(lambda x: m.vmap(lambda r: (r * r).sum())(x).sum())(
        T(m, (4, 3), 1)))


# -- vmap ----------------------------------------------------------------------------------------
def test_vmap_dims():
    h.same(lambda m: m.vmap(m.dot)(T(m, (4, 3), 1), T(m, (4, 3), 2)))
    h.same(lambda m: m.vmap(m.mv, in_dims=(0, None))(T(m, (4, 2, 3), 1), T(m, (3,), 2)))
    h.same(lambda m: m.vmap(lambda x: x * 2, in_dims=1, out_dims=1)(T(m, (2, 5, 3), 1)))
    h.same(lambda m: m.vmap(lambda x: (x.sum(), x * 2), in_dims=-1, out_dims=(0, -1))(
        T(m, (2, 5), 1)))
    h.same(lambda m: m.vmap(lambda d, s: d["a"] * s, in_dims=({"a": 1}, None))(
        {"a": T(m, (2, 3), 1)}, 3.0))
    h.same(lambda m: m.vmap(lambda x, y: x + y[0], in_dims=(0, (1,)))(T(m, (3, 2), 1),
                                                                   (T(m, (2, 3), 2),)))
    h.same(lambda m: m.vmap(m.vmap(m.outer))(T(m, (2, 3, 4), 1), T(m, (2, 3, 5), 2)))
    h.same(lambda m: m.vmap(m.vmap(m.dot, in_dims=(None, 0)), in_dims=(0, None))(
        T(m, (2, 3), 1), T(m, (4, 3), 2)))
    h.same(lambda m: m.func.vmap(lambda x, scale=1.0: x * scale)(T(m, (3, 2), 1), scale=2.0))
    h.same(lambda m: m.vmap(lambda x, y: y * 2, in_dims=(0, None), out_dims=(None))(
        T(m, (3, 2), 1), T(m, (2,), 2)))
    h.raises_like(lambda m: m.vmap(lambda x: x.sum(), out_dims=None)(T(m, (2, 2), 1)),
                  "can not return a BatchedTensor when out_dim is None")

    def grads_through(m):
        x = T(m, (3, 4), 1, requires_grad=True)
        y = m.vmap(lambda r: (r.sin() * r).sum())(x)
        y.sum().backward()
        return y, x.grad
    h.same(grads_through)


def test_vmap_errors():
    h.raises_like(lambda m: m.vmap(m.dot)(T(m, (4, 3), 1), T(m, (3, 3), 2)),
                  "Expected all tensors to have the same size in the mapped dimension")
    h.raises_like(lambda m: m.vmap(lambda x: x, in_dims=(None,))(T(m, (4, 3), 1)),
                  "Expected at least one Tensor to vmap over")
    h.raises_like(lambda m: m.vmap(lambda x, n: x, in_dims=(0, 0))(T(m, (4, 3), 1), 2.0),
                  "We cannot vmap over non-Tensor arguments")
    h.raises_like(lambda m: m.vmap(lambda x: x, in_dims=2)(T(m, (4, 3), 1)),
                  "so expected in_dim to satisfy")
    h.raises_like(lambda m: m.vmap(lambda x, y: x, in_dims=(0,))(T(m, (4,), 1), T(m, (4,), 1)),
                  "in_dims is not compatible with the structure of `inputs`")
    h.raises_like(lambda m: m.vmap(lambda x: 1.0)(T(m, (4,), 1)), "must only return Tensors")
    h.raises_like(lambda m: m.vmap(lambda x: x)(), "got no inputs")
    h.raises_like(lambda m: m.vmap(lambda x: x, randomness="sometimes")(T(m, (2,), 1)),
                  "Only allowed values for randomness")
    h.raises_like(lambda m: m.vmap(lambda x: x + m.rand(()))(T(m, (2,), 1)),
                  "called random operation while in randomness error mode")


def test_vmap_randomness():
    def prog(m):
        m.manual_seed(0)
        same = m.vmap(lambda x: x + m.rand(3), randomness="same")(m.zeros(4, 3))
        diff = m.vmap(lambda x: x + m.rand(3), randomness="different")(m.zeros(4, 3))
        return ((same == same[0]).all().item(), (diff == diff[0]).all().item(),
                ((same >= 0) & (same < 1)).all().item())
    h.same(prog)


# -- functional_call / stateless -----------------------------------------------------------------
class _Net:
    @staticmethod
    def make(m):
        net = m.nn.Sequential(m.nn.Linear(3, 4), m.nn.BatchNorm1d(4), m.nn.Tanh(),
                              m.nn.Linear(4, 2))
        with m.no_grad():
            for i, p in enumerate(net.parameters()):
                p.copy_(m.tensor(_data(tuple(p.shape), 10 + i, np.float32)))
        return net


def test_functional_call_dicts_restore_and_grads():
    def prog(m):
        net = _Net.make(m)
        x = T(m, (5, 3), 1).float()
        params = {k: v.detach() * 2 for k, v in net.named_parameters()}
        buffers = {k: v.clone() for k, v in net.named_buffers()}
        y1 = m.func.functional_call(net, params, (x,))
        y2 = m.func.functional_call(net, (params, buffers), x)
        y3 = m.func.functional_call(net, {"0.weight": m.zeros(4, 3)}, args=(), kwargs={
            "input": x})
        y_orig = net(x)
        w = {k: v.detach().requires_grad_() for k, v in net.named_parameters()}
        loss = m.func.functional_call(net, w, (x,)).pow(2).sum()
        loss.backward()
        return (y1, y2, y3, y_orig, [w[k].grad for k in w], net[1].running_mean,
                buffers["1.running_mean"], net[0].weight.grad)
    h.same(prog, rtol=1e-5, atol=1e-6)


def test_functional_call_restores_on_exception_and_checks():
    def prog(m):
        class Boom(m.nn.Module):
            def __init__(self):
                super().__init__()
                self.w = m.nn.Parameter(m.ones(2))

            def forward(self, x):
                raise ValueError("boom")
        mod = Boom()
        w = mod.w
        try:
            m.func.functional_call(mod, {"w": m.zeros(2)}, (m.ones(2),))
        except ValueError:
            pass
        return mod.w is w, isinstance(mod.w, m.nn.Parameter)
    h.same(prog)
    h.raises_like(lambda m: m.func.functional_call(
        _Net.make(m), ({"0.weight": m.zeros(4, 3)}, {"0.weight": m.zeros(4, 3)}), (m.ones(1, 3),)),
        "appeared in multiple dictionaries")
    h.raises_like(lambda m: m.func.functional_call(_Net.make(m), [1], (m.ones(1, 3),)),
                  "Expected all elements of parameter_and_buffer_dicts to be dictionaries")
    h.raises_like(lambda m: m.func.functional_call(
        _Net.make(m), {"0.weight": m.zeros(4, 3), "zz": m.ones(1)}, (m.ones(2, 3),),
        strict=True), "Error(s) in reparametrizing for Sequential")


def test_functional_call_tie_weights():
    def build(m):
        a, b = m.nn.Linear(2, 2, bias=False), m.nn.Linear(2, 2, bias=False)
        b.weight = a.weight
        return m.nn.Sequential(a, b)

    def prog(m, tie):
        net = build(m)
        x = m.ones(1, 2)
        return m.func.functional_call(net, {"0.weight": m.eye(2) * 2}, (x,), tie_weights=tie)
    h.same(lambda m: prog(m, True))


    def untied(m):
        # Untied, layer 1 keeps the module's own (randomly initialised) weight.
        net = build(m)
        x = m.ones(1, 2)
        y = m.func.functional_call(net, {"0.weight": m.eye(2) * 2}, (x,), tie_weights=False)
        return m.allclose(y, (x * 2) @ net[1].weight.T), net[0].weight is net[1].weight
    h.same(untied)
    h.raises_like(lambda m: m.func.functional_call(
        build(m), {"0.weight": m.eye(2), "1.weight": m.eye(2) * 3}, (m.ones(1, 2),)),
        "which are tied")


def test_stateless_functional_call_warns():
    def prog(m):
        lin = m.nn.Linear(2, 1)
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            y = m.nn.utils.stateless.functional_call(
                lin, {"weight": m.ones(1, 2), "bias": m.zeros(1)}, (m.ones(3, 2),))
        return y, [r.category.__name__ for r in rec]
    h.same(prog)


# -- the tutorials ------------------------------------------------------------------------------
def test_per_sample_gradients_tutorial():
    def prog(m):
        F = m.nn.functional

        class SimpleCNN(m.nn.Module):
            def __init__(self):
                super().__init__()
                self.conv1 = m.nn.Conv2d(1, 2, 3, 1)
                self.fc1 = m.nn.Linear(2 * 3 * 3, 4)

            def forward(self, x):
                x = F.relu(self.conv1(x))
                x = F.max_pool2d(x, 2)
                return F.log_softmax(self.fc1(m.flatten(x, 1)), dim=1)

        model = SimpleCNN()
        with m.no_grad():
            for i, p in enumerate(model.parameters()):
                p.copy_(m.tensor(_data(tuple(p.shape), 20 + i, np.float32)))
        data = m.tensor(_data((5, 1, 8, 8), 1, np.float32))
        targets = m.tensor([0, 3, 1, 2, 1])
        params = {k: v.detach() for k, v in model.named_parameters()}
        buffers = {k: v.detach() for k, v in model.named_buffers()}

        def compute_loss(params, buffers, sample, target):
            batch, targets = sample.unsqueeze(0), target.unsqueeze(0)
            predictions = m.func.functional_call(model, (params, buffers), (batch,))
            return F.nll_loss(predictions, targets)

        ft = m.func.vmap(m.func.grad(compute_loss), in_dims=(None, None, 0, 0))
        per_sample = ft(params, buffers, data, targets)
        # The same gradients one sample at a time with regular autograd.
        manual = []
        for i in range(5):
            model.zero_grad()
            F.nll_loss(model(data[i:i + 1]), targets[i:i + 1]).backward()
            manual.append([p.grad.clone() for p in model.parameters()])
        return per_sample, [m.stack([g[k] for g in manual]) for k in range(4)]
    t, g = h.same(prog, rtol=1e-4, atol=1e-5)
    for k, name in enumerate(t[0]):
        np.testing.assert_allclose(g[0][name].numpy(), g[1][k].numpy(), rtol=1e-4, atol=1e-6)


def test_model_ensembling_tutorial():
    def prog(m):
        F = m.nn.functional

        class MLP(m.nn.Module):
            def __init__(self):
                super().__init__()
                self.fc1 = m.nn.Linear(6, 8)
                self.fc2 = m.nn.Linear(8, 3)

            def forward(self, x):
                return self.fc2(F.relu(self.fc1(x.flatten(1))))

        models = [MLP() for _ in range(4)]
        with m.no_grad():
            for j, mod in enumerate(models):
                for i, p in enumerate(mod.parameters()):
                    p.copy_(m.tensor(_data(tuple(p.shape), 100 * j + i, np.float32)))
        minibatches = m.tensor(_data((4, 5, 2, 3), 7, np.float32))
        params, buffers = m.func.stack_module_state(models)
        base_model = copy.deepcopy(models[0])

        def fmodel(params, buffers, x):
            return m.func.functional_call(base_model, (params, buffers), (x,))

        preds = m.vmap(fmodel)(params, buffers, minibatches)
        same_mb = m.vmap(fmodel, in_dims=(0, 0, None))(params, buffers, minibatches[0])
        expected = [models[i](minibatches[i]) for i in range(4)]
        preds.sum().backward()
        return (preds, same_mb, m.stack(expected), {k: v.grad for k, v in params.items()},
                sorted(params), {k: v.requires_grad for k, v in params.items()},
                params["fc1.weight"].is_leaf)
    h.same(prog, rtol=1e-5, atol=1e-6)

    h.raises_like(lambda m: m.func.stack_module_state([]), "Expected at least one model")
    h.raises_like(lambda m: m.func.stack_module_state([m.nn.Linear(1, 1),
                                                       m.nn.Linear(1, 1).eval()]),
                  "same training/eval mode")
    h.raises_like(lambda m: m.func.stack_module_state([m.nn.Linear(1, 1), m.nn.Tanh()]),
                  "same class")
