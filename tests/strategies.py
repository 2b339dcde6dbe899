"""Hypothesis strategies shared by the differential tests.

* ``shapes()``: 0 to 4 dims of size 0 to 5 (zero-size tensors included).
* ``dtype_pairs``: one of the ten (internals dtype, torch dtype) pairs.
* ``torch_tensors(shape=None, dtype=None)``: a contiguous torch tensor of small integer values,
  exactly representable in every dtype the tests convert to (0/1 for bool, 0..200 for uint8,
  -100..100 otherwise). ``shape`` may be a fixed shape or a strategy such as ``shapes(min_dims=1)``.
* ``windowed_tensors()``: the same, often starting at an offset inside a larger storage.
* ``view_chains()``: a contiguous torch base tensor (often a window of a larger storage, so it has
  a storage offset) and one to four random view ops to replay on it, in torch or in internals::

      @given(view_chains())
      def test_something(chain):
          run = chain.run()                     # the same ops on a torch base and on its copy
          assert_same(run.ours, run.theirs)     # run.ours_base / run.theirs_base: the two bases

  ``chain.replay(x)`` applies the ops to any tensor, ``chain(x)`` too; ``fresh_copy(t)`` copies a
  torch tensor with its whole storage (same sizes, strides, offset; version 0). A chain prints as the
  Python that rebuilds it, so a failing example reads like ``base(...)[1:, ::2].transpose(0, -1)``.
"""
import collections

import hypothesis.strategies as st
import torch
from helpers import DTYPE_PAIRS

import internals

MAX_CHAIN_DIMS = 6     # a chain stops adding dims (unsqueeze, unfold, expand) beyond this

dtype_pairs = st.sampled_from(DTYPE_PAIRS)
torch_dtypes = st.sampled_from([theirs for _, theirs in DTYPE_PAIRS])


def shapes(min_dims=0, max_dims=4, min_side=0, max_side=5):
    return st.lists(st.integers(min_side, max_side), min_size=min_dims, max_size=max_dims).map(tuple)


def _value_range(dtype):
    if dtype is torch.bool:
        return 0, 1
    if dtype is torch.uint8:
        return 0, 200
    return -100, 100


def small_integer_tensor(shape, dtype, seed):
    """A contiguous tensor of small random integers stored as ``dtype`` (deterministic in ``seed``)."""
    low, high = _value_range(dtype)
    g = torch.Generator().manual_seed(seed)
    return torch.randint(low, high + 1, tuple(shape), generator=g).to(dtype)


def _draw_shape(draw, shape):
    """``shape`` may be None (any shape), a strategy for shapes, or a fixed shape."""
    if shape is None:
        return draw(shapes())
    if isinstance(shape, st.SearchStrategy):
        return draw(shape)
    return tuple(shape)


@st.composite
def torch_tensors(draw, shape=None, dtype=None):
    shape = _draw_shape(draw, shape)
    dtype = draw(torch_dtypes) if dtype is None else dtype
    return small_integer_tensor(shape, dtype, draw(st.integers(0, 2**31 - 1)))


@st.composite
def windowed_tensors(draw, shape=None, dtype=None):
    """A contiguous tensor that may start at an offset inside a larger storage (and end before it)."""
    shape = _draw_shape(draw, shape)
    dtype = draw(torch_dtypes) if dtype is None else dtype
    offset, tail = draw(st.integers(0, 3)), draw(st.integers(0, 3))
    numel = 1
    for s in shape:
        numel *= s
    storage = small_integer_tensor((offset + numel + tail,), dtype, draw(st.integers(0, 2**31 - 1)))
    return storage[offset:offset + numel].view(shape)


# ---------------------------------------------------------------------------------- view chains

def _format_index(index):
    def one(i):
        if isinstance(i, slice):
            parts = ["" if v is None else str(v) for v in (i.start, i.stop)]
            return ":".join(parts + ([str(i.step)] if i.step is not None else []))
        return "..." if i is Ellipsis else repr(i)
    return ", ".join(one(i) for i in index) if isinstance(index, tuple) else one(index)


