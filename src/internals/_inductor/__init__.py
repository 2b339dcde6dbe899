"""A fusing backend: a traced graph to generated Numba kernels (``torch/_inductor``).

``compile_fx(gm)`` schedules the graph (``scheduler``), writes one kernel per fused group
(``codegen``), compiles each with Numba and returns a function that runs the plan: generated
kernels for the groups, the eager kernels for every other node.
"""
import hashlib
import math
import os
import sys
import tempfile
import threading
import types
from pathlib import Path

import numpy as np
from numba import njit, prange

from ..aten import parallel as _parallel
from ..aten.native.copy import buffer
from ..aten.native.cpu.parallel_for import Twins, parallel_loop
from ..aten.native.tensor_factories import empty_strided
from ..c10.sym import is_symbolic
from ..fx.graph import Node
from ..utils._pytree import tree_map
from .codegen import generate
from .scheduler import FusedGroup, schedule
from .vec_math import exp_f32

__all__ = ["CompiledGraph", "compile_fx"]

_compiled = {}          # kernel source -> compiled Numba function: the same text is compiled once
_compile_lock = threading.Lock()
_caching = False        # set while a generated file's source is executed: its kernels cache on disk


def _cpu_jit(parallel=False, **options):
    """The ``@njit(parallel=True, ...)`` a generated CPU kernel is written with, compiled as every
    aten loop is (``aten/native/cpu/parallel_for.py``): a parallel build and a one-thread build,
    the latter chosen for a small call and after ``set_num_threads(1)`` (``_one_or_many_threads``),
    so that a compiled function also runs in a forked DataLoader worker, which may not start the
    thread pool again. Both go to Numba's disk
    cache when the source lies in a file (``_source_file``); a parallel build takes seconds to
    compile, and the same kernel text recurs in every process that compiles the same program."""
    cache = dict(cache=True) if _caching else {}

    def build(fn):
        if not parallel:
            return njit(**cache, **options)(fn)
        if cache:
            return parallel_loop(**options)(fn)     # the serial twin under its own cached name
        return Twins(njit(parallel=True, **options)(fn), njit(**options)(fn))
    return build


def _source_file(text):
    """A file holding ``text`` in Numba's cache folder, named by its hash, or None without one.

    Numba caches a function only when its source lies in a file, and checks that file's time
    stamp: the file is written once (linked into place, never replaced, so a process racing to
    write the same text leaves the first one's stamp and cache entries valid)."""
    folder = os.environ.get("NUMBA_CACHE_DIR")
    if not folder or os.environ.get("NUMBA_DISABLE_JIT") == "1":
        return None
    path = Path(folder) / "internals_generated" / f"k{hashlib.sha256(text.encode()).hexdigest()[:24]}.py"
    if path.exists():
        return path
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        with os.fdopen(fd, "w") as f:
            f.write(text)
        try:
            os.link(tmp, path)
        except FileExistsError:
            pass
        finally:
            os.unlink(tmp)
    except OSError:         # a read-only cache folder: compile from memory, as before
        return None
    return path


def _numba_function(source, device, name):
    global _caching
    with _compile_lock:
        fn = _compiled.get((source.text, device))
        if fn is None:
            from numba import cuda  # numba.cuda is slow to import: loaded on first CUDA use
            scope = {"math": math, "njit": _cpu_jit, "prange": prange, "cuda": cuda, "float32": np.float32,
                     "float64": np.float64, "exp_f32": exp_f32,
                     "nan": math.nan, "inf": math.inf}   # repr() of a nan or infinite constant
            path = _source_file(source.text) if device == "cpu" else None
            if path is not None:
                # a module by the file's name: a cached kernel's environment is found again by
                # importing its globals' module, which sys.modules then holds
                module = types.ModuleType(f"{__name__}.generated.{path.stem}")
                module.__file__ = str(path)
                module.__dict__.update(scope)
                sys.modules[module.__name__], scope = module, module.__dict__
            _caching = path is not None
            try:
                exec(compile(source.text, str(path) if path else f"<generated {name}>", "exec"), scope)  # noqa: S102
            finally:
                _caching = False
            fn = _compiled[(source.text, device)] = scope[name]
    return fn


def _generates(group, device):
    """Whether ``group`` gets a generated kernel: not a whole-tensor reduction on CUDA, and not a
    half-precision group (Numba has no bfloat16, and float16 arithmetic would round differently
    from the eager kernels, which compute in float32)."""
    if group.kind == "reduce" and device == "cuda":
        return False
    return str(group.dtype).rsplit(".", 1)[-1] not in ("float16", "bfloat16")


