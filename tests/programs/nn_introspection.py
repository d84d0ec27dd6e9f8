"""Module introspection: named_modules prefixes/remove_duplicate, get_submodule/get_parameter/
get_buffer, register_module/add_module, ModuleDict/ParameterDict/ParameterList, Sequential
editing, state_dict prefix/keep_vars, load_state_dict strict=False, _load_from_state_dict
overrides, deepcopy, train/eval, freezing, named_parameters(recurse=False)."""

import copy
import sys

import numpy as np

torch = __import__(sys.argv[1])
nn = torch.nn

rng = np.random.default_rng(3)


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)
        self.register_buffer("scale", torch.ones(3))
        self.register_buffer("tmp", torch.zeros(1), persistent=False)
        self.alpha = nn.Parameter(torch.zeros(2))

    def forward(self, x):
        return self.lin(x) * self.scale


shared = nn.Linear(2, 2)
net = nn.Sequential(shared, nn.ReLU(), shared, Block())
print([n for n, _ in net.named_modules()])
print([n for n, _ in net.named_modules(prefix="root")])
print([n for n, _ in net.named_modules(remove_duplicate=False)])
print([n for n, _ in net.named_parameters(prefix="p")])
print([n for n, _ in net.named_parameters(remove_duplicate=False)])
print([n for n, _ in net[3].named_parameters(recurse=False)], [n for n, _ in net.named_buffers()])
print(net.get_submodule("3.lin"), net.get_parameter("3.alpha").shape, net.get_buffer("3.scale"))
for bad in ["3.nope", "1.weight"]:
    try:
        net.get_submodule(bad) if bad == "3.nope" else net.get_parameter(bad)
    except AttributeError as e:
        print("AttributeError", type(e).__name__)
net.add_module("extra", nn.Tanh())
net.register_module("more", nn.Identity())
print(len(net), list(net._modules))
seq = nn.Sequential(nn.Linear(2, 2), nn.ReLU(), nn.Linear(2, 2), nn.Sigmoid())
print(seq[1:3])
print(type(seq[1:]).__name__, len(seq[::2]), seq[-1])
seq.append(nn.Tanh())
seq.insert(1, nn.Dropout(0.1))
seq.extend([nn.Identity(), nn.ELU()])
del seq[0]
print(seq)
del seq[1:3]
print(list(seq._modules), len(seq))
md = nn.ModuleDict({"b": nn.ReLU(), "a": nn.Tanh()})
md["c"] = nn.Linear(1, 1)
md.update([("d", nn.Identity())])
print(md, list(md.keys()), "a" in md, len(md))
print(type(md.pop("a")).__name__, list(md))
pd = nn.ParameterDict({"w": nn.Parameter(torch.ones(2)), "v": torch.zeros(3)})
pd["u"] = nn.Parameter(torch.ones(1))
print(pd, sorted(pd.keys()), type(pd["v"]).__name__)
pl = nn.ParameterList([nn.Parameter(torch.ones(2)), torch.zeros(1, 3)])
pl.append(nn.Parameter(torch.ones(4)))
pl.extend([nn.Parameter(torch.ones(5))])
print(pl, len(pl), [tuple(p.shape) for p in pl])
b = Block()
b.load_state_dict({"lin.weight": torch.tensor(rng.standard_normal((3, 3)), dtype=torch.float32),
                   "lin.bias": torch.zeros(3), "scale": torch.ones(3) * 2,
                   "alpha": torch.zeros(2)})
print(list(b.state_dict(prefix="blk.")))
sd = b.state_dict(keep_vars=True)
print(type(sd["alpha"]).__name__, sd["alpha"].requires_grad, sd["scale"].requires_grad)
print(type(b.state_dict()["alpha"]).__name__, b.state_dict()["alpha"].requires_grad)
r = b.load_state_dict({"lin.weight": torch.zeros(3, 3), "bogus": torch.ones(1)}, strict=False)
print(r)
print(r.missing_keys, r.unexpected_keys, type(r).__name__)
try:
    b.load_state_dict({"lin.weight": torch.zeros(3, 3)})
except RuntimeError as e:
    print("RuntimeError", str(e).splitlines()[0])
try:
    b.load_state_dict({"lin.weight": torch.zeros(2, 3)}, strict=False)
except RuntimeError as e:
    print("RuntimeError size", "size mismatch" in str(e))


class Renamed(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.zeros(2))

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        if prefix + "old_w" in state_dict:
            state_dict[prefix + "w"] = state_dict.pop(prefix + "old_w")
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys,
                                      unexpected_keys, error_msgs)


outer = nn.Sequential(Renamed())
print(outer.load_state_dict({"0.old_w": torch.tensor([1.0, 2.0])}), outer[0].w.data)
c = copy.deepcopy(net)
print(c[0] is c[2], c[0] is net[0], torch.equal(c[0].weight, net[0].weight))
st = net[3].__getstate__()
print(sorted(k for k in st if not k.startswith("_")), "_parameters" in st)
net.eval()
print(net.training, net[3].lin.training, [m.training for m in net.modules()][:3])
net.train()
print(all(m.training for m in net.modules()), net[3].train(False).training, net.training)
net[3].requires_grad_(False)
print([n for n, p in net.named_parameters() if p.requires_grad])
print(sum(p.numel() for p in net.parameters()), net[3].lin.weight.requires_grad)
net.zero_grad()
print(net.extra_repr(), repr(net[3]))
print(net.state_dict().keys())
