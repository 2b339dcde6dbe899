"""The meta device: tensors with sizes, strides and dtype and no data (torch's Meta backend).

torch serves the Meta dispatch key with the meta step of its structured kernels and the meta
functions of ``torch/_meta_registrations.py``. Here one backend fallback serves the key for every
operator, in the order a FakeTensor's call takes (``_subclasses/fake_tensor.py``):

1. an operator whose output depends on values (``nonzero``, ``item()``) is refused, with
   torch's error for it; a call that mixes meta tensors with tensors of another device is
   refused too, as the meta step's device check refuses it; the checks torch's meta functions
   word their own way (``convolution``'s channels, ``native_layer_norm``'s shapes, ``add_``'s
   promotion in place) are made here, with their words;
2. ``copy_`` into a meta tensor checks the shapes and copies nothing; out of one it refuses;
3. a hand-written meta function (``internals._meta_registrations``), where there is one;
4. otherwise the operator's CPU kernel runs for metadata only (``meta_execution``): every tensor
   it allocates on the meta device holds no bytes, and its loops are skipped;
5. a kernel that reads values on the way runs for real on CPU twins of the meta tensors, filled
   with zeros (with ones where zeros are refused: a probability vector), and only its outputs'
   metadata is kept, on the meta device. A CPU operand is copied for that run, so that nothing
   real is written.

Operators with a composite kernel (``CompositeExplicitAutograd``) run it on meta tensors, as
torch's do; most call other operators through the dispatcher, which come back here. The few that
read values themselves (``randperm``, ``bernoulli``) are run again as in step 5. ``_to_copy``'s
composite kernel is wrapped to take the meta cases first: it calls the CPU ``copy_`` directly.

A random factory or in-place fill draws no numbers: the default generator is left as it was.
"""
import re

from ._meta_registrations import TensorMeta, meta_table
from ._subclasses.fake_tensor import _rng_untouched
from ._tensor_base import TensorBase
from .aten import dispatcher
from .aten.empty_tensor import meta_execution
from .aten.native.tensor_factories import like_strides
from .aten.tensor_iterator import broadcast_shapes
from .c10 import scalar_type as st
from .c10.device import device as as_device
from .c10.dispatch_key import DispatchKey, DispatchKeySet
from .c10.storage import UntypedStorage
from .c10.tensor_impl import NoStorage, TensorImpl, contiguous_strides, required_storage_elements
from .c10.wrap_dim import dim_list_to_bitset, wrap_dim
from .utils._pytree import tree_leaves, tree_map

__all__ = ["meta_fallback", "register_meta_fallback", "register_meta_kernels"]

_META = as_device("meta")
_CPU_KEYS = DispatchKeySet([DispatchKey.CPU])

# torch's messages for the operators whose output sizes or Python values come from the data.
_NO_META_KERNEL = ("{}: attempted to run this operator with Meta tensors, but there was no fake impl or "
                   "Meta kernel registered. You may have run into this message while using an operator with "
                   "PT2 compilation APIs (torch.compile/torch.export); in order to use this operator with those "
                   "APIs you'll need to add a fake impl. Please see the following for next steps:  "
                   "https://pytorch.org/tutorials/advanced/custom_ops_landing_page.html")
_NONZERO = ("The register_meta function for torch.nonzero() raises unimplemented by default, as a correct "
            "data-independent implementation does not exist. This implementation returns a fake value, "
            "assuming all elements of the tensor are non-zero. To enable this registration, please set "
            "'torch.fx.experimental._config.meta_nonzero_assume_all_nonzero' to True.")
_REFUSED = {"aten::_local_scalar_dense": (RuntimeError, "Tensor.item() cannot be called on meta tensors"),
            "aten::nonzero": (NotImplementedError, _NONZERO), "aten::argwhere": (NotImplementedError, _NONZERO)}
_REFUSED |= {f"aten::{name}": (NotImplementedError, _NO_META_KERNEL.format(f"aten::{name.split('.')[0]}"))
             for name in ("masked_select", "_unique2", "unique_dim", "unique_consecutive", "equal", "bincount",
                          "repeat_interleave.Tensor", "is_nonzero")}

