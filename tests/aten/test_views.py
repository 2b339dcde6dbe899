"""Views against torch: every view op gives torch's sizes, strides, storage offset and values,
shares its base's storage and version counter, and fails on bad input as torch does.

Inputs are random shapes (zero-size included) and random chains of views (``strategies.py``), so
the ops also see transposed, sliced, expanded and offset inputs, not only fresh contiguous ones.
"""
import itertools
import math

import pytest
import torch
from helpers import assert_same, assert_same_error
from hypothesis import given
from hypothesis import strategies as st
from strategies import fresh_copy, shapes, view_chains, windowed_tensors

import internals

# ------------------------------------------------------------------------------------ helpers

def assert_view(ours, theirs, ours_base, theirs_base):
    """``ours`` matches torch's view, and like it is a view of ``ours_base``: same storage object,
    same bytes, same version counter."""
    assert_same(ours, theirs)
    assert theirs.untyped_storage() is theirs_base.untyped_storage(), "torch made a copy: not a view test"
    assert ours.untyped_storage() is ours_base.untyped_storage()
    assert ours.untyped_storage().data_ptr() == ours_base.untyped_storage().data_ptr()
    assert ours._version == ours_base._version == theirs._version
    assert ours.is_contiguous() == theirs.is_contiguous()
    assert ours.dim() == theirs.dim() and ours.numel() == theirs.numel()


def both(t):
    """A torch tensor (with its own copy of the storage) and its internals twin."""
    theirs = fresh_copy(t)
    return internals.from_torch(theirs), theirs


def namespace(t):
    """``internals`` for an internals tensor, ``torch`` for a torch one: ``namespace(x).split(x, 2)``."""
    return internals if isinstance(t, internals.Tensor) else torch


def check_op(op, ours_base, theirs_base):
    """Apply ``op`` (a function of a tensor) to both bases and compare the views."""
    assert_view(op(ours_base), op(theirs_base), ours_base, theirs_base)


def check_same_outcome(op, ours_base, theirs_base, message=True):
    """The same view as torch, or where torch refuses, the same error."""
    try:
        op(theirs_base)
    except RuntimeError:
        check_error(op, ours_base, theirs_base, message)
    else:
        check_op(op, ours_base, theirs_base)


def check_error(op, ours, theirs, message=True):
    """Both raise the same exception class and, unless ``message`` is False, torch's message.
    ``message="start"``: torch's message starts with ours (torch appends a C++ stack trace to
    some errors it rewraps)."""
    ours_error, theirs_error = assert_same_error(lambda: op(ours), lambda: op(theirs))
    if message == "start":
        assert str(theirs_error).startswith(str(ours_error))
    elif message:
        assert str(ours_error) == str(theirs_error)


def dims(t, extra=0):
    """Every valid dim index, negative ones included (a 0-dim tensor accepts 0 and -1)."""
    n = max(t.dim() + extra, 1)
    return range(-n, n)


def bad_dims(t, extra=0):
    n = max(t.dim() + extra, 1)
    return [-n - 2, -n - 1, n, n + 1]


def factorizations(n, max_len=4):
    """Every shape with at most ``max_len`` dims whose product is ``n``. For ``n == 0``, the
    shapes of up to 3 dims with sides 0..3 that hold a 0 (there are infinitely many)."""
    if n == 0:
        sides, max_len = range(0, 4), min(max_len, 3)
    else:
        sides = [d for d in range(1, n + 1) if n % d == 0]
    out = [()] if n == 1 else []
    for k in range(1, max_len + 1):
        for shape in itertools.product(sides, repeat=k):
            if math.prod(shape) == n:
                out.append(shape)
    return out


# ------------------------------------------------------------------------------------ chains

@given(view_chains())
def test_view_chains_match_torch(chain):
    """Each intermediate view of a random chain: layout, values, storage, version, contiguity."""
    for prefix in chain.prefixes():
        assert_view(*prefix.run())


@given(view_chains())
def test_writes_through_base_are_seen_by_views(chain):
    ours, theirs, ours_base, theirs_base = chain.run()
    ours_base.fill_(1)
    theirs_base.fill_(1)
    assert ours._version == theirs._version == ours_base._version == 1
    assert_same(ours, theirs)


