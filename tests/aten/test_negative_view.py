"""The lazy negative (``_neg_view``, the negative bit, the ``Negative`` key) against torch.

torch's ``_neg_view(x)`` and the imaginary parts of a lazy conjugate (``x.conj().imag``) copy
nothing: views whose key set holds ``Negative``, showing the negatives of their stored values.
Operators that do not read the bit get resolved inputs from a boxed fallback
(``NegateFallback.cpp``, shared with the conjugate bit in ``MathBitsFallback.h``). Compared
here: the bit and the key set, views of views, the two bits together, resolving, every unary
and binary operator of the YAML on negative inputs, writes through the view, ``copy_`` in each
direction, the fallthroughs, printing, errors, the autograd nodes, the torch interop and
``torch.save``.
"""
import io
import math

import pytest
import torch
from helpers import assert_same, native_schemas, same_error

import internals
from internals.aten import dispatcher

EXACT = dict(rtol=0, atol=0)


def base(lib, dtype="float32"):
    """A 4x3 tensor of distinct values of both signs, seen through a slice and a transpose (a
    storage offset and non-contiguous strides)."""
    return (lib.arange(15.0).reshape(3, 5) * 0.75 - 4).to(getattr(lib, dtype))[:, 1:].t()


def both(fn):
    return fn(internals), fn(torch)


def key_names(t, lib):
    if lib is internals:
        return [k.name for k in internals._C._dispatch_keys(t)]
    return str(torch._C._dispatch_keys(t))[len("DispatchKeySet("):-1].split(", ")


def complex_base(lib):
    """No part is zero: torch's CPU loops give a negated or conjugated zero either sign, by the
    length of the loop (its vector and scalar paths differ), so its sign is no contract."""
    return lib.complex(base(lib), base(lib) * -0.5 + 1.125)


def base_of(t):
    """What a view of ``t`` has as ``_base``."""
    return t if t._base is None else t._base


# ---------------------------------------------------------------------------------- the view
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int8", "float16", "complex64"])
def test_neg_view_is_a_view_with_the_bit(dtype):
    make = (lambda lib: base(lib, dtype)) if dtype != "complex64" else complex_base
    (x, y), (xt, yt) = both(lambda lib: (lambda b: (b, lib._neg_view(b)))(make(lib)))
    assert y.is_neg() and yt.is_neg() and not x.is_neg()
    assert internals.is_neg(y) and torch.is_neg(yt)
    assert_same(y, yt, **EXACT)
    assert y.data_ptr() == x.data_ptr() and y._base is base_of(x) and yt._base is base_of(xt)
    assert key_names(y, internals) == key_names(yt, torch)
    assert "Negative" in key_names(y, internals) and "Negative" not in key_names(x, internals)
    twice, twice_t = y._neg_view(), yt._neg_view()       # the bit flips back, still a view
    assert not twice.is_neg() and not twice_t.is_neg() and twice._base is base_of(x)
    assert_same(twice, twice_t, **EXACT)


def test_the_key_sits_where_torchs_does():
    """Negative ranks above Conjugate and below ADInplaceOrView, in both libraries."""
    full = [k.name for k in internals._C._dispatch_keyset_full()]
    theirs = [k for k in str(torch._C._dispatch_keyset_full())[len("DispatchKeySet("):-1].split(", ") if k in full]
    assert full == theirs
    assert full.index("Conjugate") + 1 == full.index("Negative") == full.index("ADInplaceOrView") - 1


def test_imag_of_a_conjugate_carries_the_bit():
    (z, i), (zt, it) = both(lambda lib: (lambda c: (c, c.conj().imag))(complex_base(lib)))
    assert i.is_neg() and it.is_neg() and i._base is base_of(z) and it._base is base_of(zt)
    assert key_names(i, internals) == key_names(it, torch)
    assert_same(i, it, **EXACT)
    real, real_t = z.conj().real, zt.conj().real      # the real parts need no bit
    assert not real.is_neg() and not real_t.is_neg()
    assert_same(real, real_t, **EXACT)
    again, again_t = z._neg_view().conj().imag, zt._neg_view().conj().imag      # two flips: no bit
    assert again.is_neg() == again_t.is_neg() is False
    assert_same(again, again_t, **EXACT)


def test_both_bits_on_one_tensor():
    """conj() of a negative complex view keeps both keys; each resolve clears what torch's does."""
    y, yt = both(lambda lib: complex_base(lib)._neg_view().conj())
    assert key_names(y, internals) == key_names(yt, torch)
    assert y.is_neg() and y.is_conj()
    assert_same(y, yt, **EXACT)
    for how in ("resolve_conj()", "resolve_neg()", "resolve_conj().resolve_neg()", "clone()", "conj()",
                "_neg_view()", "t()", "exp()", "view_as_real(lib.resolve_conj(y))"):
        ours, theirs = (eval(f"lib.{how}" if how.startswith("view") else f"y.{how}", {"lib": lib, "y": t})
                        for lib, t in ((internals, y), (torch, yt)))
        assert (ours.is_neg(), ours.is_conj()) == (theirs.is_neg(), theirs.is_conj()), how
        assert_same(ours, theirs, rtol=2e-6, atol=1e-6)


