import sys
import warnings

import numpy as np

torch = __import__(sys.argv[1])
nn = torch.nn
F = torch.nn.functional
warnings.filterwarnings("ignore")
out = []


def P(*a):
    out.append(" ".join(str(x) for x in a))


# A graph as GCN code prepares it: edges -> symmetric adjacency with self loops -> D^-1/2 A D^-1/2
rng = np.random.default_rng(5)
n, f, c = 12, 6, 3
edges = rng.integers(0, n, (2, 20))
a = np.zeros((n, n), dtype=np.float32)
a[edges[0], edges[1]] = a[edges[1], edges[0]] = 1
a += np.eye(n, dtype=np.float32)
d = a.sum(1) ** -0.5
norm = (a * d[:, None] * d[None, :]).astype(np.float32)
rows, cols = np.nonzero(norm)
indices = torch.from_numpy(np.vstack((rows, cols)).astype(np.int64))
values = torch.from_numpy(norm[rows, cols])
adj = torch.sparse.FloatTensor(indices, values, torch.Size(norm.shape))
P(adj.shape, adj._nnz(), adj.is_sparse, adj.layout, adj.dtype, adj.is_coalesced())
P(adj.coalesce().indices()[:, :6], adj.sparse_dim(), adj.dense_dim())
P("~", torch.sparse.sum(adj, 1).to_dense())
e = torch.sparse_coo_tensor(torch.tensor([[0, 1, 1], [1, 0, 1]]), torch.tensor([1.5, -2.0, 3.0]),
                            (2, 2))
P(e)
P(e.t(), e * 2, e.to_dense(), e.coalesce().values())
P(torch.sparse.softmax(e, 1).to_dense(), torch.sparse.sum(e))
P(torch.eye(3).to_sparse(), torch.tensor([[0.0, 1.0], [2.0, 0.0]]).to_sparse_csr())
for bad in (lambda: e.exp(), lambda: e + torch.ones(2, 2), lambda: e.values(),
            lambda: torch.ones(2).indices(), lambda: e.numpy()):
    try:
        bad()
    except Exception as err:  # noqa: BLE001
        P(type(err).__name__)


class GraphConvolution(nn.Module):
    def __init__(self, fin, fout, w, b):
        super().__init__()
        self.weight = nn.Parameter(torch.from_numpy(w))
        self.bias = nn.Parameter(torch.from_numpy(b))

    def forward(self, x, adj):
        support = torch.mm(x, self.weight)
        return torch.spmm(adj, support) + self.bias


class GCN(nn.Module):
    def __init__(self):
        super().__init__()
        r = np.random.default_rng(0)
        self.gc1 = GraphConvolution(f, 8, (r.standard_normal((f, 8)) * 0.4).astype(np.float32),
                                    np.zeros(8, np.float32))
        self.gc2 = GraphConvolution(8, c, (r.standard_normal((8, c)) * 0.4).astype(np.float32),
                                    np.zeros(c, np.float32))

    def forward(self, x, adj):
        x = F.relu(self.gc1(x, adj))
        return F.log_softmax(self.gc2(x, adj), dim=1)


features = torch.from_numpy(rng.standard_normal((n, f)).astype(np.float32))
labels = torch.from_numpy(rng.integers(0, c, n))
idx_train = torch.arange(8)
model = GCN()
opt = torch.optim.Adam(model.parameters(), lr=0.05, weight_decay=5e-4)
for epoch in range(10):
    model.train()
    opt.zero_grad()
    output = model(features, adj)
    loss = F.nll_loss(output[idx_train], labels[idx_train])
    loss.backward()
    opt.step()
    acc = (output.argmax(1) == labels).float().mean()
    P("~", epoch, round(loss.item(), 5), acc.item())
P(output.grad_fn, type(torch.spmm(adj, features).grad_fn).__name__)
leaf = torch.sparse_coo_tensor(indices, values, (n, n), requires_grad=True)
torch.sparse.mm(leaf, features).pow(2).sum().backward()
P(leaf.grad.is_sparse, leaf.grad._nnz(), leaf.grad.shape)
P("~", leaf.grad.to_dense().sum(0)[:4])
print("\n".join(out))
