"""Hostile inputs: each differed from torch before it was fixed."""
import pickle

import pytest
import torch
from helpers import assert_same_error

import internals


def both(fn):
    return fn(torch), fn(internals)


def same_error(fn):
    """Both libraries raise the same class with the same first line."""
    ours, theirs = assert_same_error(lambda: fn(internals), lambda: fn(torch))
    assert str(ours).splitlines()[0] == str(theirs).splitlines()[0]


def test_a_cuda_device_without_index_is_not_cuda_0():
    for lib in (torch, internals):
        assert lib.device("cuda") != lib.device("cuda:0")
        assert lib.device("cuda").index is None and str(lib.device("cuda")) == "cuda"
        assert hash(lib.device("cuda")) != hash(lib.device("cuda:0"))
    # ...but a tensor made on 'cuda' lives on cuda:0, and moving it there again is a no-op
    x = internals.ones(2, device="cuda")
    assert x.device == internals.device("cuda:0") and x.to("cuda") is x


@pytest.mark.parametrize("fmt", ["contiguous_format", "channels_last", "preserve_format", "channels_last_3d"])
@pytest.mark.parametrize("shape", [(2, 3, 4, 5), (2, 3, 1, 1), (2, 3, 4, 5, 6), (0, 3, 2, 2)])
def test_memory_formats_as_torch(fmt, shape):
    def layout(lib):
        x, f, out = lib.ones(*shape), getattr(lib, fmt), []
        for make in (lambda: x.contiguous(memory_format=f), lambda: x.clone(memory_format=f),
                     lambda: lib.empty_like(x, memory_format=f), lambda: x.to(memory_format=f),
                     lambda: lib.empty(*shape, memory_format=f), lambda: x.is_contiguous(memory_format=f)):
            try:
                r = make()
                out.append(r if isinstance(r, bool) else (r.stride(), r.is_contiguous(), r is x))
            except RuntimeError as e:
                out.append(str(e))
        return out
    theirs, ours = both(layout)
    assert ours == theirs


def test_channels_last_survives_elementwise_ops_and_pickle():
    def run(lib):
        x = lib.arange(120.0).reshape(2, 3, 4, 5).contiguous(memory_format=lib.channels_last)
        return (x + 1).stride(), (x * x).sum().item(), repr(lib.channels_last), str(lib.channels_last_3d)
    assert run(internals) == run(torch)
    assert pickle.loads(pickle.dumps(internals.channels_last)) is internals.channels_last


def test_memory_format_must_be_a_memory_format():
    same_error(lambda lib: lib.ones(2, 3).clone(memory_format="channels_last"))
    same_error(lambda lib: lib.ones(2, 3).clone(memory_format=lib.channels_last))


def test_fill_with_a_tensor():
    same_error(lambda lib: lib.ones(3).fill_(lib.ones(2)))
    for lib in (torch, internals):
        v = lib.tensor(3.0, requires_grad=True)
        y = lib.zeros(3, requires_grad=True).clone().fill_(v)
        y.sum().backward()
        assert y.tolist() == [3.0] * 3 and v.grad.item() == 3.0 and y.grad_fn.name() == "FillBackward3"


def test_no_positional_argument_after_an_int_list():
    for lib in (torch, internals):
        with pytest.raises(TypeError, match="invalid combination of arguments"):
            lib.ones(6).view((2, 3), 1)
        assert lib.ones(6).view(2, 3).shape == (2, 3)


@pytest.mark.parametrize("make", [
    lambda L: L.zeros(1).expand(10**5, 10**5),                 # 10**10 elements: reading them all is 37 GiB
    lambda L: L.zeros(1, dtype=L.bool).expand(10**4, 10**4, 10**4),
    lambda L: L.ones(1).as_strided((1,), (2**62,)),            # a byte stride past int64
    lambda L: L.arange(5000.0), lambda L: L.arange(2000.0).reshape(2, 10, 100),
    lambda L: L.tensor([1.0, 2000.0]), lambda L: L.tensor([0.0, 1e9]), lambda L: L.tensor([1e-5, 1.0]),
])
def test_printing_summarizes_as_torch(make):
    assert repr(make(internals)) == repr(make(torch))


def test_numpy_byte_strides_wrap_as_torch():
    assert both(lambda L: L.ones(1).as_strided((1,), (2**62,)).numpy().strides) == ((0,), (0,))


@pytest.mark.parametrize("shape", [(2, 3, 4, 5), (1, 3, 1, 4), (2, 1, 3, 1), (3, 1, 1, 1), (1, 1, 1, 1), (2, 3, 0, 4)])
@pytest.mark.parametrize("perm", [(0, 1, 2, 3), (0, 2, 3, 1), (0, 3, 1, 2), (1, 0, 2, 3), (3, 2, 1, 0)])
def test_to_aliases_when_the_strides_suggest_the_format(shape, perm):
    """``to(memory_format=...)`` returns self when ``suggest_memory_format`` says so (torch's heuristic)."""
    def run(lib):
        base = lib.ones(*[shape[p] for p in perm]).permute(*[perm.index(d) for d in range(4)])
        return [base.to(memory_format=f) is base for f in (lib.channels_last, lib.contiguous_format)]
    assert run(internals) == run(torch)


def _nograd_view_written(lib, grad_when_writing, base_requires_grad=True):
    a = lib.ones(3, requires_grad=base_requires_grad).clone()
    with lib.no_grad():
        v = a[:2]
    with lib.set_grad_enabled(grad_when_writing):
        v.add_(1)
    return a.tolist()


@pytest.mark.parametrize("grad_when_writing, base_requires_grad", [(True, True), (False, True), (True, False)])
def test_a_view_made_under_no_grad_is_not_written_with_grad_on(grad_when_writing, base_requires_grad):
    def run(lib):
        try:
            return _nograd_view_written(lib, grad_when_writing, base_requires_grad)
        except RuntimeError as e:
            return str(e)
    assert run(internals) == run(torch)


def _saved_then_modified(lib, write):
    a = lib.ones(3, requires_grad=True)
    b = a * 2
    c = b * b          # saves b, an input of the mul
    write(b)
    c.sum().backward()


@pytest.mark.parametrize("write", [lambda b: b.add_(1), lambda b: b.__setitem__(0, 5.0), lambda b: b[1:].mul_(3)])
def test_version_error_names_what_produced_the_tensor_now(write):
    same_error(lambda lib: _saved_then_modified(lib, write))


@pytest.mark.parametrize("base_is_leaf", [True, False])
def test_a_view_made_under_no_grad_requires_grad_through_its_base_only(base_is_leaf):
    """It reports requires_grad, has no grad_fn, and gradients flowing into it go nowhere."""
    def run(lib):
        a = lib.ones(3, requires_grad=True)
        a = a if base_is_leaf else a.clone()
        with lib.no_grad():
            v = a[:2]
        out = v * 2
        edges = [e[0] is None for e in out.grad_fn.next_functions]
        out.sum().backward()
        return v.requires_grad, v.grad_fn is None, v.is_leaf, edges, v.grad, a.grad if base_is_leaf else None
    assert run(internals) == run(torch)
