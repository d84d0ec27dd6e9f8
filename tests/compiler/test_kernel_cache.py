"""The kernel cache never runs an entry whose content does not match its key, survives torn
writes, and keeps its directory private (compiler/codegen/cache.py, Note [Verified kernel
cache])."""

import os
import stat
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

from graphgrad.compiler.codegen import cache

SRC = "def f(x):\n    return x * 2\n"


@pytest.fixture
def fresh(tmp_path, monkeypatch):
    monkeypatch.setenv("GRAPHGRAD_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(cache, "_dirs", {})
    monkeypatch.setattr(cache, "_modules", {})
    return tmp_path / "kernels"


def _entry(d):
    (p,) = d.glob("k_*.py")
    return p


def _load_quietly():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return cache.load_source(SRC)


def test_entry_written_with_header_and_reused(fresh):
    assert _load_quietly().f(3) == 6
    p = _entry(fresh)
    text = p.read_text()
    assert text.splitlines()[0].startswith("# graphgrad kernel cache entry: key=")
    assert text.endswith(SRC)
    assert stat.S_IMODE(os.stat(fresh).st_mode) == 0o700
    cache._modules.clear()
    mtime = p.stat().st_mtime_ns
    assert _load_quietly().f(4) == 8  # verified and reused: not rewritten
    assert p.stat().st_mtime_ns == mtime


@pytest.mark.parametrize("damage", ["truncated", "emptied", "edited", "foreign", "garbage"])
def test_damaged_entry_is_discarded_and_rebuilt(fresh, damage):
    cache.load_source(SRC)
    p = _entry(fresh)
    good = p.read_bytes()
    if damage == "truncated":
        p.write_bytes(good[: len(good) - 7])
    elif damage == "emptied":
        p.write_bytes(b"")
    elif damage == "edited":  # same header, other code: must never run
        p.write_bytes(good.replace(b"x * 2", b"x * 3"))
    elif damage == "foreign":  # another version's entry under this name
        first, rest = good.split(b"\n", 1)
        p.write_bytes(first.replace(b"graphgrad-", b"graphgrad-9.9.") + b"\n" + rest)
    else:
        p.write_bytes(b"\x00\xff" * 50)
    cache._modules.clear()
    with pytest.warns(cache.CacheWarning, match="discarded and rebuilt") as rec:
        mod = cache.load_source(SRC)
    assert len(rec) == 1
    assert mod.f(5) == 10
    assert p.read_bytes() == good


def test_killed_writer_leaves_only_a_temp_file_that_is_ignored_and_cleaned(fresh):
    # The writer dies after writing the temp file and before the rename (os.fsync exits).
    script = textwrap.dedent(f"""
        import os
        from graphgrad.compiler.codegen import cache
        os.fsync = lambda fd: os._exit(9)
        cache.load_source({SRC!r})
    """)
    env = dict(os.environ, GRAPHGRAD_CACHE_DIR=str(fresh.parent))
    r = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                       timeout=120)
    assert r.returncode == 9, r.stderr
    assert not list(fresh.glob("k_*.py"))
    (tmp,) = [p for p in fresh.iterdir() if p.name.startswith(".tmp-")]
    assert tmp.stat().st_size > 0
    assert _load_quietly().f(2) == 4  # the temp file is not an entry
    old = tmp.stat().st_mtime - 3600
    os.utime(tmp, (old, old))
    cache._dirs.clear()
    cache.cache_dir()  # a later process's setup removes the stale temp file
    assert not tmp.exists()


def test_group_writable_dir_is_refused(fresh):
    fresh.mkdir(parents=True)
    os.chmod(fresh, 0o777)
    with pytest.warns(cache.CacheWarning, match="group- or world-writable"):
        d = cache.cache_dir()
    assert os.path.realpath(d) != os.path.realpath(fresh)
    assert stat.S_IMODE(os.stat(d).st_mode) == 0o700
    assert cache.load_source(SRC).f(1) == 2
    assert not list(fresh.glob("k_*.py"))


def test_dir_owned_by_someone_else_is_refused(fresh, monkeypatch):
    fresh.mkdir(parents=True, mode=0o700)
    monkeypatch.setattr(os, "getuid", lambda: os.stat(fresh).st_uid + 1, raising=False)
    with pytest.warns(cache.CacheWarning, match="owned by uid"):
        d = cache.cache_dir()
    assert os.path.realpath(d) != os.path.realpath(fresh)


def test_key_names_the_versions():
    import numpy

    v = cache._versions()
    assert f"numpy-{numpy.__version__}" in v and "graphgrad-" in v and "numba-" in v
    assert cache.source_hash(SRC) != cache.source_hash(SRC + " ")


@pytest.mark.skipif(not __import__("graphgrad.compiler.codegen", fromlist=["x"])
                    .numba_available(), reason="numba is not installed")
def test_compiled_function_survives_an_edited_kernel(fresh):
    import graphgrad as torch

    def f(x):
        return (torch.sin(x) * 2 + 1).sum()

    x = torch.linspace(-1, 1, 64)
    cf = torch.compile(f)
    cf(x)
    entries = list(fresh.glob("k_*.py"))
    assert entries
    for p in entries:  # an attacker's or a bit flip's edit of every kernel
        p.write_bytes(p.read_bytes().replace(b"+", b"-"))
    cache._modules.clear()
    with pytest.warns(cache.CacheWarning):
        cf2 = torch.compile(f)
        cf2(x)
        got = cf2(x)
    np.testing.assert_allclose(got.numpy(), f(x).numpy(), rtol=1e-6)
