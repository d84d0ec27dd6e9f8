"""Module behaviour compared with torch: attribute registration and its errors, walking the tree,
state_dict / load_state_dict (keys, errors, in-place copies), train/eval, zero_grad, to(dtype),
forward hooks, containers and repr.
"""

import copy
import importlib.util
import pathlib
import pickle
from collections import OrderedDict

import pytest

import graphgrad as gg

_spec = importlib.util.spec_from_file_location(
    "_gg_test_helpers", pathlib.Path(__file__).parents[1] / "autograd" / "_helpers.py")
h = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(h)

same = h.same
raises_like = h.raises_like


def net(m):
    """A module with a parameter, a buffer, a non-persistent buffer and nested children."""

    class Net(m.nn.Module):
        def __init__(self):
            super().__init__()
            self.scale = m.nn.Parameter(m.tensor([2.0, 3.0]))
            self.register_buffer("count", m.tensor([1.0, 1.0]))
            self.register_buffer("scratch", m.zeros(2), persistent=False)
            self.body = m.nn.Sequential(m.nn.Tanh(), m.nn.Sigmoid())
            self.head = m.nn.ModuleDict({"a": m.nn.Tanh()})

        def forward(self, x):
            return self.body(x * self.scale) + self.count

    return Net()


# -- registration ------------------------------------------------------------------------------
def test_registration_by_attribute():
    def prog(m):
        n = net(m)
        n.extra = m.nn.Parameter(m.ones(1))
        n.plain = m.ones(1)  # a plain tensor is an ordinary attribute
        return ([k for k, _ in n.named_parameters()], [k for k, _ in n.named_buffers()],
                [k for k, _ in n.named_children()], [k for k, _ in n.named_modules()],
                list(n.state_dict()), "plain" in n._buffers)

    same(prog)


def test_assigning_plain_tensor_to_parameter_name_raises():
    def prog(m):
        n = net(m)
        n.scale = m.ones(2)

    raises_like(prog, "cannot assign", "as parameter 'scale'", "Parameter or None expected")


def test_assigning_non_module_to_child_name_raises():
    def prog(m):
        n = net(m)
        n.body = 3

    raises_like(prog, "cannot assign 'int' as child module 'body'")


def test_assigning_non_tensor_to_buffer_name_raises():
    def prog(m):
        n = net(m)
        n.count = [1.0]

    raises_like(prog, "cannot assign 'list' as buffer 'count'")


def test_parameter_before_init_raises():
    def prog(m):
        class Bad(m.nn.Module):
            def __init__(self):
                self.w = m.nn.Parameter(m.ones(1))
                super().__init__()

        Bad()

    raises_like(prog, "cannot assign parameters before Module.__init__() call")


@pytest.mark.parametrize("name, phrase", [("a.b", "name can"), ("", "empty string"),
                                          ("training", "already exists")])
def test_register_name_errors(name, phrase):
    for method in ("register_parameter", "register_buffer"):
        def prog(m):
            getattr(m.nn.Module(), method)(name, None)

        raises_like(prog, phrase)


def test_register_parameter_type_errors():
    raises_like(lambda m: m.nn.Module().register_parameter("w", m.ones(1)),
                "cannot assign", "object to parameter 'w'")
    raises_like(lambda m: m.nn.Module().register_buffer("b", 3), "cannot assign 'int' object")
    raises_like(lambda m: m.nn.Module().add_module("c", 3), "int is not a Module subclass")

    def non_leaf(m):
        w = m.nn.Parameter(m.ones(1))
        m.nn.Module().register_parameter("w", w * 2)

    raises_like(non_leaf, "cannot assign")


def test_reassignment_moves_between_registries_and_delattr():
    def prog(m):
        n = net(m)
        n.count = m.nn.Parameter(m.zeros(2))  # buffer name -> parameter
        n.body = None
        del n.scale
        n.register_parameter("gone", None)
        return ([k for k, _ in n.named_parameters()], [k for k, _ in n.named_buffers()],
                list(n.state_dict()), n.body is None, hasattr(n, "scale"), n.gone is None)

    same(prog)


