"""The build-it checkers of chapters 5-9 (internals.exercises): each accepts a right answer and
rejects a wrong one, printing the failing case. Also the book helpers those chapters use:
profiler table columns, the Chrome trace export, and the traced call path."""
import json
from collections import Counter

import pytest
import torch

import internals
from internals.aten import dispatcher
from internals.c10.dispatch_key import DispatchKeySet
from internals.c10.local_dispatch_key_set import tls
from internals.exercises.autograd import check_mul_backward, check_tanh_backward
from internals.exercises.cnn import check_conv2d, check_im2col
from internals.exercises.codebase import check_axpy_operator
from internals.exercises.dispatch import check_counting_mode, check_dispatch_key
from internals.exercises.memory import check_allocation_size, check_round_size
from internals.utils._python_dispatch import TorchDispatchMode
from internals.viz import call_path_map, keep_columns, trace_call

MiB = 1024**2


def dispatch_key(op_name, *args):
    keys = DispatchKeySet()
    for a in args:
        keys = keys | a._impl.key_set
    keys = (keys | tls.included) - tls.excluded
    return (keys - DispatchKeySet._from_bits(dispatcher.find(op_name).fallthrough_bits)).highest()


class Counting(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.counts = Counter()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.counts[str(func)] += 1
        return func(*args, **(kwargs or {}))


class CountingNothing(Counting):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


def reduce_to(grad, shape):
    while grad.dim() > len(shape):
        grad = grad.sum(0)
    for dim, size in enumerate(shape):
        if size == 1 and grad.shape[dim] != 1:
            grad = grad.sum(dim, keepdim=True)
    return grad


def register(scale):
    def make(library):
        m = library.Library("exercise_axpy", "DEF")
        m.define("axpy(Tensor x, Tensor y, Scalar alpha) -> Tensor")
        m.impl("axpy", lambda x, y, alpha: scale * alpha * x + y, "CPU")
        return m
    return make


def segment(rounded):
    if rounded <= MiB:
        return 2 * MiB
    return 20 * MiB if rounded < 10 * MiB else 2 * MiB * -(-rounded // (2 * MiB))


# chapter 10's exercises: im2col of a batch, and a convolution from columns
def im2col(x, kernel_size, stride, padding, dilation):
    n, c, h, w = x.shape
    (kh, kw), (sh, sw), (ph, pw), (dh, dw) = kernel_size, stride, padding, dilation
    padded = internals.zeros(n, c, h + 2 * ph, w + 2 * pw)
    padded[:, :, ph:ph + h, pw:pw + w] = x
    oh, ow = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1, (w + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    taps = [padded[:, :, i * dh:i * dh + sh * (oh - 1) + 1:sh, j * dw:j * dw + sw * (ow - 1) + 1:sw]
            for i in range(kh) for j in range(kw)]
    return internals.stack(taps, 2).reshape(n, c * kh * kw, oh * ow)


def conv2d(x, weight, stride, padding, cols=im2col):
    o, _, kh, kw = weight.shape
    oh = (x.shape[2] + 2 * padding - kh) // stride + 1
    ow = (x.shape[3] + 2 * padding - kw) // stride + 1
    columns = cols(x, (kh, kw), (stride, stride), (padding, padding), (1, 1))
    return (weight.reshape(o, -1) @ columns).reshape(x.shape[0], o, oh, ow)


def im2col_ignoring_padding(x, kernel_size, stride, padding, dilation):
    return im2col(x, kernel_size, stride, (0, 0), dilation)


# round_size and sgd_step, the core exercises of chapters 7 and 9, are checked against their
# catalogues of wrong answers in test_exercise_checkers.py.
CASES = [
    (check_dispatch_key, dispatch_key, lambda op, *args: "CPU"),
    (check_counting_mode, Counting, CountingNothing),
    (check_mul_backward, lambda g, s, o: (reduce_to(g * o, s.shape), reduce_to(g * s, o.shape)),
     lambda g, s, o: (g * o, g * s)),
    (check_tanh_backward, lambda g, y: g * (1 - y * y), lambda g, y: g * (1 - y)),
    (check_allocation_size, segment, lambda n: 20 * MiB),
    (check_axpy_operator, register(1), register(2)),
    (check_im2col, im2col, im2col_ignoring_padding),
    (check_conv2d, conv2d, lambda x, w, s, p: conv2d(x, w.flip(2), s, p)),     # a correlation flipped
]


@pytest.mark.slow
@pytest.mark.parametrize("checker, right, wrong", CASES, ids=[c[0].__name__ for c in CASES])
def test_checker_accepts_the_right_answer_and_rejects_a_wrong_one(checker, right, wrong, capsys):
    assert checker(right) is True
    assert "right on all" in capsys.readouterr().out
    assert checker(wrong) is False
    assert "wrong on" in capsys.readouterr().out


def test_the_dispatch_key_checker_names_keys_and_the_chapters_rows(capsys):
    # The chapter's table numbers the keys from 0, lowest first; the package's enum from 1. A
    # reader who answers with a number is told which key that row is, and which key runs.
    assert check_dispatch_key(lambda op, *args: int(dispatch_key(op, *args)) - 1) is False
    out = capsys.readouterr().out
    assert "a number: row" in out and "of the chapter's table" in out
    assert check_dispatch_key(lambda op, *args: DispatchKeySet(list(args[0]._impl.key_set)[:1]).highest()) is False
    out = capsys.readouterr().out
    assert "you said CPU (row 0 of the chapter's table of keys)" in out


def test_a_checker_reports_an_exception_in_the_readers_code(capsys):
    def broken(n, config=None):
        raise ValueError("not written yet")
    assert check_round_size(broken) is False
    out = capsys.readouterr().out
    assert "raised on" in out and "ValueError: not written yet" in out


def test_keep_columns_keeps_the_named_columns_of_both_profilers_tables():
    x = internals.ones(4, 4)
    with internals.profiler.profile() as prof:
        (x @ x).relu()
    table = keep_columns(prof.key_averages().table(), ["Name", "# of Calls"])
    lines = table.splitlines()
    assert lines[1].split() == ["Name", "#", "of", "Calls"]
    assert any(line.split() == ["aten::mm", "1"] for line in lines)
    assert lines[-1].startswith("Self CPU time total")
    with torch.profiler.profile() as prof_t:
        torch.ones(4, 4).relu()
    narrow = keep_columns(prof_t.key_averages().table(), ["Name", "# of Calls"])
    assert max(len(line) for line in narrow.splitlines()) < 60


def test_export_chrome_trace_writes_one_complete_event_per_call(tmp_path):
    x = internals.ones(3, 3)
    with internals.profiler.profile(record_shapes=True) as prof:
        (x @ x).sum()
    prof.export_chrome_trace(tmp_path / "trace.json")
    events = json.loads((tmp_path / "trace.json").read_text())["traceEvents"]
    assert [e["name"] for e in events] == [e.name for e in prof.events()]
    assert all(e["ph"] == "X" and e["dur"] >= 0 for e in events)
    mm = next(e for e in events if e["name"] == "aten::mm")
    assert mm["args"]["Input Dims"] == [[3, 3], [3, 3]]


@pytest.mark.usefixtures("close_figures")
def test_trace_call_records_each_layer_of_a_call():
    x = internals.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y, layers = trace_call(lambda: x * 2, python="x * 2")
    assert y.tolist() == [2.0, 4.0, 6.0]
    assert layers["argument parser"] == ["mul(Tensor other)"]
    assert layers["dispatcher"] == ["aten::mul.Tensor: AutogradCPU -> CPU"]
    assert layers["autograd kernel"] == ["mul_Tensor (AutogradCPU): records MulBackward0"]
    assert layers["backend kernel"] == ["mul (CPU)"]
    assert layers["allocator"] == ["allocate(12 bytes)"]
    assert "allocate" not in vars(internals.c10.allocator.cpu_allocator)    # the watch is removed
    assert call_path_map(layers) is not None
