"""A custom autograd Function around a sparse product (the sparse-attention idiom): a sparse
tensor saved for backward, its _indices() read there, the values' gradient gathered from a
dense product."""
import sys
import warnings

import numpy as np

torch = __import__(sys.argv[1])
warnings.filterwarnings("ignore")


class SpecialSpmmFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, indices, values, shape, b):
        assert not indices.requires_grad
        a = torch.sparse_coo_tensor(indices, values, shape)
        ctx.save_for_backward(a, b)
        ctx.N = shape[0]
        return torch.matmul(a, b)

    @staticmethod
    def backward(ctx, grad_output):
        a, b = ctx.saved_tensors
        grad_values = grad_b = None
        if ctx.needs_input_grad[1]:
            grad_a_dense = grad_output.matmul(b.t())
            edge_idx = a._indices()[0, :] * ctx.N + a._indices()[1, :]
            grad_values = grad_a_dense.view(-1)[edge_idx]
        if ctx.needs_input_grad[3]:
            grad_b = a.t().matmul(grad_output)
        return None, grad_values, None, grad_b


rng = np.random.default_rng(0)
N = 6
edge = torch.tensor(np.stack([rng.integers(0, N, 14), rng.integers(0, N, 14)]))
vals = torch.tensor(rng.random(14), requires_grad=True)
h = torch.tensor(rng.standard_normal((N, 3)), requires_grad=True)
out = SpecialSpmmFunction.apply(edge, vals, torch.Size([N, N]), h)
out.pow(2).sum().backward()
print(np.round(out.detach().numpy(), 6).tolist())
print(np.round(vals.grad.numpy(), 6).tolist())
print(np.round(h.grad.numpy(), 6).tolist())
