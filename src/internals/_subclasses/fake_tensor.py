"""FakeTensor: a tensor with metadata and no data (``torch/_subclasses/fake_tensor.py``).

Under a FakeTensorMode every operator call on fake tensors is answered with fake tensors of the
right sizes, strides and dtype, in torch's order of attempts:

1. an operator whose output depends on values (``nonzero``, ``.item()``) raises, as torch's does
   -- unless the mode has a ``ShapeEnv`` (make_fx's fake and symbolic tracing give it one): then
   ``.item()`` returns a fresh symbol of unknown value (``zuf0``, ``u0``), and ``nonzero`` and
   the other operators whose output size depends on values give that size a symbol, as torch's
   fake implementations (``torch/_subclasses/fake_impls.py``) do. The metadata of later calls
   is computed with those symbols in it, deciding size questions size-obliviously (see
   ``fx/experimental/symbolic_shapes.py``);
2. a hand-written meta function (``internals._meta_registrations``), where there is one;
3. otherwise the operator's own kernel runs on the fakes for metadata only (``meta_execution``,
   torch's structured kernels on the Meta device): view kernels only compute metadata, a
   TensorIterator kernel stops once ``build()`` has made its outputs, a reduction's too, and
   the calls of a composite kernel run the same way. So one mechanism covers every such kernel;
4. a kernel that reads values on the way (a numpy loop, a check of the data) runs for real on
   zero-filled twins of the fakes, and only its outputs' metadata is kept: torch's
   ``run_fallback_kernel``. The random generators are left as they were.

A tracer runs a whole training step this way in microseconds per op, whatever the sizes.
"""
import contextlib

from .._meta_registrations import SYMBOLIC_META, TensorMeta, _elementwise, meta_table
from .._ops import ops
from .._tensor import Tensor
from .._tensor_base import TensorBase
from ..aten import dispatcher
from ..aten.empty_tensor import meta_execution
from ..aten.tensor_iterator import broadcast_shapes
from ..c10 import scalar_type as st
from ..c10.device import device as as_device
from ..c10.dispatch_key import DispatchKeySet, backend_key_for
from ..c10.generator import default_generator
from ..c10.storage import UntypedStorage
from ..c10.sym import SymBool, SymFloat, SymInt, inside_operator, is_symbolic, size_oblivious
from ..c10.tensor_impl import NoStorage, TensorImpl, contiguous_strides, strided
from ..utils._python_dispatch import TorchDispatchMode
from ..utils._pytree import tree_leaves, tree_map

__all__ = ["DataDependentOutputException", "DynamicOutputShapeException", "FakeTensor", "FakeTensorMode",
           "UnsupportedFakeTensorException"]


class UnsupportedFakeTensorException(RuntimeError):
    """An operator fake tensors cannot run."""


class DataDependentOutputException(RuntimeError):
    """Code asked a fake tensor for its values (``.item()``, ``.tolist()``, an ``if`` on a tensor)."""


class DynamicOutputShapeException(RuntimeError):
    """An operator whose output's shape depends on the input's values (``nonzero``)."""


# Output shapes that depend on values (torch tags them ``dynamic_output_shape``): no metadata
# can be computed without the data, so a fake run refuses them, as torch's does.
DYNAMIC_OUTPUT_SHAPE = frozenset(f"aten::{n}" for n in (
    "nonzero", "masked_select", "_unique2", "unique_dim", "unique_consecutive", "bincount", "repeat_interleave.Tensor",
    "argwhere",
    "_pack_padded_sequence", "_pad_packed_sequence",       # the packed length is the sum of the lengths
    "_ctc_loss", "_ctc_loss.Tensor",                       # log_alpha is as wide as the longest target
    "linalg_lstsq", "linalg_lstsq.out"))                   # residuals only where every matrix has full rank
# Python values computed from the data (torch's ``data_dependent_output`` tag).
DATA_DEPENDENT_OUTPUT = frozenset(f"aten::{n}" for n in (
    "_local_scalar_dense", "equal", "allclose", "is_nonzero"))


