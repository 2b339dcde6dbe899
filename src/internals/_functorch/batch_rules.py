"""Batching rules (``aten/src/ATen/functorch/BatchRules*.cpp``, ``BatchedFallback.cpp``).

An operator called on batched values runs once, on their physical tensors (batch dim in front),
with its arguments adjusted so the batch dim rides along: broadcasting operators get each
batched argument's dims padded to the same logical rank; operators with dim arguments get those
dims shifted past the batch dim; matrix products become ``matmul`` on the physical tensors, whose
leading dims broadcast; the operators of per-example-gradient code (convolution, pooling, losses,
embedding, layer norm, gather/scatter, advanced indexing) have theirs in ``batch_rules_nn.py``,
registered by name. An operator without a rule runs through the *fallback*: once per batch
element on that element's slices, the results stacked -- correct for any operator, but a Python
loop, as torch's fallback is (torch can warn about the performance drop:
``torch._C._functorch._set_vmap_fallback_warning_enabled``; here ``set_fallback_warning``).
"""
import ast
import contextlib
import warnings

from .._functional import broadcast_shapes, stack
from .._ops import ops
from .._tensor import Tensor
from ..autograd.grad_mode import InferenceMode
from ..c10.local_dispatch_key_set import AUTOGRAD_AND_AD_INPLACE_OR_VIEW, tls
from ..c10.scalar_type import result_type
from ..utils._pytree import tree_flatten, tree_unflatten
from .batched_tensor import CAUGHT_BEFORE_DECOMPOSITION, BatchedTensor, is_batched

__all__ = ["run_batched", "run_before_decomposition", "set_fallback_warning", "register_rules"]

_RULES = {}     # operator name -> rule, for the rule families kept in their own modules


class _Flags:
    warn_fallback = False       # one switch for every thread, as torch's is


def set_fallback_warning(enabled):
    """Warn each time an operator without a batching rule runs through the per-element loop."""
    _Flags.warn_fallback = bool(enabled)


def register_rules(rules):
    """Add a family of rules by operator name (``batch_rules_nn.py``'s, registered by ``vmap``)."""
    _RULES.update(rules)


def run_batched(func, args, kwargs):
    """The batched kernel: the rule for ``func`` at the innermost level among the arguments."""
    level = max(a._level for a in tree_flatten((args, kwargs))[0] if isinstance(a, BatchedTensor))
    name = func.overloadpacket.__name__
    _refuse_data_dependent(name)
    with _autograd_below():
        rule = _rule_for(name, func)
        result = NotImplemented if rule is None else rule(func, level, args, kwargs)
        if result is NotImplemented:
            result = _fallback(func, level, args, kwargs)
    if name in _SHARES_VERSION and isinstance(result, BatchedTensor) and isinstance(args[0], BatchedTensor):
        result._impl.version_counter = args[0]._impl.version_counter
    return _as_returned(result)


# a detached handle shares its tensor's version counter, as torch's detach does: autograd saves an
# output of an in-place operator as one (``tensor_data`` under a mode), and checks its version later
_SHARES_VERSION = {"detach", "alias"}


@contextlib.contextmanager
def _autograd_below():
    """Autograd back on for the physical operators: the Python key runs below autograd (this
    batched value's graph, if any, is recorded already), but a transform outside this vmap
    records its graph on the physical tensors, as torch's interpreter one level down does."""
    saved = tls.excluded
    if not InferenceMode.is_enabled():
        tls.excluded = saved - AUTOGRAD_AND_AD_INPLACE_OR_VIEW
    try:
        yield
    finally:
        tls.excluded = saved


def _as_returned(result):
    # a ``Tensor[]`` result reaches Python as a tuple, as torch's binding turns a handler's list into one
    return tuple(result) if type(result) is list else result


# operators whose output size depends on the values: each example's could differ
_DYNAMIC_SHAPE = {"nonzero", "unique", "_unique", "_unique2", "unique_consecutive", "unique_dim"}


def _refuse_dynamic_shape(name):
    raise RuntimeError(f"vmap: We do not support batching operators that can output dynamic shape. Attempted to "
                       f"vmap over aten::{name}. Please file an issue at https://github.com/pytorch/pytorch/issues "
                       f"if you need this feature.")


