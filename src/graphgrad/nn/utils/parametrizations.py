"""``torch.nn.utils.parametrizations``: ``orthogonal``, ``weight_norm`` and ``spectral_norm``,
registered through :mod:`parametrize` with torch's state_dict layout.

All three are composites of differentiable ops; the matrix exponential is linalg.matrix_exp,
and this file computes householder_product and geqrf as composites of its own.
"""

from __future__ import annotations

from enum import Enum, auto

import numpy as np

from ... import linalg
from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from ...ops.creation import eye, tensor, zeros_like
from ...ops.movement import cat
from ...ops.random import randn
from .. import functional as F
from ..modules.module import Module
from . import parametrize

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]


def _householder_product(A: Tensor, tau: Tensor) -> Tensor:
    """torch.linalg.householder_product: the first n columns of H_1 ... H_k, with
    H_i = I - tau_i v_i v_i^T and v_i the i-th column of A below the diagonal, 1 on it."""
    m, n = A.shape[-2], A.shape[-1]
    V = A.tril(-1) + eye(m, n, dtype=A.dtype)
    Q = eye(m, dtype=A.dtype).expand(*A.shape[:-2], m, m)
    for i in range(tau.shape[-1]):
        v = V[..., :, i:i + 1]
        Q = Q - (tau[..., i, None, None] * (Q @ v)) @ v.mT
    return Q[..., :n]


def _geqrf(A: Tensor):
    """LAPACK's geqrf (R above the diagonal, the Householder vectors below, and tau), from
    NumPy's ``qr(mode='raw')``; not differentiable (used under no_grad)."""
    a = A.detach().numpy()
    batch = a.reshape(-1, *a.shape[-2:])
    hs, taus = [], []
    for mat in batch:
        h, t = np.linalg.qr(mat, mode="raw")
        hs.append(h.T)
        taus.append(t)
    h = np.stack(hs).reshape(a.shape).astype(a.dtype)
    t = np.stack(taus).reshape(*a.shape[:-2], -1).astype(a.dtype)
    return tensor(h), tensor(t)


def _is_orthogonal(Q) -> bool:
    n, k = Q.shape[-2], Q.shape[-1]
    eps = 10.0 * n * float(np.finfo(Q.detach().numpy().dtype).eps)
    q = Q.detach().numpy()
    return bool(np.allclose(np.swapaxes(q, -1, -2) @ q, np.eye(k), atol=eps, rtol=1e-5))


def _make_orthogonal(A: Tensor) -> Tensor:
    # geqrf + householder_product + sign fix, i.e. the Q of QR with R's diagonal made positive.
    Q, R = linalg.qr(A)
    return Q * R.diagonal(dim1=-2, dim2=-1).sign().unsqueeze(-2)


class _OrthMaps(Enum):
    matrix_exp = auto()
    cayley = auto()
    householder = auto()


class _Orthogonal(Module):
    def __init__(self, weight, orthogonal_map: _OrthMaps, *, use_trivialization=True) -> None:
        super().__init__()
        if weight.is_complex() and orthogonal_map == _OrthMaps.householder:
            raise ValueError("The householder parametrization does not support complex tensors.")
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X: Tensor) -> Tensor:
        n, k = X.shape[-2], X.shape[-1]
        transposed = n < k
        if transposed:
            X = X.mT
            n, k = k, n
        if self.orthogonal_map in (_OrthMaps.matrix_exp, _OrthMaps.cayley):
            X = X.tril()
            if n != k:
                X = cat([X, X.new_zeros(n, n - k).expand(*X.shape[:-2], -1, -1)], dim=-1)
            A = X - X.mT
            if self.orthogonal_map == _OrthMaps.matrix_exp:
                Q = linalg.matrix_exp(A)
            else:
                ident = eye(n, dtype=A.dtype)
                Q = linalg.solve(ident - 0.5 * A, ident + 0.5 * A)
            if n != k:
                Q = Q[..., :k]
        else:
            A = X.tril(diagonal=-1)
            tau = 2.0 / (1.0 + (A * A).sum(dim=-2))
            Q = _householder_product(A, tau)
            # The diagonal of X holds the signs (+-1), kept out of the gradient by the cast.
            Q = Q * X.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)
        if "base" in self._buffers:
            Q = self.base @ Q
        if transposed:
            Q = Q.mT
        return Q

    def right_inverse(self, Q: Tensor) -> Tensor:
        with no_grad():
            return self._right_inverse(Q)

    def _right_inverse(self, Q: Tensor) -> Tensor:
        if Q.shape != self.shape:
            raise ValueError(f"Expected a matrix or batch of matrices of shape {self.shape}. "
                             f"Got a tensor of shape {Q.shape}.")
        Q_init = Q
        n, k = Q.shape[-2], Q.shape[-1]
        transpose = n < k
        if transpose:
            Q = Q.mT
            n, k = k, n
        if "base" not in self._buffers:
            if self.orthogonal_map in (_OrthMaps.cayley, _OrthMaps.matrix_exp):
                raise NotImplementedError("It is not possible to assign to the matrix "
                                          "exponential or the Cayley parametrizations when "
                                          "use_trivialization=False.")
            A, tau = _geqrf(Q)
            a = A.numpy()
            d = np.sign(np.diagonal(a, axis1=-2, axis2=-1))
            d = np.where(tau.numpy() == 0.0, -d, d)
            idx = np.arange(min(a.shape[-2:]))
            a[..., idx, idx] = d
            return A.mT if transpose else A
        if n == k:
            Q = _make_orthogonal(Q) if not _is_orthogonal(Q) else Q.clone()
        else:
            N = randn(*(tuple(Q.shape[:-2]) + (n, n - k)), dtype=Q.dtype)
            Q = _make_orthogonal(cat([Q, N], dim=-1))
        self.base = Q
        neg_id = zeros_like(Q_init)
        neg_id.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
        return neg_id