class FakeTensor(Tensor):
    """Sizes, strides, dtype and device, over a storage that holds no memory."""
    # FakeTensorMode makes every result a FakeTensor (torch's mode wraps each output), so the
    # views an operator makes of one stay FakeTensors instead of turning into plain Tensors.
    _mode_wraps_results = True

    @classmethod
    def from_meta(cls, meta, storage_offset=0):
        impl = TensorImpl.without_storage(meta.shape, meta.strides, storage_offset, meta.dtype, meta.device)
        return cls._from_impl(impl)

    def _numpy(self):     # every read of values (numpy(), tolist(), printing) comes here
        raise DataDependentOutputException(
            f"a FakeTensor has no data to read (size={tuple(self.shape)}, dtype={self.dtype}): the traced "
            "code depends on tensor values, which tracing on fake tensors cannot know")

    def __repr__(self):
        return f"FakeTensor(..., size={tuple(self.shape)}, dtype={self.dtype}, device={self.device})"


def _value_shapes(func):
    """Whether a Scalar argument of ``func`` decides its output's size (``arange(0, zf0)``): the
    factories that count their elements from their bounds."""
    return func.name().split(".")[0].split("::")[-1] in ("arange", "linspace", "logspace", "range")


class FakeTensorMode(TorchDispatchMode):
    """Answers operator calls with fake tensors. Real tensors met on the way (a module's weights)
    are given fake twins first, one per tensor, so the same weight is the same fake each time."""

    def __init__(self, *, shape_env=None):
        self._fakes = {}        # id(real tensor) -> (real, fake); the real is kept alive so ids stay unique
        self.shape_env = shape_env      # None: values and value-dependent sizes are refused

    def from_tensor(self, t):
        """The fake twin of a real tensor: same sizes, strides, offset, dtype, device, requires_grad."""
        if isinstance(t, FakeTensor):
            return t
        hit = self._fakes.get(id(t))
        if hit is None:
            impl = t._impl
            fake = FakeTensor.from_meta(TensorMeta(impl.sizes, impl.strides, impl.dtype, impl.device),
                                        impl.storage_offset)
            fake._impl.is_wrapped_number = impl.is_wrapped_number
            fake.requires_grad_(t.requires_grad)
            hit = self._fakes[id(t)] = (t, fake)
        return hit[1]

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        """``FakeTensorMode._dispatch_impl``'s order: values refused, then a hand-written meta
        function, then the kernel itself run for metadata only, then the real kernel on zeros."""
        args, kwargs = func.wrap_numbers(args, kwargs or {})     # torch's handlers take numbers too
        args, kwargs = tree_map(self._fakeify, args), tree_map(self._fakeify, kwargs)
        name = func.name()
        if self.shape_env is not None:
            unbacked = _UNBACKED_IMPLS.get(name) if self.shape_env.allow_unbacked else None
            if unbacked is not None:
                with size_oblivious():
                    return unbacked(self, *args, **kwargs)
            if any(is_symbolic(a) for a in tree_leaves((args, kwargs))):
                args, kwargs = self._wrap_symbols(func, args, kwargs)
            with size_oblivious():
                out = self._dispatch(func, name, args, kwargs)
                for t in tree_leaves(out):
                    if isinstance(t, FakeTensor) and _has_symbolic_sizes(t._impl.sizes):
                        # torch's TensorImpl computes its contiguity when it is made: with backed
                        # sizes that decides ``size == 1`` for each dim, a guard that pins a size
                        # whose example is 1 (the last piece of a split)
                        t._impl.is_contiguous()
                return out
        return self._dispatch(func, name, args, kwargs)

    def _dispatch(self, func, name, args, kwargs):
        _refuse_data_dependent(func, args)
        if _writes_first_argument(func) and _inplace_has_meta(name):
            return self._inplace(name, args, kwargs)
        if name in meta_table:
            return _wrap(meta_table[name](*args, **kwargs))
        symbolic = self.shape_env is not None and _has_symbolic_sizes((args, kwargs))
        if symbolic and name in _SYMBOLIC_SIZE_META:
            out = _SYMBOLIC_SIZE_META[name](*args, **kwargs)
            if out is not None:
                return out
        with _rng_untouched():
            try:
                return self._meta_kernel(func, args, kwargs)
            except Exception as error:  # the kernel read values (or refused the input): try it for real
                if symbolic:            # ...which needs an int for every size
                    raise UnsupportedFakeTensorException(
                        f"{func}: this package computes the metadata of this operator by running its kernel, "
                        f"which needs sizes that are known, not data-dependent ({error})") from error
                return _run_fallback_kernel(func, args, kwargs)

    def _fakeify(self, x):
        return self.from_tensor(x) if isinstance(x, Tensor) else x

    def _wrap_symbols(self, func, args, kwargs):
        """A symbol given for a Tensor argument (``x * zuf0``) as the wrapped-number tensor a
        number would have become: 0-dim, of the number's default dtype, its value unknown."""
        positions, names = func._number_slots

        def wrap(value):
            if not is_symbolic(value):
                return value
            dtype = {SymInt: st.int64, SymFloat: st.float64, SymBool: st.bool_}[type(value)]
            fake = FakeTensor.from_meta(TensorMeta((), (), dtype, as_device("cpu")))
            fake._impl.is_wrapped_number = True
            return fake
        def example(value):
            return self._float_example(value) if type(value) is SymFloat and not _value_shapes(func) else value
        args = tuple(wrap(a) if i in positions else example(a) for i, a in enumerate(args))
        kwargs = {k: wrap(v) if k in names else example(v) for k, v in kwargs.items()}
        return args, kwargs

    def _float_example(self, value):
        """A backed float symbol given for a Scalar argument (``clamp(min=zf0)``, ``alpha=zf0``)
        as its example value, with no guard: the metadata of such an output does not depend on
        the number, only on its being a float. The graph keeps the symbol, so the kernel reads
        the call's value; torch too keeps the float an input there (``l_s_.item()`` passed to
        ``clamp``) rather than specializing on it."""
        expr = value.node.expr
        hints = self.shape_env.hints
        if expr.free_symbols and expr.free_symbols <= hints.keys():
            return float(expr.xreplace({s: hints[s] for s in expr.free_symbols}))
        return value

    # Calls whose output holds a value read from data: with a ShapeEnv, torch's fake implementations
    def _local_scalar_dense(self, arg):
        """``item()``: a fresh unbacked symbol, the same one each time the same fake is read."""
        memo = getattr(arg, "item_memo", None)
        if memo is None:
            memo = arg.item_memo = self.shape_env.create_unbacked_symbol_for(arg.dtype)
        return memo

    def _data_dependent_size(self, arg, memo=None, numel=None):
        """A fresh size symbol for an output whose length is counted from ``arg``'s data; 0 when
        ``arg`` has no element (no symbol then, as torch's). ``memo``: the attribute that keeps the
        symbol, so ``x.nonzero()`` twice has one size."""
        if memo is not None and getattr(arg, memo, None) is not None:
            return getattr(arg, memo)
        numel = arg.numel() if numel is None else numel
        size = 0 if not is_symbolic(numel) and numel == 0 else self.shape_env.create_unbacked_symint(size_like=True)
        if memo is not None:
            setattr(arg, memo, size)
        return size

    def _nonzero(self, arg):
        nnz = self._data_dependent_size(arg, "nonzero_memo")
        return _empty_fake((nnz, arg.dim()), (1, nnz), st.int64, arg.device)

    def _masked_select(self, arg, mask):
        # (a mask that is not bool is refused when the graph runs, not here: torch's fake
        # implementation does not look at its dtype either)
        shape = broadcast_shapes(tuple(arg.shape), tuple(mask.shape))   # the kernel's size check
        nnz = self._data_dependent_size(arg, numel=_prod(shape))
        return _empty_fake((nnz,), None, arg.dtype, arg.device)

    def _index(self, arg, indices):
        """``x[mask]``: each bool mask stands for the index tensors its ``nonzero`` would give,
        then the index kernel's metadata is computed as for any index tensors."""
        if not _has_mask_index(indices):
            return self._dispatch(ops.aten.index.Tensor, "aten::index.Tensor", (arg, indices), {})
        expanded = []
        for i, index in enumerate(indices):
            if isinstance(index, TensorBase) and index.dtype in (st.bool_, st.uint8):
                # the checks of torch's ``meta_index_Tensor``, in its words: the fake run of
                # ``x[mask]`` refuses a mask of the wrong shape before any size is counted
                d = len(expanded)
                if d + index.dim() > arg.dim():
                    raise IndexError(f"too many indices for tensor of dimension {arg.dim()}")
                for j, n in enumerate(index.shape):
                    if n != arg.shape[d + j]:
                        raise IndexError(f"The shape of the mask {_torch_size(index.shape)} at index {i} does not "
                                         f"match the shape of the indexed tensor {_torch_size(arg.shape)} at index "
                                         f"{d + j}")
                nnz = self._data_dependent_size(index, "nonzero_memo")
                expanded += [_empty_fake((nnz,), None, st.int64, index.device)] * index.dim()
            else:
                expanded.append(index)
        return _meta_index(arg, expanded)

    def _unique(self, arg, dim, return_inverse, return_counts, memo):
        """The outputs of ``_unique2``, ``unique_dim`` and ``unique_consecutive`` (torch's
        ``_unique`` fake implementation): the unique values' count is the symbol; along a ``dim``
        on the CPU the inverse and counts are always made."""
        numel = arg.numel() if dim is None else arg.shape[dim]
        nnz = self._data_dependent_size(arg, memo if dim is None else None, numel)
        shape = (nnz,) if dim is None else (*arg.shape[:dim], nnz, *arg.shape[dim + 1:])
        out = _empty_fake(shape, None, arg.dtype, arg.device)
        always = dim is not None and arg.device.type == "cpu"
        inverse = (tuple(arg.shape) if dim is None else (arg.shape[dim],)) if return_inverse or always else (0,)
        counts = (nnz,) if return_counts or always else (0,)
        return (out, _empty_fake(inverse, None, st.int64, arg.device), _empty_fake(counts, None, st.int64, arg.device))

    def _unique2(self, arg, sorted=True, return_inverse=False, return_counts=False):  # noqa: A002 -- torch's name
        return self._unique(arg, None, return_inverse, return_counts, "unique_memo")

    def _unique_dim(self, arg, dim, sorted=True, return_inverse=False, return_counts=False):  # noqa: A002
        return self._unique(arg, dim % max(arg.dim(), 1), return_inverse, return_counts, None)

    def _unique_consecutive(self, arg, return_inverse=False, return_counts=False, dim=None):
        return self._unique(arg, dim, return_inverse, return_counts, "unique_consecutive_memo")

    def _repeat_interleave(self, repeats, output_size=None):
        """The output's length is the repeats' sum: a symbol unless ``output_size`` says it."""
        if output_size is None:
            output_size = self.shape_env.create_unbacked_symint(size_like=True)
        return _empty_fake((output_size,), None, repeats.dtype, repeats.device)

    def _bincount(self, inputs, weights=None, minlength=0):
        """One bin per value up to the largest: a symbol; the dtype as torch's fake gives it."""
        size = self.shape_env.create_unbacked_symint(size_like=True)
        dtype = st.int64 if weights is None else st.float32 if weights.dtype == st.float32 else st.float64
        return _empty_fake((size,), None, dtype, inputs.device)

    def _pack_padded_sequence(self, inputs, lengths, batch_first):
        """The packed rows are as many as the lengths add up to, so the batch sizes' length is a
        fresh symbol. torch's fake implementation is followed as it stands, though it differs
        from the kernel's outputs: the packed data's sizes are one sequence's, ``inputs``'
        sizes after the batch dim (``(T, *)``, where the kernel gives ``(sum(lengths), *)``),
        and the batch sizes take the inputs' dtype (the kernel's are int64). A graph traced
        this way still runs the kernel, with the right outputs."""
        batches = self.shape_env.create_unbacked_symint(size_like=True)
        if not batch_first:
            inputs = inputs.transpose(0, 1)
        return (_empty_fake(inputs.shape[1:], None, inputs.dtype, inputs.device),
                _empty_fake((batches,), None, inputs.dtype, inputs.device))

    def _inplace(self, name, args, kwargs):
        """``x.add_(y)`` is ``x``: check that the out-of-place result would have x's shape and a
        dtype that can be cast to x's."""
        self_ = args[0]
        base = name.replace("_.", ".").rstrip("_")
        if base in meta_table:
            result = meta_table[base](*args, **kwargs)
            shape = result.shape
            if not st.can_cast(result.dtype, self_.dtype):    # int32.add_(1.5), as the kernel refuses it
                raise RuntimeError(f"result type {result.dtype.torch_name} can't be cast to the desired output "
                                   f"type {self_.dtype.torch_name}")
        elif name == "aten::copy_":
            shape = _broadcast_to(args[1], self_)
        else:                   # fill_, zero_: the target's shape by definition
            shape = tuple(self_.shape)
        if tuple(shape) != tuple(self_.shape):
            raise RuntimeError(f"output with shape {list(self_.shape)} doesn't match the broadcast shape "
                               f"{list(shape)}")
        return self_

    def _meta_kernel(self, func, args, kwargs):
        """The backend's kernel run on the fakes themselves, for metadata only (``meta_execution``):
        a view kernel only computes metadata anyway; a TensorIterator kernel stops after
        ``build()``; a composite kernel's inner calls run the same way."""
        with meta_execution():
            out = func.redispatch(_backend_keys(args, kwargs), *args, **kwargs)
        return tree_map(_as_fake, out)