def _refuse_data_dependent(name):
    if name == "_local_scalar_dense":
        raise RuntimeError("vmap: It looks like you're calling .item() on a Tensor. We don't support vmap over "
                           "calling .item() on a Tensor, please try to rewrite what you're doing with other "
                           "operations. If error is occurring somewhere inside PyTorch internals, please file a "
                           "bug report.")
    if name in _DYNAMIC_SHAPE:
        _refuse_dynamic_shape(name)
    if name in ("is_nonzero", "equal"):
        raise RuntimeError("vmap: It looks like you're attempting to use a Tensor in some data-dependent control "
                           "flow. We don't support that yet, please shout over at "
                           "https://github.com/pytorch/functorch/issues/257 .")


# ------------------------------------------------- composites met before their decomposition
def _argwhere_fallback(func, level, args, kwargs):
    """``argwhere``: torch has no batching rule and no decomposition for it, so its fallback
    loops over the batch and stacks, which works where every example has as many nonzeros (and
    raises stack's error where they differ). Each example's call goes through the public
    function again, so an inner vmap's batched slice meets this rule too."""
    flat, spec = tree_flatten((args, kwargs))
    size = _batch_size(level, flat)
    if size == 0:
        raise RuntimeError("Batching rule not implemented for aten::argwhere. The fallback path does not support vmap "
                           "over dims of size 0.")
    _warn_fallback("argwhere")
    results = []
    for b in range(size):
        a, k = tree_unflatten([x._value[b] if is_batched(x, level) else x for x in flat], spec)
        results.append(func(*a, **k))
    return BatchedTensor(stack(results), level)


def _nonzero_before_decomposition(func, level, args, kwargs):
    """``nonzero(as_tuple=True)`` is torch's ``nonzero_numpy``, a composite with a list output,
    which torch's fallback cannot run; plain ``nonzero`` reaches the dynamic-shape refusal."""
    if not kwargs.get("as_tuple", False):
        return NotImplemented
    raise RuntimeError("Batching rule not implemented for aten::nonzero_numpy. We could not generate a fallback.")


def _where_before_decomposition(func, level, args, kwargs):
    """``where(condition)`` alone: torch's batched key refuses it by its own name, as dynamic shaped."""
    if len(args) + len(kwargs) != 1:
        return NotImplemented
    _refuse_dynamic_shape("where")


_BEFORE_DECOMPOSITION = {"argwhere": _argwhere_fallback, "nonzero": _nonzero_before_decomposition,
                         "where": _where_before_decomposition}
assert set(_BEFORE_DECOMPOSITION) == CAUGHT_BEFORE_DECOMPOSITION


def run_before_decomposition(func, args, kwargs):
    """The rule of a composite that torch's batched key meets whole, or NotImplemented."""
    rule = _BEFORE_DECOMPOSITION.get(getattr(func, "__name__", None))
    if rule is None:
        return NotImplemented
    levels = [a._level for a in tree_flatten((args, kwargs))[0] if isinstance(a, BatchedTensor)]
    if not levels:
        return NotImplemented
    return rule(func, max(levels), args, kwargs)


# ---------------------------------------------------------------------------- helpers
def _physical(x, level):
    """The physical tensor and whether it is batched at ``level``."""
    return (x._value, True) if is_batched(x, level) else (x, False)


def _logical_rank(x, level):
    return x._value.dim() - 1 if is_batched(x, level) else (x.dim() if isinstance(x, Tensor) else 0)


def _batch_size(level, values):
    for a in values:
        if is_batched(a, level):
            return a._value.shape[0]
    raise AssertionError("no batched argument at this level")


def _wrap(out, level):
    if isinstance(out, Tensor):
        return BatchedTensor(out, level)
    if isinstance(out, (tuple, list)):
        return type(out)(_wrap(o, level) for o in out) if not hasattr(out, "_fields") else \
            type(out)(*(_wrap(o, level) for o in out))
    return out


