"""The key set of one operator call, row by row, and the key that wins (chapter 5).

The dispatcher (``aten/src/ATen/core/dispatch/DispatchKeyExtractor.h``) computes a call's key set
in four steps: the union of its tensor arguments' key sets, plus the thread-local *included*
keys, minus the thread-local *excluded* keys, minus the operator's *fallthrough* keys. The
highest key left chooses the kernel. ``call_key_sets`` gives those steps as rows of key sets,
read from the live objects; ``key_set_map`` draws them as a grid, one column per key, highest
priority on the left, so the winner is the leftmost filled cell of the last row.
"""
import contextlib
import os
import sys

import matplotlib.pyplot as plt
from matplotlib.patches import Rectangle

from .. import _C
from ..aten import dispatcher
from ..c10.dispatch_key import DispatchKey, DispatchKeySet
from ..c10.local_dispatch_key_set import tls

__all__ = ["call_key_sets", "key_set_map", "compare_tables", "wrapper_answers", "keep_columns",
           "native_stderr_silenced"]

_ADD, _REMOVE, _HAVE, _WIN = "#9ecae1", "#fcbba1", "#c7e9c0", "#31a354"


def call_key_sets(op_name, *args):
    """``(rows, winner)`` for calling operator ``op_name`` on ``args`` now, on this thread.

    ``rows`` is a list of ``(label, DispatchKeySet, role)``; role is ``"add"`` for the sets the
    call's keys are made of, ``"remove"`` for the ones taken away, ``"result"`` for the call's
    key set. ``winner`` is its highest key: the one whose kernel runs.
    """
    op = dispatcher.find(op_name)
    rows = [(f"argument {i}", a._impl.key_set, "add") for i, a in enumerate(args) if hasattr(a, "_impl")]
    rows += [("TLS included", tls.included, "add"), ("TLS excluded", tls.excluded, "remove"),
             (f"fallthroughs of {op.name}", DispatchKeySet._from_bits(op.fallthrough_bits), "remove")]
    bits = 0
    for _, keys, role in rows:
        bits = bits | keys.bits if role == "add" else bits
    for _, keys, role in rows:
        bits = bits & ~keys.bits if role == "remove" else bits
    result = DispatchKeySet._from_bits(bits)
    rows.append(("call's key set", result, "result"))
    return rows, max(result) if result else None


def key_set_map(op_name, *args, ax=None, title=None):
    """Draw ``call_key_sets(op_name, *args)``: a row per step, a column per key, highest first."""
    rows, winner = call_key_sets(op_name, *args)
    keys = sorted(DispatchKey, reverse=True)
    if ax is None:
        _, ax = plt.subplots(figsize=(0.62 * len(keys) + 2.8, 0.42 * len(rows) + 2.8))
    for y, (label, key_set, role) in enumerate(rows):
        top = -y - (0.3 if role == "result" else 0)       # a small gap before the result row
        sign = {"add": "+", "remove": "−", "result": "="}[role]
        ax.text(-0.2, top + 0.5, f"{sign} {label}", ha="right", va="center", fontsize=9)
        for x, key in enumerate(keys):
            present = key in key_set
            face = {"add": _ADD, "remove": _REMOVE, "result": _HAVE}[role] if present else "white"
            if role == "result" and key == winner:
                face = _WIN
            ax.add_patch(Rectangle((x, top), 1, 1, facecolor=face, edgecolor="#999999", linewidth=0.8))
            if present:
                ax.text(x + 0.5, top + 0.5, "●", ha="center", va="center", fontsize=8,
                        color="white" if face == _WIN else "#333333")
    for x, key in enumerate(keys):
        ax.text(x + 0.5, 1.15, key.name, rotation=60, ha="left", va="bottom", fontsize=8,
                fontweight="bold" if key == winner else "normal", rotation_mode="anchor")
    bottom = -len(rows) - 0.3
    if winner is not None:
        x = keys.index(winner)
        ax.annotate(f"highest key: {winner.name} runs", xy=(x + 0.5, bottom + 1), xytext=(x + 0.5, bottom - 0.5),
                    ha="center", va="top", fontsize=9, arrowprops=dict(arrowstyle="->", lw=0.8))
    ax.set_xlim(-0.1, len(keys) + 0.1)
    ax.set_ylim(bottom - 1.2, 6.0)     # room above the grid for the rotated key names
    ax.set_aspect("equal")
    ax.axis("off")
    ax.set_title(title or f"{op_name}: the call's key set (highest priority on the left)", fontsize=10, pad=4)
    return ax