# Operators whose meta step does not compare devices in torch: an index or a matrix on the CPU
# is taken with a meta tensor (``meta[cpu_index]``, ``meta @ cpu``), its metadata being all that
# is read. ``copy_`` and ``set_`` are handled apart.
_ANY_DEVICE = frozenset(f"aten::{name}" for name in (
    "index.Tensor", "index_put", "index_put_", "_index_put_impl_", "mm", "bmm", "addmm", "matmul", "copy_",
    "set_.source_Tensor", "set_.source_Storage_storage_offset", "_to_copy", "to.device", "to.dtype_layout",
    # torch's in-place arithmetic on meta runs its Python references, which compare no devices
    "add_.Tensor", "sub_.Tensor", "mul_.Tensor", "div_.Tensor"))


def meta_fallback(op, keys, *args, **kwargs):
    """The Meta key's kernel for every operator (a boxed backend fallback); a shape error
    reworded as torch's meta kernels word it."""
    try:
        out = _meta_kernel(op, *args, **kwargs)
    except RuntimeError as error:
        message = _meta_wording(op.name, args, kwargs, str(error))
        if message is None:
            raise
        raise _refusal(RuntimeError, message) from None
    relayout = _META_LAYOUTS.get(op.name)
    return out if relayout is None else relayout(out, *args, **kwargs)


def _svd_layout(out, A, full_matrices=False, compute_uv=True, *, driver=None):
    """torch's ``_linalg_svd`` meta function lays Vh out row-major on the meta device (as for
    cuSOLVER), where the CPU kernel's Vh is column-major (LAPACK's)."""
    U, S, Vh = out
    return (U, S, _meta_empty(Vh.shape, Vh.dtype)) if compute_uv else out


def _mse_loss_layout(out, input, target, reduction=1):
    """torch's meta ``mse_loss`` is its decomposition, ``((input - target) ** 2).mean()``: a
    reduced loss is a fresh scalar, where the CPU kernel's is a view of the squared errors."""
    return out if reduction == 0 else _meta_empty((), out.dtype)


_META_LAYOUTS = {"aten::_linalg_svd": _svd_layout, "aten::mse_loss": _mse_loss_layout}


def _meta_kernel(op, *args, **kwargs):
    name = op.name
    refused = _REFUSED.get(name)
    if refused is not None:
        raise _refusal(refused[0], refused[1])
    if name == "aten::copy_":
        return _copy(*args, **kwargs)
    if name in _INDEXING and any(isinstance(i, TensorBase) and i.dtype in (st.bool_, st.uint8)
                                 for i in args[1] or ()):
        raise _refusal(NotImplementedError, _NONZERO)     # a mask selects as many elements as it holds True values
    if name not in _ANY_DEVICE:
        _check_devices(op, args, kwargs)
    check = _META_CHECKS.get(name)
    if check is not None and args[0]._impl.device.type == "meta":
        check(*args, **kwargs)
    if name in _SHAPE_ONLY_IN_PLACE and args[0]._impl.device.type == "meta":
        return _in_place_broadcast(*args)
    if name == "aten::set_.source_Storage_storage_offset" and args[1].device != args[0]._impl.device:
        raise _refusal(RuntimeError, f'Attempted to set the storage of a tensor on device "{args[0]._impl.device}" '
                       f'to a storage on different device "{args[1].device}".  This is no longer allowed; the '
                       "devices must match.")
    empty = _EMPTY_REDUCTIONS.get(name)
    if empty is not None and args[0]._impl.device.type == "meta" and args[0].numel() == 0:
        result = empty(*args, **kwargs)
        if result is not None:
            return result
    if name in meta_table and not _writes_first_argument(op):
        return _from_meta(meta_table[name](*args, **kwargs))
    with _rng_untouched():
        try:
            with meta_execution():
                out = op.redispatch(_CPU_KEYS, *args, **kwargs)
        except Exception as error:      # the kernel read values, or refused its input: try for real
            return _on_filled_twins(op, args, kwargs, error)
    return _moved_to_meta(out, args, kwargs)


