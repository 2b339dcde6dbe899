"""``__torch_function__`` against torch (``internals/overrides.py``, the check in
``_python_arg_parser.py`` and the generated bindings): the same subclass and mode programs run on
both libraries record the same calls (the function's name, the overriding types, the arguments,
the keyword arguments as given) and give the same results, of the same classes, with the same
``grad_fn``."""
import inspect
import math
import threading

import pytest
import torch

import internals
from internals._generated import python_torch_functions, python_variable_methods

LIBS = [(torch, torch.overrides), (internals, internals.overrides)]


def _plain_name(text):
    """A name or message with the library's own name read as torch's."""
    return text.replace("internals", "torch")


def _alike(ours, theirs):
    """Records equal item by item, floats within 1e-5 relative: a matrix product's last bits
    follow the CPU's BLAS, so values are compared within a bound, never rounded (a value on a
    rounding boundary would flip between CPUs)."""
    if isinstance(ours, float) and isinstance(theirs, float):
        return math.isclose(ours, theirs, rel_tol=1e-5, abs_tol=1e-6)
    if isinstance(ours, (list, tuple)) and isinstance(theirs, (list, tuple)):
        return (type(ours) is type(theirs) and len(ours) == len(theirs)
                and all(_alike(a, b) for a, b in zip(ours, theirs)))
    if isinstance(ours, dict) and isinstance(theirs, dict):
        return ours.keys() == theirs.keys() and all(_alike(ours[k], theirs[k]) for k in ours)
    return ours == theirs


def describe(lib, value):
    """A value as both libraries can be compared: a tensor by class, shape, strides, dtype,
    values and ``grad_fn``; containers item by item; anything else by its repr."""
    if isinstance(value, lib.Tensor):
        with lib._C.DisableTorchFunction():
            grad_fn = type(value.grad_fn).__name__ if value.grad_fn is not None else None
            return (type(value).__name__, tuple(value.shape), tuple(value.stride()), _plain_name(str(value.dtype)),
                    value.detach().tolist(), grad_fn)
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, [describe(lib, v) for v in value])
    if isinstance(value, dict):
        return {k: describe(lib, v) for k, v in value.items()}
    if isinstance(value, type):
        return value.__name__
    return _plain_name(repr(value))


def call_record(lib, ov, func, types, args, kwargs):
    """One call as a handler sees it."""
    return (_plain_name(ov.resolve_name(func) or func.__name__), [t.__name__ for t in types],
            describe(lib, args), None if kwargs is None else describe(lib, kwargs))


def both(program):
    """``program(lib, overrides)`` on torch and on internals; their records must be equal."""
    theirs, ours = (program(lib, ov) for lib, ov in LIBS)
    assert _alike(ours, theirs), (ours, theirs)
    return ours


