"""The remaining torch.nn names beyond the ModuleInfo table (tests/nn/moduleinfo_remaining.py):
AdaptiveLogSoftmaxWithLoss's checks, predict branches and state dicts; Container; DataParallel;
SyncBatchNorm's conversion and its statistics synchronised over 2 ranks; nn.attention."""

import os
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest
import torch
from tests.autograd._helpers import data, raises_like, same

import graphgrad as gg


def _asm(m, **kw):
    m.manual_seed(0)
    return m.nn.AdaptiveLogSoftmaxWithLoss(8, 20, [5, 12], **kw)


def _load(g_mod, t_mod):
    g_mod.load_state_dict({k: gg.tensor(v.detach().numpy()) for k, v in
                           t_mod.state_dict().items()})


def test_adaptive_state_dict_and_repr():
    t, g = _asm(torch, div_value=2.0), _asm(gg, div_value=2.0)
    assert list(g.state_dict()) == list(t.state_dict())
    assert repr(g) == repr(t)
    _load(g, t)
    x = data((6, 8), 1)
    np.testing.assert_allclose(g.log_prob(gg.tensor(x)).detach().numpy(),
                               t.log_prob(torch.tensor(x)).detach().numpy(), rtol=1e-5,
                               atol=1e-6)
    # log_prob is a distribution over all classes
    np.testing.assert_allclose(g.log_prob(gg.tensor(x)).exp().sum(1).detach().numpy(), 1,
                               rtol=1e-5)
    for attr in ("cutoffs", "shortlist_size", "n_clusters", "head_size", "div_value"):
        assert getattr(g, attr) == getattr(t, attr)


@pytest.mark.parametrize("bias", [0.0, 50.0, -50.0])
def test_adaptive_predict_branches(bias):
    """Rows whose head winner is a cluster token (none, all, some) are resolved in full."""
    t, g = _asm(torch, head_bias=True), _asm(gg, head_bias=True)
    with torch.no_grad():
        t.head.bias[5:] += bias
    _load(g, t)
    x = data((10, 8), 2)
    np.testing.assert_array_equal(g.predict(gg.tensor(x)).numpy(),
                                  t.predict(torch.tensor(x)).numpy())


def test_adaptive_output_namedtuple_and_errors():
    def prog(m):
        mod = _asm(m)
        r = mod(m.tensor(data((4, 8), 3)), m.tensor([0, 19, 7, 12]))
        return type(r).__name__, r._fields, r.output.shape, r.loss.shape
    same(prog)
    raises_like(lambda m: _asm(m)(m.ones(4, 8), m.tensor([0, 20, 1, 1])), "Target values")
    raises_like(lambda m: _asm(m)(m.ones(4, 8), m.tensor([0, 1, 1])), "same size")
    raises_like(lambda m: _asm(m)(m.ones(2, 8, 1), m.tensor([0, 1])), "expects 2D input")
    raises_like(lambda m: _asm(m)(m.ones(2, 8), m.tensor(1)), "expects 1D input")
    raises_like(lambda m: _asm(m)(m.ones(4, 8), m.tensor(1)), "0D target")
    raises_like(lambda m: _asm(m)(m.ones(4, 8), m.ones(2, 2).long()), "multi-target")
    for cutoffs in ([], [5, 3], [0, 4], [5, 20], [3, 3], [2.5]):
        raises_like(lambda m, c=cutoffs: m.nn.AdaptiveLogSoftmaxWithLoss(8, 20, c), "cutoffs")


def test_container_and_nllloss2d():
    for m in (torch, gg):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            c = m.nn.Container(a=m.nn.Linear(2, 3), b=m.nn.ReLU())
            loss = m.nn.NLLLoss2d(ignore_index=2)
        assert [x.category for x in w] == [FutureWarning, FutureWarning]
        assert [n for n, _ in c.named_children()] == ["a", "b"]
        assert list(c.state_dict()) == ["a.weight", "a.bias"]
        assert isinstance(loss, m.nn.NLLLoss) and loss.ignore_index == 2
    assert repr(gg.nn.Container(a=gg.nn.ReLU())) == repr(torch.nn.Container(a=torch.nn.ReLU()))


