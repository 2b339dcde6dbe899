"""The lazy conjugate (``conj()``, the conjugate bit, the ``Conjugate`` key) against torch.

torch's ``conj()`` of a complex tensor copies nothing: a view whose key set holds ``Conjugate``,
showing the conjugates of its stored values. Operators that do not read the bit get resolved
inputs from a boxed fallback (``ConjugateFallback.cpp``); in-place and out= operators on such a
view write conjugated values into its base. Compared here: the bit, values, strides and
offsets, views of views, resolving, the fallback at work, writes through the view, ``copy_``
in each direction, printing, errors, the autograd node, the torch interop and ``torch.save``.
``imag`` of a lazy conjugate is a view with the negative bit (last test).
"""
import io

import pytest
import torch
from helpers import assert_same, same_error

import internals
from internals.aten import dispatcher
from internals.autograd.generated import functions as nodes

EXACT = dict(rtol=0, atol=0)


def base(lib, dtype="complex64"):
    """A 3x5 complex tensor with distinct parts, seen through a slice and a transpose (a
    storage offset and non-contiguous strides)."""
    real = lib.arange(15.0).reshape(3, 5)
    imag = lib.arange(15.0).reshape(3, 5) * -0.5 + 2
    return lib.complex(real, imag).to(getattr(lib, dtype))[:, 1:].t()


def both(fn):
    return fn(internals), fn(torch)


def key_names(t, lib):
    return [k.name if hasattr(k, "name") else str(k) for k in lib._C._dispatch_keys(t)] if lib is internals \
        else str(torch._C._dispatch_keys(t))[len("DispatchKeySet("):-1].split(", ")


# ---------------------------------------------------------------------------------- the view
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_conj_is_a_view_with_the_bit(dtype):
    (x, y), (xt, yt) = both(lambda lib: (lambda b: (b, b.conj()))(base(lib, dtype)))
    assert y.is_conj() and yt.is_conj() and not x.is_conj()
    assert internals.is_conj(y) and torch.is_conj(yt)
    assert_same(y, yt, **EXACT)
    assert (y.stride(), y.storage_offset()) == (x.stride(), x.storage_offset()) == (yt.stride(), yt.storage_offset())
    assert y.data_ptr() == x.data_ptr() and y._base is x._base
    assert key_names(y, internals) == key_names(yt, torch)
    assert "Conjugate" in key_names(y, internals) and "Conjugate" not in key_names(x, internals)
    twice, twice_t = y.conj(), yt.conj()        # conj of conj: the bit cleared, still a view
    assert not twice.is_conj() and not twice_t.is_conj() and twice._base is x._base
    assert_same(twice, twice_t, **EXACT)


def test_conj_of_a_real_tensor_is_itself():
    for lib in (internals, torch):
        r = lib.tensor([1.0, -2.0])
        assert r.conj() is r and r.resolve_conj() is r and r.conj_physical() is r and not r.is_conj()


@pytest.mark.parametrize("view", ["t()", "[1:]", "[:, 1]", "[0, 2]", "reshape(12)", "unsqueeze(0)", "permute(1, 0)",
                                  "expand(2, 4, 3)", "detach()", "narrow(0, 1, 2)", "diagonal()", "contiguous()"])
def test_views_of_a_conjugate_keep_the_bit(view):
    ours, theirs = both(lambda lib: eval(f"y.{view}" if not view.startswith("[") else f"y{view}",
                                         {"y": base(lib).contiguous().conj()}))
    assert ours.is_conj() == theirs.is_conj()
    assert_same(ours, theirs, **EXACT)


@pytest.mark.parametrize("how", ["resolve_conj()", "clone()", "conj_physical()", "to(lib.complex128)",
                                 "clone(memory_format=lib.contiguous_format)"])
def test_materializing_clears_the_bit(how):
    ours, theirs = both(lambda lib: eval(f"base(lib).conj().{how}", {"base": base, "lib": lib}))
    assert not ours.is_conj() and not theirs.is_conj()
    assert_same(ours, theirs, **EXACT)