def logging_mode(lib, ov, log, answer=None):
    """A mode that records each call and runs it (or returns ``answer`` when one is given)."""
    class Log(ov.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            log.append(call_record(lib, ov, func, types, args, kwargs))
            if answer is not None:
                return answer
            return func(*args, **(kwargs or {}))
    return Log()


# ---------------------------------------------------------------------- modes
def everyday_program(lib):
    lib.manual_seed(0)
    x, w = lib.randn(4, 3), lib.randn(3, 2, requires_grad=True)
    y = (x @ w).relu().mean()
    y.backward()
    return [y, w.grad, 2 - x, x.t(), lib.ones(2), x.add(x, alpha=2), lib.cat([x, x]), x.max(0), x[1:, 0],
            x.sum(dim=1, keepdim=True), x[0, 0].item(), len(x), x.view(-1).tolist()[:2]]


def test_a_mode_sees_each_call_as_the_user_wrote_it():
    def program(lib, ov):
        log = []
        with logging_mode(lib, ov, log):
            results = everyday_program(lib)
        return log, describe(lib, results)

    log, _ = both(program)
    names = [name for name, *_ in log]
    # what the mode saw: the user's calls only, never the calls they make in turn
    assert names[:7] == ["torch.randn", "torch.randn", "torch.Tensor.matmul", "torch.Tensor.relu",
                         "torch.Tensor.mean", "torch.Tensor.backward", "torch.Tensor.grad.__get__"]
    assert "torch.Tensor.__rsub__" in names and "torch.cat" in names and "torch.Tensor.__getitem__" in names


def test_a_mode_can_replace_a_result():
    def program(lib, ov):
        log, x = [], lib.ones(2)
        with logging_mode(lib, ov, log, answer="replaced"):
            out = [lib.ones(2), x + 1, x.sum()]
        return log, out

    log, out = both(program)
    assert out == ["replaced"] * 3


def test_nested_modes_see_the_inner_modes_calls():
    """The inner mode runs first; while it runs it is off the stack, so the calls it makes reach
    the outer mode, and the outer mode's calls reach no mode."""
    def program(lib, ov):
        log = []

        class Tag(ov.TorchFunctionMode):
            def __init__(self, tag):
                super().__init__()
                self.tag = tag

            def __torch_function__(self, func, types, args=(), kwargs=None):
                log.append((self.tag, *call_record(lib, ov, func, types, args, kwargs)))
                if self.tag == "inner" and func is lib.Tensor.mul:
                    return args[0].add(args[1])      # the inner mode turns a product into a sum
                return func(*args, **(kwargs or {}))

        x = lib.arange(3.0)
        with Tag("outer"), Tag("inner"):
            out = x * 2
            stack = [m.tag for m in ov._get_current_function_mode_stack()]
        return log, describe(lib, out), stack, ov._get_current_function_mode_stack()

    log, out, stack, after = both(program)
    assert [entry[:2] for entry in log] == [("inner", "torch.Tensor.mul"), ("outer", "torch.Tensor.add")]
    assert stack == ["outer", "inner"] and after == []


def test_a_mode_with_a_classmethod_override_is_refused():
    def program(lib, ov):
        class Bad(ov.TorchFunctionMode):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                return func(*args, **(kwargs or {}))

        with Bad():
            try:
                lib.ones(1)
            except RuntimeError as e:
                return str(e).splitlines()[0]
        return "no error"

    assert "classmethod is not supported" in both(program)


# ---------------------------------------------------------------------- properties
READ_PROPERTIES = ["shape", "dtype", "device", "layout", "ndim", "itemsize", "nbytes", "is_cpu", "is_cuda",
                   "is_sparse", "is_leaf", "requires_grad", "grad", "grad_fn", "data", "output_nr",
                   "retains_grad", "_version", "T", "mT", "mH", "real"]


@pytest.mark.parametrize("name", READ_PROPERTIES)
def test_a_mode_sees_a_property_read_as_its_getter(name):
    """Reading a property asks first (``THPVariable_get_shape`` and its siblings): a mode gets
    ``Tensor.shape.__get__`` with ``(x,)`` and no keyword arguments, and sees none of the calls
    the getter makes in turn (``T`` is a ``permute`` underneath)."""
    def program(lib, ov):
        log = []
        x = (lib.arange(6.0).view(2, 3).requires_grad_() * 2)
        with logging_mode(lib, ov, log):
            value = getattr(x, name)
        return log, type(value).__name__ if name == "grad_fn" else describe(lib, value)

    log, _ = both(program)
    assert [entry[0] for entry in log] == [f"torch.Tensor.{name}.__get__"]
    assert log[0][3] is None and log[0][2][1][0][0] == "Tensor"


def test_a_mode_sees_property_writes_as_their_setters():
    def program(lib, ov):
        log = []
        x, g = lib.ones(2, requires_grad=True), lib.zeros(2)
        with logging_mode(lib, ov, log):
            x.grad = g
            x.requires_grad = False
            x.data = g
        return log, describe(lib, [x, x.grad])

    log, _ = both(program)
    assert [entry[0] for entry in log] == ["torch.Tensor.grad.__set__", "torch.Tensor.requires_grad.__set__",
                                           "torch.Tensor.data.__set__"]
    assert [len(entry[2][1]) for entry in log] == [2, 2, 2]


def test_a_subclass_sees_property_reads_and_keeps_its_class_where_torch_does():
    """A subclass's override gets every property read; Tensor's default override then hands back
    ``shape`` as a Size, ``T`` as the subclass, and ``grad`` unconverted (torch's no-wrap list)."""
    def program(lib, ov):
        log = []

        class Seen(lib.Tensor):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                log.append(_plain_name(ov.resolve_name(func) or "?"))
                return super().__torch_function__(func, types, args, kwargs)

        w = lib.ones(2, 3, requires_grad=True)
        (w * 3).sum().backward()
        s = w.as_subclass(Seen)
        out = [type(s.shape).__name__, s.dtype, type(s.T).__name__, type(s.grad).__name__, s.is_leaf, s.ndim]
        return log, _plain_name(repr(out))

    log, _ = both(program)
    assert log == ["torch.Tensor.shape.__get__", "torch.Tensor.dtype.__get__", "torch.Tensor.T.__get__",
                   "torch.Tensor.grad.__get__", "torch.Tensor.is_leaf.__get__", "torch.Tensor.ndim.__get__"]


# ---------------------------------------------------------------------- functions written in Python
PYTHON_WRITTEN = {       # torch/functional.py, torch/_tensor.py, and C++ bindings internals writes in Python
    "tensor": lambda lib, x, y: lib.tensor([1.0, 2.0], dtype=lib.float64),
    "as_tensor": lambda lib, x, y: lib.as_tensor([1.0, 2.0]),
    "norm": lambda lib, x, y: lib.norm(x, 1, dim=0),
    "Tensor.norm": lambda lib, x, y: x.norm(),
    "unique": lambda lib, x, y: lib.unique(y, return_counts=True),
    "Tensor.unique": lambda lib, x, y: y.unique(),
    "unique_consecutive": lambda lib, x, y: lib.unique_consecutive(y),
    "Tensor.unique_consecutive": lambda lib, x, y: y.unique_consecutive(return_inverse=True),
    "cdist": lambda lib, x, y: lib.cdist(x, x),
    "einsum": lambda lib, x, y: lib.einsum("ij->j", x),
    "einsum with sublists": lambda lib, x, y: lib.einsum(x, [0, 1], [1]),
    "split": lambda lib, x, y: lib.split(x, 1),
    "Tensor.split": lambda lib, x, y: x.split([1, 1]),
    "meshgrid": lambda lib, x, y: lib.meshgrid(y, y, indexing="ij"),
    "broadcast_tensors": lambda lib, x, y: lib.broadcast_tensors(x, y),
    "tensordot": lambda lib, x, y: lib.tensordot(x, y, 1),
    "block_diag": lambda lib, x, y: lib.block_diag(x, y),
    "cartesian_prod": lambda lib, x, y: lib.cartesian_prod(y, y),
    "atleast_2d": lambda lib, x, y: lib.atleast_2d(y, y),
    "nonzero": lambda lib, x, y: lib.nonzero(y, as_tuple=True),
    "Tensor.nonzero": lambda lib, x, y: y.nonzero(),
    "broadcast_to": lambda lib, x, y: lib.broadcast_to(y, (2, 3)),
    "numel": lambda lib, x, y: lib.numel(x),
    "is_floating_point": lambda lib, x, y: lib.is_floating_point(x),
    "adjoint": lambda lib, x, y: lib.adjoint(x),
    "Tensor.to": lambda lib, x, y: x.to(lib.float64),
    "Tensor.float": lambda lib, x, y: x.float(),
    "Tensor.size": lambda lib, x, y: x.size(1),
    "Tensor.ndimension": lambda lib, x, y: x.ndimension(),
    "Tensor.contiguous": lambda lib, x, y: x.t().contiguous(),
    "Tensor.abs": lambda lib, x, y: x.abs(),
}


@pytest.mark.parametrize("case", PYTHON_WRITTEN)
def test_a_mode_sees_a_python_written_function_under_its_public_name(case):
    """A function torch writes in Python asks with itself as the function (``torch.functional.norm``
    and the keyword arguments torch's code passes); one torch binds in C++ hands on the arguments
    as given. Either way the mode sees that one call, never the calls it makes in turn."""
    def program(lib, ov):
        log = []
        x, y = lib.arange(6.0).view(2, 3), lib.tensor([3.0, 1.0, 1.0])
        with logging_mode(lib, ov, log):
            out = PYTHON_WRITTEN[case](lib, x, y)
        return log, describe(lib, out)

    log, _ = both(program)
    assert len([entry for entry in log if not entry[0].endswith("Tensor.t")]) == 1


def test_resolve_name_names_torch_functional_functions_by_that_module():
    for name in ("norm", "unique", "einsum", "split", "cdist", "atleast_1d"):
        ours = internals.overrides.resolve_name(getattr(internals, name))
        assert _plain_name(ours) == torch.overrides.resolve_name(getattr(torch, name)) == f"torch.functional.{name}"


# ---------------------------------------------------------------------- subclasses
def test_a_subclass_keeps_its_class_through_operations():
    """Tensor's own ``__torch_function__`` runs the operation on plain tensors and makes the result
    an instance of the subclass (``as_subclass``: an alias, so ``grad_fn`` is ``AliasBackward0``)."""
    def program(lib, ov):
        class Tagged(lib.Tensor):
            pass

        lib.manual_seed(0)
        w = lib.randn(2, 3, requires_grad=True)
        t = w.as_subclass(Tagged)
        out = [t, t + 1, t * w, lib.add(w, t), t.sum(0), t.view(-1), t[0], t.max(1), t.t().contiguous(),
               lib.cat([w, t]), t.unbind(0), 2 - t, t.tolist()]
        (t * t).sum().backward()
        return describe(lib, out), describe(lib, w.grad)

    out, grad = both(program)
    assert out[1][0][0] == "Tagged" and out[1][1][0] == "Tagged" and out[1][1][-1] == "AliasBackward0"


def test_each_overriding_class_is_tried_once_subclasses_first():
    def program(lib, ov):
        log = []

        def recording(name, decline=False):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                log.append((name, *call_record(lib, ov, func, types, args, kwargs)[:2]))
                if decline:
                    return NotImplemented
                with lib._C.DisableTorchFunctionSubclass():
                    return func(*args, **(kwargs or {}))
            return __torch_function__

        class A(lib.Tensor):
            __torch_function__ = recording("A")

        class B(A):                                 # a subclass of A: tried before A
            __torch_function__ = recording("B", decline=True)

        class C(lib.Tensor):                        # unrelated: tried in argument order
            __torch_function__ = recording("C", decline=True)

        x = lib.ones(2)
        a, b, c = x.as_subclass(A), x.as_subclass(B), x.as_subclass(C)
        results = [lib.add(a, b), lib.stack([c, a, a]), a.add(b)]
        return log, [type(r).__name__ for r in results]

    log, classes = both(program)
    assert [entry[0] for entry in log] == ["B", "A", "C", "A", "B", "A"]
    assert classes == ["Tensor", "Tensor", "Tensor"]


def test_when_every_override_declines_the_call_is_a_type_error():
    def program(lib, ov):
        class No(lib.Tensor):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                return NotImplemented

            def __repr__(self):
                return "No()"

        class Quiet(ov.TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                return NotImplemented

            def __repr__(self):
                return "Quiet()"

        n = lib.ones(2).as_subclass(No)
        messages = []
        for call in (lambda: n.add(1), lambda: lib.mul(n, 2), lambda: n.t(), lambda: n[0], lambda: n.grad):
            with pytest.raises(TypeError) as error:
                call()
            messages.append(str(error.value).replace(No.__qualname__, "No"))
        with Quiet(), pytest.raises(TypeError) as error:
            lib.zeros(1)
        messages.append(str(error.value))
        return [_plain_name(m) for m in messages]

    messages = both(program)
    assert messages[0].startswith("Multiple dispatch failed for 'torch.Tensor.add'")
    assert "  - mode object Quiet()" in messages[-1]


def test_a_tensor_like_object_takes_a_tensors_place():
    """An object that is no tensor but defines ``__torch_function__`` is accepted by the parser
    and handed the call."""
    def program(lib, ov):
        log = []

        class Like:
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                log.append(call_record(lib, ov, func, types, (), kwargs))
                return "handled"

        return log, [lib.add(Like(), lib.ones(1)), lib.ones(1).mul(Like()), lib.cat([lib.ones(1), Like()]),
                     ov.is_tensor_like(Like()), ov.is_tensor_like(1)]

    log, out = both(program)
    assert out == ["handled"] * 3 + [True, False]


# ---------------------------------------------------------------------- switching it off
def test_disabling_subclasses_leaves_modes_on():
    def program(lib, ov):
        log = []

        class Loud(lib.Tensor):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                log.append("subclass")
                return super().__torch_function__(func, types, args, kwargs)

        loud = lib.ones(2).as_subclass(Loud)
        states = []
        with logging_mode(lib, ov, log):
            with lib._C.DisableTorchFunctionSubclass():
                states.append((lib._C._is_torch_function_enabled(), lib._C._is_torch_function_mode_enabled()))
                plain = loud + 1
            with lib._C.DisableTorchFunction():
                states.append((lib._C._is_torch_function_enabled(), lib._C._is_torch_function_mode_enabled()))
                unseen = loud * 2
        states.append((lib._C._is_torch_function_enabled(), lib._C._is_torch_function_mode_enabled()))
        return [entry if isinstance(entry, str) else entry[0] for entry in log], states, \
            [type(plain).__name__, type(unseen).__name__], [type(loud + 1).__name__]

    log, states, classes, after = both(program)
    assert log == ["torch.Tensor.add"] and classes == ["Tensor", "Tensor"] and after == ["Loud"]
    assert states == [(False, True), (False, False), (True, False)]


def test_parameter_opts_out():
    """A Parameter's class has the opt-out override: it counts as a plain tensor, so no result is
    converted back to a Parameter, and a mode sees no overriding type."""
    def program(lib, ov):
        p = lib.nn.Parameter(lib.ones(2, 2))
        log = []
        with logging_mode(lib, ov, log):
            mode_result = p * 2
        out = [p * 2, p.view(-1), p[0], p.detach(), p.data, lib.nn.functional.linear(p, p)]
        return (log, describe(lib, out + [mode_result]), ov.has_torch_function((p,)),
                type(p).__torch_function__ is lib._C._disabled_torch_function_impl)

    log, out, has, opted_out = both(program)
    assert log[0][1] == [] and {entry[0] for entry in out[1]} == {"Tensor"} and not has and opted_out


def test_the_opt_out_override_runs_the_function_with_subclasses_off():
    def program(lib, ov):
        class Plain(lib.Tensor):
            __torch_function__ = lib._C._disabled_torch_function_impl

        seen = []

        def peek(*args):
            seen.append(lib._C._is_torch_function_enabled())
            return args

        out = lib._C._disabled_torch_function_impl(peek, (), [1, 2])
        x = lib.ones(2).as_subclass(Plain)
        with pytest.raises(TypeError) as error:
            lib._C._disabled_torch_function_impl(peek, (), 3)
        return seen, out, type(x + 1).__name__, type(x.view(2)).__name__, str(error.value)

    assert both(program)[:4] == ([False], (1, 2), "Tensor", "Tensor")


# ---------------------------------------------------------------------- from Python
def test_a_python_function_can_ask_and_hand_over():
    def program(lib, ov):
        log = []

        def scaled_mul(a, b):
            if ov.has_torch_function((a, b)):
                return ov.handle_torch_function(scaled_mul, (a, b), a, b)
            return a * b + 1

        class Logged(lib.Tensor):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                log.append((func.__name__, [t.__name__ for t in types], kwargs))
                return super().__torch_function__(func, types, args, kwargs)

        x = lib.full((2,), 3.0)
        out = [scaled_mul(x, x), scaled_mul(x.as_subclass(Logged), x)]
        return log, describe(lib, out), ov.has_torch_function((x, 1)), ov.has_torch_function_unary(x)

    log, out, plain_has, unary = both(program)
    assert log[0] == ("scaled_mul", ["Logged", "Tensor"], {}) and not plain_has and not unary


def test_as_subclass_refuses_what_is_not_a_tensor_class():
    for cls in (3, int):
        theirs, ours = (pytest.raises(TypeError, lib.ones(1).as_subclass, cls) for lib, _ in LIBS)
        assert str(ours.value) == str(theirs.value)


# A dunder's call on two tensors of the exact Tensor class, with no function mode on, skips the
# parser (``exact_tensors_call`` in codegen/gen_python_functions.py): nothing to ask then. So does
# its operator's method given one such tensor (``y.add_(x)``, ``exact_tensor_method_call``).
_EXACT_TENSORS = [(f"type(self) is _parsing._Tensor and type({other}) is _parsing._Tensor",
                   "and not (_tf.threads_with_mode[0] and _tf.tls.mode_enabled)") for other in ("other", "args[0]")]


def test_every_generated_binding_asks_right_after_parsing():
    """No binding reaches the dispatcher before checking for ``__torch_function__``, but for the
    dunders' shortcut, taken only where there is nothing to ask."""
    for table in (python_variable_methods.METHODS, python_torch_functions.FUNCTIONS):
        for name, fn in table.items():
            source = " ".join(inspect.getsource(inspect.unwrap(fn)).split())
            before = source.split("return _ops", 1)[0]
            assert "has_torch_function" in before or any(all(c in before for c in exact)
                                                          for exact in _EXACT_TENSORS), name


@pytest.mark.parametrize("dunder", ["__add__", "__mul__", "__matmul__", "__sub__", "__iadd__", "__truediv__",
                                    "add_", "mul_", "sub", "eq"])
def test_a_dunder_on_exact_tensors_is_seen_by_modes_and_subclasses(dunder):
    """The shortcut is not taken under a function mode, for a subclass, or while the parser's
    trace listens: each sees the call as it sees ``x.add(y)``. (The operators' methods too.)"""
    def program(lib, ov):
        log = []
        a, b = lib.ones(2, 2), lib.full((2, 2), 2.0)
        getattr(a.clone(), dunder)(b)               # the shortcut, with no one listening
        with logging_mode(lib, ov, log):
            getattr(a.clone(), dunder)(b)
        tagged = b.as_subclass(type("Tagged", (lib.Tensor,), {}))
        return [name for name, *_ in log], type(getattr(a.clone(), dunder)(tagged)).__name__
    assert both(program)[0]
    a, b = internals.ones(2, 2), internals.ones(2, 2)
    with internals._python_arg_parser.trace() as parsed:
        getattr(a, dunder)(b)
    assert len(parsed) == 1


@pytest.mark.parametrize("dunder", ["__add__", "__radd__", "__iadd__", "__mul__", "__rmul__", "__sub__",
                                    "__truediv__"])
def test_a_dunder_with_a_python_number_wraps_it_as_the_parser_does(dunder):
    """``x * 2`` skips the parser too (``wrapped_number_call``): the number is wrapped as the
    parser wraps it (its dtype promotes as a wrapped number's), and a function mode, a subclass
    and the parser's trace still see the call."""
    def program(lib, ov):
        log, a = [], lib.arange(1., 5., dtype=lib.float16)
        results = [getattr(a.clone(), dunder)(n) for n in (2, 2.5, -3, 300)]
        with logging_mode(lib, ov, log):
            getattr(a.clone(), dunder)(2)
        tagged = a.as_subclass(type("Tagged", (lib.Tensor,), {}))
        return ([(_plain_name(str(r.dtype)), r.tolist()) for r in results], [name for name, *_ in log],
                type(getattr(tagged, dunder)(2)).__name__)
    assert both(program)[1]
    a = internals.ones(2)
    with internals._python_arg_parser.trace() as parsed:
        getattr(a, dunder)(2)
    assert len(parsed) == 1


# every operator dunder, on tensors of a dtype it accepts: float, or integer for the bitwise ones
_OPERATOR_DUNDERS = [(name, float) for name in (
    "__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__", "__rtruediv__",
    "__floordiv__", "__rfloordiv__", "__mod__", "__rmod__", "__pow__", "__rpow__", "__matmul__", "__rmatmul__",
    "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__neg__", "__abs__")] + [(name, int) for name in (
    "__and__", "__rand__", "__or__", "__ror__", "__xor__", "__rxor__", "__lshift__", "__rlshift__", "__rshift__",
    "__rrshift__", "__invert__")]


@pytest.mark.parametrize(("dunder", "kind"), _OPERATOR_DUNDERS)
def test_a_mode_sees_each_operator_dunder_under_torchs_name(dunder, kind):
    """``a // b`` reaches a mode as ``Tensor.__floordiv__`` (written in torch/_tensor.py), ``a & b``
    as ``Tensor.__and__`` (an operator of its own in torch), ``a ** b`` as ``pow``: each dunder,
    given a tensor and given a Python number, is recorded under the name torch's mode sees, and
    the same subclass-and-mode program gives the same results."""
    def program(lib, ov):
        log = []
        a = lib.tensor([[3, 4], [5, 6]], dtype=lib.float32 if kind is float else lib.int64)
        b = lib.tensor([[2, 1], [1, 2]], dtype=a.dtype)
        with logging_mode(lib, ov, log):
            results = [getattr(a, dunder)(*operands) for operands in
                       (((),) if dunder in ("__neg__", "__abs__", "__invert__") else ((b,), (2,)))]
        return log, describe(lib, results)
    both(program)


@pytest.mark.parametrize("name", ["add", "matmul", "sum", "t", "relu", "view", "cat", "zeros"])
def test_resolve_name_names_the_public_function(name):
    space = internals if name in ("cat", "zeros") else internals.Tensor
    torch_space = torch if name in ("cat", "zeros") else torch.Tensor
    assert (_plain_name(internals.overrides.resolve_name(getattr(space, name)))
            == torch.overrides.resolve_name(getattr(torch_space, name)))


def test_nn_functional_asks_too():
    """``nn.functional``'s functions hand an overridden call on under their own names (the
    keyword arguments they pass on are torch's own choice per function, and not compared)."""
    def program(lib, ov):
        log = []
        lib.manual_seed(0)
        layer, x = lib.nn.Linear(3, 2), lib.randn(4, 3)
        with logging_mode(lib, ov, log):
            layer(x).relu()
            lib.nn.functional.softmax(x, 0)
        tagged = x.as_subclass(type("Tagged", (lib.Tensor,), {}))
        return ([name for name, *_ in log], type(layer(tagged)).__name__,
                type(lib.nn.functional.relu(tagged)).__name__)

    names, *classes = both(program)
    assert names == ["torch.nn.functional.linear", "torch.Tensor.relu", "torch.nn.functional.softmax"]
    assert classes == ["Tagged", "Tagged"]


MIXED = {"torch.exp of an internals tensor": lambda x, t: torch.exp(x),
         "torch's F.relu of an internals tensor": lambda x, t: torch.nn.functional.relu(x),
         "torch tensor + internals tensor": lambda x, t: t + x,
         "internals tensor + torch tensor": lambda x, t: x + t,
         "internals.exp of a torch tensor": lambda x, t: internals.exp(t)}


@pytest.mark.parametrize("case", MIXED)
def test_the_two_libraries_refuse_each_others_tensors(case):
    """Each library sees the other's tensor as an object with a ``__torch_function__``; neither
    hook may run its own function on the other's tensor (each would ask the other again, without
    end): the call is a TypeError, as it was before either hook existed."""
    with pytest.raises(TypeError):
        MIXED[case](internals.ones(2), torch.ones(2))


def test_a_mode_on_one_thread_is_not_seen_by_another():
    """A mode is thread-local, as torch's: while one thread has a mode pushed (the bindings then
    ask each thread's own flag), a call on another thread reaches no mode; once it is popped,
    the count of threads with a mode is back where it was."""
    import threading

    from internals.aten import python_torch_function_tls as tf

    def program(lib, ov):
        log, seen_elsewhere, pushed, done = [], [], threading.Event(), threading.Event()

        def other_thread():
            pushed.wait()
            seen_elsewhere.append(float(lib.ones(2).sum()))
            done.set()

        worker = threading.Thread(target=other_thread)
        worker.start()
        with logging_mode(lib, ov, log):
            pushed.set()
            done.wait()
            lib.ones(1)
        worker.join()
        return [name for name, *_ in log], seen_elsewhere

    before = tf.threads_with_mode[0]
    names, seen = both(program)
    assert names == ["torch.ones"] and seen == [2.0]
    assert tf.threads_with_mode[0] == before


# ---------------------------------------------------------------------- with device(...)
def test_a_device_entered_pushes_a_device_context_on_top_of_the_mode_stack():
    """``with torch.device(d)`` pushes a DeviceContext mode (torch's ``THPDevice_enter``) on top of
    the stack, one per ``with``, popped at its exit; internals' device was no context manager."""
    def stacks(lib, overrides):
        seen = []

        class Look(overrides.TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                return func(*args, **(kwargs or {}))

        def names():
            seen.append([type(m).__name__ for m in overrides._get_current_function_mode_stack()])
        with Look():
            d = lib.device("cpu")
            with d as entered:
                seen.append(entered is d)
                names()
                with lib.device("cpu"):
                    names()
                names()
            names()
        names()
        return seen
    (t_lib, t_over), (i_lib, i_over) = LIBS
    assert stacks(i_lib, i_over) == stacks(t_lib, t_over)


def test_a_device_context_fills_the_factories_device():
    """Factories made without ``device=`` get the context's; an explicit one and the ``*_like``
    factories keep theirs. (torch's CPU wheel has no second device: the simulated GPU serves.)"""
    with internals.device("cuda"):
        made, kept = internals.ones(2), internals.zeros(2, device="cpu")
        like = internals.ones_like(kept)
    assert (made.device, kept.device, like.device) == (internals.device("cuda", 0),) + (internals.device("cpu"),) * 2
    assert internals.ones(1).device == internals.device("cpu")


# ---------------------------------------------------------------------- set_default_device
def test_set_default_device_keeps_a_device_context_at_the_bottom_of_the_stack():
    """``set_default_device`` enters a DeviceContext and leaves it entered, below any mode already
    on the stack; a second call replaces it, ``None`` takes it away. ``get_default_device`` reads
    the innermost DeviceContext, else the default set, else the CPU. Both libraries, on the CPU."""
    def seen(lib, overrides):
        log = []

        class Look(overrides.TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                return func(*args, **(kwargs or {}))

        def look():
            log.append(([type(m).__name__ for m in overrides._get_current_function_mode_stack()],
                        str(lib.get_default_device())))
        look()
        try:
            with Look():
                lib.set_default_device("cpu")
                look()
                lib.set_default_device(lib.device("cpu"))
                look()
                with lib.device("cpu"):
                    look()
            look()
        finally:
            lib.set_default_device(None)
        look()
        return log
    (t_lib, t_over), (i_lib, i_over) = LIBS
    assert seen(i_lib, i_over) == seen(t_lib, t_over)
    assert seen(i_lib, i_over)[1] == (["DeviceContext", "Look"], "cpu")


def test_the_default_device_fills_the_factories_of_its_thread_only():
    """Factories called without ``device=`` take the default device, an explicit one and a
    ``with device(...)`` block win over it, ``None`` resets it. torch keeps the context in a
    ``threading.local`` and the mode stack is per thread: another thread still makes CPU tensors.
    (The simulated GPU serves as the second device, as torch's CPU wheel has none.)"""
    cpu, cuda = internals.device("cpu"), internals.device("cuda", 0)
    seen = []
    try:
        internals.set_default_device("cuda")
        made, kept = internals.zeros(2), internals.ones(2, device="cpu")
        with internals.device("cpu"):
            inner = (internals.arange(3).device, internals.get_default_device())
        worker = threading.Thread(target=lambda: seen.append((internals.tensor([1.0]).device,
                                                              internals.get_default_device())))
        worker.start()
        worker.join()
        after = (internals.get_default_device(), internals.full((1,), 2.0).device)
    finally:
        internals.set_default_device(None)
    assert (made.device, kept.device, inner, seen, after) == (cuda, cpu, (cpu, cpu), [(cpu, cpu)], (cuda, cuda))
    assert (internals.get_default_device(), internals.zeros(1).device) == (cpu, cpu)


def test_an_int_default_device_is_a_cuda_index():
    """With a GPU, torch reads an int as ``cuda:N`` (``torch.device(3)``) and checks no index when
    the default is set: a factory that allocates on a missing GPU is what fails, with CUDA's
    invalid device ordinal. The simulated GPU makes internals such a machine, with one GPU.
    (torch's CPU wheel refuses the int itself: it has no accelerator.)"""
    with pytest.raises(RuntimeError, match="Cannot access accelerator device when none is available"):
        torch.set_default_device(0)
    try:
        internals.set_default_device(0)
        first = (internals.get_default_device(), internals.zeros(1).device)
        internals.set_default_device(3)
        missing = internals.get_default_device()
        with pytest.raises(RuntimeError, match="invalid device ordinal"):
            internals.zeros(1)
    finally:
        internals.set_default_device(None)
    assert first == (internals.device("cuda", 0), internals.device("cuda", 0))
    assert missing == internals.device("cuda", 3)