def test_getattr_error_message():
    raises_like(lambda m: net(m).missing, "'Net' object has no attribute 'missing'")


def test_module_init_rejects_arguments():
    raises_like(lambda m: m.nn.Module(3), "takes 1 positional argument but 2 were given")
    raises_like(lambda m: m.nn.Module(x=1), "unexpected keyword argument 'x'")


def test_forward_missing():
    raises_like(lambda m: m.nn.Module()(m.ones(1)), 'missing the required "forward" function')


def test_shared_parameters_listed_once():
    def prog(m):
        a = m.nn.Tanh()
        seq = m.nn.Sequential(a, a)
        p = m.nn.Parameter(m.ones(1))
        holder = m.nn.Module()
        holder.x = p
        holder.y = p
        return ([k for k, _ in seq.named_modules()], len(list(seq.children())),
                [k for k, _ in holder.named_parameters()],
                [k for k, _ in holder.named_parameters(remove_duplicate=False)],
                list(holder.state_dict()))

    same(prog)


def test_named_parameters_prefix_recurse():
    def prog(m):
        n = net(m)
        n.body.add_module("lin", m.nn.Bilinear(1, 1, 1))
        return ([k for k, _ in n.named_parameters(prefix="model")],
                [k for k, _ in n.named_parameters(recurse=False)],
                [k for k, _ in n.named_buffers(prefix="x", recurse=True)],
                [k for k, _ in n.named_modules(prefix="root")])

    same(prog)


def test_get_submodule_parameter_buffer():
    def prog(m):
        n = net(m)
        return (type(n.get_submodule("body.1")).__name__, n.get_parameter("scale").shape,
                n.get_buffer("count").shape, n.get_submodule("") is n)

    same(prog)
    raises_like(lambda m: net(m).get_submodule("body.7"), "has no attribute `7`")
    raises_like(lambda m: net(m).get_submodule("scale"), "`scale` is not an nn.Module")
    raises_like(lambda m: net(m).get_parameter("count"), "`count` is not an nn.Parameter")
    raises_like(lambda m: net(m).get_buffer("scale"), "`scale` is not a buffer")


def test_dir_lists_members():
    def prog(m):
        d = dir(net(m))
        return [k in d for k in ("scale", "count", "scratch", "body", "forward", "training")]

    same(prog)


# -- state dict ---------------------------------------------------------------------------------
def test_state_dict_detached_and_keep_vars():
    def prog(m):
        n = net(m)
        sd = n.state_dict()
        kv = n.state_dict(keep_vars=True)
        return (type(sd).__name__, list(sd), sd["scale"].requires_grad, kv["scale"] is n.scale,
                list(n.state_dict(prefix="p.")), dict(sd._metadata))

    same(prog)


def test_load_state_dict_copies_in_place():
    def prog(m):
        n = net(m)
        before = n.scale
        sd = OrderedDict(scale=m.tensor([5.0, 6.0]), count=m.tensor([7.0, 8.0]))
        result = n.load_state_dict(sd)
        return (n.scale is before, n.scale, n.count, n.scale.requires_grad, n.scale.is_leaf,
                repr(result), result.missing_keys, n.scale._version)

    same(prog)


def test_load_state_dict_missing_and_unexpected():
    def prog(m):
        n = net(m)
        return n.load_state_dict({"scale": m.ones(2), "bogus": m.ones(1),
                                  "body.9.weight": m.ones(1)})

    expected, actual = raises_like(prog, "Error(s) in loading state_dict for Net:",
                                   'Missing key(s) in state_dict: "count".',
                                   'Unexpected key(s) in state_dict: "bogus", "body.9.weight".')
    assert str(actual.exc) == str(expected.exc)

    def lenient(m):
        r = net(m).load_state_dict({"scale": m.ones(2), "bogus": m.ones(1)}, strict=False)
        return r.missing_keys, r.unexpected_keys, repr(r)

    same(lenient)