# ---------------------------------------------------------------------------------- the fallback
@pytest.mark.parametrize("expr", ["y + 1", "y * x", "y - y", "y.sum()", "y.sum(0)", "y.abs()", "y.exp()", "y == x",
                                  "y.mean()", "lib.cat([y, x])", "lib.stack([x, y])", "y @ x.t()", "y.prod(1)",
                                  "lib.where(y.real > 4, y, x)", "y.neg()", "y[lib.tensor([0, 2])]", "y.flip(0)",
                                  "lib.vdot(y.reshape(-1), x.reshape(-1))", "y.to(lib.complex128)", "y.real",
                                  "y.real.sum()", "lib.conj_physical(y)", "y.sqrt()"])
def test_operators_see_the_conjugated_values(expr):
    ours, theirs = both(lambda lib: (lambda x: eval(expr, {"lib": lib, "x": x, "y": x.conj()}))(base(lib)))
    assert ours.is_conj() == theirs.is_conj()
    assert_same(ours, theirs, rtol=2e-6, atol=1e-6)


def test_the_fallback_runs_only_for_tensors_with_the_bit():
    """The fallback at exp's Conjugate entry resolves the input with clone, a fallthrough there
    (as in torch): clone's CPU kernel reads the bit itself."""
    x = base(internals)
    for tensor, expected in ((x, []), (x.conj(), [("aten::exp", "backend fallback")])):
        with dispatcher.trace() as log:
            tensor.exp()
        assert [(op, kind) for op, key, kind, _ in log if key == "Conjugate"] == expected
        assert [key for op, key, _, _ in log if op == "aten::clone"] == (["CPU"] if expected else [])
    for name in ("clone", "copy_", "conj_physical_", "t", "view"):
        line = [row for row in torch._C._dispatch_dump_table(f"aten::{name}").splitlines()
                if row.startswith("Conjugate:")]
        assert "fallthrough" in line[0]
        ours = [row for row in internals._C._dispatch_dump_table(f"aten::{name}").splitlines()
                if row.startswith("Conjugate:")]
        assert "fallthrough" in ours[0]


def test_ops_that_never_read_values_pass_through():
    """``empty_like`` and the like are fallthroughs for Conjugate, as in torch: no resolving copy."""
    y = base(internals).conj()
    with dispatcher.trace() as log:
        out = internals.empty_like(y)
    assert not out.is_conj() and not torch.empty_like(base(torch).conj()).is_conj()
    assert not [entry for entry in log if entry[1] == "Conjugate"]
    assert not [entry for entry in log if entry[0] == "aten::clone"]


# ---------------------------------------------------------------------------------- writes
@pytest.mark.parametrize("write", ["y.add_(1 + 2j)", "y.mul_(2j)", "y.zero_()", "y.fill_(3 - 1j)",
                                   "y.copy_(lib.ones(4, 3) * (1 + 1j))", "y.__setitem__((0, 1), 10 + 10j)",
                                   "y[1:].sub_(y[:-1])", "y.conj_physical_()", "y.t().mul_(y.t())",
                                   "lib.add(x, 1j, out=y)", "lib.mul(x.conj(), 2, out=y)", "y.neg_()",
                                   "y.masked_fill_(y.real > 5, 0)"])
def test_writes_through_a_conjugate_reach_its_base(write):
    def run(lib):
        x = base(lib).contiguous()
        y = x.conj()
        with torch.no_grad():
            out = eval(write, {"lib": lib, "x": x.clone(), "y": y})
        return x, y, out, x._version
    (x, y, out, version), (xt, yt, out_t, version_t) = run(internals), run(torch)
    assert_same(x, xt, **EXACT)
    assert_same(y, yt, **EXACT)
    assert y.is_conj() and yt.is_conj()
    assert version == version_t
    if isinstance(out_t, torch.Tensor):
        assert (out is y) == (out_t is yt)


@pytest.mark.parametrize("bits", [(True, False), (False, True), (True, True)])
def test_copy_between_bits(bits):
    def run(lib):
        dst, src = base(lib).contiguous(), base(lib).contiguous() * (2 - 1j)
        target = dst.conj() if bits[0] else dst
        target.copy_(src.conj() if bits[1] else src)
        return dst
    ours, theirs = both(run)
    assert_same(ours, theirs, **EXACT)


