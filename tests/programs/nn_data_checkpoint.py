"""Data loading and checkpoints: DataLoader with batch_size=None, drop_last, custom collate_fn,
Sampler subclasses, BatchSampler as batch_sampler, WeightedRandomSampler with a seeded
generator (lengths and types only), IterableDataset, num_workers=0, len() of loaders, and
torch.save/torch.load of nested dicts of tensors and lists, one tensor reached twice."""

import io
import sys

import numpy as np

torch = __import__(sys.argv[1])
data = torch.utils.data
nn = torch.nn

rng = np.random.default_rng(21)
X = torch.tensor(rng.standard_normal((10, 3)).astype(np.float32))
Y = torch.tensor(rng.integers(0, 2, 10))
tds = data.TensorDataset(X, Y)

dl = data.DataLoader(tds, batch_size=None)
x0, y0 = next(iter(dl))
print(len(dl), x0.shape, y0, y0.dtype, type(x0).__name__)
dl = data.DataLoader(tds, batch_size=3, drop_last=True, num_workers=0)
print(len(dl), [tuple(b[0].shape) for b in dl], type(iter(dl)).__name__, len(iter(dl)))
print(len(data.DataLoader(tds, batch_size=3)), len(data.DataLoader(tds, batch_size=4,
                                                                   drop_last=False)))


def collate(batch):
    xs, ys = zip(*batch)
    return {"x": torch.stack(xs).sum(1), "y": list(int(y) for y in ys), "n": len(batch)}


b = next(iter(data.DataLoader(tds, batch_size=4, collate_fn=collate)))
print(b["y"], b["n"], b["x"].shape)


class EveryOther(data.Sampler):
    def __init__(self, n, offset):
        self.n, self.offset = n, offset

    def __iter__(self):
        return iter(range(self.offset, self.n, 2))

    def __len__(self):
        return (self.n - self.offset + 1) // 2


s = EveryOther(10, 1)
print(list(s), len(s))
dl = data.DataLoader(tds, batch_size=2, sampler=s)
print(len(dl), [b[1].tolist() for b in dl])
bs = data.BatchSampler(data.SequentialSampler(range(7)), batch_size=3, drop_last=False)
print(list(bs), len(bs), len(data.BatchSampler(range(7), 3, True)))
dl = data.DataLoader(tds, batch_sampler=data.BatchSampler(EveryOther(10, 0), 2, drop_last=True))
print(len(dl), [tuple(b[0].shape) for b in dl])
try:
    data.DataLoader(tds, batch_sampler=bs, batch_size=2)
except ValueError as e:
    print("ValueError", str(e)[:60])
try:
    data.DataLoader(tds, sampler=s, shuffle=True)
except ValueError as e:
    print("ValueError", str(e)[:60])
ws = data.WeightedRandomSampler([0.1, 0.9, 0.5, 0.0], num_samples=6, replacement=True,
                                generator=torch.Generator().manual_seed(0))
idx = list(ws)
print(len(ws), len(idx), type(idx[0]).__name__, 3 not in idx)
ws2 = data.WeightedRandomSampler(torch.tensor([1.0, 1.0, 1.0]), 3, replacement=False)
print(sorted(ws2), type(ws2.weights).__name__, ws2.weights.dtype)
rs = data.RandomSampler(tds, num_samples=4, replacement=True)
print(len(rs), len(list(rs)), len(data.RandomSampler(range(5))))
print(sorted(data.SubsetRandomSampler([4, 2, 9])), len(data.SubsetRandomSampler([1, 2])))


class Stream(data.IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        for i in range(self.n):
            yield torch.tensor([float(i), i * 0.5]), i % 3


dl = data.DataLoader(Stream(7), batch_size=3)
print([(tuple(x.shape), y.tolist()) for x, y in dl])
print(len(list(data.DataLoader(Stream(7), batch_size=3, drop_last=True))))
print([y for _, y in data.DataLoader(Stream(4), batch_size=None)])
chained = data.ChainDataset([Stream(2), Stream(3)])
print(len(list(chained)), isinstance(chained, data.IterableDataset))
try:
    len(data.DataLoader(Stream(3)))
except TypeError as e:
    print("TypeError", type(e).__name__)

ckpt = {"tensors": {"a": X[:2], "b": [Y[:3], torch.arange(4.0).view(2, 2)]},
        "meta": {"names": ["x", "y"], "step": 7, "ratio": 0.5, "flag": None, "tup": (1, "t"),
                 "shape": X.shape, "dtype": torch.float16, "device": torch.device("cpu"),
                 "tags": {"a"}, "raw": b"\x00\xff"},
        "int": torch.tensor(3), "half": torch.ones(2, dtype=torch.float16),
        "bool": torch.tensor([True, False]), "empty": torch.zeros(0, 3)}
base = torch.arange(6.0)
ckpt["same"] = [base, base]
buf = io.BytesIO()
torch.save(ckpt, buf)
buf.seek(0)
back = torch.load(buf)
print(sorted(back), type(back["tensors"]["b"]).__name__, back["meta"])
print(back["tensors"]["a"].shape, back["tensors"]["b"][0], back["tensors"]["b"][1])
print(back["int"], back["half"], back["bool"], back["empty"].shape, back["half"].dtype)
v = back["same"]
v[0][2] = 100.0
print(v[1], v[0] is v[1])
buf.seek(0)
back2 = torch.load(buf, weights_only=True)
print(back2["meta"]["tup"], torch.equal(back2["tensors"]["a"], X[:2]))
meta = back2["meta"]
print(meta["shape"], meta["shape"].numel(), meta["dtype"].is_floating_point)
bn = nn.Sequential(nn.Linear(3, 2), nn.BatchNorm1d(2))
buf = io.BytesIO()
torch.save(bn.state_dict(), buf)
buf.seek(0)
sd = torch.load(buf)
print(type(sd).__name__, sd._metadata, bn.load_state_dict(sd))
m = nn.Linear(3, 2)
opt = torch.optim.Adam(m.parameters(), lr=0.1)
m(X).sum().backward()
opt.step()
buf = io.BytesIO()
torch.save({"opt": opt.state_dict(), "model": m.state_dict()}, buf)
buf.seek(0)
back = torch.load(buf, weights_only=True)
print(back["opt"]["param_groups"][0]["params"], sorted(back["opt"]["state"][0]))
print(back["opt"]["state"][0]["step"], back["opt"]["state"][1]["exp_avg"].shape)
opt2 = torch.optim.Adam(nn.Linear(3, 2).parameters(), lr=0.1)
opt2.load_state_dict(back["opt"])
print(opt2.state_dict()["param_groups"][0]["lr"], len(opt2.state))
print(type(list(opt2.state.values())[0]["step"]).__name__)