def test_load_state_dict_linear_message_exact():
    def prog(m):
        m.nn.Linear(2, 3).load_state_dict({"weight": m.ones(3, 2)})

    expected, actual = raises_like(prog, "Error(s) in loading state_dict for Linear:\n\t"
                                   'Missing key(s) in state_dict: "bias".')
    assert str(actual.exc) == str(expected.exc)


def test_load_state_dict_size_mismatch():
    def prog(m):
        m.nn.Linear(2, 3).load_state_dict({"weight": m.ones(2, 2), "bias": m.ones(3)})

    expected, actual = raises_like(prog, "size mismatch for weight: copying a param with shape "
                                   "torch.Size([2, 2]) from checkpoint, the shape in current "
                                   "model is torch.Size([3, 2]).")
    assert str(actual.exc) == str(expected.exc)


def test_load_state_dict_type_errors():
    raises_like(lambda m: net(m).load_state_dict([1]), "Expected state_dict to be dict-like")

    def not_tensor(m):
        net(m).load_state_dict({"scale": [1.0, 2.0], "count": m.ones(2)})

    raises_like(not_tensor, 'While copying the parameter named "scale"')


def test_load_state_dict_assign():
    def prog(m):
        n = net(m)
        new = m.tensor([9.0, 9.0])
        n.load_state_dict({"scale": new, "count": m.ones(2)}, assign=True)
        return type(n.scale).__name__, n.scale.requires_grad, n.scale

    same(prog)


def test_state_dict_round_trip_between_models():
    def prog(m):
        m.manual_seed(0)
        a, b = m.nn.Linear(3, 2), m.nn.Linear(3, 2)
        b.load_state_dict(a.state_dict())
        x = m.ones(1, 3)
        return m.equal(a.weight, b.weight) and m.equal(a.bias, b.bias) and m.equal(a(x), b(x))

    if not hasattr(gg.nn.functional, "linear"):
        pytest.skip("graphgrad.nn.functional lacks linear")
    same(prog)


# -- modes, grads, dtypes ------------------------------------------------------------------------
def test_train_eval_propagate():
    def prog(m):
        n = net(m)
        states = [n.training, n.body[0].training]
        n.eval()
        states += [n.training, n.body[0].training, n.head["a"].training]
        n.body.train()
        states += [n.training, n.body[1].training]
        return states, n.train(True) is n

    same(prog)
    raises_like(lambda m: net(m).train(1), "training mode is expected to be boolean")


def test_zero_grad_and_requires_grad_():
    def prog(m):
        n = net(m)
        n(m.ones(2)).sum().backward()
        g = n.scale.grad.clone()
        n.zero_grad(set_to_none=False)
        kept = n.scale.grad
        n.zero_grad()
        n.requires_grad_(False)
        return g, kept, n.scale.grad is None, n.scale.requires_grad

    same(prog)


def test_to_dtype_keeps_parameter_identity():
    def prog(m):
        n = net(m)
        n.register_buffer("steps", m.tensor([3]))
        p = n.scale
        n(m.ones(2)).sum().backward()
        n.double()
        out = [n.scale is p, n.scale.dtype, n.scale.grad.dtype, n.count.dtype, n.steps.dtype,
               type(n.scale).__name__, n.scale.requires_grad]
        n.to(m.float32)
        out += [n.scale.dtype, n.to(dtype=m.float16).count.dtype, n.to("cpu") is n]
        n.float()
        out += [n.half().scale.dtype, n.cpu() is n, n.to(m.ones(1, dtype=m.float64)).scale.dtype]
        return out

    same(prog)
    raises_like(lambda m: net(m).to(m.int64), "nn.Module.to only accepts floating point")


def test_apply_visits_children_first():
    def prog(m):
        seen = []
        net(m).apply(lambda mod: seen.append(type(mod).__name__))
        return seen

    same(prog)


