"""A profiler on the dispatcher's hooks (``torch/profiler``, ``torch/autograd/profiler.py``).

torch's profiler subscribes to RecordFunction: the dispatcher announces the start and end of
every operator call, nested calls included, with the operator's name and its inputs. This one
does the same through ``dispatcher.add_observer``, and summarises like torch: per operator,
self time (its own work, without the operators it called), total time and number of calls.
"""
import json
import os
import threading
import time
from collections import namedtuple

from ..aten import dispatcher
from ..autograd.profiler import record_function

__all__ = ["profile", "ProfilerActivity", "FunctionEvent", "FunctionEventAvg", "EventList", "record_function"]


class ProfilerActivity:
    CPU = "CPU"
    CUDA = "CUDA"


def _shapes(args):
    """torch's input shapes: a tensor's sizes, ``[]`` for anything else."""
    return [list(a.shape) if hasattr(a, "_impl") else [] for a in args]


class FunctionEvent:
    """One operator call: name, input shapes, start/end in microseconds, calls it made."""

    def __init__(self, name, input_shapes, start_us, parent):
        self.name, self.input_shapes, self.start_us, self.end_us = name, input_shapes, start_us, None
        self.parent, self.children = parent, []

    @property
    def cpu_time_total(self):
        return self.end_us - self.start_us

    @property
    def self_cpu_time_total(self):
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.children)

    def __repr__(self):
        return f"<FunctionEvent name={self.name} input_shapes={self.input_shapes}>"


class FunctionEventAvg:
    """The calls of one operator (and, if grouped so, one list of input shapes) added up."""

    def __init__(self, key, input_shapes):
        self.key, self.input_shapes = key, input_shapes
        self.count, self.cpu_time_total, self.self_cpu_time_total = 0, 0.0, 0.0

    def add(self, event):
        self.count += 1
        self.cpu_time_total += event.cpu_time_total
        self.self_cpu_time_total += event.self_cpu_time_total

    @property
    def cpu_time(self):
        return self.cpu_time_total / self.count

    def __repr__(self):
        return f"<FunctionEventAvg key={self.key} count={self.count} input_shapes={self.input_shapes}>"


_Column = namedtuple("_Column", "title width value")


def _us(t):
    """torch's time format: us below 1 ms, then ms, then s, three decimals."""
    if t >= 1e6:
        return f"{t / 1e6:.3f}s"
    return f"{t / 1e3:.3f}ms" if t >= 1e3 else f"{t:.3f}us"


class EventList(list):
    def table(self, sort_by=None, row_limit=100, header=None):
        """The summary table, laid out as torch's ``key_averages().table()``."""
        rows = sorted(self, key=lambda e: getattr(e, sort_by), reverse=True) if sort_by else list(self)
        rows = rows[:row_limit] if row_limit and row_limit > 0 else rows
        total = sum(e.self_cpu_time_total for e in self) or 1.0
        name_w = max([len(e.key) for e in rows] + [4]) + 4
        columns = [_Column("Name", name_w, lambda e: e.key),
                   _Column("Self CPU %", 12, lambda e: f"{100 * e.self_cpu_time_total / total:.2f}%"),
                   _Column("Self CPU", 12, lambda e: _us(e.self_cpu_time_total)),
                   _Column("CPU total %", 12, lambda e: f"{100 * e.cpu_time_total / total:.2f}%"),
                   _Column("CPU total", 12, lambda e: _us(e.cpu_time_total)),
                   _Column("CPU time avg", 12, lambda e: _us(e.cpu_time)),
                   _Column("# of Calls", 12, lambda e: str(e.count))]
        if any(e.input_shapes is not None for e in rows):
            width = max([len(str(e.input_shapes)) for e in rows] + [12]) + 2
            columns.append(_Column("Input Shapes", width, lambda e: str(e.input_shapes)))
        rule = "".join("-" * c.width + "  " for c in columns)

        def line(cells):
            return "".join(cell.rjust(c.width) + "  " for c, cell in zip(columns, cells))
        out = [rule, line([c.title for c in columns]), rule]
        out += [line([c.value(e) for c in columns]) for e in rows]
        out += [rule, f"Self CPU time total: {_us(sum(e.self_cpu_time_total for e in self))}", ""]
        return "\n".join(out)


class profile:
    """``with profile() as prof:`` records every operator call; ``prof.key_averages().table()``."""

    def __init__(self, activities=None, record_shapes=False):
        self.activities = activities or [ProfilerActivity.CPU]
        self.record_shapes = record_shapes
        self._events, self._open = [], []

    def __enter__(self):
        dispatcher.add_observer(self._start, self._end)
        return self

    def __exit__(self, *exc):
        dispatcher.remove_observer(self._start, self._end)

    def _start(self, op, args):
        if isinstance(op, str):         # a ``record_function`` range: its label
            name = op
        elif op.namespace == "profiler":
            return None                 # record_function's own enter and exit: the range stands for them
        else:
            name = op.name.split(".")[0]                 # torch reports aten::add for every overload of add
        parent = self._open[-1] if self._open else None
        event = FunctionEvent(name, _shapes(args) if self.record_shapes else None, time.perf_counter() * 1e6, parent)
        (parent.children if parent else self._events).append(event)
        self._open.append(event)
        return event

    def _end(self, event):
        if event is not None:
            event.end_us = time.perf_counter() * 1e6
            self._open.pop()

    def events(self):
        """Every call, in the order they started, nested calls included."""
        out = []

        def walk(events):
            for e in events:
                out.append(e)
                walk(e.children)
        walk(self._events)
        return EventList(out)

    def export_chrome_trace(self, path):
        """Write the calls in the Chrome trace-event format torch's ``export_chrome_trace`` writes
        (one complete event, ``"ph": "X"``, per call, times in microseconds): open it in Perfetto
        or ``chrome://tracing``."""
        pid, tid = os.getpid(), threading.get_ident()
        events = [{"ph": "X", "cat": "cpu_op", "name": e.name, "pid": pid, "tid": tid, "ts": e.start_us,
                   "dur": e.cpu_time_total, "args": {} if e.input_shapes is None else {"Input Dims": e.input_shapes}}
                  for e in self.events()]
        with open(path, "w") as f:
            json.dump({"traceEvents": events}, f)

    def key_averages(self, group_by_input_shape=False):
        groups = {}
        for e in self.events():
            key = (e.name, str(e.input_shapes)) if group_by_input_shape else e.name
            if key not in groups:
                groups[key] = FunctionEventAvg(e.name, e.input_shapes if group_by_input_shape else None)
            groups[key].add(e)
        return EventList(groups.values())