def _pad(value, rank, target):
    """A physical tensor (batch in front, logical rank ``rank``) with size-1 dims after the batch
    dim up to logical rank ``target``, so it broadcasts against the others as its logical self would."""
    for _ in range(target - rank):
        value = value.unsqueeze(1)
    return value


def _inplace(func):
    return func.overloadpacket.__name__.endswith("_") and not func.overloadpacket.__name__.startswith("_")


def _refuse_unbatched_self(func, level, args, kwargs):
    if not _inplace(func) or not args or is_batched(args[0], level):
        return
    others = [a for a in tree_flatten((args[1:], kwargs))[0] if is_batched(a, level)]
    if others:
        op = func.overloadpacket.__name__
        raise RuntimeError(f"vmap: {op}(self, *extra_args) is not possible because there exists a Tensor `other` "
                           f"in extra_args that has more elements than `self`. This happened due to `other` being "
                           f"vmapped over but `self` not being vmapped over in a vmap. Please try to use out-of-place "
                           f"operators instead of {op}. If said operator is being called inside the PyTorch "
                           f"framework, please file a bug report instead.")


def _refuse_broadcast_into(self, level, flat):
    """An in-place broadcasting op on an unbatched ``self`` with a batched operand: the result
    would need the batch dim ``self`` lacks (torch's message is the broadcast check's)."""
    logical = broadcast_shapes(*[tuple(x.shape) for x in flat if isinstance(x, Tensor)])
    shape = [_batch_size(level, flat), *logical]
    raise RuntimeError(f"output with shape {list(self.shape)} doesn't match the broadcast shape {shape}")


# ---------------------------------------------------------------------------- the fallback
def _fallback(func, level, args, kwargs):
    """Run ``func`` once per batch element and stack the results (``batchedTensorForLoopFallback``)."""
    _refuse_unbatched_self(func, level, args, kwargs)
    _warn_fallback(func.__name__)
    flat, spec = tree_flatten((args, kwargs))
    size = _batch_size(level, flat)
    if size == 0:
        return _empty_batch(func, level, flat, spec)
    results = []
    for b in range(size):
        a, k = tree_unflatten([x._value[b] if is_batched(x, level) else x for x in flat], spec)
        results.append(func(*a, **k))
    if _inplace(func):
        return args[0]
    return _stack_results(results, level, func)


def _warn_fallback(name):
    if _Flags.warn_fallback:
        warnings.warn(f"There is a performance drop because we have not yet implemented the batching rule for "
                      f"aten::{name}. Please file us an issue on GitHub so that we can prioritize its "
                      f"implementation.", stacklevel=3)


def _empty_batch(func, level, flat, spec):
    """A batch of none: the operator runs once on zeros of one example's shape, for the shapes
    and dtypes of its results, each given an empty batch dim."""
    a, k = tree_unflatten([x._value.new_zeros(x.shape) if is_batched(x, level) else x for x in flat], spec)
    one = func(*a, **k)
    if _inplace(func):
        return flat[0]
    leaves, out_spec = tree_flatten(one)
    return tree_unflatten([BatchedTensor(r.new_empty((0, *r.shape)), level) if isinstance(r, Tensor) else r
                           for r in leaves], out_spec)


def _stack_results(results, level, func):
    leaves = [tree_flatten(r) for r in results]
    spec = leaves[0][1]
    out = []
    for i, first in enumerate(leaves[0][0]):
        if isinstance(first, Tensor):
            out.append(BatchedTensor(stack([leaf[i] for leaf, _ in leaves]), level))
        else:
            out.append(first)
    return tree_unflatten(out, spec)