_INDEXING = frozenset({"aten::index.Tensor", "aten::index_put", "aten::index_put_", "aten::_index_put_impl_"})


# Elementwise operators whose meta kernel in torch is its Python reference (``torch/_refs``):
# their broadcast errors are the reference's, not TensorIterator's.
_REFERENCE_BROADCAST = frozenset((
    "add", "sub", "mul", "div", "atan2", "maximum", "minimum", "eq", "ne", "lt", "le", "gt", "ge", "pow",
    "copysign", "fmod", "remainder", "hypot", "logaddexp", "floor_divide", "xlogy", "lerp", "addcmul",
    "addcdiv", "where", "clamp", "bitwise_and", "bitwise_or", "bitwise_xor", "logical_and", "logical_or",
    "logical_xor"))
_MATMUL_SIZES = re.compile(r"mat1 and mat2 shapes cannot be multiplied \((\d+)x(\d+) and (\d+)x(\d+)\)")
_CAST = re.compile(r"result type (\w+) can't be cast to the desired output type (\w+(?: int)?)")
_OUT_DTYPE = re.compile(r"Found dtype (\w+) but expected (\w+)|Expected out type to be (\w+) but got (\w+)|"
                        r"Expected out tensor to have dtype (\w+), but got (\w+(?: int)?) instead")
# C++'s names of the types, which some messages print (``clamp``'s, a structured kernel's out check)
_DTYPE_NAMES = {"long int": "int64", "int": "int32", "float": "float32", "double": "float64"}
# The in-place forms whose meta step is the reference's own result-type check, not the copy out
_RESULT_TYPE_IN_PLACE = frozenset({"div_", "true_divide_"})
# Out= forms whose reference copies into ``out`` only if the dtypes are equal (``exact_dtype``)
_EXACT_OUT = frozenset({"abs", "floor", "ceil", "trunc", "frac", "sign", "sgn", "signbit", "where", "_log_softmax"})
_OUTPUT_SHAPE = re.compile(r"output with shape \[([\d, ]*)\] doesn't match the broadcast shape \[([\d, ]*)\]")


def _meta_wording(name, args, kwargs, message):
    """torch's meta message for an error the CPU kernels word otherwise, or None: a matrix
    product's (``meta_mm``), an ``out`` that cannot take the result (the references'
    ``_safe_copy_out``), and a broadcast's in the elementwise references."""
    if name == "aten::cat" and message.startswith(("Sizes of tensors must match", "Tensors must have same number")):
        return _reference_cat_error(list(args[0]), args[1] if len(args) > 1 else kwargs.get("dim", 0))
    if name == "aten::topk" and message == "selected index k out of range":
        return "k not in range for dimension"
    matched = _MATMUL_SIZES.fullmatch(message)
    if matched:
        n, m1, m2, p = matched.groups()
        return f"a and b must have same reduction dim, but got [{n}, {m1}] X [{m2}, {p}]."
    cast = _out_cast_wording(name.split("::")[-1].split(".")[0], message)
    if cast is not None:
        return cast
    if name.split("::")[-1].split(".")[0].rstrip("_") not in _REFERENCE_BROADCAST:
        return None
    matched = _OUTPUT_SHAPE.fullmatch(message)
    if matched:
        out, shape = ([int(s) for s in g.split(",") if s.strip()] for g in matched.groups())
        return f"output with shape torch.Size({out}) doesn't match the broadcast shape {tuple(shape)}"
    if message.startswith("The size of tensor a ("):
        return _reference_broadcast_error([tuple(t.shape) for t in tree_leaves((args, kwargs))
                                           if isinstance(t, TensorBase)])
    return None


