"""Put the reader's function in place of the package's, and take it out again.

Each chapter's core exercise rebuilds a piece the package itself runs on: the strides of a fresh
tensor, ``view``'s stride rule, the storage a view needs, TensorIterator's dimension order and
coalescing, the dispatcher's choice of key, the reduction that undoes a broadcast in backward and
the engine's dependency count, the allocator's size rounding, the registration of an operator
from YAML, an optimizer step, im2col, the compiler's fusion pass.
``use_mine(name, fn)`` makes every place in the package that calls that piece call ``fn``
instead, so the cells after it, later chapters and the capstones run on the reader's code::

    with internals.exercises.use_mine("view_strides", my_view_strides) as mine:
        y = internals.arange(12).view(3, 4).t().reshape(12)
    print(mine.calls)          # how many times the package asked your function

Without ``with``, the reader's function stays in until ``restore(name)`` (or ``restore()`` for
all). ``PLUG_POINTS`` lists what can be replaced and which checker tests a candidate first.

How: the package's function is a module-level name. ``use_mine`` rebinds that name in every
``internals`` module that holds the package's function object (the defining module and each
``from ... import`` of it), and clears the memo tables that keep earlier answers (TensorIterator
remembers layouts it computed), so the next call really reaches the reader's code. The checkers
in ``internals.exercises`` are left alone: they keep comparing with the package's own version.
"""
import importlib
import itertools
import sys
import threading
from dataclasses import dataclass

__all__ = ["PLUG_POINTS", "PlugPoint", "Plugged", "plugged", "restore", "use_mine"]


@dataclass(frozen=True)
class PlugPoint:
    """One replaceable piece: where the package defines it and what it mirrors in PyTorch."""
    name: str
    chapter: str
    module: str          # the package module that defines it
    attribute: str       # its name there
    mirrors: str         # the PyTorch function it rebuilds
    checker: str         # the checker in internals.exercises that a candidate should pass first
    signature: str       # what the reader writes
    memos: tuple = ()    # "module:attribute" of memo tables cleared on every swap

    def default(self):
        return getattr(importlib.import_module(self.module), self.attribute)


_TI = "internals.aten.tensor_iterator"
_TI_MEMOS = (f"{_TI}:_layouts", f"{_TI}:_geometries", f"{_TI}:_contiguous_strides")

PLUG_POINTS = {p.name: p for p in [
    PlugPoint("contiguous_strides", "01_tensors", "internals.c10.tensor_impl", "contiguous_strides",
              "c10::contiguous_strides (c10/util/strides.h)", "check_contiguous_strides",
              "contiguous_strides(sizes) -> tuple of strides", _TI_MEMOS),
    PlugPoint("view_strides", "02_strides", "internals.aten.native.tensor_shape", "compute_stride",
              "at::detail::computeStride (aten/src/ATen/TensorUtils.cpp)", "check_view_strides",
              "view_strides(sizes, strides, new_sizes) -> tuple of strides, or None where view must refuse"),
    PlugPoint("storage_size", "03_storage", "internals.c10.tensor_impl", "required_storage_elements",
              "at::detail::computeStorageNbytes (aten/src/ATen/EmptyTensor.cpp), in elements",
              "check_storage_size", "storage_size(sizes, strides, offset) -> elements a view reaches into"),
    PlugPoint("reorder_dimensions", "04_kernels", _TI, "_reorder",
              "TensorIteratorBase::reorder_dimensions (aten/src/ATen/TensorIterator.cpp)",
              "check_reorder_dimensions", "reorder_dimensions(shape, operand_strides) -> permutation, fastest first",
              _TI_MEMOS),
    PlugPoint("coalesce_dimensions", "04_kernels", _TI, "coalesce",
              "TensorIteratorBase::coalesce_dimensions (aten/src/ATen/TensorIterator.cpp)",
              "check_coalesce_dimensions", "coalesce_dimensions(shape, operand_strides) -> (shape, operand_strides)",
              _TI_MEMOS),
    PlugPoint("dispatch_key", "05_dispatch", "internals.aten.dispatcher", "dispatch_key",
              "DispatchKeyExtractor::getDispatchKeySetUnboxed (aten/src/ATen/core/dispatch/DispatchKeyExtractor.h) "
              "with LocalDispatchKeySet.h's included/excluded sets and OperatorEntry's fallthroughs",
              "check_dispatch_key_rule",
              "dispatch_key(key_sets, included, excluded, fallthrough) -> the DispatchKey that runs first, or None"),
    PlugPoint("sum_to", "06_autograd", "internals.autograd.functions_manual", "sum_to",
              "at::sum_to (aten/src/ATen/ExpandUtils.h)", "check_sum_to",
              "sum_to(grad, shape) -> grad summed down to shape, undoing a broadcast"),
    PlugPoint("compute_dependencies", "06_autograd", "internals.autograd.engine", "compute_dependencies",
              "compute_dependencies (torch/csrc/autograd/engine.cpp)", "check_compute_dependencies",
              "compute_dependencies(roots) -> {node: how many edges point at it}"),
    PlugPoint("round_size", "07_memory", "internals.cuda.caching_allocator", "round_size",
              "CUDACachingAllocator.cpp's round_size", "check_round_size",
              "round_size(nbytes, config=None) -> bytes of the block handed out"),
    PlugPoint("register_operator", "08_codebase_tour", "internals.codegen.operator_from_yaml", "register_operator",
              "torchgen/gen.py's RegisterSchema.cpp and RegisterCPU.cpp, tools/autograd/gen_autograd.py's "
              "Functions.cpp and VariableType, for one operator", "check_register_operator",
              "register_operator(native_functions, derivatives, kernels) -> a handle whose undo() removes "
              "every registration"),
    PlugPoint("fusion_pass", "11_compile", "internals._inductor.scheduler", "schedule",
              "Inductor's Scheduler fusion (torch/_inductor/scheduler.py)", "check_fusion_pass",
              "fusion_pass(graph) -> list of Nodes (run eagerly) and FusedGroups (one generated kernel each)"),
    PlugPoint("sgd_step", "09_capstone", "internals.optim.sgd", "sgd_step",
              "torch/optim/sgd.py's _single_tensor_sgd", "check_sgd_step",
              "sgd_step(params, grads, momentum_buffers, *, lr, weight_decay, momentum, dampening, nesterov, "
              "maximize) -> None, updating params and momentum_buffers in place"),
    PlugPoint("im2col", "10_cnn", "internals.aten.native.convolution", "im2col_columns",
              "im2col (aten/src/ATen/native/im2col.h), as torch.nn.functional.unfold returns it", "check_im2col",
              "im2col(x, kernel_size, stride, padding, dilation) -> (N, C*kh*kw, OH*OW) columns of x (N, C, H, W)"),
]}