# ---------------------------------------------------------------------------- rules
_POINTWISE = set("""
abs absolute acos acosh add addcdiv addcmul alias angle asin asinh atan atan2 atanh bitwise_and bitwise_not
bitwise_or bitwise_xor ceil clamp clamp_max clamp_min clip clone conj_physical copy copysign cos cosh deg2rad
detach digamma div elu elu_backward empty_like eq erf erfc erfinv exp exp2 expm1 fill fix float_power floor
floor_divide fmax fmin fmod frac full_like ge gelu gelu_backward gt hardshrink hardsigmoid hardsigmoid_backward
hardswish hardswish_backward hardtanh hardtanh_backward heaviside hypot i0 igamma igammac isfinite isinf isnan
isneginf isposinf le leaky_relu leaky_relu_backward lerp lgamma log log10 log1p log2 log_sigmoid_forward
logaddexp logaddexp2 logical_and logical_not logical_or logical_xor lt masked_fill maximum minimum mish
mish_backward mul nan_to_num ne neg nextafter ones_like positive pow rad2deg rand_like randn_like reciprocal
relu relu6 remainder round rsqrt rsub sgn sigmoid sigmoid_backward sign signbit silu silu_backward sin sinc sinh
softplus softplus_backward softshrink sqrt square sub tan tanh tanh_backward threshold threshold_backward
trunc where xlogy zero zeros_like _to_copy lift_fresh lift_fresh_copy true_divide multiply divide subtract
greater greater_equal less less_equal not_equal
""".split())


# binary operators whose operands are promoted to one dtype: a batched example that is 0-dim is
# 1-dim physically, which would move it up a priority group of ``result_type``
_PROMOTING = set("""
add sub mul div true_divide rsub multiply divide subtract pow atan2 maximum minimum fmax fmin fmod remainder hypot
copysign eq ne lt le gt ge greater greater_equal less less_equal not_equal floor_divide logaddexp logaddexp2 xlogy
nextafter heaviside igamma igammac bitwise_and bitwise_or bitwise_xor logical_and logical_or logical_xor
""".split())


def _logical_promotion(func, level, args, flat):
    """The operands cast to the dtype their logical selves promote to, where a batched 0-dim
    example would promote otherwise (``float64`` example times ``float32`` vector is ``float32``)."""
    name = func.overloadpacket.__name__
    operands = args[:2]
    if name not in _PROMOTING or not any(is_batched(x, level) and x.dim() == 0 for x in operands):
        return flat
    common = result_type(*operands)
    return [x.to(common) if isinstance(x, Tensor) and x.dtype != common and any(x is o for o in operands) else x
            for x in flat]


def _refuse_growing_self(self, level, flat, rank):
    """An in-place operator whose operands broadcast past a batched ``self`` (torch pads every
    operand to the largest logical rank, so the check is its broadcast's, on physical shapes)."""
    if not is_batched(self, level) or rank <= self.dim():
        return
    def padded(x):
        return [x._value.shape[0], *[1] * (rank - x.dim()), *x.shape] if is_batched(x, level) else list(x.shape)
    target = padded(self)
    try:
        shape = list(broadcast_shapes(*[tuple(padded(x)) for x in flat if isinstance(x, Tensor)]))
    except RuntimeError:
        return      # the operator raises its own error for shapes that do not broadcast
    if shape != target:
        raise RuntimeError(f"output with shape {target} doesn't match the broadcast shape {shape}")


def _pointwise(func, level, args, kwargs):
    """Broadcasting operators: batched arguments padded to the largest logical rank; the unbatched
    ones broadcast from the right as they would have."""
    flat, spec = tree_flatten((args, kwargs))
    if _inplace(func) and not is_batched(args[0], level) and any(is_batched(x, level) for x in flat):
        _refuse_broadcast_into(args[0], level, flat)
    rank = max(_logical_rank(x, level) for x in flat if isinstance(x, Tensor))
    if _inplace(func):
        _refuse_growing_self(args[0], level, flat, rank)
        rank = _logical_rank(args[0], level)
    else:
        flat = _logical_promotion(func, level, args, flat)
    physical = [_pad(x._value, _logical_rank(x, level), rank) if is_batched(x, level) else x for x in flat]
    a, k = tree_unflatten(physical, spec)
    out = func(*a, **k)
    return args[0] if _inplace(func) else _wrap(out, level)


_DIM_NAMES = ("dim", "dim0", "dim1", "dim2", "start_dim", "end_dim", "source", "destination", "dims", "dimension")
# reductions whose dim None (or []) means every dim
_REDUCE_ALL = {"sum", "mean", "amax", "amin", "var", "std", "var_mean", "std_mean", "nansum", "linalg_vector_norm",
               "count_nonzero", "any", "all", "norm"}