class CompiledGraph:
    """The plan for one graph: ``kernels`` holds each fused group's source, for reading."""

    def __init__(self, gm, device):
        self.gm, self.device = gm, device
        self.plan, self.kernels = [], []
        self._symbols = self._size_symbols()
        for step in schedule(gm.graph):
            if isinstance(step, FusedGroup) and _generates(step, device):
                name = f"fused_{len(self.kernels)}"
                source = generate(step, device, name)
                self.kernels.append(source)
                self.plan.append((step, source, _numba_function(source, device, name)))
            elif isinstance(step, FusedGroup):      # no generated kernel: its nodes run eagerly
                self.plan += step.nodes
            else:
                self.plan.append(step)

    def _size_symbols(self):
        """Where each size symbol of a dynamic graph is read on a call: (placeholder, dim), or
        (placeholder, None) for an int argument that is a symbol itself."""
        where = {}
        placeholders = [n for n in self.gm.graph.nodes if n.op == "placeholder"]
        for i, node in enumerate(placeholders):
            v = node.meta.get("val")
            if is_symbolic(v) and v.node.expr.is_Symbol:
                where.setdefault(v.node.expr, (i, None))
            for d, n in enumerate(getattr(v, "shape", ())):
                if is_symbolic(n) and n.node.expr.is_Symbol:
                    where.setdefault(n.node.expr, (i, d))
        return where

    def __call__(self, *args):
        env = {}
        placeholders = [n for n in self.gm.graph.nodes if n.op == "placeholder"]
        for node, a in zip(placeholders, args, strict=True):
            env[node] = a
        sizes = {s: args[i] if d is None else args[i].shape[d] for s, (i, d) in self._symbols.items()}
        for node in self.gm.graph.nodes:
            if node.op == "get_attr":
                env[node] = getattr(self.gm, node.target)

        def value(a):
            return env[a] if isinstance(a, Node) else a
        for step in self.plan:
            if isinstance(step, Node):
                env[step] = step.target(*tree_map(value, step.args), **tree_map(value, step.kwargs))
            else:
                self._launch(step, env, sizes)
        output = next(n for n in self.gm.graph.nodes if n.op == "output")
        return tree_map(value, output.args[0])

    def _launch(self, step, env, sizes):
        _group, source, fn = step
        outs = []
        for node in source.outputs:
            v = node.meta["val"]
            outs.append(empty_strided(_int(tuple(v.shape), sizes), _int(v.stride(), sizes), dtype=v.dtype,
                                      device=self.device))
        buffers = [buffer(t) for t in outs] + [_from_first_element(env[n]) for n in source.inputs]
        by_name = {s.name: n for s, n in sizes.items()}
        buffers += [by_name[name] for name in source.symbols] + [env[n] for n in source.scalars]
        if self.device == "cuda":
            from ..aten.native.cuda.loops import launch_config  # the CUDA loops import numba.cuda, slow to import
            blocks, threads = launch_config(_int(source.launch_size, sizes))
            fn[blocks, threads](*buffers)
        else:
            _one_or_many_threads(fn, outs + [env[n] for n in source.inputs])(*buffers)
        env.update(zip(source.outputs, outs, strict=True))


# Inductor's C++ kernel opens a parallel region only when each thread would get at least this many
# elements (``config.cpp.min_chunk_size``, ``decide_parallel_depth`` in ``codegen/cpp.py``); below it
# the loops run on the calling thread. Here the same rule picks one of a kernel's two builds on each
# call, which also spares a small graph the parallel build's compile (three times the serial one's).
MIN_CHUNK_SIZE = 512


def _one_or_many_threads(fn, tensors):
    """The build of a generated kernel (``Twins``) that a call over ``tensors`` runs: the serial one
    when the largest of them gives each thread fewer than ``MIN_CHUNK_SIZE`` elements (or after
    ``set_num_threads(1)``), else the parallel one."""
    if not isinstance(fn, Twins):
        return fn
    work = max((t.numel() for t in tensors), default=0)
    threads = _parallel.get_num_threads()
    return fn.serial if threads == 1 or work // threads < MIN_CHUNK_SIZE else fn.parallel


def _from_first_element(t):
    """``t``'s buffer from its storage offset on: the kernels index it from 0."""
    offset = t.storage_offset()
    return buffer(t)[offset:] if offset else buffer(t)


def _int(value, sizes):
    """A size, stride or tuple of them with a call's ``sizes`` (symbol -> int) put in."""
    if isinstance(value, tuple):
        return tuple(_int(v, sizes) for v in value)
    if not is_symbolic(value):
        return value
    return int(value.node.expr.xreplace(sizes))


def compile_fx(gm, device):
    return CompiledGraph(gm, device)
