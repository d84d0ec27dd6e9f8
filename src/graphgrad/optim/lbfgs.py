"""LBFGS: limited-memory BFGS on the flattened parameters, optionally with a strong-Wolfe
line search (a port of torch's port of minFunc).

Vectors are flat NumPy arrays of the parameters' dtype; the scalars torch keeps as 0-d tensors
(``t``, ``ro``, ``H_diag``, ``gtd``, ...) are NumPy scalars of that dtype here, so each is
rounded where torch's is. The state holds them as tensors, in torch's layout.
"""

from __future__ import annotations

import numpy as np

from .._tensor import Tensor, wrap
from .optimizer import Optimizer, as_float, bump, check_lr, no_grad_step

__all__ = ["LBFGS"]


def _cubic_interpolate(x1, f1, g1, x2, f2, g2, bounds=None):
    """The minimiser of the cubic through (x1, f1, g1) and (x2, f2, g2), clamped to bounds."""
    if bounds is not None:
        xmin_bound, xmax_bound = bounds
    else:
        xmin_bound, xmax_bound = (x1, x2) if x1 <= x2 else (x2, x1)
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1 ** 2 - g1 * g2
    if d2_square >= 0:
        d2 = np.sqrt(d2_square)
        if x1 <= x2:
            min_pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
        else:
            min_pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
        return min(max(min_pos, xmin_bound), xmax_bound)
    return (xmin_bound + xmax_bound) / 2.0


def _strong_wolfe(obj_func, x, t, d, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9,
                  max_ls=25):
    """Bracketing then zoom, as torch's ``_strong_wolfe``: (f_new, g_new, t, evaluations)."""
    d_norm = np.abs(d).max()
    g = g.copy()
    f_new, g_new = obj_func(x, t, d)
    ls_func_evals = 1
    gtd_new = g_new.dot(d)
    t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
    done = False
    ls_iter = 0
    while ls_iter < max_ls:
        if f_new > (f + c1 * t * gtd) or (ls_iter > 1 and f_new >= f_prev):
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.copy()], [gtd_prev, gtd_new]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket, bracket_f, bracket_g = [t], [f_new], [g_new]
            done = True
            break
        if gtd_new >= 0:
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.copy()], [gtd_prev, gtd_new]
            break
        min_step = t + 0.01 * (t - t_prev)
        max_step = t * 10
        tmp = t
        t = _cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new,
                               bounds=(min_step, max_step))
        t_prev, f_prev, g_prev, gtd_prev = tmp, f_new, g_new.copy(), gtd_new
        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
    if ls_iter == max_ls:
        bracket, bracket_f, bracket_g = [0, t], [f, f_new], [g, g_new]

    insuf_progress = False
    low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[-1] else (1, 0)
    while not done and ls_iter < max_ls:
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:
            break
        t = _cubic_interpolate(bracket[0], bracket_f[0], bracket_gtd[0], bracket[1],
                               bracket_f[1], bracket_gtd[1])
        # Too close to a bracket end, or outside it: move away unless progress was made.
        eps = 0.1 * (max(bracket) - min(bracket))
        if min(max(bracket) - t, t - min(bracket)) < eps:
            if insuf_progress or t >= max(bracket) or t <= min(bracket):
                if abs(t - max(bracket)) < abs(t - min(bracket)):
                    t = max(bracket) - eps
                else:
                    t = min(bracket) + eps
                insuf_progress = False
            else:
                insuf_progress = True
        else:
            insuf_progress = False
        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
        if f_new > (f + c1 * t * gtd) or f_new >= bracket_f[low_pos]:
            bracket[high_pos], bracket_f[high_pos] = t, f_new
            bracket_g[high_pos], bracket_gtd[high_pos] = g_new.copy(), gtd_new
            low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high_pos] - bracket[low_pos]) >= 0:
                bracket[high_pos], bracket_f[high_pos] = bracket[low_pos], bracket_f[low_pos]
                bracket_g[high_pos] = bracket_g[low_pos]
                bracket_gtd[high_pos] = bracket_gtd[low_pos]
            bracket[low_pos], bracket_f[low_pos] = t, f_new
            bracket_g[low_pos], bracket_gtd[low_pos] = g_new.copy(), gtd_new
    return bracket_f[low_pos], bracket_g[low_pos], bracket[low_pos], ls_func_evals


def _to_state(value):
    """A NumPy array or scalar as the tensor torch stores; lists element-wise."""
    if isinstance(value, list):
        return [_to_state(v) for v in value]
    if isinstance(value, (np.ndarray, np.generic)):
        return wrap(np.array(value), False, None)
    return value


def _from_state(value):
    if isinstance(value, list):
        return [_from_state(v) for v in value]
    if isinstance(value, Tensor):
        data = value._data
        return data[()] if data.ndim == 0 else data
    return value