_DIM_OPS = set("""
sum mean amax amin prod var std var_mean std_mean nansum logsumexp linalg_vector_norm norm count_nonzero any all
max min argmax argmin cumsum cumprod cummax cummin logcumsumexp softmax _softmax log_softmax _log_softmax
sort argsort topk kthvalue median nanmedian mode flip roll squeeze unsqueeze transpose movedim select narrow slice
index_select split split_with_sizes chunk unbind diagonal flatten unflatten cat stack
_softmax_backward_data _log_softmax_backward_data select_backward slice_backward unfold
""".split())


def _schema_positional(func):
    return func._handle.schema.arguments.flat_positional


def _bind(func, args, kwargs):
    """Positional arguments by name, the schema's defaults left out."""
    schema = func._handle.schema.arguments
    names = [a.name for a in _schema_positional(func)]
    bound = dict(zip(names, args, strict=False))
    bound.update(kwargs)
    for a in (*schema.flat_positional, *schema.flat_kwarg_only):
        # a dim left at its default (``unbind(x)`` is ``unbind(x, 0)``) must move past the batch dim too
        if a.name in _DIM_NAMES and a.name not in bound and a.default not in (None, "None"):
            bound[a.name] = ast.literal_eval(a.default)
    return names, bound


def _shift(d, rank):
    if d is None:
        return None
    if not isinstance(d, int):
        return [_shift(x, rank) for x in d]
    if d < -rank or d >= max(rank, 1):
        raise IndexError(f"Dimension out of range (expected to be in range of [{-max(rank, 1)}, {max(rank, 1) - 1}], "
                         f"but got {d})")
    return (d % rank if rank else 0) + 1


# backward formulas whose tensors are read only, so an unbatched one may be expanded over the
# batch: a batch of cotangents against one forward (``jacrev``'s, ``is_grads_batched``)
_BACKWARD_DATA = {"_softmax_backward_data", "_log_softmax_backward_data"}


def _expand_unbatched(bound, level):
    size = _batch_size(level, [v for v in bound.values() if isinstance(v, Tensor)])
    for key, v in bound.items():
        if isinstance(v, Tensor) and not is_batched(v, level):
            bound[key] = BatchedTensor(v.unsqueeze(0).expand(size, *v.shape), level)


def _dim_rule(func, level, args, kwargs):
    """Operators with dim arguments: those dims moved past the batch dim."""
    name = func.overloadpacket.__name__
    names, bound = _bind(func, args, kwargs)
    if name in _BACKWARD_DATA:
        _expand_unbatched(bound, level)
    tensors = [v for v in tree_flatten(list(bound.values()))[0] if isinstance(v, Tensor)]
    batched = [t for t in tensors if is_batched(t, level)]
    rank = max(_logical_rank(t, level) for t in tensors)
    if name in ("cat", "stack"):
        return _cat_rule(func, level, bound, names)
    if len(batched) != len(tensors) and name not in ("index_select",):
        return NotImplemented     # an unbatched tensor among them: the fallback gets it right
    if any(_logical_rank(t, level) != rank for t in batched):
        return NotImplemented
    if name == "index_select" and is_batched(bound.get("index"), level):
        return NotImplemented
    schema = func._handle.schema.arguments
    arg_names = {a.name for a in (*schema.flat_positional, *schema.flat_kwarg_only)}
    if not arg_names & set(_DIM_NAMES) or rank == 0 and name != "unsqueeze":
        # an overload without dims (``sum(x)``, ``squeeze(x)``), or one example a 0-dim tensor
        # (whose dim 0 is itself): the fallback's
        return NotImplemented
    if "dim" in arg_names and (bound.get("dim") is None or bound["dim"] in ([], ()) and name in _REDUCE_ALL):
        if name not in _REDUCE_ALL:
            return NotImplemented     # ``argmax(x)`` flattens: the fallback's
        bound["dim"] = list(range(1, rank + 1))     # no dims: every one of an example's
        return _call_physical(func, level, names, bound)
    if name == "roll" and not bound.get("dims"):
        return NotImplemented     # no dims: a roll of the flattened example, the fallback's
    out_rank = rank + 1 if name == "unsqueeze" else rank
    if "input_sizes" in bound:      # select_backward, slice_backward: the input's sizes are one example's
        out_rank = len(bound["input_sizes"])
        bound["input_sizes"] = [_batch_size(level, batched), *bound["input_sizes"]]
    for key in _DIM_NAMES:
        if key in bound:
            bound[key] = _shift(bound[key], out_rank if key == "dim" else rank)
    return _call_physical(func, level, names, bound)