_UNBACKED_IMPLS = {
    "aten::_local_scalar_dense": FakeTensorMode._local_scalar_dense,
    "aten::nonzero": FakeTensorMode._nonzero,
    "aten::masked_select": FakeTensorMode._masked_select,
    "aten::index.Tensor": FakeTensorMode._index,
    "aten::_unique2": FakeTensorMode._unique2,
    "aten::unique_dim": FakeTensorMode._unique_dim,
    "aten::unique_consecutive": FakeTensorMode._unique_consecutive,
    "aten::repeat_interleave.Tensor": FakeTensorMode._repeat_interleave,
    "aten::bincount": FakeTensorMode._bincount,
    "aten::_pack_padded_sequence": FakeTensorMode._pack_padded_sequence,
}


def _torch_size(shape):
    """A shape as torch's messages print its ``torch.Size``."""
    return f"torch.Size({[str(n) if is_symbolic(n) else n for n in shape]})".replace("'", "")


def _has_symbolic_sizes(tree):
    """A tensor with a symbolic size, or a symbol given for a size (``new_zeros([u0])``)."""
    return any(is_symbolic(t) or isinstance(t, TensorBase) and any(is_symbolic(n) for n in t._impl.sizes)
               for t in tree_leaves(tree))


def _meta_index_select(self_, dim, index):
    """``index_select``'s output: ``self``'s sizes with ``dim`` as long as the index, contiguous."""
    dim = dim % max(self_.dim(), 1)
    shape = (*self_.shape[:dim], index.numel(), *self_.shape[dim + 1:]) if self_.dim() else ()
    return _empty_fake(shape, None, self_.dtype, self_.device)


