"""The PythonArgParser against torch's: which overload a call picks (seen by a TorchDispatchMode),
how arguments are converted, and the TypeErrors of calls no signature accepts."""
import pytest
import torch
from helpers import assert_same_error
from torch.utils._python_dispatch import TorchDispatchMode as TorchMode

import internals
from internals._python_arg_parser import FunctionSignature, PythonArgParser, trace
from internals.utils._python_dispatch import TorchDispatchMode as OurMode


def calls(lib):
    """Calls whose operator torch and internals both reach without a decomposition in between."""
    x, y, v, s, m = lib.ones(2, 3), lib.ones(2, 3), lib.ones(3), lib.ones(1, 3, 1), lib.ones(3, 2)
    zero = lib.ones(())
    return {
        "x > 0.5": lambda: x > 0.5, "x > y": lambda: x > y, "x > zero": lambda: x > zero,
        "x * 2": lambda: x * 2, "2 * x": lambda: 2 * x, "x * zero": lambda: x * zero,
        "x ** 2": lambda: x ** 2, "x ** 0.5": lambda: x ** 0.5, "x ** y": lambda: x ** y, "2 ** x": lambda: 2 ** x,
        "x - 1": lambda: x - 1, "1 - x": lambda: 1 - x, "x / 2": lambda: x / 2, "x + True": lambda: x + True,
        "x == 1": lambda: x == 1, "x.eq(y)": lambda: x.eq(y), "x.ne(zero)": lambda: x.ne(zero),
        "x.add(y, alpha=2)": lambda: x.add(y, alpha=2), "lib.add(x, 1)": lambda: lib.add(x, 1),
        "lib.add(x, y, alpha=0.5)": lambda: lib.add(x, y, alpha=0.5), "lib.mul(2, x)": lambda: lib.mul(2, x),
        "lib.pow(2, x)": lambda: lib.pow(2, x), "lib.pow(x, 2)": lambda: lib.pow(x, 2),
        "x.sum()": lambda: x.sum(), "x.sum(0)": lambda: x.sum(0), "x.sum((0, 1))": lambda: x.sum((0, 1)),
        "x.sum([1])": lambda: x.sum([1]), "x.sum(dim=1, keepdim=True)": lambda: x.sum(dim=1, keepdim=True),
        "x.sum(0, True)": lambda: x.sum(0, True), "x.sum(axis=0)": lambda: x.sum(axis=0),
        "x.sum(dim=None)": lambda: x.sum(dim=None), "x.sum(dtype=lib.float64)": lambda: x.sum(dtype=lib.float64),
        "x.sum(dtype=float)": lambda: x.sum(dtype=float), "lib.sum(x, 1)": lambda: lib.sum(x, 1),
        "x.mean()": lambda: x.mean(), "x.mean(1)": lambda: x.mean(1), "x.prod()": lambda: x.prod(),
        "x.prod(1)": lambda: x.prod(1), "x.amax()": lambda: x.amax(), "x.amax(1)": lambda: x.amax(1),
        "x.amax((0, 1), True)": lambda: x.amax((0, 1), True), "x.argmax()": lambda: x.argmax(),
        "x.argmax(1)": lambda: x.argmax(1), "x.max()": lambda: x.max(), "x.max(0)": lambda: x.max(0),
        "x.max(y)": lambda: x.max(y), "x.min(1, True)": lambda: x.min(1, True), "lib.max(x, y)": lambda: lib.max(x, y),
        "x.maximum(y)": lambda: x.maximum(y), "s.squeeze()": lambda: s.squeeze(),
        "s.squeeze((0, 2))": lambda: s.squeeze((0, 2)), "x.softmax(0)": lambda: x.softmax(0),
        "x.log_softmax(1)": lambda: x.log_softmax(1), "s.squeeze(0)": lambda: s.squeeze(0),
        "x.view(3, 2)": lambda: x.view(3, 2), "x.view((3, 2))": lambda: x.view((3, 2)),
        "x.view([6])": lambda: x.view([6]), "x.view(x.shape)": lambda: x.view(x.shape),
        "x.view(-1)": lambda: x.view(-1),
        "x.permute(1, 0)": lambda: x.permute(1, 0), "x.permute((1, 0))": lambda: x.permute((1, 0)),
        "v.expand(2, -1)": lambda: v.expand(2, -1), "v.expand((2, 3))": lambda: v.expand((2, 3)),
        "x.clone()": lambda: x.clone(), "x.transpose(0, 1)": lambda: x.transpose(0, 1), "x.t()": lambda: x.t(),
        "x.unsqueeze(0)": lambda: x.unsqueeze(0), "x.split(1)": lambda: x.split(1),
        "x.split([1, 2], 1)": lambda: x.split([1, 2], 1), "x.select(0, 1)": lambda: x.select(0, 1),
        "x.diagonal()": lambda: x.diagonal(), "x.as_strided((2, 2), (1, 1))": lambda: x.as_strided((2, 2), (1, 1)),
        "x.exp()": lambda: x.exp(), "lib.exp(x)": lambda: lib.exp(x), "x.mm(m)": lambda: x.mm(m),
        "lib.where(x > 0, x, y)": lambda: lib.where(x > 0, x, y), "x.to_sparse()": lambda: x.to_sparse(),
        "x.unfold(1, 2, 1)": lambda: x.unfold(1, 2, 1), "x.abs_()": lambda: x.clone().abs_(),
    }