@given(view_chains())
def test_writes_through_views_reach_the_base(chain):
    """An in-place write on the view: the same values land in the base, and the version moves
    for everyone. A view with repeated elements (after expand) refuses the write in both."""
    ours, theirs, ours_base, theirs_base = chain.run()
    try:
        theirs.fill_(0)
    except RuntimeError as e:
        with pytest.raises(RuntimeError) as ours_error:
            ours.fill_(0)
        assert str(ours_error.value) == str(e)
        return
    ours.fill_(0)
    assert ours._version == theirs._version == ours_base._version == theirs_base._version == 1
    assert_same(ours_base, theirs_base)


@given(view_chains())
def test_data_ptr_matches_torch(chain):
    """``data_ptr()``: the first element's address (its offset into the storage, in bytes), and
    0 for a tensor with no elements, as in torch."""
    ours, theirs, _, _ = chain.run()
    if theirs.numel() == 0:
        assert ours.data_ptr() == theirs.data_ptr() == 0
    else:
        assert (ours.data_ptr() - ours.untyped_storage().data_ptr()
                == theirs.data_ptr() - theirs.untyped_storage().data_ptr()
                == theirs.storage_offset() * theirs.element_size())


# ------------------------------------------------------------------------- view, reshape, ...

def _targets(numel):
    """Target shapes for view/reshape: every factorization of numel, and each with one -1."""
    shapes_ = factorizations(numel)
    with_inferred = [s[:i] + (-1,) + s[i + 1:] for s in shapes_ for i in range(len(s)) if s[i] != 0]
    return shapes_ + with_inferred


@given(view_chains(max_ops=3))
def test_view_every_shape_on_chains(chain):
    """``view`` to every shape of the same numel: a view where torch has one, otherwise
    torch's error (class and message)."""
    ours_base, theirs_base = internals.from_torch(chain.base), chain.base
    ours, theirs = chain(ours_base), chain(theirs_base)
    for shape in _targets(theirs.numel()):
        try:
            expected = theirs.view(shape)
        except RuntimeError:
            # incompatible strides, or an ambiguous -1
            check_error(lambda x, shape=shape: x.view(shape), ours, theirs)
            continue
        assert_view(ours.view(shape), expected, ours_base, theirs_base)
        if shape:
            assert_view(ours.view(*shape), expected, ours_base, theirs_base)


@given(view_chains(max_ops=2))
def test_view_and_reshape_bad_shapes(chain):
    ours, theirs, _, _ = chain.run()
    n = theirs.numel()
    for shape in [(n + 1,), (-1, -1), (-2,), (n, -2), (n + 1, -1) if n else (2, 3)]:
        check_error(lambda x, shape=shape: x.view(shape), ours, theirs)
        check_error(lambda x, shape=shape: x.reshape(shape), ours, theirs)


def test_view_zero_with_inferred_dim_is_ambiguous():
    ours, theirs = both(torch.zeros(0, 3))
    check_error(lambda x: x.view(0, -1), ours, theirs)
    check_error(lambda x: x.reshape(-1, 0), ours, theirs)


def test_view_incompatible_message():
    ours, theirs = both(torch.arange(12.).reshape(3, 4))
    check_error(lambda x: x.t().view(12), ours, theirs)
    with pytest.raises(RuntimeError, match=r"^view size is not compatible with input tensor's size and stride"):
        ours.t().view(-1)


@given(view_chains(max_ops=3))
def test_reshape_is_a_view_exactly_when_torchs_is(chain):
    ours_base, theirs_base = internals.from_torch(chain.base), chain.base
    ours, theirs = chain(ours_base), chain(theirs_base)
    for shape in _targets(theirs.numel()):
        try:
            expected = theirs.reshape(shape)
        except RuntimeError:
            check_error(lambda x, shape=shape: x.reshape(shape), ours, theirs)    # an ambiguous -1 with no elements
            continue
        got = ours.reshape(shape)
        assert_same(got, expected)
        torch_viewed = expected.untyped_storage() is theirs.untyped_storage()
        assert (got.untyped_storage() is ours.untyped_storage()) == torch_viewed, shape
        if torch_viewed:
            assert got._version == ours._version
        else:
            assert got.untyped_storage().data_ptr() != ours.untyped_storage().data_ptr() or got.numel() == 0