def _meta_index(self_, indices):
    """``x[i, j]`` with integer index tensors (a bool mask was already turned into them): the
    indices broadcast to one shape, which stands in place of the indexed dimensions when they are
    adjacent and first otherwise (``meta_index_Tensor``), the output contiguous."""
    indices = list(indices) + [None] * (self_.dim() - len(indices))
    shape = broadcast_shapes(*(tuple(i.shape) for i in indices if i is not None))
    indexed = [d for d, i in enumerate(indices) if i is not None]
    adjacent = indexed == list(range(indexed[0], indexed[-1] + 1))
    rest = [n for d, n in enumerate(self_.shape) if indices[d] is None]
    if adjacent:
        before = [n for d, n in enumerate(self_.shape) if d < indexed[0]]
        out = (*before, *shape, *rest[len(before):])
    else:
        out = (*shape, *rest)
    return _empty_fake(out, None, self_.dtype, self_.device)


def _meta_arange(start, end=None, step=1, *, dtype=None, layout=None, device=None, pin_memory=None):
    """``arange(x.shape[0])``: an integer range whose bounds are symbols has ``ceil((end - start)
    / step)`` elements, an expression of them (``s77``), as torch's ``_refs.arange`` computes it.
    The kernel would turn each bound into an int, a guard pinning every symbol to its example
    value (a recompile per size, where torch's graph serves them all). None for another range:
    the kernel decides."""
    if end is None:
        start, end = 0, start
    bounds = (start, end, step)
    if not all(type(v) in (int, SymInt) for v in bounds) or type(step) is not int or step <= 0 or \
            dtype not in (None, st.int64) or layout not in (None, strided):
        return None
    if end < start:         # a guard on the symbols, as torch's check of the bounds' order
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    n = end - start if step == 1 else (end - start + step - 1) // step
    return _empty_fake((n,), (1,), st.int64, as_device(device or "cpu"))