class ViewOp:
    """One view method call (``name(*args)``), replayable on a torch or an internals tensor."""

    def __init__(self, name, args=()):
        self.name, self.args = name, tuple(args)

    def __call__(self, t):
        if self.name == "__getitem__":
            return t[self.args[0]]
        return getattr(t, self.name)(*self.args)

    def __repr__(self):
        if self.name == "__getitem__":
            return f"[{_format_index(self.args[0])}]"
        return f".{self.name}({', '.join(repr(a) for a in self.args)})"


Run = collections.namedtuple("Run", "ours theirs ours_base theirs_base")


class ViewChain:
    """A contiguous torch ``base`` (possibly at an offset in a larger storage) and ViewOps."""

    def __init__(self, base, ops):
        self.base, self.ops = base, tuple(ops)

    def replay(self, t):
        for op in self.ops:
            t = op(t)
        return t

    __call__ = replay

    def run(self):
        """The chain on a fresh copy of the base (torch) and on its internals twin."""
        theirs_base = fresh_copy(self.base)
        ours_base = internals.from_torch(theirs_base)
        return Run(self.replay(ours_base), self.replay(theirs_base), ours_base, theirs_base)

    def prefixes(self):
        """The chains made of the first 1, 2, ... ops: every intermediate view."""
        return [ViewChain(self.base, self.ops[:k]) for k in range(1, len(self.ops) + 1)]

    def __repr__(self):
        b = self.base
        window = f"storage of {b.untyped_storage().nbytes() // b.element_size()}, offset {b.storage_offset()}"
        return f"base({list(b.shape)}, {b.dtype}, {window})" + "".join(repr(op) for op in self.ops)


