"""Whole PyTorch programs, run once with torch and once with graphgrad (the module name is the
program's argument, as `import graphgrad as torch` would do): their printed output must be
identical. tests/programs/ holds the programs: everyday idioms, ops and modules, error types.
A line that begins with "~ " holds computed floats: its numbers are compared with rtol 1e-4 and
atol 1e-6 (the two frameworks round differently in the last bits), its other text exactly."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

# a number (with sign, decimals, exponent), nan or inf: what a "~ " line compares with tolerance
_NUMBER = re.compile(r"([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[-+]?nan|[-+]?inf)")
PROGRAMS = sorted((Path(__file__).parent / "programs").glob("*.py"))


def _run(path, module):
    r = subprocess.run([sys.executable, "-W", "ignore", str(path), module], capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, f"{module}: {r.stderr[-3000:]}"
    # object addresses differ between any two runs
    return re.sub(r" at 0x[0-9a-f]+", " at 0x", r.stdout)


def _line_matches(ours, expected):
    if not (expected.startswith("~ ") and ours.startswith("~ ")):
        return ours == expected
    a, b = _NUMBER.split(ours), _NUMBER.split(expected)
    if len(a) != len(b) or a[0::2] != b[0::2]:
        return False
    for x, y in zip(a[1::2], b[1::2]):
        x, y = float(x), float(y)
        if not (x == y or abs(x - y) <= 1e-6 + 1e-4 * abs(y) or (x != x and y != y)):
            return False
    return True


@pytest.mark.parametrize("path", PROGRAMS, ids=[p.stem for p in PROGRAMS])
def test_program_prints_what_torch_prints(path):
    expected, ours = _run(path, "torch"), _run(path, "graphgrad")
    ours, expected = ours.splitlines(), expected.splitlines()
    bad = [(i, o, e) for i, (o, e) in enumerate(zip(ours, expected)) if not _line_matches(o, e)]
    assert len(ours) == len(expected) and not bad, (
        f"{len(ours)} lines against torch's {len(expected)}; first differences (line, ours, "
        f"torch): {bad[:5]}"
    )