@given(view_chains(max_ops=3))
def test_view_as_and_reshape_as(chain):
    ours_base, theirs_base = internals.from_torch(chain.base), chain.base
    ours, theirs = chain(ours_base), chain(theirs_base)
    flat_ours, flat_theirs = internals.zeros(theirs.numel()), torch.zeros(theirs.numel())
    assert_same(ours.reshape_as(flat_ours), theirs.reshape_as(flat_theirs))
    assert_same(flat_ours.view_as(ours), flat_theirs.view_as(theirs))
    assert_same(flat_ours.reshape_as(ours), flat_theirs.reshape_as(theirs))


# ----------------------------------------------------------------- contiguous, clone, is_contiguous

@given(view_chains())
def test_contiguous(chain):
    ours, theirs, ours_base, theirs_base = chain.run()
    got, expected = ours.contiguous(), theirs.contiguous()
    assert_same(got, expected)
    assert (got is ours) == (expected is theirs)
    assert got.is_contiguous() and expected.is_contiguous()
    if expected is not theirs:
        assert got.untyped_storage() is not ours_base.untyped_storage()
        assert got._version == 0


@given(view_chains())
def test_clone_preserves_torchs_strides(chain):
    """``clone()`` keeps a dense input's layout and otherwise picks the strides torch infers."""
    ours, theirs, ours_base, _ = chain.run()
    got, expected = ours.clone(), theirs.clone()
    assert_same(got, expected)
    assert got.untyped_storage() is not ours_base.untyped_storage()
    assert got._version == 0
    got.fill_(7)                     # a real copy: the source does not change
    assert_same(ours, theirs)


@pytest.mark.parametrize("make", [
    lambda t: t.permute(2, 0, 1), lambda t: t.transpose(0, 2), lambda t: t[:, ::2],
    lambda t: t[1:, :, 1:], lambda t: t[:, :1].expand(2, 3, 4), lambda t: t[:, 1].unsqueeze(1).expand(2, 5, 4),
    lambda t: t.permute(1, 2, 0)[::2], lambda t: t.unsqueeze(0).expand(3, 2, 3, 4).transpose(0, 3),
    lambda t: t.diagonal(0, 1, 2), lambda t: t.unfold(2, 2, 1),
], ids=["permute", "transpose", "step", "offset-slice", "expand", "expand-mid", "permute-step",
        "expand-transpose", "diagonal", "unfold"])
def test_clone_named_layouts(make):
    ours, theirs = both(torch.arange(24.).reshape(2, 3, 4))
    assert_same(make(ours).clone(), make(theirs).clone())
    assert_same(make(ours).contiguous(), make(theirs).contiguous())


@given(view_chains())
def test_is_contiguous_matches_torch(chain):
    ours, theirs, _, _ = chain.run()
    assert ours.is_contiguous() == theirs.is_contiguous()


# ----------------------------------------------------------------------- one op at a time

@given(windowed_tensors())
def test_transpose_every_dim_pair(t):
    ours, theirs = both(t)
    for d0, d1 in itertools.product(dims(t), repeat=2):
        check_op(lambda x, d0=d0, d1=d1: x.transpose(d0, d1), ours, theirs)
    for d in bad_dims(t):
        check_error(lambda x, d=d: x.transpose(d, 0), ours, theirs)
        check_error(lambda x, d=d: x.transpose(0, d), ours, theirs)


@pytest.mark.filterwarnings("ignore:Tensor.mT is deprecated on 0-D tensors")
@given(windowed_tensors())
def test_t_T_mT(t):
    ours, theirs = both(t)
    if t.dim() <= 2:
        check_op(lambda x: x.t(), ours, theirs)
    else:
        check_error(lambda x: x.t(), ours, theirs)
    if t.dim() != 1:
        check_op(lambda x: x.mT, ours, theirs)
    else:
        check_error(lambda x: x.mT, ours, theirs)
    if t.dim() == 2:
        check_op(lambda x: x.T, ours, theirs)


@pytest.mark.filterwarnings("ignore:The use of `x.T` on tensors of dimension other than 2")
@pytest.mark.filterwarnings("ignore:Tensor.T is deprecated on 0-D tensors")
@given(windowed_tensors())
def test_T_reverses_any_number_of_dims(t):
    ours, theirs = both(t)
    check_op(lambda x: x.T, ours, theirs)