def test_cross_map_lrn2d_errors_and_repr():
    raises_like(lambda m: m.nn.CrossMapLRN2d(3)(m.ones(2, 3, 4)), "Expected input to be 4D")
    assert repr(gg.nn.CrossMapLRN2d(5, 0.1)) == repr(torch.nn.CrossMapLRN2d(5, 0.1))


def test_data_parallel():
    def prog(m):
        lin = m.nn.Linear(3, 2)
        dp = m.nn.DataParallel(lin)
        x = m.tensor(data((4, 3), 1))
        return (dp.module is lin, dp.device_ids, list(dp.state_dict()), repr(dp),
                m.equal(dp(x), lin(x)), hasattr(dp, "output_device"),
                m.nn.parallel.DataParallel is m.nn.DataParallel)
    same(prog)
    raises_like(lambda m: m.nn.parallel.data_parallel(m.nn.Linear(3, 2), m.ones(2, 3)),
                "device type could not be determined")
    t = torch.nn.DataParallel(torch.nn.Linear(3, 2))
    g = gg.nn.DataParallel(gg.nn.Linear(3, 2))
    _load(g, t)
    np.testing.assert_allclose(g.module.weight.detach().numpy(), t.module.weight.detach().numpy())


def test_sdpa_kernel():
    for m in (torch, gg):
        import importlib
        att = importlib.import_module(m.__name__ + ".nn.attention")
        assert [(b.name, b.value) for b in att.SDPBackend.__members__.values()] == [
            ("ERROR", -1), ("MATH", 0), ("FLASH_ATTENTION", 1), ("EFFICIENT_ATTENTION", 2),
            ("CUDNN_ATTENTION", 3), ("OVERRIDEABLE", 4)]
        q = m.tensor(data((1, 2, 3, 4), 1))
        ref = m.nn.functional.scaled_dot_product_attention(q, q, q)
        with att.sdpa_kernel([att.SDPBackend.MATH, att.SDPBackend.FLASH_ATTENTION]):
            out = m.nn.functional.scaled_dot_product_attention(q, q, q)
        with att.sdpa_kernel(att.SDPBackend.EFFICIENT_ATTENTION, set_priority=True) as r:
            assert r == {}
        assert m.equal(out, ref)
        assert repr(att.SDPBackend.MATH) == "<SDPBackend.MATH: 0>"
        assert str(att.SDPBackend.FLASH_ATTENTION) == "SDPBackend.FLASH_ATTENTION"
    raises_like(lambda m: m.nn.attention.sdpa_kernel("math").__enter__(),
                "must be an instance of SDPBackend")


def test_convert_sync_batchnorm():
    def prog(m):
        m.manual_seed(0)
        net = m.nn.Sequential(m.nn.Conv2d(2, 3, 1), m.nn.BatchNorm2d(3, momentum=0.2),
                              m.nn.Sequential(m.nn.BatchNorm1d(3, affine=False)))
        net.eval()
        bn = net[1]
        conv = m.nn.SyncBatchNorm.convert_sync_batchnorm(net)
        kinds = [type(x).__name__ for x in conv.modules()]
        return (kinds, conv[1].weight is bn.weight, conv[1].running_mean is bn.running_mean,
                conv[1].momentum, conv[1].training, conv[2][0].affine, repr(conv[1]),
                list(conv.state_dict()))
    same(prog)
    raises_like(lambda m: m.nn.SyncBatchNorm(3)(m.ones(3)), "expected at least 2D")
    raises_like(lambda m: m.nn.SyncBatchNorm(0)(m.ones(3, 0)), "channels should be non-zero")


