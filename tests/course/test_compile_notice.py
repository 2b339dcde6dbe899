"""The notice that Numba is compiling kernels (internals/_compile_notice.py): shown on a cold cache
only, once per process on stderr, as a widget view alone in a notebook."""
import io
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from internals import _compile_notice as notice


def test_counter_counts_top_level_compilations_only():
    shown = []
    counter = notice.CompileCounter(shown.append)
    counter.on_start()
    counter.on_start()  # a callee compiled inside the first kernel's compilation
    counter.on_end()
    counter.on_end()
    counter.on_start()
    counter.on_end()
    assert counter.count == 2 and shown == [1, 2]


def test_stderr_notice_speaks_once():
    stream = io.StringIO()
    say = notice.StderrNotice(stream)
    for count in (1, 2, 3):
        say(count)
    lines = stream.getvalue().splitlines()
    assert len(lines) == 1 and lines[0].startswith("internals: Numba is compiling kernels")


class _Events:
    def __init__(self):
        self.callbacks = {}

    def register(self, name, callback):
        self.callbacks[name] = callback


class _Shell:
    def __init__(self):
        self.events = _Events()


def test_widget_notice_shows_a_view_only_and_one_per_cell(monkeypatch):
    import IPython.display

    shown = []
    monkeypatch.setattr(IPython.display, "display", lambda obj, raw=False: shown.append((obj, raw)))
    shell = _Shell()
    say = notice.WidgetNotice(shell)
    say(1)
    say(2)
    first = say.label
    assert first.value == notice.MESSAGE.format(count=2)
    shell.events.callbacks["post_run_cell"]()
    assert first.value == notice.DONE.format(count=2)
    say(3)  # the next cell gets a label of its own, counted from 1
    assert say.label is not first and say.label.value == notice.MESSAGE.format(count=1)
    # nbval compares every output key but the widget view's (a random model id): no text/plain twin.
    assert [list(obj) for obj, raw in shown] == [["application/vnd.jupyter.widget-view+json"]] * 2
    assert all(raw for _, raw in shown)


# A kernel of its own in a file (Numba's disk cache needs one), run in a fresh process twice.
_PROGRAM = """
import importlib.util, sys
spec = importlib.util.spec_from_file_location("notice", sys.argv[1])
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
module.install()
from numba import njit

@njit(cache=True)
def add_one(x):
    return x + 1

print(add_one(1))
"""


@pytest.mark.slow
def test_a_cold_cache_is_announced_and_a_warm_one_is_not(tmp_path):
    script = tmp_path / "kernel.py"
    script.write_text(textwrap.dedent(_PROGRAM))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NUMBA", "INTERNALS"))}
    env.update(NUMBA_CACHE_DIR=str(tmp_path / "cache"), NUMBA_ENABLE_CUDASIM="1")
    source = Path(notice.__file__)

    def run():
        proc = subprocess.run([sys.executable, str(script), str(source)], env=env, capture_output=True,
                              text=True, timeout=300, cwd=tmp_path)
        assert proc.returncode == 0 and proc.stdout.strip() == "2", proc.stderr
        return proc.stderr

    assert "Numba is compiling kernels" in run()
    assert "Numba is compiling kernels" not in run()
    env["INTERNALS_COMPILE_NOTICE"] = "0"
    (tmp_path / "cache").rename(tmp_path / "old-cache")
    assert "Numba is compiling kernels" not in run()