@given(windowed_tensors(shape=shapes(max_dims=4)))
def test_permute_every_order(t):
    ours, theirs = both(t)
    for order in itertools.permutations(range(t.dim())):
        check_op(lambda x, order=order: x.permute(order), ours, theirs)
        if order:
            check_op(lambda x, order=order: x.permute(*order), ours, theirs)
        negative = tuple(d - t.dim() for d in order)
        check_op(lambda x, negative=negative: x.permute(negative), ours, theirs)
        check_op(lambda x, order=order: namespace(x).permute(x, order), ours, theirs)


@given(windowed_tensors(shape=shapes(min_dims=1)))
def test_permute_bad_orders(t):
    ours, theirs = both(t)
    n = t.dim()
    bad = [tuple(range(n + 1)), tuple(range(n - 1))]
    if n >= 2:
        bad += [(0,) * n, (0, -n) + tuple(range(2, n))]    # repeated dims (0 and -n are the same)
    for order in bad:
        check_error(lambda x, order=order: x.permute(order), ours, theirs)
    check_error(lambda x: x.permute((n,) + tuple(range(1, n))), ours, theirs)


@given(windowed_tensors(shape=shapes(min_dims=1)))
def test_movedim(t):
    ours, theirs = both(t)
    for s, d in itertools.product(dims(t), repeat=2):
        check_op(lambda x, s=s, d=d: x.movedim(s, d), ours, theirs)
    n = t.dim()
    for k in range(1, n + 1):
        for src in itertools.permutations(range(n), k):
            dst = tuple(reversed(range(n)))[:k]
            check_op(lambda x, src=src, dst=dst: x.movedim(src, dst), ours, theirs)
    check_error(lambda x: x.movedim((0,), (0, 1)), ours, theirs)
    check_error(lambda x: x.movedim(n, 0), ours, theirs)
    if n >= 2:
        check_error(lambda x: x.movedim((0, 0), (0, 1)), ours, theirs)
        check_error(lambda x: x.movedim((0, 1), (1, -n + 1)), ours, theirs)


@given(windowed_tensors(shape=shapes(max_dims=3)), st.data())
def test_expand(t, data):
    ours, theirs = both(t)
    for _ in range(10):
        sizes = [data.draw(st.sampled_from([-1, 0, 1, 3])) if s == 1 else data.draw(st.sampled_from([s, -1]))
                 for s in t.shape]
        lead = data.draw(st.lists(st.integers(0, 3), max_size=2))
        target = tuple(lead + sizes)
        check_op(lambda x, target=target: x.expand(target), ours, theirs)
        if target:
            check_op(lambda x, target=target: x.expand(*target), ours, theirs)
        check_op(lambda x, target=target: x.broadcast_to(target), ours, theirs)
        like = tuple(t.shape[i - len(lead)] if s == -1 else s for i, s in enumerate(target))
        assert_view(ours.expand_as(internals.zeros(like)), theirs.expand_as(torch.zeros(like)), ours, theirs)


@given(windowed_tensors(shape=shapes(max_dims=3)))
def test_expand_bad_sizes(t):
    ours, theirs = both(t)
    shape = list(t.shape)
    if t.dim():
        check_error(lambda x: x.expand(shape[:-1]), ours, theirs)          # fewer sizes than dims
        check_error(lambda x: x.expand([-1] + shape), ours, theirs)        # -1 for a new leading dim
    for i, size in enumerate(shape):
        if size != 1:
            grown = shape[:i] + [size + 1] + shape[i + 1:]
            check_error(lambda x, grown=grown: x.expand(grown), ours, theirs)           # a non-singleton dim changes
            negative = shape[:i] + [-2] + shape[i + 1:]
            check_error(lambda x, negative=negative: x.expand(negative), ours, theirs)


@given(windowed_tensors(shape=shapes(max_dims=3, min_side=1)))
def test_expand_negative_sizes(t):
    """Negative sizes torch only catches later, when it counts the elements ("numel: integer
    multiplication overflow"): the same class here, with our own message. (With a 0 elsewhere
    in the sizes torch even returns a tensor of negative size: that case is left out.)"""
    ours, theirs = both(t)
    shape = list(t.shape)
    check_error(lambda x: x.expand([-2] + shape), ours, theirs, message=False)
    for i, size in enumerate(shape):
        if size == 1:
            negative = shape[:i] + [-2] + shape[i + 1:]
            check_error(lambda x, negative=negative: x.expand(negative), ours, theirs, message=False)
    if t.dim() == 0:
        check_error(lambda x: x.expand(-1), ours, theirs, message=False)