def test_a_real_source_into_a_conjugate():
    ours, theirs = both(lambda lib: (lambda x: (x.conj().copy_(lib.arange(12.0).reshape(4, 3)), x)[1])(base(lib)))
    assert_same(ours, theirs, **EXACT)


# ---------------------------------------------------------------------------------- conversions
def test_printing_shows_the_conjugates():
    for dtype in ("complex64", "complex128"):
        ours, theirs = both(lambda lib, d=dtype: base(lib, d).conj())
        assert repr(ours).replace("internals.", "torch.") == repr(theirs)
        assert str(ours[1]).replace("internals.", "torch.") == str(theirs[1])
        assert ours.tolist() == theirs.tolist()
        assert ours[2, 1].item() == theirs[2, 1].item()


def test_numpy_and_view_as_real_refuse_the_bit():
    same_error(lambda lib: base(lib).conj().numpy())
    same_error(lambda lib: lib.view_as_real(base(lib).conj()))
    ours, theirs = both(lambda lib: lib.view_as_real(base(lib).conj().resolve_conj()))
    assert_same(ours, theirs, **EXACT)


def test_torch_interop_keeps_the_bit():
    y, yt = both(lambda lib: base(lib).conj())
    back = y.to_torch()
    assert back.is_conj() and back.stride() == yt.stride() and torch.equal(back.resolve_conj(), yt.resolve_conj())
    again = internals.from_torch(yt)
    assert again.is_conj()
    assert_same(again, yt, **EXACT)


def test_save_and_load_keep_the_bit_both_ways():
    y, yt = both(lambda lib: base(lib).conj())
    for save, load, tensor in ((internals.save, torch.load, y), (torch.save, internals.load, yt)):
        buffer = io.BytesIO()
        save(tensor, buffer)
        buffer.seek(0)
        loaded = load(buffer)
        assert loaded.is_conj()
        assert_same(internals.from_torch(loaded) if isinstance(loaded, torch.Tensor) else loaded, yt, **EXACT)


# ---------------------------------------------------------------------------------- autograd
def test_the_conj_node_is_torchs():
    """torch records ``ConjBackward0`` for ``_conj`` (``ConjPhysicalBackward0``/``1`` for
    ``_conj_physical``/``conj_physical_``) and conjugates the gradient. internals has no complex
    autograd (a complex tensor cannot require grad), so its generated nodes are applied to a
    gradient directly and compared with torch's."""
    leaf = torch.tensor([1 + 2j, -3j], requires_grad=True)
    node = leaf.conj().grad_fn
    assert type(node).__name__ == "ConjBackward0" == nodes.ConjBackward0.__name__
    grad, grad_t = both(lambda lib: lib.tensor([0.5 - 1j, 2 + 0.25j]))
    assert_same(nodes.ConjBackward0().apply([grad])[0], node(grad_t), **EXACT)
    for ours, make in ((nodes.ConjPhysicalBackward0, lambda: leaf.conj_physical()),
                       (nodes.ConjPhysicalBackward1, lambda: leaf.clone().conj_physical_())):
        theirs = make().grad_fn
        assert type(theirs).__name__ == ours.__name__
        assert_same(ours().apply([grad])[0], theirs(grad_t), **EXACT)


def test_a_real_tensor_records_nothing_for_conj():
    def run(lib):
        w = lib.tensor([1.0, -2.0, 3.0], requires_grad=True)
        out = w.conj()
        (out * out).sum().backward()
        return out.grad_fn is None or type(out.grad_fn).__name__, w.grad
    (ours_fn, ours), (theirs_fn, theirs) = both(run)
    assert ours_fn == theirs_fn is True
    assert_same(ours, theirs, **EXACT)


# ---------------------------------------------------------------------------------- the negative bit
def test_imag_of_a_conjugate_is_a_negative_view():
    """A lazy conjugate's ``imag`` is a view of the stored imaginary parts with the negative
    bit set (tests/aten/test_negative_view.py follows the bit further)."""
    ours, theirs = both(lambda lib: base(lib).conj().imag)
    assert_same(ours, theirs, **EXACT)
    assert ours.is_neg() and theirs.is_neg() and ours._base is not None and theirs._base is not None