@pytest.mark.parametrize("view", ["t()", "[1:]", "[:, 1]", "[0, 2]", "reshape(12)", "unsqueeze(0)", "permute(1, 0)",
                                  "expand(2, 4, 3)", "detach()", "narrow(0, 1, 2)", "diagonal()", "contiguous()",
                                  "view(12)", "unflatten(0, (2, 2))", "split(2)[1]", "unbind(1)[2]", "chunk(2)[0]",
                                  "squeeze()", "transpose(0, 1)", "swapaxes(0, 1)", "movedim(0, 1)",
                                  "as_strided((2, 2), (1, 2), 1)", "unfold(0, 2, 1)", "view_as(y)", "expand_as(y)"])
def test_views_of_a_negative_keep_the_bit(view):
    def run(lib):
        y = lib._neg_view(base(lib).contiguous())
        return eval(f"y.{view}" if not view.startswith("[") else f"y{view}", {"y": y, "lib": lib})
    ours, theirs = both(run)
    assert ours.is_neg() == theirs.is_neg()
    assert_same(ours, theirs, **EXACT)


@pytest.mark.parametrize("how", ["resolve_neg()", "clone()", "contiguous()", "to(lib.float64)", "neg()",
                                 "clone(memory_format=lib.contiguous_format)", "__neg__()", "abs()"])
def test_materializing_clears_the_bit(how):
    ours, theirs = both(lambda lib: eval(f"lib._neg_view(base(lib)).{how}", {"base": base, "lib": lib}))
    assert not ours.is_neg() and not theirs.is_neg()
    assert_same(ours, theirs, **EXACT)


def test_neg_view_copy_is_a_new_tensor():
    ours, theirs = both(lambda lib: lib._neg_view_copy(base(lib)))
    assert not ours.is_neg() and not theirs.is_neg() and ours._base is None and theirs._base is None
    assert_same(ours, theirs, **EXACT)
    ours, theirs = both(lambda lib: lib._neg_view_copy(lib._neg_view(base(lib))))
    assert_same(ours, theirs, **EXACT)


# ---------------------------------------------------------------------------------- every operator
def _sweep(kind):
    """The functional operators of this package's YAML shaped ``(Tensor self) -> Tensor`` or
    ``(Tensor self, Tensor other) -> Tensor``, that torch has under the same name."""
    wanted = {"unary": ("self",), "binary": ("self", "other")}[kind]
    names = []
    for entry, schema in native_schemas().values():
        args = schema.arguments.flat_all
        if (tuple(a.name for a in args) == wanted and all(str(a.type) == "Tensor" for a in args)
                and len(schema.returns) == 1 and str(schema.returns[0].type) == "Tensor"
                and schema.returns[0].annotation is None and not str(schema.name.name).startswith("_")
                and "function" in entry.get("variants", "function") and hasattr(torch, str(schema.name.name))):
            names.append(str(schema.name.name))
    return sorted(set(names))


UNARY, BINARY = _sweep("unary"), _sweep("binary")


def _outcome(lib, fn, *args):
    """The result, or the class of the error raised."""
    try:
        return fn(lib)(*args)
    except Exception as error:          # torch refuses some dtypes: the same class is expected
        return type(error)


def _compare(ours, theirs):
    if isinstance(theirs, type):
        assert ours is theirs
        return
    assert ours.is_neg() == theirs.is_neg()
    if theirs.dtype.is_floating_point:
        assert_same(ours, theirs, rtol=1e-5, atol=1e-6)
    else:
        assert_same(ours, theirs, **EXACT)


def test_the_sweep_is_not_empty():
    assert len(UNARY) > 40 and len(BINARY) > 20 and "exp" in UNARY and "atan2" in BINARY


@pytest.mark.parametrize("name", UNARY)
def test_unary_operators_see_the_negated_values(name):
    x, xt = both(lambda lib: lib._neg_view(base(lib) / 5))
    _compare(_outcome(internals, lambda lib: getattr(lib, name), x),
             _outcome(torch, lambda lib: getattr(lib, name), xt))


@pytest.mark.parametrize("name", BINARY)
def test_binary_operators_see_the_negated_values(name):
    (x, y), (xt, yt) = both(lambda lib: (lib._neg_view(base(lib) / 5), base(lib) / 7 + 0.25))
    for args, args_t in (((x, y), (xt, yt)), ((y, x), (yt, xt)), ((x, x), (xt, xt))):
        _compare(_outcome(internals, lambda lib: getattr(lib, name), *args),
                 _outcome(torch, lambda lib: getattr(lib, name), *args_t))


