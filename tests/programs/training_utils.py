"""The scaffolding of a typical training script: a custom Dataset with dict samples,
TensorDataset/Subset/random_split/ConcatDataset, DataLoader batching (drop_last, default
collate of dicts and tuples), parameter groups, gradient accumulation, lr schedulers
(OneCycleLR, ReduceLROnPlateau, CosineAnnealingWarmRestarts, MultiStepLR, SequentialLR),
checkpoint save/resume and state_dict printing, eval with no_grad and argmax accuracy."""

import io
import sys

import numpy as np

torch = __import__(sys.argv[1])
nn = torch.nn
F = torch.nn.functional
data = torch.utils.data


def N(name, *ts):
    vals = []
    for t in ts:
        vals += np.asarray(t.detach().numpy() if hasattr(t, "detach") else t).ravel().tolist()
    print("~", name, " ".join(f"{v:.6g}" for v in vals))


rng = np.random.default_rng(9)
X = rng.standard_normal((40, 5)).astype(np.float32)
Y = (X[:, 0] + X[:, 1] > 0).astype(np.int64) + (X[:, 2] > 1)


class DictDataset(data.Dataset):
    def __init__(self, x, y):
        self.x, self.y = x, y

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return {"x": torch.from_numpy(self.x[i]), "y": int(self.y[i]), "id": i}


ds = DictDataset(X, Y)
b = next(iter(data.DataLoader(ds, batch_size=3)))
print(sorted(b), b["x"].shape, b["y"], b["id"], b["y"].dtype)
print(next(iter(data.DataLoader([("cat", 1, [0.5]), ("dog", 0, [1.5])], batch_size=2))))
tds = data.TensorDataset(torch.from_numpy(X), torch.from_numpy(Y))
print(len(tds), tds[0][1], type(tds[0]), len(data.ConcatDataset([tds, tds])))
parts = data.random_split(tds, [0.75, 0.25], generator=torch.Generator().manual_seed(1))
print([len(p) for p in parts], type(parts[0]).__name__)
train_ds, val_ds = data.Subset(tds, range(30)), data.Subset(tds, range(30, 40))
train_dl = data.DataLoader(train_ds, batch_size=4, shuffle=False, drop_last=True)
val_dl = data.DataLoader(val_ds, batch_size=4)
print(len(train_dl), len(val_dl), [xb.shape[0] for xb, _ in val_dl])

model = nn.Sequential(nn.Linear(5, 16), nn.BatchNorm1d(16), nn.GELU(), nn.Linear(16, 3))
for m in model.modules():
    if isinstance(m, nn.Linear):
        nn.init.xavier_uniform_(m.weight)
        nn.init.zeros_(m.bias)
print(model[3].bias, model[1].weight[:3], model[1].running_var[:3])
model.load_state_dict({k: (torch.tensor(rng.normal(0, 0.5, tuple(v.shape)), dtype=v.dtype)
                           if v.is_floating_point() else v) for k, v in model.state_dict().items()},
                      strict=True)
optimizer = torch.optim.SGD([{"params": model[0].parameters(), "lr": 0.05},
                             {"params": model[3].parameters(), "weight_decay": 1e-3},
                             {"params": model[1].parameters(), "momentum": 0.0}],
                            lr=0.1, momentum=0.9)
print(optimizer)
scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=[0.1, 0.2, 0.2],
                                                total_steps=3 * len(train_dl) // 2 + 1)
accum = 2
for epoch in range(3):
    model.train()
    optimizer.zero_grad()
    for i, (xb, yb) in enumerate(train_dl):
        loss = F.cross_entropy(model(xb), yb) / accum
        loss.backward()
        if (i + 1) % accum == 0:
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad(set_to_none=True)
    model.eval()
    correct, total, vloss = 0, 0, 0.0
    with torch.no_grad():
        for xb, yb in val_dl:
            out = model(xb)
            vloss += F.cross_entropy(out, yb, reduction="sum").item()
            correct += (out.argmax(dim=1) == yb).sum().item()
            total += yb.size(0)
    N(f"epoch {epoch} train val lrs", loss.item() * accum, vloss / total,
      *[g["lr"] for g in optimizer.param_groups])
    print(f"acc {correct}/{total}", type(correct), model[0].weight.grad is None)

buf = io.BytesIO()
torch.save({"epoch": 3, "model_state_dict": model.state_dict(),
            "optimizer_state_dict": optimizer.state_dict(),
            "scheduler": scheduler.state_dict()}, buf)
buf.seek(0)
ckpt = torch.load(buf, weights_only=True)
model2 = nn.Sequential(nn.Linear(5, 16), nn.BatchNorm1d(16), nn.GELU(), nn.Linear(16, 3))
print(model2.load_state_dict(ckpt["model_state_dict"]))
opt2 = torch.optim.SGD(model2.parameters(), lr=0.1, momentum=0.9)
print(ckpt["epoch"], list(ckpt["optimizer_state_dict"]), len(ckpt["optimizer_state_dict"]["state"]))
print(sorted(ckpt["scheduler"])[:6], ckpt["scheduler"]["_step_count"])
print(ckpt["model_state_dict"]["1.num_batches_tracked"], type(ckpt["model_state_dict"]).__name__)
model2.eval()
with torch.no_grad():
    print(torch.equal(model2(torch.from_numpy(X[:4])), model(torch.from_numpy(X[:4]))))
print({k: tuple(v.shape) for k, v in model2.state_dict().items()})
print(nn.Linear(2, 1).state_dict().keys(), list(nn.BatchNorm1d(2).state_dict().items())[-1])
sd = nn.Linear(2, 2, bias=False).state_dict()
sd["weight"].fill_(0.5)
print(sd)

p = nn.Parameter(torch.ones(1))
opt = torch.optim.SGD([p], lr=1.0)
plateau = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, mode="min", factor=0.5, patience=1)
for metric in [1.0, 0.9, 0.95, 0.95, 0.95, 0.95, 0.8]:
    opt.step()
    plateau.step(metric)
    print(opt.param_groups[0]["lr"], end=" ")
print()
opt = torch.optim.SGD([p], lr=1.0)
warm = torch.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=3, T_mult=2, eta_min=0.1)
lrs = []
for _ in range(10):
    opt.step()
    warm.step()
    lrs.append(warm.get_last_lr()[0])
N("warm restarts", lrs)
opt = torch.optim.Adam([p], lr=1.0)
s1 = torch.optim.lr_scheduler.LinearLR(opt, start_factor=0.25, total_iters=2)
s2 = torch.optim.lr_scheduler.MultiStepLR(opt, milestones=[2, 4], gamma=0.1)
seq = torch.optim.lr_scheduler.SequentialLR(opt, [s1, s2], milestones=[2])
lrs = []
for _ in range(7):
    opt.step()
    seq.step()
    lrs.append(opt.param_groups[0]["lr"])
N("sequential", lrs)