@given(windowed_tensors(shape=shapes(min_dims=1)))
def test_narrow_every_start_and_length(t):
    ours, theirs = both(t)
    for d in dims(t):
        size = t.shape[d]
        for start in range(-size, size + 1):
            first = start + size if start < 0 else start
            for length in range(0, size - first + 1):
                check_op(lambda x, d=d, start=start, length=length: x.narrow(d, start, length), ours, theirs)
            check_error(lambda x, d=d, start=start, size=size, first=first: x.narrow(d, start, size - first + 1),
                        ours, theirs)
        for start in (-size - 1, size + 1):
            check_error(lambda x, d=d, start=start: x.narrow(d, start, 0), ours, theirs)
        check_error(lambda x, d=d: x.narrow(d, 0, -1), ours, theirs)
    for d in bad_dims(t):
        check_error(lambda x, d=d: x.narrow(d, 0, 0), ours, theirs)


def test_narrow_zero_dim():
    ours, theirs = both(torch.tensor(3.0))
    check_error(lambda x: x.narrow(0, 0, 1), ours, theirs)


def test_narrow_checks_the_length_before_the_start_and_the_dim():
    """``narrow_symint``'s order: a negative length is refused before an out-of-range start or a
    bad dim is looked at."""
    ours, theirs = both(torch.ones(3, 5))
    for dim, start in ((1, 7), (1, -6), (2, 0)):
        check_error(lambda x, dim=dim, start=start: x.narrow(dim, start, -1), ours, theirs)


@given(windowed_tensors())
def test_select_every_index(t):
    ours, theirs = both(t)
    if t.dim() == 0:
        check_error(lambda x: x.select(0, 0), ours, theirs)
        return
    for d in dims(t):
        size = t.shape[d]
        for i in range(-size, size):
            check_op(lambda x, d=d, i=i: x.select(d, i), ours, theirs)
        for i in (-size - 1, size, size + 3):
            check_error(lambda x, d=d, i=i: x.select(d, i), ours, theirs)
    for d in bad_dims(t):
        check_error(lambda x, d=d: x.select(d, 0), ours, theirs)


@given(windowed_tensors(shape=shapes(max_side=2)))
def test_squeeze_every_subset(t):
    ours, theirs = both(t)
    check_op(lambda x: x.squeeze(), ours, theirs)
    for d in dims(t):
        check_op(lambda x, d=d: x.squeeze(d), ours, theirs)
    n = max(t.dim(), 1)
    for k in range(n + 1):
        for subset in itertools.combinations(range(n), k):
            check_op(lambda x, subset=subset: x.squeeze(subset), ours, theirs)
    for d in bad_dims(t):
        check_error(lambda x, d=d: x.squeeze(d), ours, theirs)
        check_error(lambda x, d=d: x.squeeze((0, d)), ours, theirs)


@given(windowed_tensors())
def test_unsqueeze_every_position(t):
    ours, theirs = both(t)
    for d in dims(t, extra=1):
        check_op(lambda x, d=d: x.unsqueeze(d), ours, theirs)
    for d in bad_dims(t, extra=1):
        check_error(lambda x, d=d: x.unsqueeze(d), ours, theirs)


@given(windowed_tensors(), st.data())
def test_unsqueeze_on_chains(t, data):
    chain = data.draw(view_chains())
    ours, theirs, ours_base, theirs_base = chain.run()
    for d in dims(theirs, extra=1):
        assert_view(ours.unsqueeze(d), theirs.unsqueeze(d), ours_base, theirs_base)


@given(view_chains(max_ops=3))
def test_flatten_every_range(chain):
    """flatten is a view when ``view`` can merge the dims, a copy otherwise, as in torch."""
    ours, theirs, ours_base, theirs_base = chain.run()
    for s, e in itertools.product(dims(theirs), repeat=2):
        try:
            expected = theirs.flatten(s, e)
        except RuntimeError:
            check_error(lambda x, s=s, e=e: x.flatten(s, e), ours, theirs)
            continue
        got = ours.flatten(s, e)
        assert_same(got, expected)
        shares = expected.untyped_storage() is theirs_base.untyped_storage()
        assert (got.untyped_storage() is ours_base.untyped_storage()) == shares
    check_op(lambda x: x.flatten(), ours_base, theirs_base)
    for d in bad_dims(theirs):
        check_error(lambda x, d=d: x.flatten(d, -1), ours, theirs)
        check_error(lambda x, d=d: x.flatten(0, d), ours, theirs)