_RANK_SCRIPT = textwrap.dedent("""
    import sys
    import numpy as np
    import graphgrad as gg
    import graphgrad.distributed as dist

    dist.init_process_group("mpi")
    rank, world = dist.get_rank(), dist.get_world_size()
    rng = np.random.default_rng(0)
    x_full = rng.standard_normal((8, 3, 2))
    u_full = rng.standard_normal((8, 3, 2))
    n = 8 // world
    bn = gg.nn.SyncBatchNorm(3, momentum=0.3).double()
    with gg.no_grad():
        bn.weight.copy_(gg.tensor([1.5, -0.5, 2.0]))
        bn.bias.copy_(gg.tensor([0.1, 0.2, -0.3]))
    out = {}
    for step in range(2):
        x = gg.tensor(x_full[rank * n:(rank + 1) * n] + step, requires_grad=True)
        y = bn(x)
        (y * gg.tensor(u_full[rank * n:(rank + 1) * n])).sum().backward()
        out[f"y{step}"] = y.detach().numpy()
        out[f"gx{step}"] = x.grad.numpy()
    out["gw"] = bn.weight.grad.numpy()
    out["gb"] = bn.bias.grad.numpy()
    out["rm"] = bn.running_mean.numpy()
    out["rv"] = bn.running_var.numpy()
    bn.eval()
    out["eval"] = bn(gg.tensor(x_full[rank * n:(rank + 1) * n])).detach().numpy()
    np.savez(sys.argv[1] + f"/r{rank}.npz", **out)
""")


def test_sync_batchnorm_two_ranks_match_full_batch(tmp_path):
    try:
        import mpi4py.MPI  # noqa: F401
    except (ImportError, RuntimeError) as e:
        pytest.skip(f"mpi4py or an MPI library is missing ({e}); pip install '.[distributed]'")
    script = tmp_path / "syncbn_rank.py"
    script.write_text(_RANK_SCRIPT)
    r = subprocess.run([sys.executable, "-m", "graphgrad.distributed.run", "-n", "2",
                        str(script), str(tmp_path)], capture_output=True, text=True,
                       timeout=120, cwd=os.getcwd())
    assert r.returncode == 0, r.stdout + r.stderr
    ranks = [dict(np.load(tmp_path / f"r{k}.npz")) for k in range(2)]
    # torch's BatchNorm1d on the whole batch is the oracle
    rng = np.random.default_rng(0)
    x_full = rng.standard_normal((8, 3, 2))
    u_full = rng.standard_normal((8, 3, 2))
    bn = torch.nn.BatchNorm1d(3, momentum=0.3).double()
    with torch.no_grad():
        bn.weight.copy_(torch.tensor([1.5, -0.5, 2.0]))
        bn.bias.copy_(torch.tensor([0.1, 0.2, -0.3]))
    for step in range(2):
        x = torch.tensor(x_full + step, requires_grad=True)
        y = bn(x)
        (y * torch.tensor(u_full)).sum().backward()
        y_parts = np.concatenate([rk[f"y{step}"] for rk in ranks])
        gx_parts = np.concatenate([rk[f"gx{step}"] for rk in ranks])
        np.testing.assert_allclose(y_parts, y.detach().numpy(), rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(gx_parts, x.grad.numpy(), rtol=1e-9, atol=1e-12)
    # each rank holds its own share of the parameter gradients (DDP would sum/average them)
    np.testing.assert_allclose(ranks[0]["gw"] + ranks[1]["gw"], bn.weight.grad.numpy(),
                               rtol=1e-9)
    np.testing.assert_allclose(ranks[0]["gb"] + ranks[1]["gb"], bn.bias.grad.numpy(),
                               rtol=1e-9)
    bn.eval()
    for k, rk in enumerate(ranks):
        np.testing.assert_allclose(rk["rm"], bn.running_mean.numpy(), rtol=1e-10)
        np.testing.assert_allclose(rk["rv"], bn.running_var.numpy(), rtol=1e-10)
        np.testing.assert_allclose(rk["eval"], bn(torch.tensor(x_full[k * 4:(k + 1) * 4]))
                                   .detach().numpy(), rtol=1e-10)
