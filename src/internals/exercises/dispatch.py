"""Build-it exercises for chapter 5 (dispatch): checkers for the reader's code.

``check_dispatch_key(fn)``: ``fn(op_name, *args)`` must name the key whose kernel runs first,
computed as the dispatcher does (``DispatchKeyExtractor.h``): the arguments' key sets, plus the
thread-local included set, minus the excluded set, minus the operator's fallthroughs, highest
key. The truth is what ``dispatcher.trace()`` records when the call really runs.

``check_counting_mode(mode_cls)``: a ``TorchDispatchMode`` subclass whose instances count calls
per operator in ``self.counts`` (``str(func)`` keys). Its counts must equal those of torch's own
``TorchDispatchMode`` on the same program.
"""
import contextlib
from collections import Counter

import internals

from ..aten import dispatcher
from ._runner import run_generated

__all__ = ["check_dispatch_key", "check_counting_mode"]

_OPS = {"add.Tensor": 2, "mul.Tensor": 2, "add_.Tensor": 2, "mm": 2, "neg": 1, "matmul": 2}
_KINDS = ["dense", "requires_grad", "sparse", "made in inference_mode"]
_CONTEXTS = ["plain", "no_grad", "inference_mode", "autocast"]


def _strategy():
    from hypothesis import strategies as st  # hypothesis is heavy: only a checker needs it
    return st.tuples(st.sampled_from(sorted(_OPS)), st.sampled_from(_KINDS), st.sampled_from(_CONTEXTS))


def _make(kind):
    if kind == "made in inference_mode":
        with internals.inference_mode():
            return internals.ones(2, 2)
    t = internals.ones(2, 2, requires_grad=kind == "requires_grad")
    return t.to_sparse() if kind == "sparse" else t


def _context(name):
    return {"plain": contextlib.nullcontext(), "no_grad": internals.no_grad(),
            "inference_mode": internals.inference_mode(), "autocast": internals.autocast("cpu")}[name]


def check_dispatch_key(fn):
    """Check ``fn(op_name, *args) -> DispatchKey`` against the key the dispatcher really runs first."""
    from hypothesis import assume  # hypothesis is heavy: only a checker needs it


    def check_one(case):
        op_name, kind, context = case
        args = [_make(kind)] * _OPS[op_name]
        with _context(context):
            answer = fn(op_name, *args)
            with dispatcher.trace() as log, contextlib.suppress(Exception):
                dispatcher.find(op_name)(*args)     # some combinations refuse: the first key still ran
        assume(log)                                 # refused before any kernel ran: nothing to compare
        truth = log[0][1]
        assert getattr(answer, "name", answer) == truth, f"you said {answer}, the dispatcher ran {truth} first"
    return run_generated("check_dispatch_key", _strategy(), check_one)


def _program(lib, ops, x):
    for op in ops:
        x = {"mul": lambda t: t * 2, "add": lambda t: t + 1, "relu": lambda t: t.relu(),
             "matmul": lambda t: t @ t.t(), "softmax": lambda t: t.softmax(1), "sum": lambda t: t.sum(0, keepdim=True),
             "view": lambda t: t.reshape(-1).reshape(t.shape)}[op](x)
    return x


def check_counting_mode(mode_cls):
    """Check a counting ``TorchDispatchMode`` (``self.counts``) against torch's on random programs."""
    import torch  # torch is heavy: only a check needs it
    from hypothesis import strategies as st  # hypothesis is heavy: only a checker needs it
    from torch.utils._python_dispatch import TorchDispatchMode  # torch is heavy: only a check needs it


    class Reference(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.counts = Counter()

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.counts[str(func)] += 1
            return func(*args, **(kwargs or {}))

    ops = st.lists(st.sampled_from(["mul", "add", "relu", "matmul", "softmax", "sum", "view"]), min_size=1, max_size=5)

    def check_one(ops):
        xt = torch.arange(6.0).reshape(2, 3)
        xi = internals.from_torch(xt)
        with Reference() as theirs:
            _program(torch, ops, xt)
        with mode_cls() as ours:
            _program(internals, ops, xi)
        assert Counter(ours.counts) == theirs.counts, f"your counts {dict(ours.counts)}, torch's {dict(theirs.counts)}"
    return run_generated("check_counting_mode", ops, check_one, max_examples=25)