def _torch_dtype(name):
    """``torch.float32`` for the ScalarType name ``Float`` in a C++ message."""
    name = _DTYPE_NAMES.get(name, name)
    found = next((d for d in (*st.ALL_DTYPES, st.complex32, *st.LIMITED_UNSIGNED) if name in (d.torch_name, d.name)),
                 None)
    return None if found is None else f"torch.{found.name}"


def _out_cast_wording(op, message):
    """A result that its ``out`` (or the tensor written in place) cannot take, as torch's meta
    step words it: the references' ``_safe_copy_out`` for most, an exact dtype for the few whose
    out= reference wants one, the result-type check of ``div_``'s reference."""
    matched = _CAST.fullmatch(message)
    if matched:
        result, out = (_torch_dtype(g) for g in matched.groups())
        if op in _RESULT_TYPE_IN_PLACE:
            return f"result type {result} can't be cast to the desired output type {out}"
        return (f"Attempting to cast from {result} to out tensor with dtype {out}, but this can't be cast because it "
                "is not safe!")
    matched = _OUT_DTYPE.fullmatch(message)
    if matched:
        out, result = (_torch_dtype(g) for g in (matched[1] or matched[4] or matched[6],
                                                  matched[2] or matched[3] or matched[5]))
        if op in _EXACT_OUT:
            return f"Expected out tensor to have dtype {result} but got {out} instead"
        return (f"Attempting to cast from {result} to out tensor with dtype {out}, but this can't be cast because it "
                "is not safe!")
    return None


def _check_convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
    """torch's meta ``convolution`` (``meta_conv``): the input's channels are the weight's times
    the groups, worded as that meta function words it."""
    if not transposed and weight.shape[1] * groups != input.shape[1]:
        raise RuntimeError("Invalid channel dimensions")


def _check_layer_norm(input, normalized_shape, weight, bias, eps):
    """``native_layer_norm``'s meta step in torch, its reference (``torch/_refs``): the checks in
    its order, the shapes printed as it prints them (a Size for a tensor's, a list for the
    normalized shape)."""
    shape, n = list(normalized_shape), len(normalized_shape)
    if n < 1:
        raise RuntimeError("Expected normalized_shape to be at least 1-dimensional, i.e., containing at least one "
                           f"element, but got normalized_shape = {shape}")
    for what, t in (("weight", weight), ("bias", bias)):
        if t is not None and list(t.shape) != shape:
            raise RuntimeError(f"Expected {what} to be of same shape as normalized_shape, but got {what} of shape "
                               f"torch.Size({list(t.shape)}) and normalized_shape = {shape}")
    if input.dim() < n or list(input.shape[input.dim() - n:]) != shape:
        raise RuntimeError(f"Given normalized_shape={shape}, expected input with shape {shape}, but got input of "
                           f"size torch.Size({list(input.shape)})")


def _check_add_in_place_tensor(self, other, *, alpha=1):
    _check_add_in_place(self, other)


def _check_add_in_place(self, other, alpha=1):
    """torch's meta step for ``add_`` and ``sub_`` (``meta_binop_inplace_alpha``): an integer
    tensor cannot take a float, nor a bool tensor anything but bools, in place."""
    kind = other.dtype if isinstance(other, TensorBase) else st.scalar_dtype(other)
    if self.dtype.category == st.INTEGRAL and kind.is_floating_point:
        raise RuntimeError("Promotion of int.add/sub_(float) in in-place ops are not possible due to element size "
                           "change.")
    if self.dtype is st.bool_ and kind is not st.bool_:
        raise RuntimeError("Promotion of bool.add/sub_(others) in in-place ops are not possible due to element size "
                           "change.")


# Checks whose words torch's meta functions have of their own, run before the kernel's
_META_CHECKS = {"aten::convolution": _check_convolution, "aten::native_layer_norm": _check_layer_norm,
                "aten::add_.Tensor": _check_add_in_place_tensor, "aten::sub_.Tensor": _check_add_in_place_tensor,
                "aten::add_.Scalar": _check_add_in_place, "aten::sub_.Scalar": _check_add_in_place}