@given(windowed_tensors(shape=shapes(min_dims=1)))
def test_unflatten(t):
    ours, theirs = both(t)
    for d in dims(t):
        for sizes in _targets(t.shape[d]):
            # Leave out () and, for a dim of size 0, an ambiguous -1 like (0, -1): errors below.
            if sizes and not (-1 in sizes and math.prod(sizes) == 0):
                check_op(lambda x, d=d, sizes=sizes: x.unflatten(d, sizes), ours, theirs)
        check_error(lambda x, d=d: x.unflatten(d, ()), ours, theirs)
        check_error(lambda x, d=d: x.unflatten(d, (t.shape[d] + 1,)), ours, theirs)
        check_same_outcome(lambda x, d=d: x.unflatten(d, (t.shape[d] + 1, -1)), ours, theirs)   # fine when size 0
    for d in bad_dims(t):
        check_error(lambda x, d=d: x.unflatten(d, (1, -1)), ours, theirs)


@pytest.mark.parametrize("shape, sizes", [((0, 2), (0, -1)), ((0, 2), (-1, 0, 3)), ((4, 2), (-1, -1)),
                                          ((4, 2), (2, -2)), ((0,), (-1, -1))])
def test_unflatten_rewraps_infer_size_errors(shape, sizes):
    """torch catches infer_size's error and rewraps it, stack trace included: compare the start."""
    ours, theirs = both(torch.zeros(shape))
    check_error(lambda x: x.unflatten(0, sizes), ours, theirs, message="start")


@given(windowed_tensors(shape=shapes(min_dims=2)))
def test_diagonal_every_offset_and_dim_pair(t):
    ours, theirs = both(t)
    for d1, d2 in itertools.product(dims(t), repeat=2):
        for offset in range(-6, 7):
            if d1 % t.dim() == d2 % t.dim():
                check_error(lambda x, offset=offset, d1=d1, d2=d2: x.diagonal(offset, d1, d2), ours, theirs)
            else:
                check_op(lambda x, offset=offset, d1=d1, d2=d2: x.diagonal(offset, d1, d2), ours, theirs)
    check_op(lambda x: x.diagonal(), ours, theirs)
    for d in bad_dims(t):
        check_error(lambda x, d=d: x.diagonal(0, d, 0), ours, theirs)


def test_diagonal_needs_two_dims():
    for shape in [(), (3,)]:
        ours, theirs = both(torch.zeros(shape))
        check_error(lambda x: x.diagonal(), ours, theirs)


@given(windowed_tensors())
def test_unfold_every_size_and_step(t):
    ours, theirs = both(t)
    for d in dims(t):
        extent = t.shape[d] if t.dim() else 1
        for size in range(0, extent + 1):
            for step in range(1, 5):
                check_op(lambda x, d=d, size=size, step=step: x.unfold(d, size, step), ours, theirs)
        check_error(lambda x, d=d, extent=extent: x.unfold(d, extent + 1, 1), ours, theirs)
        check_error(lambda x, d=d: x.unfold(d, 0, 0), ours, theirs)
        check_error(lambda x, d=d: x.unfold(d, 0, -1), ours, theirs)
        check_error(lambda x, d=d: x.unfold(d, -1, 1), ours, theirs, message=False)
    for d in bad_dims(t):
        check_error(lambda x, d=d: x.unfold(d, 1, 1), ours, theirs)


def check_pieces(op, ours_base, theirs_base):
    """``op`` returns a tuple of views (split, chunk): as many as torch's, each like torch's."""
    ours_pieces, theirs_pieces = op(ours_base), op(theirs_base)
    assert isinstance(ours_pieces, tuple) and len(ours_pieces) == len(theirs_pieces)
    for o, t in zip(ours_pieces, theirs_pieces):
        assert_view(o, t, ours_base, theirs_base)