# -- hooks -----------------------------------------------------------------------------------
def test_forward_hooks_order_and_replacement():
    def prog(m):
        n = m.nn.Tanh()
        log = []
        h1 = n.register_forward_pre_hook(lambda mod, args: log.append("pre") or (args[0] * 2,))
        n.register_forward_pre_hook(lambda mod, args: log.append("pre0"), prepend=True)
        n.register_forward_hook(lambda mod, args, out: log.append(("post", args[0])) or out + 1)
        n.register_forward_pre_hook(lambda mod, args, kwargs: (args, kwargs), with_kwargs=True)
        n.register_forward_hook(lambda mod, args, kwargs, out: out * 10, with_kwargs=True)
        y = n(m.tensor([0.5]))
        h1.remove()
        z = n(m.tensor([0.5]))
        return y, z, log

    same(prog)


def test_forward_hook_context_manager_and_always_call():
    def prog(m):
        n = m.nn.Tanh()
        log = []
        with n.register_forward_hook(lambda mod, args, out: log.append("in")):
            n(m.ones(1))
        n(m.ones(1))

        class Boom(m.nn.Module):
            def forward(self, x):
                raise ValueError("boom")

        b = Boom()
        b.register_forward_hook(lambda mod, args, out: log.append(("always", out)),
                                always_call=True)
        try:
            b(m.ones(1))
        except ValueError:
            log.append("raised")
        return log

    same(prog)


def test_state_dict_hooks():
    def prog(m):
        n = m.nn.Bilinear(1, 1, 1)
        log = []
        n.register_state_dict_pre_hook(lambda mod, prefix, keep: log.append(("pre", prefix)))
        n.register_state_dict_post_hook(lambda mod, sd, prefix, meta: sd.pop(prefix + "bias"))
        n.register_load_state_dict_post_hook(lambda mod, keys: log.append(list(keys.missing_keys)))
        sd = n.state_dict()
        n.load_state_dict(sd, strict=False)
        return list(sd), log

    same(prog)


_NO_NODE_HOOKS = pytest.mark.skipif(
    not hasattr(gg.autograd.graph.Node, "register_prehook"),
    reason="graphgrad's autograd Node has no register_hook/register_prehook (needed by module "
    "backward hooks)")


@_NO_NODE_HOOKS
def test_full_backward_hook():
    def prog(m):
        n = m.nn.Tanh()
        log = []
        n.register_full_backward_hook(lambda mod, gin, gout: log.append((gin, gout)))
        x = m.tensor([0.5, 1.0], requires_grad=True)
        n(x).sum().backward()
        return log, x.grad

    same(prog)


@_NO_NODE_HOOKS
def test_full_backward_hooks_replace_gradients():
    def prog(m):
        class Two(m.nn.Module):
            def forward(self, a, b, k):
                return a * b * k, a + b

        n = Two()
        log = []
        n.register_full_backward_pre_hook(
            lambda mod, gout: log.append(("pre", gout)) or (gout[0] * 2, gout[1]))
        n.register_full_backward_hook(
            lambda mod, gin, gout: log.append(("post", gin, gout)) or (gin[0] + 1, None, None))
        a = m.tensor([1.0, 2.0], requires_grad=True)
        b = m.tensor([3.0, 4.0], requires_grad=True)
        y, z = n(a, b, 3.0)
        (y.sum() + (z * z).sum()).backward()
        return log, a.grad, b.grad

    same(prog)


@_NO_NODE_HOOKS
def test_full_backward_hook_on_layer_in_sequential():
    def prog(m):
        inner = m.nn.Softplus()
        net = m.nn.Sequential(m.nn.Tanh(), inner, m.nn.Sigmoid())
        log = []
        handle = inner.register_full_backward_hook(
            lambda mod, gin, gout: log.append((type(mod).__name__, gin, gout)))
        x = m.tensor([[0.5, -1.0]], requires_grad=True)
        net(x).sum().backward()
        handle.remove()
        net(x).sum().backward()
        return log, x.grad

    same(prog)


def test_backward_hook_mixing_error():
    def prog(m):
        n = m.nn.Tanh()
        n._is_full_backward_hook = False  # as after register_backward_hook (the legacy kind)
        n.register_full_backward_hook(lambda *a: None)

    raises_like(prog, "Cannot use both regular backward hooks and full backward hooks")


