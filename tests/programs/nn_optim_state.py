"""Optimizer and scheduler bookkeeping: add_param_group, state_dict()/load_state_dict round
trip with its structure printed, zero_grad(set_to_none=False), get_last_lr/state_dict of
schedulers, ChainedScheduler, LambdaLR warm-up, ReduceLROnPlateau(mode='max', abs threshold,
cooldown), and a whole optimizer state through torch.save/torch.load."""

import io
import sys

import numpy as np

torch = __import__(sys.argv[1])
nn = torch.nn
F = torch.nn.functional
sched = torch.optim.lr_scheduler


def N(name, *ts):
    vals = []
    for t in ts:
        vals += np.asarray(t.detach().numpy() if hasattr(t, "detach") else t).ravel().tolist()
    print("~", name, " ".join(f"{v:.6g}" for v in vals))


def show(sd):
    for gi, g in enumerate(sd["param_groups"]):
        print("group", gi, sorted((k, v) for k, v in g.items() if k != "params"), g["params"])
    for k, st in sd["state"].items():
        print("state", k, {n: (tuple(v.shape) if hasattr(v, "shape") and v.dim() else
                               (type(v).__name__, float(v))) for n, v in sorted(st.items())})


rng = np.random.default_rng(11)
X = torch.tensor(rng.standard_normal((16, 4)).astype(np.float32))
Y = torch.tensor(rng.integers(0, 3, 16))


def make():
    m = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))
    g = np.random.default_rng(1)
    m.load_state_dict({k: torch.tensor(g.standard_normal(tuple(v.shape)).astype(np.float32) * 0.3)
                       for k, v in m.state_dict().items()})
    return m


for name, kw in [("SGD", dict(lr=0.1, momentum=0.9, nesterov=True)), ("Adam", dict(lr=0.01)),
                 ("AdamW", dict(lr=0.01, amsgrad=True)), ("RMSprop", dict(lr=0.01, centered=True)),
                 ("Adagrad", dict(lr=0.1)), ("Adamax", dict(lr=0.01)), ("NAdam", dict(lr=0.01)),
                 ("RAdam", dict(lr=0.01)), ("Adadelta", dict(lr=1.0)), ("ASGD", dict(lr=0.01))]:
    m = make()
    opt = getattr(torch.optim, name)(m[0].parameters(), **kw)
    opt.add_param_group({"params": m[2].parameters(), "lr": 0.005})
    for _ in range(3):
        opt.zero_grad()
        F.cross_entropy(m(X), Y).backward()
        opt.step()
    sd = opt.state_dict()
    print(name, len(opt.param_groups), list(sd))
    show(sd)
    buf = io.BytesIO()
    torch.save(sd, buf)
    buf.seek(0)
    m2 = make()
    m2.load_state_dict(m.state_dict())
    opt2 = getattr(torch.optim, name)([{"params": m2[0].parameters()},
                                       {"params": m2[2].parameters()}], **kw)
    opt2.load_state_dict(torch.load(buf))
    for o, mm in ((opt, m), (opt2, m2)):
        o.zero_grad()
        F.cross_entropy(mm(X), Y).backward()
        o.step()
    N(name + " resumed", m2[2].weight - m[2].weight, m2[0].bias)
    print(torch.equal(m2[2].weight, m[2].weight), opt2.param_groups[1]["lr"])

m = make()
opt = torch.optim.SGD(m.parameters(), lr=0.1)
F.cross_entropy(m(X), Y).backward()
opt.zero_grad(set_to_none=False)
print(m[0].weight.grad.abs().sum().item(), m[0].weight.grad is None)
opt.zero_grad()
print(m[0].weight.grad)
try:
    opt.add_param_group({"params": m[0].weight})
except ValueError as e:
    print("ValueError", e)

p = nn.Parameter(torch.zeros(1))
opt = torch.optim.SGD([p], lr=0.5)
warm = sched.LambdaLR(opt, lambda e: min(1.0, (e + 1) / 3))
print(warm.get_last_lr(), sorted(k for k in warm.state_dict() if k != "lr_lambdas"))
lrs = []
for _ in range(5):
    opt.step()
    warm.step()
    lrs.append(warm.get_last_lr()[0])
N("lambda warmup", lrs)
print(warm.state_dict()["last_epoch"], warm.state_dict()["_step_count"], warm.last_epoch)
opt = torch.optim.SGD([p], lr=1.0)
chain = sched.ChainedScheduler([sched.ExponentialLR(opt, gamma=0.9),
                                sched.StepLR(opt, step_size=2, gamma=0.5)])
lrs = []
for _ in range(5):
    opt.step()
    chain.step()
    lrs.append(chain.get_last_lr()[0])
N("chained", lrs)
opt = torch.optim.SGD([p], lr=1.0)
exp = sched.ExponentialLR(opt, gamma=0.5)
opt.step()
exp.step()
st = exp.state_dict()
print(sorted(st), st["last_epoch"], st["base_lrs"])
exp2 = sched.ExponentialLR(torch.optim.SGD([p], lr=1.0), gamma=0.5)
exp2.load_state_dict(st)
print(exp2.get_last_lr(), exp2.last_epoch)
opt = torch.optim.SGD([p], lr=1.0)
plateau = sched.ReduceLROnPlateau(opt, mode="max", factor=0.5, patience=1, threshold=0.05,
                                  threshold_mode="abs", cooldown=1, min_lr=0.1)
for metric in [0.5, 0.52, 0.54, 0.6, 0.61, 0.62, 0.62, 0.63, 0.64, 0.64, 0.64, 0.64]:
    opt.step()
    plateau.step(metric)
    print(opt.param_groups[0]["lr"], plateau.num_bad_epochs, plateau.cooldown_counter, end=" |")
print()
print(plateau.get_last_lr(), plateau.best, sorted(plateau.state_dict())[:5])