def orthogonal(module: Module, name: str = "weight", orthogonal_map: str | None = None, *,
               use_trivialization: bool = True) -> Module:
    """Constrains ``module.<name>`` to orthogonal matrices (orthonormal rows or columns),
    through ``matrix_exp``, ``cayley`` or ``householder`` of the stored parameter."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError("Expected a matrix or batch of matrices. "
                         f"Got a tensor of {weight.ndim} dimensions.")
    if orthogonal_map is None:
        orthogonal_map = ("matrix_exp" if weight.shape[-2] == weight.shape[-1]
                          or weight.is_complex() else "householder")
    orth_enum = getattr(_OrthMaps, orthogonal_map, None)
    if orth_enum is None:
        raise ValueError('orthogonal_map has to be one of "matrix_exp", "cayley", "householder". '
                         f"Got: {orthogonal_map}")
    orth = _Orthogonal(weight, orth_enum, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module


def _norm_except_dim(v: Tensor, dim: int) -> Tensor:
    """torch.norm_except_dim(v, 2, dim): the 2-norm over every dim but ``dim`` (keepdim);
    ``dim=-1`` is the norm of the whole tensor, as in torch."""
    if dim == -1:
        return linalg.vector_norm(v)
    others = tuple(d for d in range(v.ndim) if d != dim)
    return linalg.vector_norm(v, 2, dim=others, keepdim=True)


class _WeightNorm(Module):
    def __init__(self, dim: int | None = 0) -> None:
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g, weight_v):
        return weight_v * (weight_g / _norm_except_dim(weight_v, self.dim))

    def right_inverse(self, weight):
        return _norm_except_dim(weight, self.dim), weight


def weight_norm(module: Module, name: str = "weight", dim: int = 0):
    """Reparametrizes ``module.<name>`` as ``g * v / ||v||`` (norm over all dims but ``dim``),
    stored as ``parametrizations.<name>.original0`` (g) and ``original1`` (v)."""
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)

    def _compat_hook(mod, state_dict, prefix, local_metadata, strict, missing_keys,
                     unexpected_keys, error_msgs) -> None:
        # Checkpoints of the older torch.nn.utils.weight_norm store <name>_g and <name>_v.
        g_key, v_key = f"{prefix}{name}_g", f"{prefix}{name}_v"
        if g_key in state_dict and v_key in state_dict:
            state_dict[f"{prefix}parametrizations.{name}.original0"] = state_dict.pop(g_key)
            state_dict[f"{prefix}parametrizations.{name}.original1"] = state_dict.pop(v_key)

    module.register_load_state_dict_pre_hook(_compat_hook)
    return module


class _SpectralNorm(Module):
    def __init__(self, weight: Tensor, n_power_iterations: int = 1, dim: int = 0,
                 eps: float = 1e-12) -> None:
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError("Dimension out of range (expected to be in range of "
                             f"[-{ndim}, {ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            weight_mat = self._reshape_weight_to_matrix(weight.detach())
            h, w = weight_mat.shape
            u = weight_mat.new_empty(h).normal_(0, 1)
            v = weight_mat.new_empty(w).normal_(0, 1)
            self.register_buffer("_u", F.normalize(u, dim=0, eps=self.eps))
            self.register_buffer("_v", F.normalize(v, dim=0, eps=self.eps))
            self._power_method(weight_mat, 15)

    def _reshape_weight_to_matrix(self, weight: Tensor) -> Tensor:
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.ndim) if d != self.dim))
        return weight.flatten(1)

    def _power_method(self, weight_mat: Tensor, n_power_iterations: int) -> None:
        # The buffers are updated in place (torch writes them through ``out=``), so their
        # identity, and a caller's reference to them, survive.
        with no_grad():
            for _ in range(n_power_iterations):
                self._u.copy_(F.normalize(weight_mat.mv(self._v), dim=0, eps=self.eps))
                self._v.copy_(F.normalize(weight_mat.mT.mv(self._u), dim=0, eps=self.eps))

    def forward(self, weight: Tensor) -> Tensor:
        if weight.ndim == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        u = self._u.clone()
        v = self._v.clone()
        sigma = (u * weight_mat.mv(v)).sum()
        return weight / sigma

    def right_inverse(self, value: Tensor) -> Tensor:
        return value


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1,
                  eps: float = 1e-12, dim: int | None = None) -> Module:
    """Divides ``module.<name>`` by its largest singular value, estimated by power iteration
    (``n_power_iterations`` steps per forward in training mode, on the buffers ``_u``/``_v``)."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        transposed = ("ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d")
        dim = 1 if any(c.__name__ in transposed for c in type(module).__mro__) else 0
    parametrize.register_parametrization(module, name,
                                         _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module
