"""In-place ops on views and the version counter (errors printed as builtin type and first
sentence), detach/detach_/requires_grad_ on views, no_grad/enable_grad/inference_mode nesting,
tensor hooks that replace the gradient, module forward pre-hooks with kwargs and full
backward hooks, and grad_fn/next_functions chains."""

import sys

import numpy as np

torch = __import__(sys.argv[1])
nn = torch.nn


def N(name, *ts):
    vals = []
    for t in ts:
        vals += np.asarray(t.detach().numpy() if hasattr(t, "detach") else t).ravel().tolist()
    print("~", name, " ".join(f"{v:.6g}" for v in vals))


def err(f):
    try:
        f()
        print("no error")
    except Exception as e:
        # graphgrad's typed errors subclass the builtin torch raises; print that one
        kind = next(c for c in type(e).__mro__ if c.__module__ == "builtins").__name__
        print(kind, str(e).split("\n")[0].split(". ")[0].rstrip("."))


rng = np.random.default_rng(11)
leaf = torch.tensor(rng.standard_normal(4), requires_grad=True)
err(lambda: leaf.add_(1))
err(lambda: leaf[0].mul_(2))
base = leaf * 1
v = base[1:3]
print(v._version, base._version, v._base is base, v.is_leaf)
v.mul_(10)
print(v._version, base._version, type(base.grad_fn).__name__, type(v.grad_fn).__name__)
base.sum().backward()
N("view inplace grad", leaf.grad)
leaf.grad = None
s = leaf.sigmoid()
s.add_(1)
err(lambda: s.sum().backward())
e = leaf.exp()
y = e + 2
e.zero_()
err(lambda: y.sum().backward())
leaf.grad = None
t = leaf.tanh()
t.mul_(2)
err(lambda: t.sum().backward())
# detach on views
d = base.detach()
d[0] = 100.0
print(base[0].item() == 100.0, d._version, d.requires_grad)
w = torch.tensor(rng.standard_normal((2, 3)))
wv = w[0]
wv.requires_grad_()
print(wv.is_leaf, wv.requires_grad, w.requires_grad)
h = leaf * 3
hv = h[:2]
err(lambda: hv.detach_())
h2 = leaf * 3
h2.detach_()
print(h2.requires_grad, h2.is_leaf, h2.grad_fn)
err(lambda: (leaf * 1).view(2, 2).requires_grad_(False))
# grad modes
with torch.no_grad():
    a = leaf * 2
    with torch.enable_grad():
        b = leaf * 2
        with torch.no_grad():
            c = leaf * 2
    print(torch.is_grad_enabled())
print(a.requires_grad, b.requires_grad, c.requires_grad, torch.is_grad_enabled())
with torch.inference_mode():
    i1 = leaf * 2
    print(torch.is_inference_mode_enabled(), torch.is_grad_enabled())
    with torch.inference_mode(False):
        i2 = torch.ones(2)
        print(torch.is_inference_mode_enabled())
print(i1.is_inference(), i1.requires_grad, i2.is_inference(), leaf.is_inference())
err(lambda: i1.add_(1))
err(lambda: i1.view(4)[:2].mul_(2))
normal = torch.ones(3)
with torch.inference_mode():
    nv, nd = normal[:2], normal.detach()
    nv.add_(1)
print(i1[0].is_inference(), i1.detach().is_inference(), nv.is_inference(), nd.is_inference())
err(lambda: leaf * i1)
torch.set_grad_enabled(False)
print((leaf * 2).requires_grad)
torch.set_grad_enabled(True)


@torch.no_grad()
def decorated(t):
    return t * 2, torch.is_grad_enabled()


print(decorated(leaf)[0].requires_grad, decorated(leaf)[1], torch.is_grad_enabled())
# hooks
x = torch.tensor(rng.standard_normal(3), requires_grad=True)
seen = []
hx = x.register_hook(lambda g: seen.append(g.clone()) or g * 2)
mid = x * x
mid.register_hook(lambda g: g + 1)
mid.retain_grad()
mid.sum().backward()
N("hooked grad", x.grad, mid.grad, seen[0])
hx.remove()
lin = nn.Linear(3, 2)
lin.load_state_dict({"weight": torch.from_numpy(rng.standard_normal((2, 3)).astype(np.float32)),
                     "bias": torch.zeros(2)})
log = []


def pre(mod, args, kwargs):
    log.append(sorted(kwargs))
    return (args[0] * 0.5,), {}


class Scaled(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = lin

    def forward(self, inp, scale=1.0):
        return self.lin(inp) * scale


m = Scaled()
ph = m.register_forward_pre_hook(pre, with_kwargs=True)
fh = m.register_forward_hook(lambda mod, args, kw, o: o + 1, with_kwargs=True)
bh = m.register_full_backward_hook(lambda mod, gi, go: log.append((len(gi), gi[0].shape)))
bp = m.register_full_backward_pre_hook(lambda mod, go: (go[0] * 3,))
inp = torch.ones(1, 3, requires_grad=True)
o = m(inp, scale=5.0)
o.sum().backward()
N("module hooks", o, inp.grad)
print(log)
for hh in (ph, fh, bh, bp):
    hh.remove()
# grad_fn chains
q = torch.tensor([1.0, 2.0], requires_grad=True)
r = ((q * 2).exp() + q).sum()
print(type(r.grad_fn).__name__, [type(f).__name__ for f, _ in r.grad_fn.next_functions])
nf = r.grad_fn.next_functions[0][0].next_functions
print([(type(f).__name__, i) for f, i in nf])
print(type(nf[1][0].variable is q).__name__, nf[1][0].variable is q)
print(q.grad_fn, (q + 1).grad_fn.name(), q.detach().grad_fn)
