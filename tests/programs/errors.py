import sys

torch = __import__(sys.argv[1])
nn = torch.nn
F = torch.nn.functional
cases = {
    "matmul": lambda: torch.ones(2, 3) @ torch.ones(2, 3),
    "add_shape": lambda: torch.ones(2, 3) + torch.ones(4),
    "index_oob": lambda: torch.ones(3)[5],
    "view_bad": lambda: torch.ones(2, 3).view(4),
    "view_noncontig": lambda: torch.ones(2, 3).t().view(6),
    "item_multi": lambda: torch.ones(2).item(),
    "backward_nonscalar": lambda: (torch.ones(2, requires_grad=True) * 2).backward(),
    "backward_noreq": lambda: torch.ones(2).sum().backward(),
    "backward_twice": lambda: (lambda y: (y.backward(), y.backward()))(
        (torch.ones(2, requires_grad=True).exp()).sum()
    ),
    "inplace_leaf": lambda: torch.ones(2, requires_grad=True).add_(1),
    "numpy_req": lambda: torch.ones(2, requires_grad=True).numpy(),
    "linear_shape": lambda: nn.Linear(3, 2)(torch.ones(4, 5)),
    "conv_shape": lambda: nn.Conv2d(3, 2, 3)(torch.ones(1, 4, 5, 5)),
    "ce_target": lambda: F.cross_entropy(torch.ones(2, 3), torch.tensor([0, 5])),
    "ce_float_target_shape": lambda: F.cross_entropy(torch.ones(2, 3), torch.ones(2)),
    "cat_dims": lambda: torch.cat([torch.ones(2, 3), torch.ones(2, 4)]),
    "stack_shape": lambda: torch.stack([torch.ones(2), torch.ones(3)]),
    "reshape_bad": lambda: torch.ones(5).reshape(2, -1),
    "dim_oob": lambda: torch.ones(2).sum(3),
    "bool_ambig": lambda: bool(torch.ones(2)),
    "int_float_idx": lambda: torch.ones(3)[torch.tensor([0.5])],
    "load_sd_missing": lambda: nn.Linear(2, 2).load_state_dict({}),
    "optim_empty": lambda: torch.optim.SGD([], lr=0.1),
    "optim_lr_neg": lambda: torch.optim.SGD([torch.ones(1, requires_grad=True)], lr=-1),
    "embedding_oob": lambda: nn.Embedding(3, 2)(torch.tensor([5])),
    "tensor_ragged": lambda: torch.tensor([[1, 2], [3]]),
    "zeros_neg": lambda: torch.zeros(-1),
    "expand_bad": lambda: torch.ones(2, 3).expand(4, 3),
    "permute_bad": lambda: torch.ones(2, 3).permute(0, 0),
    "gather_dim": lambda: torch.ones(2, 3).gather(1, torch.ones(2, 3)),
    "device_cuda": lambda: torch.ones(2).to("cuda"),
    "mse_req": lambda: F.mse_loss(torch.ones(2), torch.ones(3)),
    "softmax_nodim": lambda: F.softmax(torch.ones(2, 2)).shape,
    "grad_of_int": lambda: torch.tensor([1, 2], requires_grad=True),
    "setattr_param": lambda: setattr(nn.Linear(2, 2), "weight", torch.ones(2, 2)),
    "mod_call_kw": lambda: nn.Linear(2, 2)(),
    "split_bad": lambda: torch.ones(5).split([2, 2]),
    "squeeze_dim": lambda: torch.ones(2, 3).squeeze(5),
    "batchnorm_1": lambda: nn.BatchNorm1d(3)(torch.ones(1, 3)),
    "lstm_in": lambda: nn.LSTM(3, 4)(torch.ones(2, 5, 6)),
    "max_empty": lambda: torch.ones(0).max(),
    "randn_long": lambda: torch.randn(2, dtype=torch.long),
    "rand_bool": lambda: torch.rand(2, dtype=torch.bool),
    "load_sd_shape": lambda: nn.Linear(2, 2).load_state_dict(
        {"weight": torch.zeros(3, 2), "bias": torch.zeros(2)}
    ),
    "getattr_module": lambda: nn.Linear(2, 2).nonexistent,
    "int_neg_pow": lambda: torch.tensor([2]) ** -1,
    "bool_sub": lambda: torch.tensor([True]) - torch.tensor([True]),
    "zeros_nosize": lambda: torch.zeros(),
    "empty_nosize": lambda: torch.empty(dtype=torch.float64),
    "cuda_tensor": lambda: torch.ones(2).cuda(),
    "format_spec_multi": lambda: f"{torch.ones(2):.2f}",
}


def builtin_type(exc):
    """The exception's first builtin class: graphgrad's typed errors subclass torch's."""
    return next(c.__name__ for c in type(exc).__mro__ if c.__module__ == "builtins")


for k, f in cases.items():
    try:
        f()
        print(k, "OK")
    except Exception as e:
        print(k, builtin_type(e), type(e).__name__ == "NotImplementedError")