# In-place operators whose meta function in torch (``meta_binop_inplace``) checks the shapes
# only: an integer tensor takes ``mul_(2.5)`` on meta, whose CPU kernel refuses the float.
_SHAPE_ONLY_IN_PLACE = frozenset(f"aten::{name}" for name in (
    "mul_.Tensor", "mul_.Scalar", "logical_and_", "logical_or_", "logical_xor_"))


def _in_place_broadcast(self, other):
    """``check_inplace_broadcast``: ``other`` broadcasts to ``self``'s shape; ``self`` returned."""
    if isinstance(other, TensorBase):
        shape = tuple(self.shape)
        error = _reference_broadcast_error([shape, tuple(other.shape)])
        if error is not None:
            raise RuntimeError(error)
        common = broadcast_shapes(shape, tuple(other.shape))
        if tuple(common) != shape:
            raise RuntimeError(f"output with shape torch.Size({list(shape)}) doesn't match the broadcast shape "
                               f"{tuple(common)}")
    return self


def _reference_broadcast_error(shapes):
    """The first mismatch as ``torch._refs._broadcast_shapes`` finds it, walking each shape from
    its last dim into a common shape of ones; None where the shapes broadcast."""
    common = [1] * max(len(s) for s in shapes)
    for index, shape in enumerate(shapes):
        for dim in range(-1, -1 - len(shape), -1):
            if common[dim] == 1:
                common[dim] = shape[dim]
            elif shape[dim] != 1 and common[dim] != shape[dim]:
                return (f"Attempting to broadcast a dimension of length {shape[dim]} at {dim}! Mismatching argument "
                        f"at index {index} had torch.Size({list(shape)}); but expected shape should be broadcastable "
                        f"to {common}")
    return None


def _reference_cat_error(tensors, dim):
    """``cat``'s first error as torch's reference finds it (``torch._refs.cat``, then
    ``torch._prims.cat``): the dims against the first tensor that is not 1-D, a 1-D tensor
    allowed only empty, then the sizes against the first tensor kept."""
    example = next((t for t in tensors if t.dim() != 1), tensors[0])
    mismatch = ("Number of dimensions of tensors must match.  Expected {}-D tensors, but got {}-D for tensor number "
                "{} in the list")
    for i, t in enumerate(tensors):
        if t.dim() not in (1, example.dim()):
            return mismatch.format(example.dim(), t.dim(), i)
    kept = []
    for i, t in enumerate(tensors):
        if t.dim() != example.dim() and t.shape[0] != 0:
            return mismatch.format(example.dim(), 1, i)
        if not (t.dim() == 1 and t.shape[0] == 0):
            kept.append(t)
    dim = wrap_dim(dim, example.dim())
    for i, t in enumerate(kept):
        for d, (common, length) in enumerate(zip(kept[0].shape, t.shape)):
            if d != dim and common != length:
                return (f"Sizes of tensors must match except in dimension {dim}. Expected {common} in dimension {d} "
                        f"but got {length} for tensor number {i} in the list")
    return None


def _meta_empty(sizes, dtype):
    sizes = tuple(sizes)
    strides = contiguous_strides(sizes)
    return TensorBase._from_impl(TensorImpl(_meta_storage(sizes, strides, 0, dtype), sizes, strides, 0, dtype))


def _reduced_sizes(sizes, dims, keepdim):
    return [1 if i in dims else s for i, s in enumerate(sizes) if keepdim or i not in dims]


# An empty input to a reduction without an identity: torch's meta kernels word and decide this
# apart from its CPU kernels. ``min()``/``max()`` and their ``dim`` forms check nothing there (the
# CPU check looks at the data's size in the kernel); ``amin``/``amax``/``aminmax`` refuse in their
# meta step with TensorIterator's words; ``argmin`` shares ``argmax``'s meta check, name and all.
def _min_max_all(self):
    return _meta_empty((), self.dtype)


def _min_max_dim(self, dim, keepdim=False):
    dim = wrap_dim(dim, self.dim())
    sizes = _reduced_sizes(self.shape, (dim,), keepdim) if self.dim() else []
    return _meta_empty(sizes, self.dtype), _meta_empty(sizes, st.int64)