def _meta_integer_division(a, b):
    """``x // 3``, ``x % 3`` over sizes that are symbols: the operands' promoted type, an int
    tensor's staying an int; no kernel for bool or complex. The kernels' own meta step also
    reads the divisor (an integer zero raises), which a fake does not hold."""
    dtype = st.result_type(a, b)
    if dtype is st.bool_ or dtype.is_complex:
        return None         # the kernel refuses it, in its words
    return _wrap(_elementwise([a, b], dtype))


# Operators whose kernel reads its index tensor's values even for metadata: with data-dependent
# sizes their shape rule is written here, as torch's meta functions write it; and those whose
# kernel turns a symbolic size into an int (``arange``: a None from it leaves the kernel to decide).
_SYMBOLIC_SIZE_META = {"aten::index_select": _meta_index_select, "aten::index.Tensor": _meta_index,
                       "aten::arange": _meta_arange, "aten::arange.start": _meta_arange,
                       "aten::arange.start_step": _meta_arange}


def _fake_of_meta(meta_function):
    """A ``_meta_registrations`` function returning fakes, as the functions above do: its
    TensorMeta made a fake, or its view of a fake (``diagonal``) taken as it is."""
    def run(*args, **kwargs):
        with inside_operator():     # its size arithmetic is the operator's, not graph nodes
            out = meta_function(*args, **kwargs)
        metas = out if isinstance(out, tuple) and not isinstance(out, TensorMeta) else (out,)
        return _wrap(out) if all(isinstance(m, TensorMeta) for m in metas) else tree_map(_as_fake, out)
    return run


