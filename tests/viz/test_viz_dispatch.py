"""The key-set picture (internals.viz.dispatch): its rows are the dispatcher's, and its winner is the
key whose kernel the dispatcher really runs first, checked with ``dispatcher.trace()``."""
import pytest
import torch

import internals
from internals.aten import dispatcher
from internals.c10.dispatch_key import DispatchKey
from internals.utils._python_dispatch import TorchDispatchMode
from internals.viz.dispatch import call_key_sets, key_set_map

pytestmark = pytest.mark.usefixtures("close_figures")


class _PassThrough(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


def _dense():
    return internals.ones(2, 2)


def _grad():
    return internals.ones(2, 2, requires_grad=True)


def _sparse():
    return internals.ones(2, 2).to_sparse()


CALLS = {  # name: (operator, make the arguments, context)
    "mul": ("aten::mul.Tensor", lambda: (_dense(), _dense()), lambda: internals.enable_grad()),
    "mul requires_grad": ("aten::mul.Tensor", lambda: (_grad(), _dense()), lambda: internals.enable_grad()),
    "mul no_grad": ("aten::mul.Tensor", lambda: (_grad(), _dense()), lambda: internals.no_grad()),
    "add_ (in place)": ("aten::add_.Tensor", lambda: (_dense(), _dense()), lambda: internals.no_grad()),
    "mm under inference_mode": ("aten::mm", lambda: (_dense(), _dense()), lambda: internals.inference_mode()),
    "mm autocast": ("aten::mm", lambda: (_dense(), _dense()), lambda: internals.autocast("cpu")),
    "mm sparse": ("aten::mm", lambda: (_sparse(), _dense()), lambda: internals.no_grad()),
    "mul in a mode": ("aten::mul.Tensor", lambda: (_dense(), _dense()), _PassThrough),
}


@pytest.mark.parametrize("name", CALLS)
def test_the_winner_is_the_first_key_the_dispatcher_visits(name):
    op_name, make, context = CALLS[name]
    args = make()
    op = dispatcher.find(op_name)
    with context():
        rows, winner = call_key_sets(op_name, *args)
        with dispatcher.trace() as log:
            op(*args)
    first_op, first_key, _, _ = log[0]
    assert (first_op, first_key) == (op.name, winner.name)


def test_rows_are_the_arguments_then_the_thread_local_sets_then_the_fallthroughs():
    x = _dense()
    rows, winner = call_key_sets("aten::mul.Tensor", x, x)
    assert [label for label, _, _ in rows] == ["argument 0", "argument 1", "TLS included", "TLS excluded",
                                               "fallthroughs of aten::mul.Tensor", "call's key set"]
    assert [role for _, _, role in rows] == ["add", "add", "add", "remove", "remove", "result"]
    # A dense CPU float tensor carries the keys torch gives it.
    assert [k.name for k in rows[0][1]] == ["CPU", "ADInplaceOrView", "AutogradCPU", "AutocastCPU"]
    assert str(torch._C._dispatch_keys(torch.ones(2, 2))) == \
        "DispatchKeySet(CPU, ADInplaceOrView, AutogradCPU, AutocastCPU)"
    # mul is not in place: ADInplaceOrView falls through, and the result has autograd above CPU.
    assert [k.name for k in rows[-1][1]] == ["CPU", "AutogradCPU"]
    assert winner is DispatchKey.AutogradCPU


def test_the_drawing_has_a_cell_per_key_and_row():
    x = _dense()
    ax = key_set_map("aten::mul.Tensor", x, x)
    rows, _ = call_key_sets("aten::mul.Tensor", x, x)
    assert len(ax.patches) == len(rows) * len(DispatchKey)
    labels = {t.get_text() for t in ax.texts}
    assert {k.name for k in DispatchKey} <= labels
    assert "highest key: AutogradCPU runs" in labels


def _logging_subclass(lib):
    """A ``__torch_dispatch__`` wrapper subclass that logs each operator, as chapter 5 writes it."""
    from torch.utils._pytree import tree_map as torch_tree_map

    from internals.utils._pytree import tree_map as internals_tree_map

    tree_map = torch_tree_map if lib is torch else internals_tree_map

    class Logged(lib.Tensor):
        seen = []

        @staticmethod
        def __new__(cls, elem):
            r = lib.Tensor._make_wrapper_subclass(cls, elem.shape, dtype=elem.dtype, device=elem.device)
            r.elem = elem
            return r

        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            cls.seen.append(str(func))
            unwrap = lambda t: t.elem if isinstance(t, cls) else t              # noqa: E731
            wrap = lambda t: cls(t) if isinstance(t, lib.Tensor) and not isinstance(t, cls) else t  # noqa: E731
            return tree_map(wrap, func(*tree_map(unwrap, args), **tree_map(unwrap, kwargs or {})))

    return Logged


class _Plain:
    """A plain class that forwards attribute lookups (and ``*``) to the tensor it holds."""
    seen = []

    def __init__(self, elem):
        self.elem = elem

    def __getattr__(self, name):
        _Plain.seen.append(name)
        attr = getattr(self.elem, name)
        return (lambda *a, **k: _Plain(attr(*a, **k))) if callable(attr) else attr

    def __mul__(self, other):
        _Plain.seen.append("__mul__")
        return _Plain(self.elem * other)


def test_wrapper_answers_are_torchs_and_tell_a_subclass_from_a_plain_wrapper():
    from internals.viz import wrapper_answers

    answers = {(lib.__name__, kind): wrapper_answers(lib, make)
               for lib in (torch, internals)
               for kind, make in (("subclass", _logging_subclass(lib)), ("plain", _Plain))}
    assert answers["internals", "subclass"] == answers["torch", "subclass"]
    assert answers["internals", "plain"] == answers["torch", "plain"]
    subclass, plain = answers["torch", "subclass"], answers["torch", "plain"]
    assert subclass == {"isinstance(w, Tensor)": True, "sees mm inside matmul": True,
                        "sees view, t, sum": True, "needs each method written": False}
    assert all(plain[q] != subclass[q] for q in subclass)    # every row tells them apart
