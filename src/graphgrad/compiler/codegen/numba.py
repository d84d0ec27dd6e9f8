"""The numba backend: a fused group becomes one generated Python function compiled by numba
(LLVM), in a serial variant for small sizes and a ``prange`` variant for large ones.

The loop runs over the flattened iteration shape; an input that broadcasts is read through
index arithmetic over its coalesced dimensions (sizes are kernel arguments, so one kernel
serves every batch size with the same broadcast pattern). Float32 math stays float32
(literals are typed); reductions accumulate in float64 (int64 for integers). Sources are
cached on disk (codegen/cache.py), so a second process loads compiled kernels.
"""

from __future__ import annotations

import math

import numpy as np

from . import cache
from .spec import KernelSpec, Lit
from .templates import template_for

__all__ = ["NumbaBackend", "generate", "supports_term", "PARALLEL_MIN"]

# Below this many elements the serial variant wins: measured in bench/bench_compile.py
# ("threshold" section), where prange's fork/join costs about 10-20 us on this machine.
PARALLEL_MIN = 1 << 17
# Reduce-all kernels split the work into at most this many chunks (one per thread is enough,
# more balances a busy machine).
_CHUNKS = 16

_CTOR = {"float32": "np.float32", "float64": "np.float64", "int64": "np.int64",
         "int32": "np.int32", "int16": "np.int16", "int8": "np.int8", "uint8": "np.uint8",
         "bool": "bool"}


class _Unsupported(Exception):
    pass


class _Emitter:
    """Builds the statements of one term; the ``c`` a template receives."""

    def __init__(self, lines, counter):
        self.lines = lines
        self.counter = counter
        self.dt = None
        self.out_dtype = None
        self.raw_args = ()
        self.slot_dtypes = ()

    # literals and casts
    def lit(self, value, dtype=None):
        dt = np.dtype(dtype or self.dt)
        if value is None:
            return "None"
        if dt.kind == "b":
            return repr(bool(value))
        if dt.kind == "f":
            v = float(value)
            text = ("math.nan" if v != v else "math.inf" if v == math.inf else
                    "(-math.inf)" if v == -math.inf else repr(v))
            return f"{_CTOR[dt.name]}({text})"
        if dt.kind in "iu":
            if float(value) != int(value):
                raise _Unsupported("a fractional literal in integer math")
            return f"{_CTOR[dt.name]}({int(value)})"
        raise _Unsupported(f"dtype {dt}")

    def cast(self, expr, dtype):
        dt = np.dtype(dtype)
        if dt.name not in _CTOR:
            raise _Unsupported(f"dtype {dt}")
        if dt.kind == "b":
            return f"(({expr}) != 0)"
        return f"{_CTOR[dt.name]}({expr})"

    def let(self, expr):
        name = f"u{self.counter[0]}"
        self.counter[0] += 1
        self.lines.append(f"{name} = {expr}")
        return name

    # operand queries
    def raw(self, i):
        a = self.raw_args[i]
        return a.value if isinstance(a, Lit) else a

    def is_slot(self, i):
        return not isinstance(self.raw_args[i], Lit)

    def in_dtype(self, i):
        return self.slot_dtypes[i]

    # math that depends on the dtype
    def tanh(self, x):
        fn = "tanh_f32" if self.dt == np.float32 else "tanh_f64"
        return self.let(f"{fn}({x})")

    def sigmoid(self, x):
        e = self.let(f"np.exp(-abs({x}))")
        one = self.lit(1)
        return self.let(f"({one} / ({one} + {e})) if {x} >= 0 else ({e} / ({one} + {e}))")


def _compute_dtype(spec: KernelSpec, term):
    """The dtype the op computes in: its array operands' (which the dispatcher already
    promoted to one dtype), or its result's for where/casts."""
    name = term.name
    if name in ("where", "to", "cast"):
        return term.dtype
    dts = {spec.slot_dtype(a) for a in term.args if isinstance(a, int)}
    if len(dts) != 1:
        raise _Unsupported("operands of different dtypes")
    return dts.pop()


def _term_lines(spec: KernelSpec, term, names, counter):
    """Statements computing one term into ``names[slot]``; raises _Unsupported."""
    tpl = template_for(term.name)
    if tpl is None:
        raise _Unsupported(f"no kernel template for {term.name}")
    lines: list = []
    c = _Emitter(lines, counter)
    c.dt = _compute_dtype(spec, term)
    c.out_dtype = term.dtype
    if c.dt.name not in _CTOR or term.dtype.name not in _CTOR:
        raise _Unsupported(f"dtype {c.dt}")
    c.raw_args = term.args
    c.slot_dtypes = tuple(spec.slot_dtype(a) if isinstance(a, int) else None for a in term.args)
    args = []
    for a in term.args:
        if isinstance(a, int):
            args.append(names[a])
        elif term.name == "where":
            args.append(c.lit(a.value, term.dtype) if a.value is not None else "None")
        else:
            args.append(c.lit(a.value))
    params = {k: v for k, v in term.params.items() if k != "dtype"}
    if term.name == "where":
        params = {}
    expr = tpl(c, *args, **params)
    if expr is None:
        raise _Unsupported(f"{term.name} on {c.dt}")
    return lines, expr