def _mode(self, dim=-1, keepdim=False):
    return _min_max_dim(self, dim, keepdim)


def _kthvalue(self, k, dim=-1, keepdim=False):
    dim = wrap_dim(dim, self.dim())
    if self.dim() and self.shape[dim] == 0:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {dim}")


def _no_identity(self, dims):
    dims = dim_list_to_bitset(dims, self.dim()) if dims else range(self.dim())
    if not self.dim() or any(self.shape[d] == 0 for d in dims):
        raise RuntimeError("reducing over zero-size dimension for reduction operation without identity")


def _amin_amax(self, dim=(), keepdim=False):
    _no_identity(self, list(dim))


def _aminmax(self, *, dim=None, keepdim=False):
    _no_identity(self, [] if dim is None else [dim])


def _argmin_argmax(self, dim=None, keepdim=False):
    if dim is None:
        raise RuntimeError("argmax: Expected reduction dim to be specified for input.numel() == 0.")
    dim = wrap_dim(dim, self.dim())
    if self.dim() and self.shape[dim] == 0:
        raise IndexError(f"argmax: Expected reduction dim {dim} to have non-zero size.")


_EMPTY_REDUCTIONS = {"aten::min": _min_max_all, "aten::max": _min_max_all, "aten::min.dim": _min_max_dim,
                     "aten::max.dim": _min_max_dim, "aten::amin": _amin_amax, "aten::amax": _amin_amax,
                     "aten::aminmax": _aminmax, "aten::argmin": _argmin_argmax, "aten::argmax": _argmin_argmax,
                     "aten::mode": _mode, "aten::kthvalue": _kthvalue}


def _refusal(cls, message):
    """An error the meta device gives on purpose (values asked for, devices mixed): marked, so that
    a composite kernel that meets it is not run again on filled twins, which would answer."""
    error = cls(message)
    error.meta_refusal = True
    return error


def _writes_first_argument(op):
    """In-place and out= forms (``Tensor(a!)``): their meta function gives the result, not the
    tensor written, so their kernel runs instead."""
    arguments = op.schema.arguments
    first = arguments.flat_positional[0] if arguments.flat_positional else None
    return bool(arguments.out) or (first is not None and first.annotation is not None and first.annotation.is_write)


def _check_devices(op, args, kwargs):
    """Every tensor on one device, but a CPU scalar (a 0-dim tensor), which any device takes:
    the first tensor's device is the expected one, as TensorIterator's meta step decides. An
    out= tensor elsewhere is refused as the copy into it would be."""
    out_names = {a.name for a in op.schema.arguments.out}
    inputs = {k: v for k, v in kwargs.items() if k not in out_names}
    expected = None
    for t in tree_leaves((args, inputs)):
        if not isinstance(t, TensorBase) or (t._impl.device.type == "cpu" and not t._impl.sizes):
            continue
        device = t._impl.device
        if expected is None:
            expected = device
        elif device != expected:
            raise _refusal(RuntimeError, f"Tensor on device {device} is not on the expected device {expected}!")
    for t in tree_leaves([kwargs.get(name) for name in out_names]):
        if isinstance(t, TensorBase) and expected is not None and t._impl.device != expected:
            raise _refusal(RuntimeError, f"Attempting to copy from device {expected} to device {t._impl.device}, "
                           "but cross-device copies are not allowed!")


def _copy(self_, src, non_blocking=False):
    """``copy_``: into a meta tensor, a check that ``src`` broadcasts to it; out of one, refused."""
    if self_._impl.device.type != "meta":
        raise _refusal(NotImplementedError, "Cannot copy out of meta tensor; no data!")
    shape = broadcast_shapes(tuple(self_.shape), tuple(src.shape))
    if tuple(shape) != tuple(self_.shape):
        raise RuntimeError(f"output with shape {list(self_.shape)} doesn't match the broadcast shape {list(shape)}")
    return self_