@given(windowed_tensors(shape=shapes(min_dims=1)), st.data())
def test_split_and_chunk(t, data):
    ours, theirs = both(t)
    for d in dims(t):
        size = t.shape[d]
        for split_size in range(1, 7):
            check_pieces(lambda x, split_size=split_size, d=d: x.split(split_size, d), ours, theirs)
            check_pieces(lambda x, split_size=split_size, d=d: namespace(x).split(x, split_size, d), ours, theirs)
        for chunks in range(1, 8):
            check_pieces(lambda x, chunks=chunks, d=d: x.chunk(chunks, d), ours, theirs)
            check_pieces(lambda x, chunks=chunks, d=d: namespace(x).chunk(x, chunks, d), ours, theirs)
        sections = data.draw(st.lists(st.integers(0, size), max_size=4).filter(lambda s, size=size: sum(s) <= size))
        sections = sections + [size - sum(sections)]
        check_pieces(lambda x, sections=sections, d=d: x.split(sections, d), ours, theirs)
        for bad in ([size + 1], [size, 1], [1] * (size + 1), [-1, size + 1], [size + 1, -1]):
            check_error(lambda x, bad=bad, d=d: x.split(bad, d), ours, theirs)
        if size:
            check_error(lambda x, d=d: x.split(0, d), ours, theirs)
        else:
            check_pieces(lambda x, d=d: x.split(0, d), ours, theirs)
        check_error(lambda x, d=d: x.split(-1, d), ours, theirs)
        for chunks in (0, -1):
            check_error(lambda x, chunks=chunks, d=d: x.chunk(chunks, d), ours, theirs)
    for d in bad_dims(t):
        check_error(lambda x, d=d: x.split(1, d), ours, theirs)
        check_error(lambda x, d=d: x.chunk(1, d), ours, theirs)


# ----------------------------------------------------------------------------------- as_strided

@st.composite
def as_strided_args(draw, storage_elements):
    """A (size, stride, offset) that fits inside a storage of ``storage_elements``."""
    while True:
        size = draw(shapes())
        stride = draw(st.lists(st.integers(0, 6), min_size=len(size), max_size=len(size)))
        offset = draw(st.integers(0, storage_elements))
        needed = 0 if 0 in size else offset + 1 + sum((n - 1) * s for n, s in zip(size, stride))
        if needed <= storage_elements:
            return size, tuple(stride), offset


@given(windowed_tensors(shape=shapes(min_dims=1, min_side=1)), st.data())
def test_as_strided_valid(t, data):
    ours, theirs = both(t)
    storage_elements = t.untyped_storage().nbytes() // t.element_size()
    for _ in range(10):
        size, stride, offset = data.draw(as_strided_args(storage_elements))
        check_op(lambda x, size=size, stride=stride, offset=offset: x.as_strided(size, stride, offset), ours, theirs)
        assert_view(internals.as_strided(ours, size, stride, offset), torch.as_strided(theirs, size, stride, offset),
                    ours, theirs)
        # Without an offset, the view starts at the input's own offset (and may then not fit).
        try:
            expected = theirs.as_strided(size, stride)
        except RuntimeError:
            check_error(lambda x, size=size, stride=stride: x.as_strided(size, stride), ours, theirs)
        else:
            assert_view(ours.as_strided(size, stride), expected, ours, theirs)


def test_as_strided_out_of_bounds_message():
    ours, theirs = both(torch.zeros(12))
    check_error(lambda x: x.as_strided((4, 4), (4, 1)), ours, theirs)
    with pytest.raises(RuntimeError) as e:
        ours.as_strided((4, 4), (4, 1), 0)
    assert str(e.value) == ("setStorage: sizes [4, 4], strides [4, 1], storage offset 0, and itemsize 4 requiring "
                            "a storage size of 64 are out of bounds for storage of size 48")


@given(windowed_tensors(shape=shapes(min_dims=1, min_side=1)), st.data())
def test_as_strided_out_of_bounds(t, data):
    ours, theirs = both(t)
    storage_elements = t.untyped_storage().nbytes() // t.element_size()
    size = data.draw(shapes(min_dims=1, min_side=1))
    stride = tuple(data.draw(st.lists(st.integers(0, 4), min_size=len(size), max_size=len(size))))
    reach = 1 + sum((n - 1) * s for n, s in zip(size, stride))
    offset = max(0, storage_elements - reach + 1) + data.draw(st.integers(0, 3))
    check_error(lambda x: x.as_strided(size, stride, offset), ours, theirs)


def test_as_strided_bad_arguments():
    ours, theirs = both(torch.zeros(12))
    check_error(lambda x: x.as_strided((2, 2), (1,)), ours, theirs)
    check_error(lambda x: x.as_strided((2, 2), (2, -1)), ours, theirs)
    check_error(lambda x: x.as_strided((2, -2), (2, 1)), ours, theirs)
    check_error(lambda x: x.as_strided((2, 2), (2, 1), -1), ours, theirs)