def supports_term(spec: KernelSpec, term) -> bool:
    """True when this backend can compute ``term`` inside a kernel (with its operands' dtypes
    as they are in ``spec``)."""
    if term.is_reduction:
        return _reduction_ok(spec, term)
    names = {a: f"x{a}" for a in term.args if isinstance(a, int)}
    try:
        _term_lines(spec, term, names, [0])
    except _Unsupported:
        return False
    return True


def _reduction_ok(spec, term):
    if term.name not in ("sum", "sum.dim_IntList", "mean", "mean.dim"):
        return False
    src = spec.slot_dtype(term.args[0])
    if term.params.get("dtype") is not None and np.dtype(term.params["dtype"]) != term.dtype:
        return False
    if term.name.startswith("mean") and src.kind != "f":
        return False
    return src.kind in "fiub" and term.dtype.name in _CTOR


# -- broadcasting -------------------------------------------------------------------------------
def _groups(in_shape, shape):
    """Coalesced (present, size) groups of the iteration ``shape`` for one input; 'full' when
    the input covers it all, 'one' when it is a single element."""
    in_shape = tuple(in_shape)
    if math.prod(in_shape) == 1:
        return "one"
    padded = (1,) * (len(shape) - len(in_shape)) + in_shape
    groups: list = []
    for p, s in zip(padded, shape):
        if s == 1:
            continue
        present = p != 1
        if groups and groups[-1][0] == present:
            groups[-1][1] *= s
        else:
            groups.append([present, s])
    if len(groups) == 1 and groups[0][0]:
        return "full"
    return [tuple(g) for g in groups]


def _index_args(groups):
    """Runtime ints for a broadcast input's index: per present group (stride in the
    iteration, its size, its stride in the input)."""
    out = []
    sizes = [s for _, s in groups]
    for g, (present, size) in enumerate(groups):
        if not present:
            continue
        stride = math.prod(sizes[g + 1:])
        in_stride = math.prod(s for p, s in groups[g + 1:] if p)
        out.extend((stride, size, in_stride))
    return out


def _index_expr(slot, groups):
    """``sum((i // stride) % size * in_stride)`` over the present groups; the first group
    needs no modulo (i is below the total) and the last no division (its stride is 1)."""
    terms = []
    k = 0
    last = len(groups) - 1
    for g, (present, _size) in enumerate(groups):
        if not present:
            continue
        s, d, t = f"b{slot}_{k}", f"b{slot}_{k + 1}", f"b{slot}_{k + 2}"
        k += 3
        q = "i" if g == last else f"(i // {s})"
        expr = q if g == 0 else f"({q} % {d})"
        terms.append(f"{expr} * {t}")
    return " + ".join(terms)


