import os
import sys
import tempfile

import numpy as np

torch = __import__(sys.argv[1])
nn = torch.nn
F = torch.nn.functional
out = []


def P(*a):
    out.append(" ".join(str(x) for x in a))


torch.manual_seed(0)
x = torch.arange(12, dtype=torch.float32).reshape(3, 4)
P(x[:, 1:3], x[x > 5], x[[0, 2]], x[..., -1], x[None].shape, x.T.contiguous().stride())
P(
    x.sum(dim=1, keepdim=True),
    x.mean((0, 1)),
    x.max(dim=0),
    x.argmax(),
    x.std(),
    x.var(1, unbiased=False),
)
P(
    torch.cat([x, x], 1).shape,
    torch.stack([x, x]).shape,
    x.chunk(2, 1)[1],
    x.split([1, 3], 1)[1].shape,
)
P(
    x.view(-1).tolist()[:3],
    x.numpy().dtype,
    torch.from_numpy(np.ones(2)).dtype,
    x.int().dtype,
    x.to(torch.float64).dtype,
)
P(x.new_zeros(2), x.new_full((2,), 3.5), torch.zeros_like(x).shape, x.clone().fill_(2)[0])
P(torch.where(x > 3, x, torch.zeros_like(x))[0], x.clamp(2, 5)[0], x.masked_fill(x < 2, -1)[0])
P(x.unsqueeze(0).expand(2, 3, 4).shape, x.permute(1, 0).shape, x.flatten().shape, x.squeeze().shape)
P(
    torch.tensor([1, 2, 3]) / 2,
    torch.tensor([1, 2, 3]) // 2,
    torch.tensor([True, False]).sum(),
    torch.tensor(3).item(),
)
P(x.dtype, x.device, x.is_leaf, x.requires_grad, x.dim(), x.numel(), x.size(1), len(x))
a = torch.randn(5, 3, requires_grad=True)
b = (a**2).sum()
b.backward()
P(torch.allclose(a.grad, 2 * a))
with torch.no_grad():
    c = a * 2
P(c.requires_grad, c.grad_fn)
m = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Dropout(0.1), nn.Linear(8, 2))
P(m)
P([k for k in m.state_dict()], sum(p.numel() for p in m.parameters()))
opt = torch.optim.Adam(m.parameters(), lr=1e-3)
sched = torch.optim.lr_scheduler.StepLR(opt, 1, gamma=0.5)
ds = torch.utils.data.TensorDataset(torch.randn(20, 4), torch.randint(0, 2, (20,)))
tr, va = torch.utils.data.random_split(ds, [15, 5], generator=torch.Generator().manual_seed(0))
dl = torch.utils.data.DataLoader(tr, batch_size=4, shuffle=True)
for xb, yb in dl:
    loss = F.cross_entropy(m(xb), yb)
    opt.zero_grad()
    loss.backward()
    opt.step()
sched.step()
P(len(dl), len(va), opt.param_groups[0]["lr"], type(loss.item()))
with tempfile.TemporaryDirectory() as d:
    torch.save(
        {"model": m.state_dict(), "opt": opt.state_dict(), "epoch": 3}, os.path.join(d, "ck.pt")
    )
    ck = torch.load(os.path.join(d, "ck.pt"))
    m.load_state_dict(ck["model"])
    opt.load_state_dict(ck["opt"])
    P(ck["epoch"], sorted(ck["opt"]["state"].keys()))
m.eval()
P(m.training, m[0].training)
P(torch.nn.utils.clip_grad_norm_(m.parameters(), 1.0).shape)
P(F.softmax(torch.tensor([1.0, 2.0, 3.0]), dim=0), F.one_hot(torch.tensor([0, 2]), 3))
P(
    torch.topk(torch.tensor([3.0, 1.0, 2.0]), 2),
    torch.sort(torch.tensor([3, 1, 2]), descending=True),
)
P(
    torch.einsum("ij,jk->ik", x, x.T).shape,
    torch.matmul(x, x.T)[0, 0],
    x @ x.T.shape[0] if False else 0,
)
P(torch.linspace(0, 1, 5), torch.arange(0, 1, 0.25), torch.full((2,), 7), torch.eye(2))
P(x.to("cpu").device, torch.device("cpu"), str(x.dtype), torch.float32 == torch.float)
P(torch.isnan(torch.tensor([float("nan"), 1.0])), torch.isfinite(torch.tensor([float("inf")])))
P(x.max(), x.min(1)[1], torch.max(x, torch.ones_like(x))[0], x.abs().sqrt()[1], x.exp().log()[1])
P(x.repeat(2, 1).shape, x.roll(1, 1)[0], x.flip(0)[0], torch.tril(torch.ones(3, 3)))
P(repr(torch.tensor([[1.5, 2.25], [3.0, 4.0]])), repr(torch.tensor([1e-5, 1e5])))
h = x.register_hook if False else None
# explicit float64 from Python floats keeps every digit (no rounding through float32)
P(torch.tensor([1.7], dtype=torch.float64).item(), torch.tensor(0.1, dtype=torch.float64).item())
P(
    torch.tensor([[1.7, 2]], dtype=torch.float64).tolist(),
    torch.as_tensor([0.3], dtype=torch.float64).tolist(),
)
P(torch.tensor(1.7).double().item(), torch.tensor([torch.tensor(1.7)], dtype=torch.float64).item())
print("\n".join(out))
