"""Build-it exercises for chapter 5 (dispatch): checkers for the reader's code.

``check_dispatch_key_rule(fn)`` (the chapter's core exercise): ``fn(key_sets, included,
excluded, fallthrough)`` gets the tensor arguments' key sets, the thread-local included and
excluded sets and the operator's fallthrough keys, all ``DispatchKeySet``s, and must return the
``DispatchKey`` whose kernel runs first, or None when no key is left: the package's
``dispatcher.dispatch_key``, which ``use_mine("dispatch_key", fn)`` replaces. The cases are the
sets real calls meet (dense, sparse, inference-mode and subclass tensors; factories with no
tensor; guards that exclude a key the defaults include; autocast's keys let in) and random ones.

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
from ..aten.dispatcher import dispatch_key as package_dispatch_key
from ..c10.dispatch_key import AUTOCAST_KEYS, DispatchKey, DispatchKeySet
from ..c10.local_dispatch_key_set import AUTOGRAD_AND_AD_INPLACE_OR_VIEW, DEFAULT_EXCLUDED, DEFAULT_INCLUDED
from ._runner import readers_answer, run_generated

__all__ = ["check_dispatch_key", "check_dispatch_key_rule", "check_counting_mode"]

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
        assert getattr(answer, "name", answer) == truth, (
            f"you said {describe_key(answer)}; the dispatcher ran {describe_key(DispatchKey[truth])} first")
    return run_generated("check_dispatch_key", _strategy(), check_one)


def describe_key(answer):
    """A key by name, with its row in the chapter's table of keys (which counts from 0, lowest
    first: ``internals._C._dispatch_keyset_full()``); a number is read as such a row."""
    if answer is None:
        return "None (no key)"
    if isinstance(answer, DispatchKey):
        return f"{answer.name} (row {int(answer) - 1} of the chapter's table of keys)"
    if isinstance(answer, int) and 0 <= answer < len(DispatchKey):
        return f"{answer}, a number: row {answer} of the chapter's table is {DispatchKey(answer + 1).name}"
    return repr(answer)


# ------------------------------------------------------------------ the core exercise: the call's key
def _keys(*names):
    return DispatchKeySet([DispatchKey[n] for n in names])


# key sets of the tensors calls meet (internals._C._dispatch_keys of each)
_TENSOR_SETS = [
    _keys("CPU", "ADInplaceOrView", "AutogradCPU", "AutocastCPU"),             # dense, on the CPU
    _keys("CUDA", "ADInplaceOrView", "AutogradCUDA", "AutocastCUDA"),          # dense, on a GPU
    _keys("SparseCPU", "ADInplaceOrView", "AutogradCPU", "AutocastCPU"),       # sparse COO
    _keys("CPU", "AutocastCPU"),                                               # made in inference_mode
    _keys("Meta", "ADInplaceOrView", "AutogradMeta"),                          # meta
    _keys("CPU", "Python", "ADInplaceOrView", "AutogradCPU", "AutocastCPU", "PythonTLSSnapshot"),   # a subclass
]
# the thread-local sets: the defaults, and what guards and modes make of them
_INCLUDED = [DEFAULT_INCLUDED, DEFAULT_INCLUDED | _keys("Python", "PythonTLSSnapshot"), DispatchKeySet()]
_EXCLUDED = [DEFAULT_EXCLUDED, DEFAULT_EXCLUDED | AUTOGRAD_AND_AD_INPLACE_OR_VIEW,
             DEFAULT_EXCLUDED - _keys("AutocastCPU"), DEFAULT_EXCLUDED | _keys("Python", "PythonTLSSnapshot"),
             DispatchKeySet()]


def _fallthroughs():
    """The fallthrough keys of a few real operators (``add`` has many, a factory or ``add_`` fewer)."""
    return [DispatchKeySet._from_bits(dispatcher.find(name).fallthrough_bits)
            for name in ("add.Tensor", "add_.Tensor", "empty.memory_format", "mm", "_to_copy")]


def _rule_cases():
    from hypothesis import strategies as st  # hypothesis is heavy: only a checker needs it
    any_set = st.sets(st.sampled_from(list(DispatchKey))).map(DispatchKeySet)
    tensor_set = st.one_of(st.sampled_from(_TENSOR_SETS), any_set)
    return st.tuples(st.lists(tensor_set, max_size=3), st.one_of(st.sampled_from(_INCLUDED), any_set),
                     st.one_of(st.sampled_from(_EXCLUDED), any_set),
                     st.one_of(st.sampled_from(_fallthroughs() + [AUTOCAST_KEYS]), any_set))


def check_dispatch_key_rule(fn):
    """Check ``fn(key_sets, included, excluded, fallthrough) -> DispatchKey or None`` against the
    dispatcher's rule on the key sets real calls meet and on random ones."""

    def check_one(case):
        key_sets, included, excluded, fallthrough = case
        truth = package_dispatch_key(key_sets, included, excluded, fallthrough)
        answer = readers_answer(fn, list(key_sets), included, excluded, fallthrough,
                                want=f"{describe_key(truth)}, the key the dispatcher runs first")
        # a DispatchKey or its name; a bare number is not a key (IntEnum would compare it equal)
        same = ((answer is None or isinstance(answer, DispatchKey)) and answer == truth) or (
            isinstance(answer, str) and truth is not None and answer == truth.name)
        assert same, f"you said {describe_key(answer)}; the dispatcher runs {describe_key(truth)} first"
    return run_generated("check_dispatch_key_rule", _rule_cases(), check_one, max_examples=150)


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