def _from_meta(result):
    if isinstance(result, TensorMeta):
        impl = TensorImpl(_meta_storage(result.shape, result.strides, 0, result.dtype), tuple(result.shape),
                          tuple(result.strides), 0, result.dtype)
        return TensorBase._from_impl(impl)
    if isinstance(result, tuple):
        return tuple(_from_meta(r) for r in result)
    return result


def _meta_storage(sizes, strides, offset, dtype):
    return UntypedStorage(required_storage_elements(sizes, strides, offset) * dtype.itemsize, _META)


def _moved_to_meta(out, args=(), kwargs=None):
    """The kernel's outputs on the meta device: a tensor it made on another device (a kernel
    that builds its result on the host) or over no storage becomes a meta tensor of its
    metadata; views of one storage keep sharing one meta storage. An argument handed back (an
    in-place op on a CPU tensor with a meta operand) stays itself."""
    storages = {}
    given = {id(t) for t in tree_leaves((args, kwargs or {})) if isinstance(t, TensorBase)}

    def move(t):
        if not isinstance(t, TensorBase) or id(t) in given:
            return t
        impl = t._impl
        if impl.device.type == "meta" and not isinstance(impl.storage, NoStorage):
            return t
        key = id(impl.storage)
        if key not in storages:
            storages[key] = UntypedStorage(impl.storage.nbytes(), _META)
        return TensorBase._from_impl(TensorImpl(storages[key], impl.sizes, impl.strides, impl.storage_offset,
                                                impl.dtype))
    return tree_map(move, out)


def _run_on_filled_twins(op, args, kwargs, fill):
    """The CPU kernel for real on CPU twins of the meta tensors filled with ``fill`` (one storage
    per meta storage, so views stay views); the outputs' metadata comes back on the meta device,
    and an input handed back (in place, out=) as that input, resized alike."""
    storages, twins = {}, {}

    def twin(x):
        if not isinstance(x, TensorBase):
            return x
        if x._impl.device.type != "meta":   # a CPU tensor written in place must not change: a copy
            copied = dispatcher.call("clone", x)
            twins[id(copied._impl)] = x
            return copied
        impl = x._impl
        if id(impl.storage) not in storages:
            storage = UntypedStorage(impl.storage.nbytes(), "cpu")
            flat = TensorBase._from_impl(TensorImpl(storage, (storage.nbytes(),), (1,), 0, st.uint8))
            dispatcher.call("zero_", flat)
            storages[id(impl.storage)] = storage
        if fill:        # ones in the twin's own dtype, over the elements the meta tensor reaches
            dispatcher.call("fill_.Scalar", TensorBase._from_impl(TensorImpl(
                storages[id(impl.storage)], impl.sizes, impl.strides, impl.storage_offset, impl.dtype)), fill)
        t = TensorBase._from_impl(TensorImpl(storages[id(impl.storage)], impl.sizes, impl.strides,
                                             impl.storage_offset, impl.dtype))
        t._impl.is_wrapped_number = impl.is_wrapped_number
        twins[id(t._impl)] = x
        return t

    real_args, real_kwargs = tree_map(twin, args), tree_map(twin, kwargs)
    real_kwargs = {k: _META_TO_CPU.get(v, v) if k == "device" else v for k, v in real_kwargs.items()}
    out = op.redispatch(_CPU_KEYS, *real_args, **real_kwargs)

    def back(x):
        if not isinstance(x, TensorBase):
            return x
        original = twins.get(id(x._impl))
        if original is None:
            return x
        impl, target = x._impl, original._impl
        layout = (impl.sizes, impl.strides, impl.storage_offset)
        if target.device.type == "meta" and layout != (target.sizes, target.strides, target.storage_offset):
            target.sizes, target.strides, target.storage_offset = impl.sizes, impl.strides, impl.storage_offset
            if impl.storage.nbytes() > target.storage.nbytes():
                target.storage._nbytes = impl.storage.nbytes()
        return original
    tree_map(back, real_kwargs.get("out"))
    return _moved_to_meta(tree_map(back, out), args, kwargs)