_SYMBOLIC_SIZE_META |= {name: _fake_of_meta(fn) for name, fn in SYMBOLIC_META.items()}
_SYMBOLIC_SIZE_META |= {f"aten::{name}": _meta_integer_division for name in (
    "floor_divide", "floor_divide.Scalar", "remainder.Tensor", "remainder.Scalar", "remainder.Scalar_Tensor",
    "fmod.Tensor", "fmod.Scalar")}


def _empty_fake(sizes, strides, dtype, device):
    """A fake of these sizes (contiguous strides when None); sizes may hold symbols."""
    sizes = tuple(sizes)
    strides = contiguous_strides(sizes) if strides is None else tuple(strides)
    return FakeTensor.from_meta(TensorMeta(sizes, strides, dtype, device))


def _prod(sizes):
    n = 1
    for s in sizes:
        n = n * s
    return n


def _refuse_data_dependent(func, args):
    """torch's message is the operator: ``aten._local_scalar_dense.default``."""
    name = func.name()
    if name in DATA_DEPENDENT_OUTPUT:
        raise DataDependentOutputException(str(func))
    if name in DYNAMIC_OUTPUT_SHAPE:
        raise DynamicOutputShapeException(str(func))
    if name == "aten::index.Tensor" and _has_mask_index(args[1]):
        # torch's index turns the mask into indices with ``nonzero``, which is what refuses
        raise DynamicOutputShapeException("aten.nonzero.default")


def _has_mask_index(indices):
    """``x[mask]`` selects as many elements as the mask has True values."""
    return any(isinstance(i, TensorBase) and i.dtype in (st.bool_, st.uint8) for i in indices or ())


def _inplace_has_meta(name):
    return name in ("aten::copy_", "aten::fill_.Scalar", "aten::fill_.Tensor", "aten::zero_") or \
        name.replace("_.", ".").rstrip("_") in meta_table


def _backend_keys(args, kwargs):
    """The backend key of the first tensor argument's device (of ``device=`` for a factory)."""
    first = next((t for t in tree_leaves((args, kwargs)) if isinstance(t, TensorBase)), None)
    device = first.device if first is not None else as_device(kwargs.get("device") or "cpu")
    return DispatchKeySet([backend_key_for(device.type)])