@pytest.mark.parametrize("expr", ["y.sum()", "y.sum(0)", "y.mean(1)", "y.max()", "y.argmin()", "y.cumsum(0)",
                                  "lib.cat([y, x])", "lib.stack([x, y])", "y @ x.t()", "y[lib.tensor([0, 2])]",
                                  "y.flip(0)", "lib.where(y > 0, y, x)", "y.sort(0).values", "y.prod()",
                                  "lib.dot(y.reshape(-1), x.reshape(-1))", "y.clamp(-1, 1)", "y.softmax(0)",
                                  "lib.repeat_interleave(y, 2, 0)", "y.sign()"])
def test_other_operators_see_the_negated_values(expr):
    ours, theirs = both(lambda lib: (lambda x: eval(expr, {"lib": lib, "x": x, "y": lib._neg_view(x)}))(base(lib)))
    assert ours.is_neg() == theirs.is_neg()
    assert_same(ours, theirs, rtol=2e-6, atol=1e-6)


# ---------------------------------------------------------------------------------- the fallback
def test_the_fallback_runs_only_for_tensors_with_the_bit():
    """exp resolves a negative input through the fallback, with clone (a fallthrough at Negative:
    its CPU kernel reads the bit); neg_ is a fallthrough (negating the stored values negates the
    shown ones), and so are views."""
    x = base(internals)
    for tensor, expected in ((x, []), (x._neg_view(), [("aten::exp", "backend fallback")])):
        with dispatcher.trace() as log:
            tensor.exp()
        assert [(op, kind) for op, key, kind, _ in log if key == "Negative"] == expected
    for call in (lambda y: y.clone(), lambda y: y.neg_(), lambda y: y.t(), lambda y: internals.empty_like(y)):
        with dispatcher.trace() as log:
            call(internals._neg_view(x.clone()))
        assert not [entry for entry in log if entry[1] == "Negative"]


def _fallthroughs(dump):
    return {line.split(":")[0] for line in dump.splitlines() if "fallthrough" in line}


# torch's fallthroughs whose kernels here read storage as it is: they keep the fallback
KEEP_THE_FALLBACK = {
    "Negative": {"linalg_svd", "linalg_svd.U", "linalg_solve_triangular", "linalg_solve_triangular.out"},
    "Conjugate": {"linalg_svd", "linalg_svd.U", "linalg_solve_triangular", "linalg_solve_triangular.out",
                  "mm", "mm.out", "bmm", "bmm.out", "addmm", "addmm.out", "addmm_", "baddbmm", "baddbmm.out",
                  "baddbmm_", "dot", "dot.out", "vdot", "vdot.out", "_conj_physical", "conj_physical"}}


@pytest.mark.parametrize("key", ["Negative", "Conjugate"])
def test_the_fallthroughs_match_torchs_but_the_listed(key):
    """For every operator defined here, a fallthrough at the key exactly where torch has one, but
    for the kernels listed above."""
    theirs, ours = set(), set()
    for name in dispatcher.aten_ops:
        try:
            dump = torch._C._dispatch_dump_table(f"aten::{name}")
        except RuntimeError:         # an operator torch does not have
            continue
        if key in _fallthroughs(dump):
            theirs.add(name)
        if key in _fallthroughs(internals._C._dispatch_dump_table(f"aten::{name}")):
            ours.add(name)
    assert ours <= theirs
    assert theirs - ours == KEEP_THE_FALLBACK[key] & set(dispatcher.aten_ops)


# ---------------------------------------------------------------------------------- writes
@pytest.mark.parametrize("write", ["y.add_(1.5)", "y.mul_(-2)", "y.zero_()", "y.fill_(3)", "y.neg_()",
                                   "y.copy_(lib.ones(4, 3) * 2)", "y.__setitem__((0, 1), 10)",
                                   "y[1:].sub_(y[:-1])", "y.t().mul_(y.t())", "lib.add(x, 1, out=y)",
                                   "lib.mul(x._neg_view(), 2, out=y)", "y.masked_fill_(y > 0, 0)", "y.exp_()",
                                   "y.clamp_(-1, 1)"])
def test_writes_through_a_negative_reach_its_base(write):
    def run(lib):
        x = base(lib).contiguous()
        y = x._neg_view()
        with torch.no_grad():
            out = eval(write, {"lib": lib, "x": x.clone(), "y": y})
        return x, y, out, x._version
    (x, y, out, version), (xt, yt, out_t, version_t) = run(internals), run(torch)
    assert_same(x, xt, rtol=2e-6, atol=1e-6)
    assert_same(y, yt, rtol=2e-6, atol=1e-6)
    assert y.is_neg() and yt.is_neg()
    assert version == version_t
    if isinstance(out_t, torch.Tensor):
        assert (out is y) == (out_t is yt)