def _ops_seen(lib, mode_class, call):
    class Recorder(mode_class):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(str(func))
            return func(*args, **(kwargs or {}))
    seen = []
    with Recorder():
        call()
    return seen


@pytest.mark.parametrize("name", list(calls(torch)))
def test_the_overload_torch_picks(name):
    theirs = _ops_seen(torch, TorchMode, calls(torch)[name])
    ours = _ops_seen(internals, OurMode, calls(internals)[name])
    assert ours == theirs


def bad_calls(lib):
    x, y = lib.ones(2, 3), lib.ones(2, 3)
    return {
        "x.add('a')": lambda: x.add('a'), "x.add(y, y)": lambda: x.add(y, y),
        "x.add(y, foo=1)": lambda: x.add(y, foo=1), "x.add(y, other=y)": lambda: x.add(y, other=y),
        "x.add(y, alpha='s')": lambda: x.add(y, alpha='s'), "lib.exp(2)": lambda: lib.exp(2),
        "x.mm(2)": lambda: x.mm(2), "x.mm(other=y)": lambda: x.mm(other=y), "x.transpose(0)": lambda: x.transpose(0),
        "x.transpose(0, 1.0)": lambda: x.transpose(0, 1.0), "x.transpose(True, 0)": lambda: x.transpose(True, 0),
        "x.permute(0, 'a')": lambda: x.permute(0, 'a'), "x.view(2, 3.0)": lambda: x.view(2, 3.0),
        "x.softmax()": lambda: x.softmax(), "x.sum(dim=0, foo=2)": lambda: x.sum(dim=0, foo=2),
        "x.sum(0, 1)": lambda: x.sum(0, 1), "x.mul(None)": lambda: x.mul(None), "x.pow('a')": lambda: x.pow('a'),
        "x.flatten(0, 1, 2)": lambda: x.flatten(0, 1, 2), "x.unsqueeze()": lambda: x.unsqueeze(),
        "x.eq('a')": lambda: x.eq('a'), "x.amax('a')": lambda: x.amax('a'), "x.clone(1)": lambda: x.clone(1),
    }


@pytest.mark.parametrize("name", list(bad_calls(torch)))
def test_type_errors_in_torch_words(name):
    with pytest.raises(TypeError) as theirs:
        bad_calls(torch)[name]()
    with pytest.raises(TypeError) as ours:
        bad_calls(internals)[name]()
    assert str(ours.value) == str(theirs.value)


def test_invalid_combination_lists_the_signatures():
    """With several plausible signatures the error lists them; the first lines are torch's."""
    for lib in (torch, internals):
        with pytest.raises(TypeError) as e:
            lib.ones(2).sum("a")
        lines = str(e.value).splitlines()
        assert lines[:3] == ["sum() received an invalid combination of arguments - got (str), but expected one of:",
                             " * (*, torch.dtype dtype = None)",
                             " * (tuple of ints dim, bool keepdim = False, *, torch.dtype dtype = None)"]


def test_binary_dunders_give_python_a_chance():
    """A TypeError in ``x + obj`` becomes NotImplemented: ``x == None`` is False, ``x + "a"`` a TypeError."""
    for lib in (torch, internals):
        x = lib.ones(2)
        assert (x == None) is False  # noqa: E711
        assert (x != None) is True  # noqa: E711
        with pytest.raises(TypeError, match="unsupported operand"):
            x + "a"
        with pytest.raises(TypeError, match="unsupported operand"):
            "a" - x