def _as_fake(x):
    if isinstance(x, FakeTensor) or not isinstance(x, TensorBase):
        return x
    return FakeTensor._from_impl(x._impl)


@contextlib.contextmanager
def _rng_untouched():
    """A fake run draws no random numbers: the default generator's state is put back."""
    state = default_generator.get_state()
    try:
        yield
    finally:
        default_generator.set_state(state)


def _run_fallback_kernel(func, args, kwargs):
    """The real kernel on zero-filled twins of the fakes (``fake_tensor.run_fallback_kernel``);
    where zeros are refused (an integer divisor, a probability vector), on ones."""
    try:
        return _run_on_filled_twins(func, args, kwargs, 0)
    except Exception as zeros_refused:
        try:
            return _run_on_filled_twins(func, args, kwargs, 1)
        except Exception:
            raise zeros_refused from None


def _run_on_filled_twins(func, args, kwargs, fill):
    """One real storage per fake storage, so views stay views; the outputs' metadata comes back
    as fakes, an input written in place as that input."""
    storages, twins = {}, {}

    def real(x):
        if not isinstance(x, FakeTensor):
            return x
        impl = x._impl
        fake_storage = impl.storage
        if id(fake_storage) not in storages:
            storage = UntypedStorage(fake_storage.nbytes(), impl.device)
            flat = TensorBase._from_impl(TensorImpl(storage, (storage.nbytes(),), (1,), 0, st.uint8))
            dispatcher.call("zero_", flat)
            if fill:    # ones in the twin's own dtype, over the elements the fake can reach
                impl_view = TensorBase._from_impl(TensorImpl(storage, impl.sizes, impl.strides,
                                                             impl.storage_offset, impl.dtype))
                dispatcher.call("fill_.Scalar", impl_view, fill)
            storages[id(fake_storage)] = (fake_storage, storage)
        twin = TensorBase._from_impl(TensorImpl(storages[id(fake_storage)][1], impl.sizes, impl.strides,
                                                impl.storage_offset, impl.dtype))
        twin._impl.is_wrapped_number = impl.is_wrapped_number
        twins[id(twin._impl)] = (twin, x)
        return twin

    real_args, real_kwargs = tree_map(real, args), tree_map(real, kwargs)
    out = func.redispatch(_backend_keys(real_args, real_kwargs), *real_args, **real_kwargs)
    back = {id(storage): fake_storage for fake_storage, storage in storages.values()}

    def fake(x):
        if not isinstance(x, TensorBase):
            return x
        hit = twins.get(id(x._impl))
        if hit is not None:         # an input handed back (in place, out=): that input, resized alike
            fake_impl, impl = hit[1]._impl, x._impl
            fake_impl.sizes, fake_impl.strides = impl.sizes, impl.strides
            fake_impl.storage_offset = impl.storage_offset
            if isinstance(fake_impl.storage, NoStorage):
                fake_impl.storage._nbytes = max(fake_impl.storage.nbytes(), impl.storage.nbytes())
            return hit[1]
        impl = x._impl
        storage = back.get(id(impl.storage)) or NoStorage(impl.device, impl.storage.nbytes())
        return FakeTensor._from_impl(TensorImpl(storage, impl.sizes, impl.strides, impl.storage_offset,
                                                impl.dtype))
    # an out= list that is not handed back (the foreach out= forms return nothing) is resized alike
    tree_map(fake, real_kwargs.get("out"))
    return tree_map(fake, out)


def _broadcast_to(src, target):
    return broadcast_shapes(tuple(src.shape), tuple(target.shape))


def _wrap(meta):
    if isinstance(meta, tuple) and not isinstance(meta, TensorMeta):
        return tuple(_wrap(m) for m in meta)
    return FakeTensor.from_meta(meta)


def _writes_first_argument(func):
    """In-place ops annotate ``self`` as written: ``Tensor(a!) self``."""
    args = func._schema.arguments.flat_positional
    return bool(args) and args[0].annotation is not None and args[0].annotation.is_write


def _is_view(func):
    """A view returns an alias of an input: ``-> Tensor(a)``."""
    return any(r.annotation is not None and not r.annotation.is_write for r in func._schema.returns)
