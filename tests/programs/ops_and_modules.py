import sys

import numpy as np

torch = __import__(sys.argv[1])
nn = torch.nn
F = torch.nn.functional
out = []


def P(*a):
    out.append(" ".join(str(x) for x in a))


def T(name, fn):
    try:
        P(name, fn())
    except Exception as e:
        P(name, "ERR", type(e).__name__)


torch.manual_seed(0)
x = torch.arange(24, dtype=torch.float32).reshape(2, 3, 4)
T("gather", lambda: x.gather(2, torch.tensor([[[0], [1], [2]], [[3], [2], [1]]])).flatten())
T("index_select", lambda: x.index_select(1, torch.tensor([0, 2])).shape)
T("scatter", lambda: torch.zeros(3, 3).scatter_(1, torch.tensor([[0], [1], [2]]), 1.0))
T("bmm", lambda: torch.bmm(x, x.transpose(1, 2)).shape)
T("baddbmm", lambda: torch.baddbmm(torch.zeros(2, 3, 3), x, x.transpose(1, 2))[0, 0])
T("norm", lambda: (x.norm(), x.norm(dim=-1).shape, torch.linalg.norm(x[0]), x.norm(p=1)))
T("cumsum", lambda: x.cumsum(-1)[0, 0])
T("prod", lambda: torch.tensor([1.0, 2.0, 3.0]).prod())
T("any_all", lambda: ((x > 3).any(), (x > -1).all(), (x > 3).any(dim=1).shape))
T("type_as", lambda: torch.tensor([1, 2]).type_as(x).dtype)
T("to_other", lambda: torch.tensor([1, 2]).to(x).dtype)
T("float_long", lambda: (x.long().dtype, x.half().dtype, x.double().dtype, x.bool().dtype))
T("view_as", lambda: torch.zeros(24).view_as(x).shape)
T("reshape_as", lambda: torch.zeros(24).reshape_as(x).shape)
T("unbind", lambda: len(x.unbind(1)))
T("narrow", lambda: x.narrow(2, 1, 2).shape)
T("masked_select", lambda: x.masked_select(x > 20))
T("nonzero", lambda: (x[0] > 8).nonzero())
T("nonzero_tuple", lambda: (x[0] > 8).nonzero(as_tuple=True))
T("argsort", lambda: torch.tensor([3, 1, 2]).argsort())
T("unique", lambda: torch.unique(torch.tensor([3, 1, 2, 3, 1]), return_counts=True))
T("bincount", lambda: torch.bincount(torch.tensor([0, 1, 1, 3])))
T("histc", lambda: torch.histc(torch.tensor([1.0, 2.0, 1.0]), bins=4, min=0, max=3))
T("outer", lambda: torch.outer(torch.arange(3.0), torch.arange(2.0)))
T("logsumexp", lambda: x.logsumexp(-1)[0])
T("softplus", lambda: F.softplus(torch.tensor([-1.0, 0.0, 30.0])))
T("gelu", lambda: F.gelu(torch.tensor([-1.0, 0.0, 1.0]), approximate="tanh"))
T("layer_norm", lambda: F.layer_norm(x, (4,))[0, 0])
T("conv2d", lambda: F.conv2d(torch.ones(1, 1, 5, 5), torch.ones(2, 1, 3, 3), padding=1).sum())
T("max_pool2d", lambda: F.max_pool2d(torch.arange(16.0).reshape(1, 1, 4, 4), 2))
T(
    "interp",
    lambda: F.interpolate(
        torch.arange(4.0).reshape(1, 1, 2, 2), scale_factor=2, mode="bilinear", align_corners=False
    )[0, 0, 0],
)
T("pad", lambda: F.pad(torch.ones(1, 2), (1, 2), value=5))
T("emb", lambda: nn.Embedding(10, 3, padding_idx=0)(torch.tensor([0, 1])).shape)
T("lstm", lambda: [t.shape for t in nn.LSTM(4, 5, batch_first=True, num_layers=2)(x)[1]])
T("gru", lambda: nn.GRU(4, 5, bidirectional=True)(x)[0].shape)
T("mha", lambda: nn.MultiheadAttention(4, 2, batch_first=True)(x, x, x)[1].shape)
T(
    "tel",
    lambda: (
        nn.TransformerEncoder(nn.TransformerEncoderLayer(4, 2, 8, batch_first=True), 2)(x).shape
    ),
)
T("bn", lambda: nn.BatchNorm1d(3)(x).shape)
T("sdpa", lambda: F.scaled_dot_product_attention(x, x, x, is_causal=True).shape)
T(
    "ce_ls",
    lambda: (
        F.cross_entropy(torch.randn(4, 3), torch.tensor([0, 1, 2, 1]), label_smoothing=0.1).shape
    ),
)
T(
    "nll_ignore",
    lambda: F.nll_loss(torch.log_softmax(torch.ones(3, 2), 1), torch.tensor([0, -100, 1])),
)
T("bce", lambda: F.binary_cross_entropy(torch.tensor([0.2, 0.8]), torch.tensor([0.0, 1.0])))
T("mse", lambda: F.mse_loss(torch.ones(3), torch.zeros(3), reduction="sum"))
T("cos", lambda: F.cosine_similarity(torch.ones(2, 3), torch.ones(2, 3)))
T("normalize", lambda: F.normalize(torch.tensor([[3.0, 4.0]]), dim=1))
T("detach_", lambda: torch.ones(2, requires_grad=True).detach().requires_grad)
T("requires_grad_", lambda: torch.ones(2).requires_grad_().requires_grad)
T("grad_none", lambda: torch.ones(2, requires_grad=True).grad)
T(
    "autograd.grad",
    lambda: (
        torch.autograd.grad((torch.tensor(3.0, requires_grad=True) ** 3), [torch.tensor(1.0)])
        if False
        else 0
    ),
)