class Plugged:
    """The reader's function, in place of the package's until :meth:`restore` (or the end of a
    ``with`` block). ``calls`` counts the package's calls of it; ``sites`` lists the module
    names it was bound in."""

    def __init__(self, point, fn):
        self.point, self.fn = point, fn
        self._counter = itertools.count()
        self.calls = 0
        self.sites = []

        def reader_version(*args, **kwargs):
            self.calls = next(self._counter) + 1    # itertools.count is atomic under threads
            return fn(*args, **kwargs)
        reader_version.__name__ = getattr(fn, "__name__", point.attribute)
        reader_version.__doc__ = f"The reader's {point.name}, plugged in by internals.exercises.use_mine."
        reader_version.__wrapped__ = fn
        self.wrapper = reader_version

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        restore(self.point.name)

    def restore(self):
        restore(self.point.name)

    def __repr__(self):
        return f"<your {self.point.name} in place of internals' ({self.calls} calls so far)>"


_lock = threading.Lock()
_active = {}        # name -> Plugged


def _package_modules():
    """Every imported internals module except the checkers (they compare with the package's own)."""
    for name, module in list(sys.modules.items()):
        if (name == "internals" or name.startswith("internals.")) and not name.startswith("internals.exercises"):
            if module is not None:
                yield module


def _rebind(old, new):
    sites = []
    for module in _package_modules():
        names = vars(module)
        for attr, value in list(names.items()):
            if value is old:
                setattr(module, attr, new)
                sites.append(f"{module.__name__}.{attr}")
    return sites


def _clear_memos(point):
    for spec in point.memos:
        module, attribute = spec.split(":")
        memo = getattr(importlib.import_module(module), attribute)
        (memo.cache_clear if hasattr(memo, "cache_clear") else memo.clear)()


def use_mine(name, fn):
    """Make the package call ``fn`` wherever it calls its own ``name`` (see ``PLUG_POINTS``).
    Returns a :class:`Plugged`, usable as a context manager that restores the package's version."""
    if name not in PLUG_POINTS:
        raise KeyError(f"no plug point named {name!r}; the plug points are: {', '.join(PLUG_POINTS)}")
    if not callable(fn):
        raise TypeError(f"use_mine({name!r}, fn) needs a function, got {type(fn).__name__}")
    point = PLUG_POINTS[name]
    with _lock:
        if name in _active:
            raise RuntimeError(f"your {name} is already plugged in: restore({name!r}) first")
        plugged = Plugged(point, fn)
        plugged.sites = _rebind(_originals[name], plugged.wrapper)
        _active[name] = plugged
        _clear_memos(point)
    return plugged


def restore(name=None):
    """Put the package's own version back (``name``, or every plug point when None)."""
    with _lock:
        for key in [name] if name is not None else list(_active):
            plugged = _active.pop(key, None)
            if plugged is None:
                continue
            # Every holder of the wrapper gets the package's function back, including a module
            # imported after use_mine, which took the wrapper with ``from ... import``.
            _rebind(plugged.wrapper, _originals[key])
            _clear_memos(plugged.point)


def plugged():
    """The plug points that hold a reader's function now: {name: Plugged}."""
    with _lock:
        return dict(_active)


# The package's own functions, captured at the first use_mine of each name (before its swap):
# restore() needs them once the defining module's name holds the reader's version.
class _Originals(dict):
    def __missing__(self, key):
        value = self[key] = PLUG_POINTS[key].default()
        return value


_originals = _Originals()
