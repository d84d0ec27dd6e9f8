"""DDP's graph fingerprint: a rank-dependent branch or a parameter unused on one rank makes the
ranks' backwards reduce different gradients, which hangs or fails later naming no line. After
each synchronised forward, every rank walks its output's graph, listing the ops in the order
the backward runs them (latest first) with the parameters each one uses, hashes the set of
parameters the backward will reduce, and the ranks allgather the 16-byte digests. Equal digests
(the usual case) cost one graph walk and one tiny collective; on a mismatch the ranks exchange
their op lists and every rank raises the same RuntimeError naming the first op where they
differ and each rank's line. Ops that differ while the parameters agree (data-dependent control
flow) are allowed, as in torch: the buckets still complete in the same order everywhere. See
Note [DDP fingerprint] in docs/distributed.md.
"""

from __future__ import annotations

import hashlib
import json
import os

import numpy as np

from ..autograd.graph import AccumulateGrad, OutputEdge

__all__ = ["graph_entries", "used_parameters", "digest", "check"]


def graph_entries(outputs, names: dict) -> list:
    """[(op name, parameter names, site or None)] of the graph behind ``outputs`` in backward
    order; ``names`` maps id(parameter) to its module path."""
    seen, nodes = set(), []
    params = {}  # id(node) -> parameter names it feeds
    stack = [t.grad_fn for t in outputs if t.grad_fn is not None]
    while stack:
        node = stack.pop()
        if type(node) is OutputEdge:
            node = node._node
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        nodes.append(node)
        for n in node._next:
            if type(n) is AccumulateGrad:
                name = names.get(id(n.variable))
                if name is not None:
                    params.setdefault(id(node), []).append(name)
            elif n is not None:
                stack.append(n)
    # The engine runs ready nodes latest-first: sort by creation order, newest first.
    nodes.sort(key=lambda n: n._seq, reverse=True)
    return [(type(n).__name__, tuple(params.get(id(n), ())), n._site) for n in nodes]


def used_parameters(outputs, names: dict) -> list:
    """The module paths of the parameters a backward from ``outputs`` reaches (the fast walk
    behind the digest; graph_entries gives the details only on a mismatch)."""
    seen, used = set(), []
    stack = [t.grad_fn for t in outputs if t.grad_fn is not None]
    get = names.get
    while stack:
        node = stack.pop()
        for n in node._next:
            if n is None:
                continue
            t = type(n)
            if t is AccumulateGrad:
                name = get(id(n.variable))
                if name is not None:
                    used.append(name)
                continue
            if t is OutputEdge:
                n = n._node
            k = id(n)
            if k not in seen:
                seen.add(k)
                stack.append(n)
    return used


def digest(used) -> np.ndarray:
    """16 bytes naming the set of parameters in ``used``."""
    h = hashlib.blake2b("\x00".join(sorted(set(used))).encode(), digest_size=16)
    return np.frombuffer(h.digest(), np.int64).copy()


def _site_text(site) -> str | None:
    if site is None:
        return None
    return f"{os.path.basename(site.filename)}:{site.lineno}: {site.source()}"


def check(impl, outputs, names, step) -> None:
    """Allgathers the digest of the parameters a backward from ``outputs`` reaches; on a
    mismatch raises the same RuntimeError on every rank. ``impl`` is the group's backend,
    ``names`` maps id(parameter) to its module path."""
    mine = digest(used_parameters(outputs, names))
    rows = np.empty((impl.size, 2), np.int64)
    impl.wait(impl.allgather(mine, rows), "DistributedDataParallel graph fingerprint")
    if (rows == rows[0]).all():
        return
    entries = graph_entries(outputs, names)
    # Different graphs: exchange the op lists (length first, then the padded text).
    text = json.dumps([[op, list(ps), _site_text(s)] for op, ps, s in entries]).encode()
    lengths = np.empty(impl.size, np.int64)
    impl.wait(impl.allgather(np.array([len(text)], np.int64), lengths),
              "DistributedDataParallel graph fingerprint")
    width = int(lengths.max())
    send = np.zeros(width, np.uint8)
    send[:len(text)] = np.frombuffer(text, np.uint8)
    recv = np.empty((impl.size, width), np.uint8)
    impl.wait(impl.allgather(send, recv), "DistributedDataParallel graph fingerprint")
    lists = [json.loads(recv[r, :lengths[r]].tobytes()) for r in range(impl.size)]
    raise RuntimeError(message(lists, step))


def _describe(entry) -> str:
    if entry is None:
        return "nothing (its graph ends earlier)"
    op, ps, site = entry
    text = op + (f" using {', '.join(ps)}" if ps else "")
    return text + (f", made at {site}" if site else ", line unknown")


def message(lists, step) -> str:
    """The error for ranks whose graphs (``lists[r]``: [op, params, site]) differ."""
    ref = lists[0]
    first = None
    for other in lists[1:]:
        n = min(len(ref), len(other))
        i = next((k for k in range(n) if ref[k][:2] != other[k][:2]), n)
        if i < max(len(ref), len(other)) and (first is None or i < first):
            first = i
    first = 0 if first is None else first
    lines = [f"DistributedDataParallel: the ranks' forward passes built different graphs "
             f"(synchronised step {step}), so their backwards would reduce different "
             f"gradients and hang. The first difference, at op {first} of the backward "
             "(latest op first):"]
    for r, entries in enumerate(lists):
        lines.append(f"  rank {r}: " + _describe(entries[first] if first < len(entries)
                                                  else None))
    used = [{p for e in ents for p in e[1]} for ents in lists]
    every = set.union(*used)
    for r, u in enumerate(used):
        if every - u:
            lines.append(f"  rank {r} does not use: {', '.join(sorted(every - u))}")
    if any(entries[first][2] is None for entries in lists if first < len(entries)):
        lines.append("Lines are captured on the first synchronised step only; call "
                     "graphgrad.autograd.graph.set_capture_sites(True) to name them on later "
                     "steps.")
    lines.append("Make every rank run the same modules in the same order (no branch on the "
                 "rank or on rank-local data), or pass find_unused_parameters=True if some "
                 "parameters are legitimately unused on some ranks.")
    return "\n".join(lines)