# -- source generation --------------------------------------------------------------------------
def generate(spec: KernelSpec, in_shapes=None):
    """Returns (source, layout) for ``spec`` at the given input shapes (default: the spec's).

    ``layout`` holds what a call needs: the input patterns and the reduction mode."""
    in_shapes = [s for s, _ in spec.inputs] if in_shapes is None else in_shapes
    shape = spec.shape
    naxes = spec.naxes
    patterns = [_groups(s, shape) for s in in_shapes]
    names = {}
    params, head = [], []
    for slot, pat in enumerate(patterns):
        names[slot] = f"x{slot}"
        if isinstance(pat, list):
            params.extend(f"b{slot}_{k}" for k in range(len(_index_args(pat))))
    arrays = [f"a{slot}" for slot in range(len(patterns))]
    body, counter = [], [0]
    for slot, pat in enumerate(patterns):
        if pat == "one":
            head.append(f"x{slot} = a{slot}[0]")
        elif pat == "full":
            body.append(f"x{slot} = a{slot}[i]")
        else:
            body.append(f"x{slot} = a{slot}[{_index_expr(slot, pat)}]")
    reductions = []
    for j, term in enumerate(spec.terms):
        slot = spec.n_inputs + j
        if term.is_reduction:
            if not _reduction_ok(spec, term):
                raise _Unsupported(term.name)
            reductions.append((term.args[0], term))
            continue
        lines, expr = _term_lines(spec, term, names, counter)
        body.extend(lines)
        names[slot] = f"v{slot}"
        body.append(f"v{slot} = {_cast_result(expr, term.dtype)}")
    outs, reds = [], []
    for k, slot in enumerate(spec.outputs):
        term = spec.term(slot)
        if term is not None and term.is_reduction:
            reds.append((k, term))
        else:
            outs.append(k)
            body.append(f"o{k}[i] = {names[slot]}")
    for k, term in reds:
        src_dt = spec.slot_dtype(term.args[0])
        value = names[term.args[0]]
        if src_dt.kind == "f":
            body.append(f"acc{k} = radd(acc{k}, np.float64({value}))")
        else:
            body.append(f"acc{k} += np.int64({value})")
    sig = ", ".join(["n", "K", "C"] + params + arrays + [f"o{k}" for k in range(len(spec.outputs))])
    src = [_PRELUDE]
    for variant, rng, deco in (("serial", "range", "nogil=True"),
                               ("parallel", "prange", "nogil=True, parallel=True")):
        src.append(f"@njit(cache=True, error_model='numpy', {deco})")
        src.append(f"def {variant}({sig}):")
        src.extend("    " + h for h in head)
        if not reds:
            src.append(f"    for i in {rng}(n):")
            src.extend("        " + b for b in body)
        elif naxes < len(shape):
            src.append(f"    for m in {rng}(n // max(K, 1)):")
            src.extend(f"        acc{k} = {_zero(t)}" for k, t in reds)
            src.append("        for i in range(m * K, m * K + K):")
            src.extend("            " + b for b in body)
            src.extend(f"        o{k}[m] = {_finish(k, t)}" for k, t in reds)
        else:
            src.append("    chunk = (n + C - 1) // C")
            src.extend(f"    part{k} = np.zeros(C, {_acc_type(t)})" for k, t in reds)
            src.append(f"    for c in {rng}(C):")
            src.extend(f"        acc{k} = {_zero(t)}" for k, t in reds)
            src.append("        for i in range(c * chunk, min(n, c * chunk + chunk)):")
            src.extend("            " + b for b in body)
            src.extend(f"        part{k}[c] = acc{k}" for k, t in reds)
            for k, t in reds:
                src.append(f"    acc{k} = {_zero(t)}")
                src.append("    for c in range(C):")
                src.append(f"        acc{k} += part{k}[c]")
                src.append(f"    o{k}[0] = {_finish(k, t)}")
        src.append("")
    layout = (patterns, bool(reds), naxes)
    return "\n".join(src), layout


_PRELUDE = """# generated by graphgrad.compiler.codegen.numba: one fused group
import math

import numpy as np
from numba import njit, prange

from graphgrad.compiler.codegen._nbmath import radd, tanh_f32, tanh_f64
"""


def _cast_result(expr, dtype):
    if dtype.kind == "b":
        return f"bool({expr})"
    return f"{_CTOR[dtype.name]}({expr})"


def _zero(term):
    return "0.0" if term.dtype.kind == "f" else "0"


def _acc_type(term):
    return "np.float64" if term.dtype.kind == "f" else "np.int64"


def _finish(k, term):
    if term.name.startswith("mean"):
        return f"acc{k} / K"
    return f"acc{k}"