class LBFGS(Optimizer):
    """L-BFGS, as ``torch.optim.LBFGS``: ``step(closure)`` runs up to ``max_iter`` iterations,
    re-evaluating ``closure`` (which must zero the grads, backward and return the loss).

    >>> import graphgrad as torch
    >>> w = torch.tensor([3.0, -2.0], requires_grad=True)
    >>> opt = torch.optim.LBFGS([w], line_search_fn="strong_wolfe")
    >>> def closure():
    ...     opt.zero_grad()
    ...     loss = ((w - 1) ** 2).sum()
    ...     loss.backward()
    ...     return loss
    >>> _ = opt.step(closure)
    >>> [round(v, 4) for v in w.tolist()]
    [1.0, 1.0]
    """

    def __init__(self, params, lr=1, max_iter=20, max_eval=None, tolerance_grad=1e-7,
                 tolerance_change=1e-9, history_size=100, line_search_fn=None) -> None:
        check_lr(lr)
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = {"lr": lr, "max_iter": max_iter, "max_eval": max_eval,
                    "tolerance_grad": tolerance_grad, "tolerance_change": tolerance_change,
                    "history_size": history_size, "line_search_fn": line_search_fn}
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]
        self._numel_cache = None

    def __setstate__(self, state) -> None:
        super().__setstate__(state)
        self._params = self.param_groups[0]["params"]
        self._numel_cache = None

    def _numel(self) -> int:
        if self._numel_cache is None:
            self._numel_cache = sum(p.numel() for p in self._params)
        return self._numel_cache

    def _gather_flat_grad(self) -> np.ndarray:
        return np.concatenate([np.zeros(p._data.size, p._data.dtype) if p._grad is None
                               else p._grad._data.reshape(-1) for p in self._params])

    def _add_grad(self, step_size, update: np.ndarray) -> None:
        offset = 0
        for p in self._params:
            d = p._data
            n = d.size
            d += step_size * update[offset:offset + n].reshape(d.shape)
            bump(p)
            offset += n

    def _clone_param(self) -> list:
        return [np.array(p._data, copy=True) for p in self._params]

    def _set_param(self, params_data) -> None:
        for p, data in zip(self._params, params_data):
            p._data[...] = data
            bump(p)

    def _directional_evaluate(self, closure, x, t, d):
        self._add_grad(t, d)
        loss = float(self._eval_closure(closure))
        flat_grad = self._gather_flat_grad()
        self._set_param(x)
        return loss, flat_grad

    @no_grad_step
    def step(self, closure):
        """Performs one optimization step (up to ``max_iter`` iterations); returns the first
        loss ``closure`` gave."""
        group = self.param_groups[0]
        lr = as_float(group["lr"])
        max_iter, max_eval = group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        line_search_fn, history_size = group["line_search_fn"], group["history_size"]

        # All state lives with the first parameter, as torch keeps it.
        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        orig_loss = self._eval_closure(closure)
        loss = float(orig_loss)
        current_evals = 1
        state["func_evals"] += 1
        flat_grad = self._gather_flat_grad()
        if np.abs(flat_grad).max() <= tolerance_grad:
            return orig_loss

        d, t = _from_state(state.get("d")), _from_state(state.get("t"))
        old_dirs, old_stps = _from_state(state.get("old_dirs")), _from_state(state.get("old_stps"))
        ro, H_diag = _from_state(state.get("ro")), _from_state(state.get("H_diag"))
        prev_flat_grad = _from_state(state.get("prev_flat_grad"))
        prev_loss = state.get("prev_loss")
        opt_cond = False
        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            if state["n_iter"] == 1:
                d = -flat_grad
                old_dirs, old_stps, ro = [], [], []
                H_diag = 1
            else:
                # The L-BFGS two-loop recursion over the stored curvature pairs.
                y = flat_grad - prev_flat_grad
                s = d * t
                ys = y.dot(s)
                if ys > 1e-10:
                    if len(old_dirs) == history_size:
                        old_dirs.pop(0)
                        old_stps.pop(0)
                        ro.pop(0)
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    H_diag = ys / y.dot(y)
                num_old = len(old_dirs)
                if "al" not in state:
                    state["al"] = [None] * history_size
                al = _from_state(state["al"])
                q = -flat_grad
                for i in range(num_old - 1, -1, -1):
                    al[i] = old_stps[i].dot(q) * ro[i]
                    q += -al[i] * old_dirs[i]
                d = r = q * H_diag
                for i in range(num_old):
                    be_i = old_dirs[i].dot(r) * ro[i]
                    r += (al[i] - be_i) * old_stps[i]
                state["al"] = _to_state(al)
            if prev_flat_grad is None:
                prev_flat_grad = flat_grad.copy()
            else:
                prev_flat_grad[...] = flat_grad
            prev_loss = loss

            if state["n_iter"] == 1:
                t = min(1.0, 1.0 / np.abs(flat_grad).sum()) * lr
            else:
                t = lr
            gtd = flat_grad.dot(d)
            if gtd > -tolerance_change:
                break

            ls_func_evals = 0
            if line_search_fn is not None:
                if line_search_fn != "strong_wolfe":
                    raise RuntimeError("only 'strong_wolfe' is supported")
                x_init = self._clone_param()

                def obj_func(x, t, d):
                    return self._directional_evaluate(closure, x, t, d)

                loss, flat_grad, t, ls_func_evals = _strong_wolfe(
                    obj_func, x_init, t, d, loss, flat_grad, gtd,
                    max_ls=max_eval - current_evals)
                self._add_grad(t, d)
                opt_cond = np.abs(flat_grad).max() <= tolerance_grad
            else:
                self._add_grad(t, d)
                if n_iter != max_iter:
                    loss = float(self._eval_closure(closure))
                    flat_grad = self._gather_flat_grad()
                    opt_cond = np.abs(flat_grad).max() <= tolerance_grad
                    ls_func_evals = 1
            current_evals += ls_func_evals
            state["func_evals"] += ls_func_evals

            if n_iter == max_iter or current_evals >= max_eval or opt_cond:
                break
            if np.abs(d * t).max() <= tolerance_change:
                break
            if abs(loss - prev_loss) < tolerance_change:
                break

        state["d"] = _to_state(d)
        state["t"] = _to_state(t)
        state["old_dirs"] = _to_state(old_dirs)
        state["old_stps"] = _to_state(old_stps)
        state["ro"] = _to_state(ro)
        state["H_diag"] = _to_state(H_diag)
        state["prev_flat_grad"] = _to_state(prev_flat_grad)
        state["prev_loss"] = prev_loss
        return orig_loss