def test_numbers_become_wrapped_number_tensors_only_where_torch_allows():
    parser = PythonArgParser(["mul(Tensor other)"])
    r = parser.parse((2,), {})
    t = r.tensor(0)
    assert isinstance(t, internals.Tensor) and t.dim() == 0 and t._impl.is_wrapped_number and t.dtype is internals.int64
    # not for mm: a number there matches nothing
    with pytest.raises(TypeError, match=r"mm\(\): argument 'mat2' \(position 1\) must be Tensor, not int"):
        PythonArgParser(["mm(Tensor mat2)"]).parse((2,), {})


def test_conversions():
    sig = "sum(IntArrayRef[1]? dim, bool keepdim=False, *, ScalarType? dtype=None)"
    parser = PythonArgParser([sig])
    assert parser.parse((0,), {}).intlist(0) == [0]                # one int for int[1]
    assert parser.parse(((0, 1),), {}).intlist(0) == [0, 1]
    assert parser.parse((None,), {}).intlist(0) is None            # int[1]? takes None
    r = parser.parse((0,), {"dtype": float, "keepdim": True})
    assert r.scalartype(2) is internals.float64 and r.to_bool(1) is True
    assert parser.parse((0,), {}).to_bool(1) is False               # the default
    view = PythonArgParser(["view(SymIntArrayRef size)"])
    assert view.parse((2, 3), {}).intlist(0) == [2, 3]               # varargs
    assert view.parse((internals.Size([2, 3]),), {}).intlist(0) == [2, 3]
    amax = PythonArgParser(["amax(IntArrayRef[1] dim=None, bool keepdim=False)"])
    assert amax.parse((), {}).intlist(0) == [] and amax.parse((None,), {}).intlist(0) == []
    stride = PythonArgParser(["f(IntArrayRef[2] stride=1)"])
    assert stride.parse((), {}).intlist(0) == [1, 1] and stride.parse((3,), {}).intlist(0) == [3, 3]
    alpha = PythonArgParser(["add(Tensor other, *, Scalar alpha=1)"])
    assert alpha.parse((internals.ones(1),), {"alpha": internals.tensor(2.5)}).scalar(1) == 2.5
    # a 0-dim tensor that requires grad is no Scalar
    with pytest.raises(TypeError, match="argument 'alpha' must be Number, not Tensor"):
        alpha.parse((internals.ones(1),), {"alpha": internals.tensor(2.5, requires_grad=True)})


def test_signature_strings_print_as_torch_prints_them():
    assert str(FunctionSignature("add(Tensor other, *, Scalar alpha=1)", 0)) == "(Tensor other, *, Number alpha = 1)"
    assert str(FunctionSignature("view(SymIntArrayRef size)", 0)) == "(tuple of ints size)"
    assert str(FunctionSignature("argmax(int64_t? dim=None, bool keepdim=False)", 0)) == \
        "(int dim = None, bool keepdim = False)"


def test_trace_records_the_matched_signature():
    x = internals.ones(2, 3)
    with trace() as log:
        x.sum(0)
        x * 2
    assert log == [("sum", "sum(IntArrayRef[1]? dim, bool keepdim=False, *, ScalarType? dtype=None)"),
                   ("mul", "mul(Tensor other)")]


@pytest.mark.parametrize("call", ["lib.zeros((2.0, 3))", "lib.ones(2, 3).permute([0, 'a'])", "lib.ones(2).view(('a',))",
                                  "lib.zeros(size=(2.0, 3))",
                                  "lib.nn.ConvTranspose1d(2, 2, 2, padding='a')(lib.ones(1, 2, 3))"])
def test_an_int_list_with_a_wrong_item_is_refused_in_torchs_words(call):
    """torch's int-list check looks at the first item and names it when the list came by position:
    'must be tuple of ints, but found element of type float at pos 0' (by keyword: 'not tuple'); a
    later bad item fails when the list is unpacked."""
    ours, theirs = assert_same_error(lambda: eval(call, {"lib": internals}), lambda: eval(call, {"lib": torch}))
    assert str(ours) == str(theirs)
