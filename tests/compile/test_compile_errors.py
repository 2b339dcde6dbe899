"""What ``compile`` raises for a program that cannot run, beside ``torch.compile``: a
RuntimeError met while tracing on fake tensors becomes ``_dynamo.exc.TorchRuntimeError`` (a
RuntimeError, quoting the original error), other classes pass through, and an error only the
data reveals (an index out of range in ``gather``) comes from the compiled code as the
operator's own class. Each case runs eagerly and compiled on both libraries."""
import functools
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from helpers import assert_same, assert_same_error
from torch._dynamo.testing import CompileCounter

import internals
from internals._dynamo import exc

torch._dynamo.config.suppress_errors = False     # no silent eager fallback on torch's side


def _lib(x):
    return internals if isinstance(x, internals.Tensor) else torch


def _ones(T, *shape, dtype="float32"):
    return T.ones(*shape, dtype=getattr(T, dtype))


CASES = {
    "shapes that do not broadcast": (lambda x, y: x + y, lambda T: (_ones(T, 3), _ones(T, 4))),
    "matrix shapes": (lambda x, y: x @ y, lambda T: (_ones(T, 2, 3), _ones(T, 4, 2))),
    "in-place result type": (lambda x: x.add_(1.5), lambda T: (_ones(T, 3, dtype="int32"),)),
    "view of the wrong size": (lambda x: x.view(5), lambda T: (_ones(T, 3),)),
    "cat of mismatched rows": (lambda x, y: _lib(x).cat([x, y], 1), lambda T: (_ones(T, 2, 3), _ones(T, 3, 3))),
    "expand to a smaller size": (lambda x: x.expand(2), lambda T: (_ones(T, 3),)),
    "index out of range": (lambda x: x[5], lambda T: (_ones(T, 3),)),
    "dim out of range": (lambda x: x.sum(3), lambda T: (_ones(T, 3),)),
    "index_select out of range": (lambda x, i: x.index_select(0, i),
                                  lambda T: (_ones(T, 3), T.tensor([5]))),
    "gather out of range": (lambda x, i: x.gather(0, i), lambda T: (_ones(T, 3), T.tensor([5]))),
    "integer division by zero": (lambda x: x // 0, lambda T: (_ones(T, 3, dtype="int64"),)),
    "requires_grad on integers": (lambda x: x.requires_grad_(), lambda T: (_ones(T, 3, dtype="int64"),)),
    "a Python error": (lambda x: x + {}["k"], lambda T: (_ones(T, 3),)),
}


def _outcome(lib, case):
    fn, make = CASES[case]
    if lib is torch:
        torch._dynamo.reset()
    try:
        lib.compile(fn, backend="eager" if lib is torch else "inductor")(*make(lib))
    except Exception as error:      # noqa: BLE001 -- the class is what is compared
        return error
    return None


# torch's side runs in a child process: a torch.compile that fails leaves state behind in the
# process it ran in (afterwards, a gradient there has more references than the engine's, so
# AccumulateGrad copies it where it would steal it, and tests/nn/test_layers.py's logs differ).
# The child needs this file's cases, not the assertions of helpers.py, whose import (torch's OpInfo
# database) would be most of its CPU time: an empty stand-in takes its place.
_TORCH_SIDE = """
import json, sys, types
sys.path[:0] = [sys.argv[1]]                           # the test file
sys.modules["helpers"] = types.SimpleNamespace(assert_same=None, assert_same_error=None)
import torch
import test_compile_errors as cases
errors = {case: cases._outcome(torch, case) for case in cases.CASES}
print(json.dumps({case: error and [[c.__name__ for c in type(error).__mro__], str(error)]
                  for case, error in errors.items()}))
"""


@functools.cache
def _torch_errors():
    """Each case's error under torch.compile: its class with its bases, by name, and its
    message (None: no error)."""
    here = str(Path(__file__).parent)
    done = subprocess.run([sys.executable, "-c", _TORCH_SIDE, here], capture_output=True, text=True,
                          env={**os.environ, "PYTHONHASHSEED": "0"}, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def _torch_error_classes():
    return {case: error and error[0] for case, error in _torch_errors().items()}


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES)
def test_the_error_class_is_torch_compiles(case):
    ours, theirs = _outcome(internals, case), _torch_error_classes()[case]
    assert theirs is not None and ours is not None
    assert [c.__name__ for c in type(ours).__mro__] == theirs


# The cases whose error the fake run meets: torch reports them as TorchRuntimeError.
FAKE_RUN_ERRORS = ["shapes that do not broadcast", "matrix shapes", "in-place result type", "view of the wrong size",
                   "cat of mismatched rows", "expand to a smaller size"]


@pytest.mark.parametrize("case", FAKE_RUN_ERRORS)
def test_a_fake_tensor_error_quotes_the_original(case):
    assert _torch_error_classes()[case][0] == "TorchRuntimeError"
    fn, make = CASES[case]
    try:
        fn(*make(internals))
    except RuntimeError as eager:
        original = eager
    ours = _outcome(internals, case)
    assert isinstance(ours, exc.TorchRuntimeError) and isinstance(ours, RuntimeError)
    assert str(ours).startswith("RuntimeError when making fake tensor call")
    assert f"got {original!r}" in str(ours)
    assert ours.__cause__ is None


def test_the_classes_are_torchs():
    for ours, theirs in [(exc.TorchRuntimeError, torch._dynamo.exc.TorchRuntimeError),
                         (exc.TorchDynamoException, torch._dynamo.exc.TorchDynamoException)]:
        assert [c.__name__ for c in ours.__mro__] == [c.__name__ for c in theirs.__mro__]


def test_a_program_that_runs_eagerly_is_never_refused():
    """A tracer failure that eager execution does not confirm is a graph break, not an error:
    a function whose fake run fails on a value it reads (``.item()`` steers the shape)."""
    def f(x):
        return x.new_ones(int(x.sum().item())) * 2
    compiled = internals.compile(f)
    assert compiled(internals.ones(3)).tolist() == [2.0, 2.0, 2.0]
    assert compiled.break_reasons


# The operation as the user wrote it, in Dynamo's words: ``x + y`` is the ``+`` operator, not the
# aten call it became; the message then quotes the user's line.
_USER_CALL = re.compile(r"Dynamo failed to run FX node with fake tensors: (call_\w+ [^(]+)\(")
_USER_LINE = re.compile(r"from user code:\n\s*(File .*)\n\s*(.*)\n")


@pytest.mark.parametrize("case", ["shapes that do not broadcast", "matrix shapes", "view of the wrong size",
                                  "expand to a smaller size", "in-place result type"])
def test_the_message_names_the_users_operation_and_line(case):
    theirs, ours = _torch_errors()[case][1], str(_outcome(internals, case))
    assert _USER_CALL.search(ours)[1] == _USER_CALL.search(theirs)[1]
    assert _USER_LINE.search(ours).groups() == _USER_LINE.search(theirs).groups()


# Checks torch's fake run leaves out -- its fake tensors run torch/_refs, which checks for a bool
# only between two tensors and lets a bool alpha through -- so that torch.compile's generated
# code computes a value where eager torch raises. The package's fake run does the same.
EAGER_REFUSES_COMPILE_COMPUTES = {
    "subtraction of a bool": lambda x: x - True,
    "a bool alpha": lambda x: _lib(x).add(x, x, alpha=True),
}


@pytest.mark.parametrize("case", EAGER_REFUSES_COMPILE_COMPUTES)
def test_compiled_code_computes_what_torch_compile_computes(case):
    fn = EAGER_REFUSES_COMPILE_COMPUTES[case]
    assert_same_error(lambda: fn(internals.ones(3)), lambda: fn(torch.ones(3)))
    torch._dynamo.reset()
    theirs = torch.compile(fn)(torch.arange(3.))
    assert_same(internals.compile(fn)(internals.arange(3.)), theirs, rtol=0, atol=0)


# ``.item()`` under torch.compile: a graph break, the read run eagerly, the right value; the
# code before and after the read compiled as graphs, as many as torch's.
READS = {
    "item as a scalar": lambda x: x * x.sum().item(),
    "if on an item": lambda x: x + 1 if x.sum().item() > 0 else x - 1,
    "item of a constant": lambda x: x * _lib(x).tensor(3.).item(),
}


@pytest.mark.parametrize("case", READS)
def test_item_breaks_the_graph_as_in_torch(case):
    fn = READS[case]
    torch._dynamo.reset()
    explained = torch._dynamo.explain(fn)(torch.arange(3.))
    theirs = torch.compile(fn)(torch.arange(3.))
    compiled = internals.compile(fn)
    assert_same(compiled(internals.arange(3.)), theirs, rtol=0, atol=0)
    reasons = [r.reason.splitlines()[0] for r in explained.break_reasons]
    assert compiled.break_reasons == reasons
    assert len(compiled.graphs) == explained.graph_count


@pytest.mark.parametrize("case", READS)
def test_item_breaks_the_graph_when_inputs_require_grad(case):
    """With an input that requires grad (the AOTAutograd path) the read is no more folded into
    the graph than without: torch.compile breaks the graph at it, a constant's too, compiles
    the code around it with AOTAutograd and returns eager's values and gradients."""
    fn = READS[case]
    torch._dynamo.reset()
    x_t = torch.arange(3., requires_grad=True)
    explained = torch._dynamo.explain(fn)(x_t)
    theirs = torch.compile(fn, backend="aot_eager")(x_t)
    theirs.sum().backward()
    x_i = internals.arange(3., requires_grad=True)
    compiled = internals.compile(fn)
    ours = compiled(x_i)
    ours.sum().backward()
    assert_same(ours.detach(), theirs.detach(), rtol=0, atol=0)
    assert_same(x_i.grad, x_t.grad, rtol=0, atol=0)
    assert compiled.break_reasons == [r.reason.splitlines()[0] for r in explained.break_reasons]
    assert len(compiled.graphs) == explained.graph_count
    assert type(ours.grad_fn).__name__ == type(theirs.grad_fn).__name__


def test_a_joint_trace_refuses_a_read_it_would_otherwise_fold():
    """AOTAutograd's joint trace, given the forward's metadata so that nothing refuses the read
    earlier, still does not fold a constant's ``item()`` into the graph: the compiler's trace
    refuses it, as Dynamo's does."""
    from internals._functorch.aot_autograd import collect_metadata, trace_joint
    from internals.fx.experimental.symbolic_shapes import GuardOnDataDependentSymNode
    x = internals.arange(3., requires_grad=True)
    info = collect_metadata(lambda x: x * 3.0, [x])
    with pytest.raises(GuardOnDataDependentSymNode, match="_local_scalar_dense"):
        trace_joint(lambda x: x * internals.tensor(3.).item(), [x], info)


def _floor_divide_by_zero(x):
    return x // 0


def test_an_integer_division_by_zero_at_dynamic_sizes_raises_as_eager():
    """Sizes 3, 4, 5 make the dim a symbol on the second call: the graph's integer division by
    zero still raises torch's error (a RuntimeError saying ZeroDivisionError) on every call,
    as eager and torch.compile do, and compiles as often as torch's."""
    torch._dynamo.reset()
    counter = CompileCounter()
    theirs, ours = torch.compile(_floor_divide_by_zero, backend=counter), internals.compile(_floor_divide_by_zero)
    for n in (3, 4, 5):
        errors = []
        for T, fn in ((torch, theirs), (internals, ours)):
            with pytest.raises(RuntimeError) as caught:
                fn(T.arange(n))
            errors.append((type(caught.value).__name__, str(caught.value)))
        assert errors[0] == errors[1] == ("RuntimeError", "ZeroDivisionError")
    assert ours.recompiles == counter.frame_count == 2