def _call_physical(func, level, names, bound):
    phys = {k: (v._value if is_batched(v, level) else v) for k, v in bound.items()}
    positional = []
    for n in names:              # positional up to the first one left at its default, the rest by name
        if n not in phys:
            break
        positional.append(phys.pop(n))
    out = func(*positional, **phys)
    return _wrap(out, level)


def _cat_rule(func, level, bound, names):
    tensors = bound["tensors"]
    rank = max(_logical_rank(t, level) for t in tensors if not (t.dim() == 1 and t.shape[0] == 0))
    size = _batch_size(level, tensors)
    phys = []
    for t in tensors:
        if is_batched(t, level):
            phys.append(t._value)
        else:
            phys.append(t.unsqueeze(0).expand(size, *t.shape))
    dim = bound.get("dim", 0)
    out_rank = rank + 1 if func.overloadpacket.__name__ == "stack" else rank
    args = [phys, _shift(dim, out_rank)]
    return _wrap(func(*args), level)


def _view_rule(func, level, args, kwargs):
    """Sizes given for one example: the batch size goes in front."""
    self = args[0]
    if not is_batched(self, level) or func._overloadname != "default":     # ``view(dtype)``: the fallback's
        return NotImplemented
    name = func.overloadpacket.__name__
    value, size = self._value, list(args[1])
    batch = value.shape[0]
    if name == "expand":
        value = _pad(value, self.dim(), len(size))
        return BatchedTensor(func(value, [batch, *size], *args[2:], **kwargs), level)
    return BatchedTensor(func(value, [batch, *size], *args[2:], **kwargs), level)


def _as_strided_rule(func, level, args, kwargs):
    """``as_strided`` of one example: its sizes and strides under the batch dim's own stride, so
    each example views its own memory as torch's rule has it (an offset given is the storage's,
    the first example's; the others follow at the batch stride)."""
    _, bound = _bind(func, args, kwargs)
    self = bound["self"]
    if not is_batched(self, level) or func.overloadpacket.__name__ != "as_strided":
        return NotImplemented
    value = self._value
    offset = bound.get("storage_offset")
    offset = value.storage_offset() if offset is None else offset
    return BatchedTensor(value.as_strided([value.shape[0], *bound["size"]], [value.stride(0), *bound["stride"]],
                                          offset), level)


def _new_factory_rule(func, level, args, kwargs):
    self = args[0]
    value = self._value if is_batched(self, level) else self
    batch = _batch_size(level, [self])
    return BatchedTensor(func(value, [batch, *args[1]], *args[2:], **kwargs), level)


def _permute_rule(func, level, args, kwargs):
    self = args[0]
    rank = self.dim()
    dims = [0] + _shift(list(args[1]), rank)
    return BatchedTensor(func(self._value, dims), level)


def _t_rule(func, level, args, kwargs):
    self = args[0]
    value = self._value
    return BatchedTensor(value.transpose(1, 2) if self.dim() == 2 else value.view_as(value), level)


def _mm_rule(func, level, args, kwargs):
    """Matrix products as ``matmul`` on the physical tensors, whose leading dims broadcast."""
    name = func.overloadpacket.__name__
    a, a_batched = _physical(args[0], level)
    b, b_batched = _physical(args[1], level)
    if name in ("mm", "bmm"):
        return _wrap(a.matmul(b), level)
    if name == "mv":
        if b_batched and not a_batched:      # the vectors as the columns of one matrix: one product, as torch's rule
            return _wrap(a.mm(b.t()).t(), level)
        return _wrap(a.matmul(b.unsqueeze(-1)).squeeze(-1) if b_batched else a.matmul(b), level)
    if name == "dot" or name == "vdot":
        if name == "vdot":
            a = a.conj()
        if a_batched and b_batched:
            return _wrap(a.unsqueeze(-2).matmul(b.unsqueeze(-1)).squeeze(-1).squeeze(-1), level)
        return _wrap(a.matmul(b), level)
    return NotImplemented


