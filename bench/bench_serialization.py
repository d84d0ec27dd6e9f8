"""save/load of a 5,000-tensor state dict (8x8 float32 each) to memory: graphgrad against
torch in the same run (best of 3). ``python bench/bench_serialization.py``"""

from __future__ import annotations

import io
import time

import torch

import graphgrad


def best(fn, repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main() -> None:
    torch.manual_seed(0)
    sd = {f"layer{i}.weight": torch.randn(8, 8) for i in range(5000)}
    ours = {k: graphgrad.from_numpy(v.numpy()) for k, v in sd.items()}
    buf = io.BytesIO()
    torch.save(sd, buf)
    raw = buf.getvalue()
    t_load = best(lambda: torch.load(io.BytesIO(raw)))
    g_load = best(lambda: graphgrad.load(io.BytesIO(raw)))
    t_save = best(lambda: torch.save(sd, io.BytesIO()))
    g_save = best(lambda: graphgrad.save(ours, io.BytesIO()))
    print(f"load: torch {t_load:.3f} s, graphgrad {g_load:.3f} s ({g_load / t_load:.2f}x)")
    print(f"save: torch {t_save:.3f} s, graphgrad {g_save:.3f} s ({g_save / t_save:.2f}x)")


if __name__ == "__main__":
    main()
