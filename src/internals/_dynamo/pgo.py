"""Automatic dynamic shapes: which dims a recompile traces as symbols (``torch/_dynamo/pgo.py``,
``FrameStateSizeEntry``; ``automatic_dynamic_shapes`` in ``torch/_dynamo/config.py``).

torch.compile's default (``dynamic=None``) starts static: every size of the first call is a
constant of the graph, guarded exactly. A compiled function remembers the sizes each argument
had when it was compiled; when a call misses the cache and an argument's size at some dim has
changed, that dim is *automatically dynamic* from then on: the recompile traces it as a symbol
(``s77``), guarded ``2 <= x.size()[0]``, and that one graph serves every later size. Sizes 0 and
1 are still specialized (the trace decides too much on them), so a call with a size 1 compiles
a graph of its own. ``dynamic=True`` traces every dim as a symbol from the first call, and
``dynamic=False`` never does.

An int argument is treated the same way: the first graph bakes its value in (guarded
``n == 2``); once a call changes it, the recompile takes it as an argument, a symbol (``s86``,
from its source ``L['n']``) that the kernels take as a parameter, for every later value. The
frame state is keyed by source, so a number inside an argument or the compiled module
(``L['d']['scale']``, ``L['self'].settings.scale``) is remembered and made a symbol the same way.
"""

__all__ = ["FrameState"]


class FrameState:
    """What one compiled function remembers of its arguments' sizes: per argument name, the
    sizes first compiled with, and the dims that have changed since (dynamic from then on)."""

    def __init__(self):
        self.sizes, self.dynamic = {}, {}

    def update(self, name, sizes):
        """Record a compile with ``sizes`` for argument ``name`` (an int argument: ``(value,)``);
        return its dynamic dims. A change of rank makes every dim dynamic, as torch's frame
        state does."""
        first = self.sizes.setdefault(name, tuple(sizes))
        dims = self.dynamic.setdefault(name, set())
        if len(first) != len(sizes):
            dims |= set(range(len(sizes)))
        else:
            dims |= {d for d, (a, b) in enumerate(zip(first, sizes, strict=True)) if a != b}
        return set(dims)