def _addmm_rule(func, level, args, kwargs):
    """``beta * bias + alpha * (a @ b)`` (``nn.Linear``'s operator) from the physical product."""
    names, bound = _bind(func, args, kwargs)
    bias, a, b = (bound[n] for n in names[:3])
    beta, alpha = bound.get("beta", 1), bound.get("alpha", 1)
    product = _physical(a, level)[0].matmul(_physical(b, level)[0])
    if alpha != 1:
        product = product * alpha
    bias = _pad(bias._value, bias.dim(), 2) if is_batched(bias, level) else bias
    if beta == 0:
        return BatchedTensor(product if is_batched(a, level) or is_batched(b, level) else
                             product.expand(bias.shape[0], *product.shape), level)
    out = product + (bias if beta == 1 else bias * beta)
    if out.dim() == 2:      # only the bias was batched and it broadcast to one example's shape
        out = out.expand(_batch_size(level, [bound[n] for n in names[:3]]), *out.shape)
    return BatchedTensor(out, level)


_WHOLE = {"sum": "sum", "mean": "mean", "nansum": "nansum", "prod": "prod", "max": "amax", "min": "amin",
          "any": "any", "all": "all"}


def _whole_rule(func, level, args, kwargs):
    """A reduction of a whole example (``x.sum()``): the physical tensor flattened past the batch
    dim and reduced along it (torch's rule reduces the same dims)."""
    self = args[0]
    if func._overloadname != "default" or not is_batched(self, level) or len(args) > 1:
        return NotImplemented
    value = self._value
    flat = value.reshape(value.shape[0], self.numel())     # not -1: a batch of none would leave it ambiguous
    return BatchedTensor(getattr(flat, _WHOLE[func.overloadpacket.__name__])(1, **kwargs), level)


def _squeeze_rule(func, level, args, kwargs):
    """``squeeze()`` of one example: only its own size-1 dims go, never the batch dim."""
    self = args[0]
    if func._overloadname != "default" or not is_batched(self, level):
        return NotImplemented
    value = self._value
    for d in reversed([d for d, n in enumerate(self.shape) if n == 1]):
        value = value.squeeze(d + 1)
    return BatchedTensor(value if value is not self._value else value.view_as(value), level)


def _fill_rule(func, level, args, kwargs):
    """``fill_`` with a batched value: each example filled with its own value."""
    self, value = args[0], args[1]
    if not is_batched(value, level) or not _inplace(func):
        return _pointwise(func, level, args, kwargs) if not is_batched(value, level) else NotImplemented
    _refuse_unbatched_self(func, level, args, kwargs)
    # torch's rule copies the value broadcast over each example (a one-element value is taken too)
    self._value.copy_(_pad(value._value, value.dim(), self.dim()).expand_as(self._value))
    return self


def _batch_norm_rule(func, level, args, kwargs):
    """Training batch norm writes its batch's statistics into the running ones: a batched input
    with unbatched running statistics has no one value to write, and raises as torch's rule does.
    Anything else runs through the fallback, an example at a time."""
    _, bound = _bind(func, args, kwargs)
    stats = [bound.get("running_mean"), bound.get("running_var")]
    if bound.get("training") and is_batched(bound["input"], level) and any(
            s is not None and not is_batched(s, level) for s in stats):
        raise RuntimeError("Batch norm got a batched tensor as input while the running_mean or running_var, which "
                           "will be updated in place, were not batched.\nIf you are using a module and do not need "
                           "eval mode, please set `track_running_stats` to be False.If you are using a prebuilt "
                           "module and do not need eval mode, please see the functorch website for resources on how "
                           "to patch your module to work with vmap")
    return NotImplemented


_INPLACE_VIEWS = {"t_", "transpose_", "swapdims_", "swapaxes_", "unsqueeze_", "squeeze_"}


