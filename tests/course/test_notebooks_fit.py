"""Every line a reader sees in the book fits the text column at 1400 px without scrolling.

The limits are ``internals.display.WIDTH`` (output lines) and ``CODE_WIDTH`` (code lines), measured
in headless Chromium on the built book. Checked: the source of every code cell, the code blocks of
markdown cells, and every stored text output the book shows (streams, errors, and ``text/plain``
where no richer form is stored; myst-nb renders HTML, images and widgets before plain text).
"""
import json
import re
from pathlib import Path

import pytest

from internals.display import CODE_WIDTH, WIDTH

NOTEBOOKS = sorted((Path(__file__).resolve().parents[2] / "notebooks").glob("*.ipynb"))

# Lines allowed to be wider, by (notebook, cell id): each with the reason. Keep this empty if you can.
EXCEPTIONS = {}

# Chapters not yet refitted to the page: their check is expected to fail,
# strictly, so a chapter that comes to fit must leave this list.
NOT_YET_FITTED = set()

# The output forms myst-nb renders before text/plain (myst_nb's default render priority for HTML).
RICHER = ("application/vnd.jupyter.widget-view+json", "text/html", "image/svg+xml", "image/png", "image/jpeg",
          "text/markdown", "text/latex")

ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
FENCE = re.compile(r"^(```|~~~)")


def _text(value):
    return "".join(value) if isinstance(value, list) else value


def _markdown_code(source):
    """The lines inside fenced code blocks of a markdown cell."""
    inside = False
    for line in source.splitlines():
        if FENCE.match(line.strip()):
            inside = not inside
        elif inside:
            yield line


def _output_texts(output):
    kind = output["output_type"]
    if kind == "stream":
        yield _text(output["text"])
    elif kind == "error":
        yield ANSI.sub("", "\n".join(output["traceback"]))
    else:
        data = output.get("data", {})
        if "text/plain" in data and not any(k in data for k in RICHER):
            yield _text(data["text/plain"])


def too_wide(path):
    """(cell id, what, length, line) for every line of ``path`` wider than the book shows."""
    nb = json.loads(path.read_text())
    found = []
    for index, cell in enumerate(nb["cells"]):
        cid = cell.get("id", str(index))
        if (path.name, cid) in EXCEPTIONS:
            continue
        source = _text(cell["source"])
        if cell["cell_type"] == "code":
            found += [(cid, "code", len(line), line) for line in source.splitlines() if len(line) > CODE_WIDTH]
            for output in cell.get("outputs", []):
                for text in _output_texts(output):
                    found += [(cid, "output", len(line), line) for line in text.splitlines() if len(line) > WIDTH]
        elif cell["cell_type"] == "markdown":
            found += [(cid, "markdown code", len(line), line) for line in _markdown_code(source)
                      if len(line) > CODE_WIDTH]
    return found


def test_exceptions_name_real_cells():
    for (name, cid), reason in EXCEPTIONS.items():
        assert reason.strip(), f"exception {name} {cid} needs a reason"
        nb = json.loads((NOTEBOOKS[0].parent / name).read_text())
        assert cid in {c.get("id") for c in nb["cells"]}, f"{name} has no cell {cid}"


@pytest.mark.parametrize("path", [
    pytest.param(p, marks=pytest.mark.xfail(strict=True, reason="not yet refitted to the page"))
    if p.name in NOT_YET_FITTED else p for p in NOTEBOOKS], ids=[p.name for p in NOTEBOOKS])
def test_lines_fit_the_page(path):
    found = too_wide(path)
    report = "\n".join(f"  cell {cid} {what} ({n} > {CODE_WIDTH if what != 'output' else WIDTH}): {line[:60]}…"
                       for cid, what, n, line in found[:15])
    assert not found, f"{len(found)} lines of {path.name} are wider than the book shows:\n{report}"


def test_the_check_can_fail(tmp_path):
    nb = {"cells": [{"cell_type": "code", "id": "x", "source": "a = 1\n", "metadata": {},
                     "outputs": [{"output_type": "stream", "name": "stdout", "text": "y" * (WIDTH + 1)}]},
                    {"cell_type": "markdown", "id": "m", "metadata": {},
                     "source": "text " * 40 + "\n```\n" + "z" * (CODE_WIDTH + 1) + "\n```\n"}]}
    path = tmp_path / "wide.ipynb"
    path.write_text(json.dumps(nb))
    assert [(cid, what) for cid, what, _, _ in too_wide(path)] == [("x", "output"), ("m", "markdown code")]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_stored_widget_has_its_saved_state(path):
    """A widget output names a model; the page renders it only from the notebook's saved widget
    state. Re-executing a notebook saves new models, so an output kept from an earlier run (an
    ``nbval-ignore-output`` cell) must keep its state too, or the book shows an empty box."""
    notebook = json.loads(path.read_text())
    saved = notebook["metadata"].get("widgets", {}).get("application/vnd.jupyter.widget-state+json", {})
    models = saved.get("state", {})
    shown = [out["data"]["application/vnd.jupyter.widget-view+json"]["model_id"]
             for cell in notebook["cells"] if cell["cell_type"] == "code" for out in cell.get("outputs", [])
             if "application/vnd.jupyter.widget-view+json" in out.get("data", {})]
    assert [m for m in shown if m not in models] == []