# -- the runtime object -------------------------------------------------------------------------
class NumbaKernel:
    """A compiled fused group: ``kernel(*arrays)`` returns a tuple of output arrays;
    ``kernel(*arrays, out=buffers)`` writes into preallocated ones (the memory plan's)."""

    def __init__(self, spec: KernelSpec):
        self.spec = spec
        self._calls: dict = {}  # input shapes -> (serial, parallel, ints, out shapes, n)
        self.source = None
        self._prepare(tuple(s for s, _ in spec.inputs))

    def _prepare(self, in_shapes):
        spec = self.spec
        shape = spec.shape
        if in_shapes != tuple(s for s, _ in spec.inputs):
            shape = tuple(np.broadcast_shapes(*in_shapes))
            spec = _reshaped(spec, in_shapes, shape)
        source, (patterns, has_red, naxes) = generate(spec, list(in_shapes))
        self.source = self.source or source
        mod = cache.load_source(source)
        ints = []
        for pat in patterns:
            if isinstance(pat, list):
                ints.extend(_index_args(pat))
        n = math.prod(shape)
        k = math.prod(shape[len(shape) - naxes:]) if has_red else 1
        chunks = max(1, min(_CHUNKS, n // 4096))
        out_shapes = [(spec.slot_shape(s), spec.slot_dtype(s)) for s in spec.outputs]
        entry = (mod.serial, mod.parallel, (n, k, chunks, *ints), out_shapes, n)
        self._calls[in_shapes] = entry
        return entry

    def __call__(self, *arrays, out=None):
        # The per-call path is kept short (a small graph's replay is mostly this): one shape
        # key, list comprehensions rather than generators; reshape(-1) copies exactly when
        # ravel would (a non-contiguous input).
        key = tuple([a.shape for a in arrays])
        entry = self._calls.get(key)
        if entry is None:
            entry = self._prepare(key)
        serial, parallel, ints, out_shapes, n = entry
        if out is None:
            out = tuple([np.empty(s, d) for s, d in out_shapes])
        elif any([b is None for b in out]):
            out = tuple([np.empty(s, d) if b is None else b
                         for b, (s, d) in zip(out, out_shapes)])
        fn = parallel if n >= PARALLEL_MIN else serial
        fn(*ints, *[a.reshape(-1) for a in arrays], *[o.reshape(-1) for o in out])
        return out

    def specialize(self, buffers=None, single=False):
        """A callable for the spec's own input shapes, with this call site's buffers bound:
        ``f(*arrays)`` returns the outputs like ``self(*arrays, out=buffers)`` (the one array
        when ``single``). Generated unrolled, with the launch arguments, output sizes and the
        buffers' flat views bound once, since for small arrays this wrapper, not the kernel,
        is the cost; other input shapes go through ``__call__``. None if the buffers do not
        fit the outputs."""
        in_shapes = tuple(s for s, _ in self.spec.inputs)
        entry = self._calls.get(in_shapes) or self._prepare(in_shapes)
        serial, parallel, ints, out_shapes, n = entry
        bufs = list(buffers) if buffers is not None else [None] * len(out_shapes)
        if len(bufs) != len(out_shapes):
            return None
        g = {"fn": parallel if n >= PARALLEL_MIN else serial, "empty": np.empty,
             "slow": self.__call__, "buffers": buffers}
        ins = [f"a{i}" for i in range(len(in_shapes))]
        lines = [f"def call({', '.join(ins)}):"]
        check = " or ".join(f"a{i}.shape != S{i}" for i in range(len(in_shapes)))
        for i, sh in enumerate(in_shapes):
            g[f"S{i}"] = tuple(sh)
        if check:
            lines.append(f"    if {check}:")
            ret = "r[0]" if single else "r"
            lines.append(f"        r = slow({', '.join(ins)}, out=buffers)")
            lines.append(f"        return {ret}")
        flats, outs = [], []
        for j, (b, (shape, dt)) in enumerate(zip(bufs, out_shapes)):
            if b is None:
                # allocated in its own shape (no base): the engine keeps such an array as
                # a .grad without the copy it makes of views
                g[f"D{j}"], g[f"O{j}"] = dt, tuple(shape)
                lines.append(f"    o{j} = empty(O{j}, D{j})")
                flats.append(f"o{j}.reshape(-1)")
                outs.append(f"o{j}")
            else:
                g[f"B{j}"], g[f"F{j}"] = b, b.reshape(-1)
                flats.append(f"F{j}")
                outs.append(f"B{j}")
        for k, v in enumerate(ints):
            g[f"I{k}"] = v
        args = [f"I{k}" for k in range(len(ints))] + [f"{a}.reshape(-1)" for a in ins] + flats
        lines.append(f"    fn({', '.join(args)})")
        lines.append(f"    return {outs[0]}" if single else f"    return ({', '.join(outs)},)")
        exec(compile("\n".join(lines), "<graphgrad kernel call>", "exec"), g)  # noqa: S102
        return g["call"]

    def compile(self):
        """Compiles the variant the spec's size will use (numba compiles lazily on the first
        call otherwise); returns self."""
        arrays = [np.zeros(s, d) for s, d in self.spec.inputs]
        self(*arrays)
        return self


def _reshaped(spec, in_shapes, shape):
    """The spec with new input shapes (a dynamic batch size): term shapes follow the
    broadcast of their operands."""
    from .spec import Term

    shapes = {i: tuple(s) for i, s in enumerate(in_shapes)}
    terms = []
    for j, t in enumerate(spec.terms):
        ops = [shapes[a] for a in t.args if isinstance(a, int)]
        if t.is_reduction:
            src = ops[0]
            axes = t.params.get("axes")
            keep = t.params.get("keepdim", False)
            nd = len(src) if axes is None else len(axes)
            lead = src[:len(src) - nd]
            tshape = lead + (1,) * nd if keep else lead
        else:
            tshape = tuple(np.broadcast_shapes(*ops)) if ops else shape
        shapes[spec.n_inputs + j] = tshape
        terms.append(Term(t.op, t.args, t.params, t.dtype, tshape))
    return KernelSpec(shape, [(s, d) for s, (_, d) in zip(in_shapes, spec.inputs)], terms,
                      spec.outputs)


class NumbaBackend:
    """Compiles KernelSpecs to NumbaKernels."""

    name = "numba"

    def __init__(self):
        cache.configure_numba()
        import numba  # noqa: F401 - fail here, not in the middle of a compile

    def supports(self, spec: KernelSpec, term) -> bool:
        return supports_term(spec, term)

    def compile(self, spec: KernelSpec) -> NumbaKernel:
        return NumbaKernel(spec)