@pytest.mark.parametrize("bits", [(True, False), (False, True), (True, True)])
@pytest.mark.parametrize("dtypes", [("float32", "float32"), ("float64", "int32"), ("int64", "float32")])
def test_copy_between_bits(bits, dtypes):
    def run(lib):
        dst, src = base(lib, dtypes[0]).contiguous(), (base(lib) * 3).to(getattr(lib, dtypes[1]))
        target = dst._neg_view() if bits[0] else dst
        target.copy_(src._neg_view() if bits[1] else src)
        return dst
    ours, theirs = both(run)
    assert_same(ours, theirs, **EXACT)


def test_copy_between_a_conjugate_and_a_negative():
    def run(lib):
        dst, src = complex_base(lib).contiguous(), complex_base(lib) * (2 - 1j)
        dst.conj().copy_(src._neg_view())
        return dst
    ours, theirs = both(run)
    assert_same(ours, theirs, **EXACT)


# ---------------------------------------------------------------------------------- conversions
def test_printing_shows_the_negatives():
    for make in (lambda lib: lib._neg_view(base(lib)), lambda lib: complex_base(lib).conj().imag,
                 lambda lib: lib._neg_view(complex_base(lib)).conj(), lambda lib: lib._neg_view(lib.arange(5))):
        ours, theirs = both(make)
        assert repr(ours).replace("internals.", "torch.") == repr(theirs)
        assert ours.tolist() == theirs.tolist()
        assert ours.reshape(-1)[1].item() == theirs.reshape(-1)[1].item()


def test_errors_are_torchs():
    same_error(lambda lib: lib._neg_view(base(lib)).numpy())
    same_error(lambda lib: repr(lib._neg_view(lib.tensor([True, False]))))     # bool has no negation
    ours, theirs = both(lambda lib: lib._neg_view(base(lib)).resolve_neg().numpy())
    assert (ours == theirs).all()


def test_view_as_real_of_a_negative_keeps_the_bit():
    ours, theirs = both(lambda lib: lib.view_as_real(lib._neg_view(complex_base(lib))))
    assert ours.is_neg() and theirs.is_neg()
    assert_same(ours, theirs, **EXACT)


def test_torch_interop_keeps_the_bit():
    y, yt = both(lambda lib: lib._neg_view(complex_base(lib)).conj())
    back = y.to_torch()
    assert back.is_neg() and back.is_conj() and back.stride() == yt.stride() and torch.equal(back, yt)
    again = internals.from_torch(yt)
    assert again.is_neg() and again.is_conj()
    assert_same(again, yt, **EXACT)


@pytest.mark.parametrize("make", [lambda lib: lib._neg_view(base(lib)), lambda lib: complex_base(lib).conj().imag,
                                  lambda lib: lib._neg_view(complex_base(lib)).conj()])
def test_save_and_load_keep_the_bit_both_ways(make):
    """torch saves the stored values with the bits beside them (``get_tensor_metadata``)."""
    y, yt = both(make)
    for save, load, tensor in ((internals.save, torch.load, y), (torch.save, internals.load, yt)):
        buffer = io.BytesIO()
        save(tensor, buffer)
        buffer.seek(0)
        loaded = load(buffer)
        assert loaded.is_neg() and loaded.is_conj() == yt.is_conj()
        assert_same(internals.from_torch(loaded) if isinstance(loaded, torch.Tensor) else loaded, yt, **EXACT)


# ---------------------------------------------------------------------------------- autograd
@pytest.mark.parametrize("op", ["_neg_view", "_neg_view_copy"])
def test_the_nodes_and_gradients_are_torchs(op):
    def run(lib):
        w = lib.tensor([1.0, -2.0, 3.0], requires_grad=True)
        out = getattr(lib, op)(w)
        (out * lib.tensor([1.0, 2.0, 4.0])).exp().sum().backward()
        return type(out.grad_fn).__name__, out.is_neg(), w.grad
    (name, neg, grad), (name_t, neg_t, grad_t) = both(run)
    assert name == name_t and neg == neg_t
    assert_same(grad, grad_t, ulps=1)


def test_resolve_neg_records_a_clone():
    def run(lib):
        w = lib.tensor([1.0, -2.0], requires_grad=True)
        out = lib._neg_view(w).resolve_neg()
        (out * out).sum().backward()
        return type(out.grad_fn).__name__, w.grad
    (name, grad), (name_t, grad_t) = both(run)
    assert name == name_t == "CloneBackward0"
    assert_same(grad, grad_t, **EXACT)
    assert math.isclose(grad[0].item(), 2.0)