def fresh_copy(t):
    """A copy of ``t`` with its own storage of the same size, the same sizes/strides/offset, and
    its version counter at 0 (copying bytes storage to storage is not a tensor write)."""
    flat = torch.empty(t.untyped_storage().nbytes() // t.element_size(), dtype=t.dtype)
    flat.untyped_storage().copy_(t.untyped_storage())
    return flat.as_strided(t.shape, t.stride(), t.storage_offset())


def _dim_index(draw, ndim, extra=0):
    """A dim in [-n, n) for an ``ndim``-dim tensor (``extra`` widens it, e.g. 1 for unsqueeze)."""
    n = max(ndim + extra, 1)
    return draw(st.integers(-n, n - 1))


def _draw_transpose(draw, t):
    return ViewOp("transpose", (_dim_index(draw, t.dim()), _dim_index(draw, t.dim())))


def _draw_permute(draw, t):
    order = draw(st.permutations(range(t.dim())))
    negate = draw(st.lists(st.booleans(), min_size=t.dim(), max_size=t.dim()))
    return ViewOp("permute", (tuple(d - t.dim() if neg else d for d, neg in zip(order, negate)),))


def _draw_movedim(draw, t):
    if draw(st.booleans()):
        return ViewOp("movedim", (_dim_index(draw, t.dim()), _dim_index(draw, t.dim())))
    k = draw(st.integers(1, t.dim()))
    source = draw(st.permutations(range(t.dim())))[:k]
    destination = draw(st.permutations(range(t.dim())))[:k]
    return ViewOp("movedim", (tuple(source), tuple(destination)))


def _draw_slice(draw, t):
    """``t[a:b:c, ...]`` on the leading dims: negative and out-of-range bounds, positive steps."""
    k = draw(st.integers(1, t.dim()))
    index = []
    for size in t.shape[:k]:
        bound = st.none() | st.integers(-size - 2, size + 2)
        index.append(slice(draw(bound), draw(bound), draw(st.sampled_from([None, 1, 2, 3]))))
    return ViewOp("__getitem__", (tuple(index),))


def _draw_select(draw, t):
    dims = [d for d in range(t.dim()) if t.shape[d] > 0]
    d = draw(st.sampled_from(dims))
    return ViewOp("select", (d - t.dim() * draw(st.booleans()), draw(st.integers(-t.shape[d], t.shape[d] - 1))))


def _draw_narrow(draw, t):
    d = draw(st.integers(0, t.dim() - 1))
    size = t.shape[d]
    start = draw(st.integers(-size, size))            # negative: counted from the end
    first = start + size if start < 0 else start
    length = draw(st.integers(0, size - first))
    return ViewOp("narrow", (d, start, length))


def _draw_expand(draw, t):
    """Size-1 dims grow to 0..4 (or stay, as -1), maybe with a new leading dim."""
    sizes = [draw(st.sampled_from([-1, 0, 1, 2, 3, 4])) if s == 1 else draw(st.sampled_from([s, -1]))
             for s in t.shape]
    if t.dim() < MAX_CHAIN_DIMS and draw(st.booleans()):
        sizes.insert(0, draw(st.integers(0, 3)))
    return ViewOp("expand", (tuple(sizes),))


def _draw_unsqueeze(draw, t):
    return ViewOp("unsqueeze", (_dim_index(draw, t.dim(), extra=1),))


def _draw_squeeze(draw, t):
    kind = draw(st.sampled_from(["all", "one", "several"]))
    if kind == "all":
        return ViewOp("squeeze")
    if kind == "one":
        return ViewOp("squeeze", (_dim_index(draw, t.dim()),))
    dims = draw(st.lists(st.integers(0, max(t.dim(), 1) - 1), unique=True, max_size=max(t.dim(), 1)))
    return ViewOp("squeeze", (tuple(dims),))


def _draw_diagonal(draw, t):
    d1, d2 = draw(st.permutations(range(t.dim())))[:2]
    return ViewOp("diagonal", (draw(st.integers(-4, 4)), d1, d2 - t.dim() * draw(st.booleans())))


def _draw_unfold(draw, t):
    d = _dim_index(draw, t.dim())
    extent = t.shape[d] if t.dim() else 1
    return ViewOp("unfold", (d, draw(st.integers(0, extent)), draw(st.integers(1, 3))))


def _draw_t(draw, t):
    return ViewOp("t")


def _draw_flatten(draw, t):
    """flatten over dims that ``view`` can merge (so the result is still a view)."""
    n = max(t.dim(), 1)
    s, e = sorted([draw(st.integers(0, n - 1)), draw(st.integers(0, n - 1))])
    op = ViewOp("flatten", (s, e - n * draw(st.booleans())))
    if t.dim() > 0:
        merged = 1
        for size in t.shape[s:e + 1]:
            merged *= size
        try:
            t.view(*t.shape[:s], merged, *t.shape[e + 1:])
        except RuntimeError:
            return None
    return op


# name -> (applies to this torch tensor?, draw its arguments)
_VIEW_OPS = {
    "transpose": (lambda t: True, _draw_transpose),
    "permute": (lambda t: True, _draw_permute),
    "movedim": (lambda t: t.dim() > 0, _draw_movedim),
    "slice": (lambda t: t.dim() > 0, _draw_slice),
    "select": (lambda t: any(s > 0 for s in t.shape), _draw_select),
    "narrow": (lambda t: t.dim() > 0, _draw_narrow),
    "expand": (lambda t: True, _draw_expand),
    "unsqueeze": (lambda t: t.dim() < MAX_CHAIN_DIMS, _draw_unsqueeze),
    "squeeze": (lambda t: True, _draw_squeeze),
    "diagonal": (lambda t: t.dim() >= 2, _draw_diagonal),
    "unfold": (lambda t: t.dim() < MAX_CHAIN_DIMS, _draw_unfold),
    "t": (lambda t: t.dim() <= 2, _draw_t),
    "flatten": (lambda t: True, _draw_flatten),
}
VIEW_OP_NAMES = tuple(_VIEW_OPS)


@st.composite
def view_ops(draw, t, names=VIEW_OP_NAMES):
    """One view op that is valid on the torch tensor ``t``."""
    candidates = [n for n in names if _VIEW_OPS[n][0](t)]
    while True:
        op = _VIEW_OPS[draw(st.sampled_from(candidates))][1](draw, t)
        if op is not None:
            return op


@st.composite
def view_chains(draw, base=None, min_ops=1, max_ops=4, names=VIEW_OP_NAMES):
    """A ViewChain: a (windowed) contiguous base and 1-4 view ops valid on it in sequence."""
    base = draw(windowed_tensors()) if base is None else draw(base)
    ops, t = [], base
    for _ in range(draw(st.integers(min_ops, max_ops))):
        op = draw(view_ops(t, names))
        t = op(t)
        ops.append(op)
    return ViewChain(base, tuple(ops))
