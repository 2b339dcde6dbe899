"""Anomaly detection (torch.autograd.detect_anomaly, set_detect_anomaly), against torch."""
import threading
import warnings

import pytest
import torch

import internals

LIBS = (torch, internals)


def run_caught(program, lib):
    """``program(lib)``'s result or error (class, message), and the messages of the warnings it gave."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = program(lib)
        except Exception as e:      # the error is part of what is compared
            result = (type(e), str(e))
    return result, [str(w.message) for w in caught]


def this_file_frames(message):
    """The lines of a warning's stack that are in this file: torch's own Python frames and ours differ."""
    lines = message.split("\n")
    return [(line, lines[i + 1]) for i, line in enumerate(lines) if __file__ in line]


def anomaly_warnings(messages):
    """Each anomaly warning: its first line and the frames of this file it names."""
    return [(m.split("\n")[0].split(". ")[0], this_file_frames(m)) for m in messages]


def test_switches_and_their_restoring():
    def program(lib):
        seen = [(lib.is_anomaly_enabled(), lib.is_anomaly_check_nan_enabled())]
        with lib.autograd.detect_anomaly(check_nan=False):
            seen.append((lib.is_anomaly_enabled(), lib.is_anomaly_check_nan_enabled()))
            other = []      # process-wide, not per thread
            thread = threading.Thread(target=lambda: other.append(lib.is_anomaly_enabled()))
            thread.start()
            thread.join()
            seen.append(other)
            with lib.autograd.set_detect_anomaly(False):
                seen.append((lib.is_anomaly_enabled(), lib.is_anomaly_check_nan_enabled()))
        seen.append((lib.is_anomaly_enabled(), lib.is_anomaly_check_nan_enabled()))
        lib.autograd.set_detect_anomaly(True, check_nan=False)      # a plain call switches it at once
        seen.append((lib.is_anomaly_enabled(), lib.is_anomaly_check_nan_enabled()))
        lib.set_anomaly_enabled(False)
        seen.append((lib.is_anomaly_enabled(), lib.is_anomaly_check_nan_enabled()))
        return seen
    assert run_caught(program, internals) == run_caught(program, torch)


@pytest.mark.parametrize("call", [
    lambda lib: lib.set_anomaly_enabled(1),
    lambda lib: lib.set_anomaly_enabled(True, check_nan="yes"),
    lambda lib: lib.autograd.set_detect_anomaly("on"),
    lambda lib: lib.autograd.detect_anomaly()(len),      # a context manager only, not a decorator
])
def test_bad_arguments(call):
    ours, theirs = run_caught(call, internals), run_caught(call, torch)
    assert ours == theirs and ours[0][0] is TypeError
    assert not internals.is_anomaly_enabled()


def sqrt_at_zero(lib):
    x = lib.tensor([0.0, 1.0], requires_grad=True)
    with lib.autograd.detect_anomaly():
        y = x.sqrt()
        (y * lib.tensor([0.0, 1.0])).sum().backward()       # 0 * inf = nan in SqrtBackward0


def nan_seed_gradient(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    with lib.autograd.detect_anomaly():
        y = x * 2
        return lib.autograd.grad(y, x, lib.tensor([float("nan"), 1.0]))


def nan_check_off(lib):
    x = lib.tensor([0.0, 1.0], requires_grad=True)
    with lib.autograd.detect_anomaly(check_nan=False):
        (x.sqrt() * lib.tensor([0.0, 1.0])).sum().backward()
    return str(x.grad.tolist())     # nan != nan: compare the printed list


def failing_function(lib, anomaly_in_forward):
    class Fails(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, grad):
            raise ValueError("no gradient here")

    x = lib.ones(2, requires_grad=True)
    with lib.autograd.set_detect_anomaly(anomaly_in_forward):
        y = Fails.apply(x)
    with lib.autograd.detect_anomaly():
        y.sum().backward()


def double_backward_nan(lib):
    x = lib.tensor([0.0, 1.0], requires_grad=True)
    with lib.autograd.detect_anomaly():
        y = x.pow(3)
        g, = lib.autograd.grad(y.sum(), x, create_graph=True)
        parent = g.grad_fn.metadata["parent_"].name()
        g.sqrt().sum().backward()       # PowBackward0's own backward meets inf * 0
    return parent


def sparse_and_complex_gradients(lib):
    """The nan check reads a sparse gradient's values and a complex one's parts: no error here."""
    lib.manual_seed(0)
    emb = lib.nn.Embedding(4, 2, sparse=True)
    z = lib.tensor([1 + 1j, 2j], requires_grad=True)
    with lib.autograd.detect_anomaly():
        emb(lib.tensor([0, 1, 1])).sum().backward()
        (z * z).abs().sum().backward()
    return emb.weight.grad.to_dense().tolist(), z.grad.tolist()


def nan_in_reentrant_checkpoint(lib):
    x = lib.tensor([0.0, 2.0], requires_grad=True)
    with lib.autograd.detect_anomaly():
        y = lib.utils.checkpoint.checkpoint(lambda a: (a.sqrt() * lib.tensor([0.0, 1.0])).sum(), x,
                                            use_reentrant=True)
        y.backward()


@pytest.mark.parametrize("program", [
    sqrt_at_zero, nan_seed_gradient, nan_check_off, double_backward_nan,
    lambda lib: failing_function(lib, True), lambda lib: failing_function(lib, False),
    sparse_and_complex_gradients, nan_in_reentrant_checkpoint,
], ids=["sqrt", "seed", "check_nan_off", "double_backward", "function", "function_no_stack", "sparse_complex",
        "checkpoint"])
def test_error_and_forward_stack_warnings(program):
    """The same error, and warnings naming the same node and the same forward lines of this file."""
    ours, theirs = run_caught(program, internals), run_caught(program, torch)
    assert ours[0] == theirs[0]
    assert anomaly_warnings(ours[1]) == anomaly_warnings(theirs[1])
    assert not internals.is_anomaly_enabled()


def test_node_metadata():
    def program(lib):
        x = lib.ones(2, requires_grad=True)
        plain = x.exp().grad_fn
        plain.metadata["mine"] = 1          # a dict the node keeps
        with lib.autograd.detect_anomaly():
            y = x.exp()
        stack = y.grad_fn.metadata["traceback_"]
        return plain.metadata, sorted(y.grad_fn.metadata), type(stack).__name__, this_file_frames("".join(stack))
    assert run_caught(program, internals) == run_caught(program, torch)


def test_saved_tensor_hint_names_the_warning_above():
    """The message of a tensor changed in place points at the stack above when anomaly mode is on."""
    def program(lib):
        x = lib.ones(2, requires_grad=True)
        with lib.autograd.detect_anomaly(check_nan=False):
            y = x.exp()
            y.add_(1)
            y.sum().backward()
    ours, theirs = run_caught(program, internals), run_caught(program, torch)
    assert ours[0] == theirs[0]
    assert anomaly_warnings(ours[1]) == anomaly_warnings(theirs[1])