def hp():
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    y = (w**3).sum()
    (g,) = torch.autograd.grad(y, w, create_graph=True)
    (g2,) = torch.autograd.grad(g.sum(), w)
    return g, g2


T("higher", hp)


def hook():
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    seen = []
    w.register_hook(lambda g: seen.append(g.clone()) or g * 2)
    (w * 3).sum().backward()
    return seen, w.grad


T("hook", hook)


def retain():
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    y = w * 2
    y.retain_grad()
    y.sum().backward()
    return y.grad


T("retain", retain)
T(
    "sgd",
    lambda: torch.optim.SGD(
        [torch.zeros(2, requires_grad=True)], lr=0.1, momentum=0.9, nesterov=True
    ).defaults["nesterov"],
)
T("param", lambda: repr(nn.Parameter(torch.ones(2))))
T(
    "modules",
    lambda: [
        type(mm).__name__
        for mm in nn.Sequential(nn.Linear(2, 2), nn.Sequential(nn.ReLU())).modules()
    ],
)
T(
    "named_params",
    lambda: [n for n, _ in nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2)).named_parameters()],
)
T("buffers", lambda: [n for n, _ in nn.BatchNorm1d(2).named_buffers()])
T("float_model", lambda: nn.Linear(2, 2).double().weight.dtype)
T(
    "apply_init",
    lambda: (
        nn.Linear(2, 2)
        .apply(lambda mm: nn.init.zeros_(mm.weight) if isinstance(mm, nn.Linear) else None)
        .weight.sum()
    ),
)
T("xavier", lambda: nn.init.xavier_uniform_(torch.empty(3, 5)).shape)
T(
    "kaiming",
    lambda: nn.init.kaiming_normal_(torch.empty(3, 5), mode="fan_out", nonlinearity="relu").shape,
)
T("calc_gain", lambda: nn.init.calculate_gain("leaky_relu", 0.2))
T("dtype_promo", lambda: (torch.tensor([1]) + 1.5).dtype)
T("int_div", lambda: torch.tensor([5]) / torch.tensor([2]))
T("floor_div_neg", lambda: torch.tensor([-5]) // 2)
T("remainder", lambda: torch.tensor([-5]) % 3)
T("pow_int", lambda: torch.tensor([2]) ** 2)
T("bool_idx_assign", lambda: (lambda t: (t.__setitem__(t > 1, 0), t)[1])(torch.tensor([1, 2, 3])))
T("str", lambda: str(torch.tensor([[1, 2], [3, 4]])))
T(
    "scalar_ops",
    lambda: (torch.tensor(2.5) * 2, 3 - torch.tensor(1), abs(torch.tensor(-2)), -torch.tensor(1.0)),
)
T(
    "comparisons",
    lambda: (
        torch.tensor([1, 2]) == torch.tensor([1, 3]),
        torch.equal(torch.ones(2), torch.ones(2)),
    ),
)
T("int_tensor_index", lambda: torch.arange(5)[torch.tensor(2)])
T("float_fmt", lambda: f"{torch.tensor(3.14159):.2f}")
T(
    "len_size",
    lambda: (torch.zeros(2, 3).size(), torch.zeros(2, 3).shape[-1], tuple(torch.zeros(2, 3).shape)),
)
T("np_array", lambda: np.asarray(torch.ones(2)).sum())
T("iter", lambda: [t.item() for t in torch.tensor([1, 2])])
T("contains", lambda: 2 in torch.tensor([1, 2]))
T("mean_int_err", lambda: torch.tensor([1, 2]).mean())
T("cat_mixed", lambda: torch.cat([torch.ones(1), torch.ones(1, dtype=torch.float64)]).dtype)
T("clone_grad", lambda: torch.ones(2, requires_grad=True).clone().grad_fn)
print("\n".join(out))
