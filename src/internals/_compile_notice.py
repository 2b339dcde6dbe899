"""Say when Numba compiles kernels, so a first run's wait is not silent.

The kernels are compiled on first use and kept in Numba's on-disk cache (``_cuda_env`` keys it by
the kernel sources). On a fresh machine (every new Colab runtime) the first operations of a chapter
wait 20-100 s while Numba compiles; later runs load the same kernels from the cache in a moment.

Numba fires a ``numba:compile`` event around each real compilation and none when it loads a
kernel from its cache (``numba/core/dispatcher.py``, ``Dispatcher.compile``), so a listener on that
event hears exactly the cold-cache work. It counts top-level compilations (a kernel's callees
compile inside its event) and shows the count:

* in a Jupyter kernel, as a one-line widget per cell. A widget view is the one output nbval never
  compares (its model id is random), so a stored notebook stays valid whether or not the cache was
  warm when it ran;
* elsewhere, as one line on stderr per process.

``INTERNALS_COMPILE_NOTICE=0`` turns it off.
"""
import os
import sys

MESSAGE = "Numba is compiling kernels on first use ({count} so far), a wait that cached kernels skip."
DONE = "Numba compiled {count} kernel(s) while this cell ran."


class CompileCounter:
    """Counts top-level compilations; ``show(count)`` is called at the start of each."""

    def __init__(self, show):
        self.show = show
        self.count = 0
        self._depth = 0

    def on_start(self, event=None):
        self._depth += 1
        if self._depth == 1:
            self.count += 1
            self.show(self.count)

    def on_end(self, event=None):
        self._depth -= 1


class StderrNotice:
    """One line on stderr, the first time anything compiles in this process."""

    def __init__(self, stream=None):
        self.stream = stream
        self.said = False

    def __call__(self, count):
        if not self.said:
            self.said = True
            print("internals: " + MESSAGE.format(count="first"), file=self.stream or sys.stderr, flush=True)


class WidgetNotice:
    """A label under the running cell that counts that cell's compilations, then says how many."""

    def __init__(self, shell):
        self.label = None
        self.in_cell = 0
        shell.events.register("post_run_cell", self.finish)

    def __call__(self, count):
        from IPython.display import display  # only in a Jupyter kernel, where IPython is loaded
        from ipywidgets import Label  # only in a Jupyter kernel: the package imports it nowhere else

        if self.label is None:  # the first compilation of this cell
            self.label, self.in_cell = Label(), 0
            # The view alone, without the text/plain twin a widget normally carries: nbval skips
            # widget views, so this output is the same to it as no output at all.
            view = {"version_major": 2, "version_minor": 0, "model_id": self.label.model_id}
            display({"application/vnd.jupyter.widget-view+json": view}, raw=True)
        self.in_cell += 1
        self.label.value = MESSAGE.format(count=self.in_cell)

    def finish(self, result=None):
        if self.label is not None:
            self.label.value = DONE.format(count=self.in_cell)
        self.label = None


def pick_notice():
    """The widget in a Jupyter kernel that has ipywidgets, stderr anywhere else."""
    shell = getattr(sys.modules.get("IPython"), "get_ipython", lambda: None)()
    if shell is not None and getattr(shell, "kernel", None) is not None:
        try:
            import ipywidgets  # noqa: F401  # optional: only a notebook front end shows widgets
        except ImportError:
            return StderrNotice()
        return WidgetNotice(shell)
    return StderrNotice()


def install():
    """Listen to Numba's compile events for the rest of the process (once; off with the env var)."""
    if os.environ.get("INTERNALS_COMPILE_NOTICE", "1") == "0" or getattr(install, "counter", None):
        return None
    from numba.core import event  # after _cuda_env: Numba reads its settings when first imported

    class _Listener(event.Listener):
        def on_start(self, ev):
            counter.on_start(ev)

        def on_end(self, ev):
            counter.on_end(ev)

    counter = install.counter = CompileCounter(pick_notice())
    event.register("numba:compile", _Listener())
    return counter