# -- containers --------------------------------------------------------------------------------
def test_sequential_list_operations():
    def prog(m):
        s = m.nn.Sequential(m.nn.Tanh(), m.nn.Sigmoid(), m.nn.ReLU())
        out = [len(s), type(s[-1]).__name__, type(s[1:]).__name__, len(s[1:]),
               [type(x).__name__ for x in s]]
        s.append(m.nn.GELU())
        s.insert(0, m.nn.SiLU())
        s.extend([m.nn.Mish()])
        del s[1]
        s[0] = m.nn.ELU()
        out += [list(s._modules), repr(s), repr(s[1:3])]
        out += [type(s.pop(0)).__name__, list(s._modules), len(s + s), len(s * 2)]
        od = m.nn.Sequential(OrderedDict([("first", m.nn.Tanh()), ("second", m.nn.ReLU())]))
        out += [repr(od), type(od.first).__name__, od(m.tensor([-1.0]))]
        return out

    same(prog)
    raises_like(lambda m: m.nn.Sequential(m.nn.Tanh())[3], "index 3 is out of range")
    raises_like(lambda m: m.nn.Sequential(m.nn.Tanh()) + 1, "add operator supports only")


def test_module_list_and_dict():
    def prog(m):
        ml = m.nn.ModuleList([m.nn.Tanh(), m.nn.Tanh(), m.nn.ReLU()])
        ml.append(m.nn.ReLU())
        ml.insert(1, m.nn.SiLU())
        ml += [m.nn.GELU()]
        out = [len(ml), repr(ml), type(ml[1:3]).__name__, len(ml[1:3]), repr(m.nn.ModuleList())]
        del ml[0]
        out += [list(ml._modules), type(ml[-1]).__name__]
        md = m.nn.ModuleDict({"b": m.nn.Tanh(), "a": m.nn.ReLU()})
        md["c"] = m.nn.SiLU()
        md.update([("d", m.nn.GELU())])
        out += [list(md.keys()), "a" in md, len(md), type(md.pop("b")).__name__, repr(md)]
        return out

    same(prog)
    raises_like(lambda m: m.nn.ModuleList().extend(3), "ModuleList.extend should be called")


def test_parameter_list_and_dict():
    def prog(m):
        pl = m.nn.ParameterList([m.nn.Parameter(m.ones(2)), m.zeros(3, dtype=m.float64)])
        pl.append(m.ones(1, 2))
        pd = m.nn.ParameterDict({"w": m.ones(2), "a": m.nn.Parameter(m.zeros(1))})
        pd["z"] = m.ones(2, 2)
        return ([type(p).__name__ for p in pl], len(pl), repr(pl), list(pd.keys()),
                [k for k, _ in pd.named_parameters()], repr(pd), "w" in pd, len(pl[:2]),
                list(pl.state_dict()))

    same(prog)
    raises_like(lambda m: m.nn.ParameterList()(1), "ParameterList should not be called.")


# -- repr, copy, pickle --------------------------------------------------------------------------
def test_nested_repr():
    def prog(m):
        n = net(m)
        n.lin = m.nn.Bilinear(2, 3, 4, bias=False)
        n.acts = m.nn.ModuleList([m.nn.LeakyReLU(0.2, inplace=True), m.nn.Hardtanh(-2.0, 2.0),
                                  m.nn.ELU(alpha=0.5), m.nn.GELU("tanh"), m.nn.Softplus(),
                                  m.nn.Softmax(dim=1), m.nn.ReLU6(True), m.nn.Flatten(),
                                  m.nn.Unflatten(1, (2, 2)), m.nn.Identity()])
        return repr(n)

    same(prog)


def test_deepcopy_and_pickle():
    def prog(m):
        n = net(m)
        c = copy.deepcopy(n)
        p = pickle.loads(pickle.dumps(n))
        return (c.scale is not n.scale, type(c.scale).__name__, c.scale, c.scale.requires_grad,
                list(c.state_dict()), type(p.scale).__name__, p.scale, repr(p),
                p(m.ones(2)))

    same(prog)
