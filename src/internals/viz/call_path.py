"""One operator call, layer by layer, as a diagram (chapter 8).

``trace_call(fn)`` runs ``fn()`` with the argument parser's trace, the dispatcher's trace and a
watch on the CPU allocator, and returns ``(result, layers)``: for each layer of the call path
(Python method, argument parser, dispatcher, autograd kernel, backend kernel, allocator) the
lines that layer contributed, read from what really ran. ``call_path_map`` draws the layers as
bands, top to bottom, in the order a call crosses them; PyTorch's file for each layer is named
at the right (``torch/csrc/utils/python_arg_parser.cpp``, ``Dispatcher.h``, ...).
"""
import matplotlib.pyplot as plt
from matplotlib.patches import FancyBboxPatch

from .. import _python_arg_parser
from ..aten import dispatcher
from ..c10.allocator import cpu_allocator

__all__ = ["call_path_map", "trace_call"]

LAYERS = [("Python", "torch/_tensor.py, python_variable_methods.cpp"),
          ("argument parser", "torch/csrc/utils/python_arg_parser.cpp"),
          ("dispatcher", "aten/src/ATen/core/dispatch/Dispatcher.h"),
          ("autograd kernel", "VariableType_*.cpp (generated)"),
          ("backend kernel", "aten/src/ATen/native/*.cpp"),
          ("allocator", "c10/core/CPUAllocator.cpp")]


def trace_call(fn, python=""):
    """Run ``fn()``; return ``(result, {layer: [lines]})`` for the layers in ``LAYERS``."""
    sizes = []
    allocate = cpu_allocator.allocate

    def watched(nbytes):
        sizes.append(nbytes)
        return allocate(nbytes)
    cpu_allocator.allocate = watched          # an instance attribute: shadows the method for the call
    try:
        with _python_arg_parser.trace() as parsed, dispatcher.trace() as dispatched:
            result = fn()
    finally:
        del cpu_allocator.allocate
    layers = {name: [] for name, _ in LAYERS}
    layers["Python"].append(python)
    layers["argument parser"] += [signature for _, signature in parsed]
    ops = list(dict.fromkeys(op for op, _, _, _ in dispatched))
    for op in ops:
        keys = [key for o, key, _, _ in dispatched if o == op]
        layers["dispatcher"].append(f"{op}: {' -> '.join(keys)}")
    for _, key, kind, kernel in dispatched:
        layer = "autograd kernel" if kind == "autograd kernel" else "backend kernel"
        layers[layer].append(f"{kernel} ({key})")
    grad_fn = getattr(result, "grad_fn", None)
    if grad_fn is not None and layers["autograd kernel"]:
        layers["autograd kernel"][-1] += f": records {grad_fn.name()}"
    layers["allocator"] += [f"allocate({n} bytes)" for n in sizes]
    return result, layers


def call_path_map(layers, ax=None, title=None):
    """Draw ``layers`` (from ``trace_call``) as bands, one per layer, with arrows down the path."""
    if ax is None:
        _, ax = plt.subplots(figsize=(8.6, 0.75 * len(LAYERS) + 0.6))
    for row, (name, torch_file) in enumerate(LAYERS):
        y = -row
        text = "   |   ".join(layers[name]) or "(nothing here)"
        ax.add_patch(FancyBboxPatch((0.0, y - 0.3), 10.0, 0.6, boxstyle="round,pad=0.02",
                                    facecolor="#dce9f5" if layers[name] else "#f2f2f2", edgecolor="#7a9cc6"))
        ax.text(0.15, y + 0.12, name, fontsize=9, fontweight="bold", va="center")
        ax.text(0.15, y - 0.13, text, fontsize=8, family="monospace", va="center")
        ax.text(9.9, y + 0.12, torch_file, fontsize=7, color="#555555", ha="right", va="center")
        if row:
            ax.annotate("", xy=(5.0, y + 0.3), xytext=(5.0, y + 0.7), arrowprops=dict(arrowstyle="->", lw=0.8))
    ax.set_xlim(-0.1, 10.1)
    ax.set_ylim(-len(LAYERS) + 0.5, 0.6)
    ax.axis("off")
    ax.set_title(title or "the path of one call, as it ran", fontsize=10)
    return ax.figure