def _on_filled_twins(op, args, kwargs, error):
    """The kernel run for real on twins filled with zeros, then with ones (zeros are refused by a
    probability vector, an integer divisor); where both fail, ``error``, the first refusal."""
    for fill in (0, 1):
        try:
            with _rng_untouched():
                return _run_on_filled_twins(op, args, kwargs, fill)
        except Exception:   # noqa: S112 -- the first error is the one to report
            continue
    raise error from None


_META_TO_CPU = {"meta": "cpu", _META: as_device("cpu")}


def _to_copy_kernel(composite):
    """``_to_copy`` with the meta device on either side: torch's kernel allocates the result and
    fills it with ``copy_`` through the dispatcher, whose Meta kernel copies nothing into a meta
    tensor and refuses to copy out of one. The package's kernel calls the CPU ``copy_`` directly,
    so the meta cases are taken here first; every other call goes on to that kernel."""
    def _to_copy(self, *, dtype=None, layout=None, device=None, pin_memory=None, non_blocking=False,
                 memory_format=None):
        target = as_device(device) if device is not None else self._impl.device
        if target.type != "meta" and self._impl.device.type != "meta":
            return composite(self, dtype=dtype, layout=layout, device=device, pin_memory=pin_memory,
                             non_blocking=non_blocking, memory_format=memory_format)
        if target.type != "meta":
            raise _refusal(NotImplementedError, "Cannot copy out of meta tensor; no data!")
        strides = like_strides(self, memory_format)
        out = dispatcher.call("empty_strided", tuple(self.shape), strides, dtype=dtype or self.dtype, device=target)
        return dispatcher.call("copy_", out, self, non_blocking)
    return _to_copy


def register_meta_fallback():
    """The Meta key's fallback; called before the operators get their kernels."""
    dispatcher.register_fallback("Meta", dispatcher.KernelFunction(meta_fallback, boxed=True))


def register_meta_kernels():
    """``_to_copy``'s composite kernel made to see the meta device first, and a Meta kernel for
    every other composite; called once the operators have their kernels."""
    to_copy = dispatcher.find("aten::_to_copy")
    entry = to_copy.kernels["CompositeExplicitAutograd"]
    # wrapped where it stands, so the CPU row still reads "default backend kernel", as torch's
    entry.fn = _to_copy_kernel(entry.fn)
    to_copy.update_table()
    dispatcher.impl("aten::_to_copy", "Meta", dispatcher.KernelFunction(entry.fn))
    dispatcher.impl("aten::equal", "Meta", dispatcher.KernelFunction(_refuse_equal))
    for op in list(dispatcher.operators.values()):
        composite = op.kernels.get("CompositeExplicitAutograd")
        if composite is not None and "Meta" not in op.kernels and not composite.fallthrough:
            dispatcher.impl(op.name, "Meta", dispatcher.KernelFunction(_composite_on_meta(op, composite.fn),
                                                                       f"{composite.debug}, on meta"))


def _composite_on_meta(op, composite):
    """A composite kernel run on meta tensors, as torch's serves the Meta key: most call other
    operators through the dispatcher and need nothing more. One that reads values itself, or
    refuses a device other than the CPU (``randperm``'s generator), is run again for real on
    filled CPU twins, its outputs' metadata kept on the meta device."""
    check = op.name not in _ANY_DEVICE

    def kernel(*args, **kwargs):
        if check:       # a mix of devices is refused here, never run on twins
            _check_devices(op, args, kwargs)
        try:
            return composite(*args, **kwargs)
        except Exception as error:
            if getattr(error, "meta_refusal", False):   # values asked for, or devices mixed, inside
                raise
            return _on_filled_twins(op, args, kwargs, error)
    return kernel


def _refuse_equal(self, other):
    """``equal`` answers from the values (its composite kernel would read ``item()``)."""
    raise _refusal(NotImplementedError, _NO_META_KERNEL.format("aten::equal"))