def _inplace_view_rule(func, level, args, kwargs):
    """``x.t_()``, ``x.unsqueeze_(0)``: the out-of-place view's rule gives the new layout, which the
    physical tensor takes on in place (the vmap's input itself, where the batch was its dim 0, as
    torch's physical ``t_`` changes it) and the batched value's logical sizes follow. A physical
    tensor on a graph is replaced by the view instead: autograd records no in-place restride.
    (A per-example loop would change only the slices.)"""
    self = args[0]
    if not is_batched(self, level):
        return NotImplemented
    view = getattr(ops.aten, func.overloadpacket.__name__[:-1])(self, *args[1:], **kwargs)
    if self._value.requires_grad:
        self._value = view._value
    else:
        phys = view._value
        self._value.as_strided_(phys.shape, phys.stride(), phys.storage_offset())
    self._impl.sizes, self._impl.strides = view._impl.sizes, view._impl.strides
    return self


def _check_errors_rule(func, level, args, kwargs):
    """``_linalg_check_errors`` on a batch of codes: one check of the physical info, whose
    first dim is vmap's, so a failure names its matrix's position in the batch
    (``BatchRulesLinearAlgebra.cpp``'s rule passes ``is_matrix=false`` likewise)."""
    names, bound = _bind(func, args, kwargs)
    info = bound["info"]
    if not is_batched(info, level):
        return func(*args, **kwargs)
    func(info._value, bound["api_name"], is_matrix=False)


# the ``_ex`` kernels asked to check: torch's rules run each on the whole physical batch without
# the check, then check that batch's info under the kernel's own API name, which names a failed
# matrix by its place in vmap's batch
_CHECKED_EX = {"linalg_inv_ex": "linalg.inv_ex", "linalg_cholesky_ex": "linalg.cholesky_ex",
               "linalg_lu_factor_ex": "torch.linalg.lu_factor_ex", "_linalg_solve_ex": "torch.linalg.solve_ex"}


def _checked_ex_rule(func, level, args, kwargs):
    if not kwargs.get("check_errors", False):
        return NotImplemented
    result = run_batched(func, args, {**kwargs, "check_errors": False})
    info = result[-1]
    if is_batched(info, level):
        ops.aten._linalg_check_errors(info._value, _CHECKED_EX[func.overloadpacket.__name__], is_matrix=False)
    return result


def _whole_batch_rule(func, level, args, kwargs):
    """An operator on a batch of matrices, its one tensor batched: one call on the physical
    tensor, whose own checks name a failed matrix by its place in the batch, as torch's rule
    (``cholesky_inverse``) does."""
    if any(is_batched(a, level) for a in tree_flatten((args[1:], kwargs))[0]):
        return NotImplemented
    return BatchedTensor(func(args[0]._value, *args[1:], **kwargs), level)


def _rule_for(name, func):
    if name == "_linalg_check_errors":
        return _check_errors_rule
    if name in _CHECKED_EX:
        return _checked_ex_rule
    if name == "cholesky_inverse":
        return _whole_batch_rule
    if name in _RULES:
        return _RULES[name]
    if name in ("fill", "fill_"):
        return _fill_rule
    if name == "native_batch_norm":
        return _batch_norm_rule
    if name in _INPLACE_VIEWS:
        return _inplace_view_rule
    if name in _POINTWISE or name.rstrip("_") in _POINTWISE and name.endswith("_"):
        return _pointwise
    if name in _WHOLE and func._overloadname == "default":
        return _whole_rule
    if name == "squeeze" and func._overloadname == "default":
        return _squeeze_rule
    if name in _DIM_OPS:
        return _dim_rule
    if name in ("view", "_unsafe_view", "reshape", "expand"):
        return _view_rule
    if name in ("new_zeros", "new_ones", "new_empty", "new_full"):
        return _new_factory_rule
    if name == "permute":
        return _permute_rule
    if name == "as_strided":
        return _as_strided_rule
    if name == "t":
        return _t_rule
    if name in ("mm", "bmm", "mv", "dot", "vdot"):
        return _mm_rule
    if name == "addmm":
        return _addmm_rule
    return None