def _table_entries(dump):
    """``{key: kind of entry}`` from a printed dispatch table, fallthroughs marked."""
    out = {}
    for line in dump.strip().splitlines():
        key, rest = line.split(": ", 1)
        kind = rest.rsplit("[", 1)[1].rstrip("]")
        out[key] = ("fallthrough " if rest.startswith("fallthrough") else "") + kind
    return out


def compare_tables(name):
    """internals' dispatch table for operator ``name`` beside torch's, for internals' keys.

    Each row keeps the kind of entry (kernel, autograd kernel, backend fallback, fallthrough...);
    torch's file paths are dropped.
    """
    import torch  # torch is heavy: only a check needs it

    ours = _table_entries(_C._dispatch_dump_table(name))
    theirs = _table_entries(torch._C._dispatch_dump_table(name))
    print(f"{'key':<18} {'internals':<30} torch")
    for key in ours:
        print(f"{key:<18} {ours[key]:<30} {theirs.get(key, '-')}")


def wrapper_answers(lib, wrapped):
    """Ask a logging wrapper class (``wrapped(data)``, ``wrapped.seen``) four questions.

    Chapter 5 compares a ``__torch_dispatch__`` wrapper subclass with a plain Python wrapper: is
    it a tensor, does it see the ``mm`` inside ``matmul``, does it see ``view``/``t``/``sum``
    without forwarding code, and does an operator its author wrote no method for (``+``) fail.
    """
    w = wrapped(lib.arange(4.0))
    answers = {"isinstance(w, Tensor)": isinstance(w, lib.Tensor)}
    wrapped.seen.clear()
    _attempt(lambda: (w * 2).reshape(2, 2).matmul(lib.ones(2, 2)))
    answers["sees mm inside matmul"] = "aten.mm.default" in wrapped.seen
    wrapped.seen.clear()
    _attempt(lambda: w.reshape(2, 2).t().sum())
    answers["sees view, t, sum"] = {"aten.view.default", "aten.t.default", "aten.sum.default"} <= set(wrapped.seen)
    # Neither class writes __add__: Python looks dunders up on the class, so only a wrapper the
    # dispatcher serves can add without one.
    answers["needs each method written"] = not _attempt(lambda: w + 1)
    return answers


def _attempt(fn):
    """Run ``fn``: True if it returned. A plain wrapper may fail half way, and what it saw so far
    is the answer."""
    try:
        fn()
    except Exception:      # noqa: BLE001 - any failure just ends the attempt
        return False
    return True


def keep_columns(table, names):
    """A profiler table (torch's or internals') with only the columns ``names``, trailing blanks cut.

    ``key_averages().table()`` is laid out in fixed-width columns under a rule of dashes; the
    rule gives each column's span, the header line its name. Lines that are not table rows (the
    total at the bottom) pass through unchanged. Used to fit the table to the book's text column.
    """
    lines = table.splitlines()
    rule = next(line for line in lines if line.startswith("-"))
    spans, start = [], 0
    for dashes in rule.rstrip().split("  "):
        spans.append((start, start + len(dashes)))
        start += len(dashes) + 2
    header = lines[lines.index(rule) + 1]
    keep = [(a, b) for a, b in spans if header[a:b].strip() in names]
    out = []
    for line in lines:
        is_row = line.startswith("-") or (len(line) >= spans[-1][1] and line[spans[0][1]:spans[0][1] + 2] == "  ")
        out.append("  ".join(line[a:b] for a, b in keep).rstrip() if is_row else line)
    return "\n".join(out)


@contextlib.contextmanager
def native_stderr_silenced():
    """Send file descriptor 2 to /dev/null for the block: torch's profiler (Kineto) writes status
    lines such as ``USDT: ... profiler_start`` from C++, past Python's ``sys.stderr``."""
    sys.stderr.flush()
    saved = os.dup(2)
    with open(os.devnull, "w") as devnull:
        os.dup2(devnull.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)