# ---------------------------------------------------------------------------------- __getitem__

@st.composite
def basic_indices(draw, shape):
    """An index of ints, slices (any start/stop, positive steps) and None, maybe with one
    Ellipsis: the items before it index the leading dims, the items after it the trailing ones."""
    def items_for(sizes):
        items = []
        for size in sizes:
            items += [None] * draw(st.integers(0, 1))
            if size > 0 and draw(st.booleans()):
                items.append(draw(st.integers(-size, size - 1)))
            else:
                bound = st.none() | st.integers(-size - 3, size + 3)
                items.append(slice(draw(bound), draw(bound), draw(st.sampled_from([None, 1, 2, 3, 7]))))
        return items + [None] * draw(st.integers(0, 1))

    n_left = draw(st.integers(0, len(shape)))
    if not draw(st.booleans()):
        index = items_for(shape[:n_left])
    else:
        n_right = draw(st.integers(0, len(shape) - n_left))
        index = items_for(shape[:n_left]) + [Ellipsis] + items_for(shape[len(shape) - n_right:])
    if len(index) == 1 and draw(st.booleans()):
        return index[0]                 # t[i] rather than t[(i,)]
    return tuple(index)


@given(view_chains(max_ops=2), st.data())
def test_getitem_basic_indexing(chain, data):
    ours, theirs, ours_base, theirs_base = chain.run()
    for _ in range(5):
        index = data.draw(basic_indices(tuple(theirs.shape)))
        assert_view(ours[index], theirs[index], ours_base, theirs_base)


def test_getitem_named_cases():
    ours, theirs = both(torch.arange(60).reshape(3, 4, 5))
    for index in [0, -1, (1, 2), (1, 2, 3), (-3, -4, -5), slice(None), slice(-2, None), slice(None, -1),
                  slice(-100, 100), slice(5, 1), slice(1, 3, 2), (Ellipsis, 1), (1, Ellipsis), (None,),
                  (None, Ellipsis, None), (Ellipsis,), Ellipsis, None, (slice(None), None, 2),
                  (1, None, slice(1, None, 2), Ellipsis, None), (Ellipsis, None, -1), ()]:
        check_op(lambda x, index=index: x[index], ours, theirs)


def test_getitem_returns_a_new_view_for_empty_index():
    ours, theirs = both(torch.arange(6).reshape(2, 3))
    assert ours[...] is not ours and theirs[...] is not theirs
    assert ours[()] is not ours and theirs[()] is not theirs


@pytest.mark.parametrize("step, message", [(0, "slice step cannot be zero"), (-1, "step must be greater than zero"),
                                           (-2, "step must be greater than zero")])
def test_getitem_non_positive_step(step, message):
    ours, theirs = both(torch.arange(6))
    for index in [slice(None, None, step), (Ellipsis, slice(1, 3, step))]:
        with pytest.raises(ValueError) as theirs_error:
            theirs[index]
        with pytest.raises(ValueError) as ours_error:
            ours[index]
        assert str(ours_error.value) == str(theirs_error.value) == message


def test_getitem_errors():
    ours, theirs = both(torch.arange(60).reshape(3, 4, 5))
    for index in [3, -4, (0, 4), (0, 0, 5), (0, 0, -6), (2, -5)]:
        check_error(lambda x, index=index: x[index], ours, theirs)
    for index in [(0, 0, 0, 0), (0, Ellipsis, 0, 0, 0), (None, 0, 0, 0, 0, None)]:
        check_error(lambda x, index=index: x[index], ours, theirs)
    for index in [1.0, (0, 1.5)]:
        check_error(lambda x, index=index: x[index], ours, theirs)
    scalar_ours, scalar_theirs = both(torch.tensor(1.0))
    check_error(lambda x: x[0], scalar_ours, scalar_theirs)
    for index in [(0,), (Ellipsis, 0), (None, 0), slice(None)]:
        check_error(lambda x, index=index: x[index], scalar_ours, scalar_theirs, message=False)


def test_getitem_index_out_of_range_message():
    ours, theirs = both(torch.arange(3))
    with pytest.raises(IndexError) as e:
        ours[5]
    assert str(e.value) == "index 5 is out of bounds for dimension 0 with size 3"
    check_error(lambda x: x[5], ours, theirs)
