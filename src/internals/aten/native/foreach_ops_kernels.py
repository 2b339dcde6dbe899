"""The multi-tensor operators, ``_foreach_*``, as torch runs them on the CPU
(``aten/src/ATen/native/ForeachOpsKernels.cpp``, checks from ``ForeachUtils.h``).

torch has fused CUDA kernels for them; everywhere else (and on CUDA when the lists mix dtypes or
devices) it takes the "slow path": after checking the lists, a loop that calls the operator of
one tensor on each element (``_foreach_add.List`` is ``self[i].add(other[i], alpha)`` for each
``i``). The package has only that path. Each kernel here is made by :func:`_slow` from the name
of the per-element operator: an argument of list type (``Tensor[]``, ``Scalar[]``) is indexed by
the element, every other argument is passed as it is. In-place kernels return nothing, as the
schema's ``-> ()`` says. ``_foreach_maximum`` and ``_foreach_minimum`` run ``clamp_min`` and
``clamp_max``, as torch's do.
"""
from torchgen.model import FunctionSchema

from ...c10.scalar_type import float32, type_meta_name
from .. import dispatcher
from .resize import resize_output

__all__ = ["check_foreach_api_restrictions", "per_element_calls", "PER_ELEMENT"]

# Each foreach operator's name -> its call on one element, ``one(arguments, keywords)``:
# what its kernel loops over, and what its Autograd kernel calls to record the elements' nodes.
PER_ELEMENT = {}

_EMPTY = "Tensor list must have at least one tensor."
_SCALARS = "Tensor list must have same number of elements as scalar list."


def check_foreach_api_restrictions(schema, args):
    """ForeachUtils.h's checks, in its order: the first tensor list is not empty; every other
    tensor list has as many tensors; every scalar list as many numbers."""
    lists = [(a, v) for a, v in zip(schema.arguments.flat_positional, args) if str(a.type).endswith("[]")]
    tensor_lists = [v for a, v in lists if str(a.type).startswith("Tensor")]
    if any(len(v) == 0 for v in tensor_lists):
        raise RuntimeError(_EMPTY)
    n = len(tensor_lists[0])
    for v in tensor_lists[1:]:
        if len(v) != n:
            raise RuntimeError(f"Tensor lists must have the same number of tensors, got {n} and {len(v)}")
    for a, v in lists:
        if str(a.type).startswith("Scalar") and len(v) != n:
            raise RuntimeError(_SCALARS)
    return n


_DEFAULTS = {"1": 1, "2": 2, "None": None, "False": False}


def per_element_calls(schema, args):
    """For each element ``i``: the positional arguments of its per-element call (the schema's
    defaults for those not given: addcmul's ``value=1``)."""
    positional = schema.arguments.flat_positional
    args = tuple(args) + tuple(_DEFAULTS[a.default] for a in positional[len(args):])
    n = _OWN_CHECKS.get(str(schema.name), check_foreach_api_restrictions)(schema, args)
    if schema.name.overload_name == "Tensor" and schema.name.name.base.rstrip("_") in _ONE_NUMBER:
        _check_scalar_tensor(args[1])
    listed = [str(a.type).endswith("[]") for a in schema.arguments.flat_positional]
    return [[v[i] if is_list else v for v, is_list in zip(args, listed)] for i in range(n)]


_ONE_NUMBER = ("_foreach_add", "_foreach_mul", "_foreach_div")


def _check_scalar_tensor(t):
    """The ``.Tensor`` overloads take one number as a 0-dim tensor (``ForeachOpsKernels.cpp``)."""
    if t.dim() != 0:
        raise RuntimeError(f"scalar tensor expected to be 0 dim but it has {t.dim()} dimensions and "
                           f"{t.numel()} elements.")


def _one(op, last_as=None):
    """The call of ``op`` on one element's arguments (its last one passed as the keyword
    ``last_as`` when given: addcmul's ``value``)."""
    if last_as is None:
        return lambda call, kwargs: dispatcher.call(op, *call, **kwargs)
    return lambda call, kwargs: dispatcher.call(op, *call[:-1], **{last_as: call[-1]}, **kwargs)


def _slow(func, op, last_as=None):
    """The slow-path kernel of the foreach schema ``func``: ``op`` on each element."""
    if func.endswith("-> ()"):         # an in-place one writes its first list
        func = func.replace("(Tensor[] self", "(Tensor(a!)[] self", 1)
    schema = FunctionSchema.parse(func)
    inplace = not schema.returns
    one = PER_ELEMENT[str(schema.name)] = _one(op, last_as)

    def kernel(*args, **kwargs):
        results = tuple(one(call, kwargs) for call in per_element_calls(schema, args))
        return None if inplace else results
    kernel.__name__ = kernel.__qualname__ = f"{schema.name}_slow"
    kernel.__doc__ = f"``{schema.name}`` on the CPU: ``{op}`` on each element."
    return kernel


def _packed_scalars(func, op):
    """``addcmul``/``addcdiv`` with their numbers packed in a 1-d tensor: read into a scalar list
    (torch's ``convert_tensor_to_scalar_list``), then the scalar-list loop."""
    scalar_list = _slow(func.replace("Tensor scalars", "Scalar[] scalars"), op, "value")

    def kernel(self, tensor1, tensor2, scalars):
        if scalars.dim() != 1:
            raise RuntimeError(f"Expected packed scalar Tensor to be of dimension 1. Got {scalars.dim()} instead.")
        if scalars.numel() != len(self):
            raise RuntimeError(f"Expected length of scalars to match input of length {len(self)} but got "
                               f"{scalars.numel()} instead.")
        return scalar_list(self, tensor1, tensor2, scalars.tolist())
    return kernel


# Each kernel: (its schema, the per-element operator), in-place and functional from one line.
_BINARY = {"add": ("add", True), "sub": ("sub", True), "mul": ("mul", False), "div": ("div", False)}
_ALPHA = ", *, Scalar alpha=1"
_KERNELS = {}
for _name, (_op, _alpha) in _BINARY.items():
    for _suffix in ("", "_"):
        _KERNELS[f"foreach_tensor_{_name}_scalar_kernel_slow{_suffix}"] = (
            f"_foreach_{_name}{_suffix}.Scalar(Tensor[] self, Scalar scalar) -> {'()' if _suffix else 'Tensor[]'}",
            f"{_op}{_suffix}.Scalar")
        _KERNELS[f"foreach_tensor_{_name}_scalarlist_kernel_slow{_suffix}"] = (
            f"_foreach_{_name}{_suffix}.ScalarList(Tensor[] self, Scalar[] scalars) -> "
            f"{'()' if _suffix else 'Tensor[]'}", f"{_op}{_suffix}.Scalar")
        _KERNELS[f"foreach_tensor_{_name}_list_kernel_slow{_suffix}"] = (
            f"_foreach_{_name}{_suffix}.List(Tensor[] self, Tensor[] other{_ALPHA if _alpha else ''}) -> "
            f"{'()' if _suffix else 'Tensor[]'}", f"{_op}{_suffix}.Tensor")
        if _name != "sub":
            _KERNELS[f"foreach_tensor_{_name}_tensor_kernel_slow{_suffix}"] = (
                f"_foreach_{_name}{_suffix}.Tensor(Tensor[] self, Tensor other{_ALPHA if _alpha else ''}) -> "
                f"{'()' if _suffix else 'Tensor[]'}", f"{_op}{_suffix}.Tensor")
for _name in ("clamp_max", "clamp_min"):
    for _suffix in ("", "_"):
        _ret = "()" if _suffix else "Tensor[]"
        _KERNELS[f"foreach_tensor_{_name}_scalar_kernel_slow{_suffix}"] = (
            f"_foreach_{_name}{_suffix}.Scalar(Tensor[] self, Scalar scalar) -> {_ret}", f"{_name}{_suffix}")
        _KERNELS[f"foreach_tensor_{_name}_scalarlist_kernel_slow{_suffix}"] = (
            f"_foreach_{_name}{_suffix}.ScalarList(Tensor[] self, Scalar[] scalars) -> {_ret}", f"{_name}{_suffix}")
        _KERNELS[f"foreach_tensor_{_name}_list_kernel_slow{_suffix}"] = (
            f"_foreach_{_name}{_suffix}.List(Tensor[] self, Tensor[] other) -> {_ret}", f"{_name}{_suffix}.Tensor")
for _name in ("addcmul", "addcdiv"):
    for _suffix in ("", "_"):
        _ret = "()" if _suffix else "Tensor[]"
        _head = f"_foreach_{_name}{_suffix}.{{}}(Tensor[] self, Tensor[] tensor1, Tensor[] tensor2, "
        _KERNELS[f"foreach_tensor_{_name}_scalar_slow{_suffix}"] = (
            _head.format("Scalar") + f"Scalar value=1) -> {_ret}", _name + _suffix)
        _KERNELS[f"foreach_tensor_{_name}_scalarlist_slow{_suffix}"] = (
            _head.format("ScalarList") + f"Scalar[] scalars) -> {_ret}", _name + _suffix)
UNARY = ("abs", "acos", "asin", "atan", "ceil", "cos", "cosh", "erf", "erfc", "exp", "expm1", "floor", "frac",
         "lgamma", "log", "log10", "log1p", "log2", "neg", "reciprocal", "round", "rsqrt", "sigmoid", "sign", "sin",
         "sinh", "sqrt", "tan", "tanh", "trunc")
for _name in UNARY:
    _KERNELS[f"foreach_tensor_{_name}_slow"] = (f"_foreach_{_name}(Tensor[] self) -> Tensor[]", _name)
    _KERNELS[f"foreach_tensor_{_name}_slow_"] = (f"_foreach_{_name}_(Tensor[] self) -> ()", f"{_name}_")
for _suffix in ("", "_"):
    _ret = "()" if _suffix else "Tensor[]"
    _KERNELS.update({
        f"foreach_tensor_ternary_lerp_slow{_suffix}": (
            f"_foreach_lerp{_suffix}.List(Tensor[] self, Tensor[] tensors1, Tensor[] weights) -> {_ret}",
            f"lerp{_suffix}.Tensor"),
        f"foreach_tensor_lerp_list_kernel_slow{_suffix}": (
            f"_foreach_lerp{_suffix}.Scalar(Tensor[] self, Tensor[] tensors1, Scalar weight) -> {_ret}",
            f"lerp{_suffix}.Scalar"),
        f"foreach_tensor_lerp_scalarlist_kernel_slow{_suffix}": (
            f"_foreach_lerp{_suffix}.ScalarList(Tensor[] self, Tensor[] tensors1, Scalar[] weight) -> {_ret}",
            f"lerp{_suffix}.Scalar"),
        f"foreach_tensor_pow_list_kernel_slow{_suffix}": (
            f"_foreach_pow{_suffix}.List(Tensor[] self, Tensor[] exponent) -> {_ret}",
            "pow_.Tensor" if _suffix else "pow.Tensor_Tensor"),
        f"foreach_tensor_pow_scalar_kernel_slow{_suffix}": (
            f"_foreach_pow{_suffix}.Scalar(Tensor[] self, Scalar exponent) -> {_ret}",
            "pow_.Scalar" if _suffix else "pow.Tensor_Scalar"),
        f"foreach_tensor_pow_scalarlist_kernel_slow{_suffix}": (
            f"_foreach_pow{_suffix}.ScalarList(Tensor[] self, Scalar[] exponent) -> {_ret}",
            "pow_.Scalar" if _suffix else "pow.Tensor_Scalar"),
    })
_KERNELS.update({
    "foreach_scalar_pow_list_kernel_slow": ("_foreach_pow.ScalarAndTensor(Scalar self, Tensor[] exponent) -> Tensor[]",
                                            "pow.Scalar"),
    "foreach_tensor_zero_slow_": ("_foreach_zero_(Tensor[] self) -> ()", "zero_"),
    "foreach_tensor_clone_slow": ("_foreach_clone(Tensor[] self, *, MemoryFormat? memory_format=None) -> Tensor[]",
                                  "clone"),
    "foreach_tensor_copy_list_kernel_slow_": ("_foreach_copy_(Tensor[] self, Tensor[] src, bool non_blocking=False) "
                                              "-> ()", "copy_"),
})

for _kernel, (_func, _op) in _KERNELS.items():
    globals()[_kernel] = _slow(_func, _op, "value" if _op.startswith("addc") else None)
    __all__.append(_kernel)
# maximum and minimum run clamp_min and clamp_max: their elements' calls are those
for _name, _kernel in (("maximum", "clamp_min"), ("minimum", "clamp_max")):
    for _key in [k for k in PER_ELEMENT if k.startswith(f"_foreach_{_kernel}")]:
        PER_ELEMENT[_key.replace(_kernel, _name, 1)] = PER_ELEMENT[_key]
for _name in ("addcmul", "addcdiv"):
    for _suffix in ("", "_"):
        _func = (f"_foreach_{_name}{_suffix}.Tensor(Tensor[] self, Tensor[] tensor1, Tensor[] tensor2, "
                 f"Tensor scalars) -> {'()' if _suffix else 'Tensor[]'}")
        globals()[f"foreach_tensor_{_name}_tensor_slow{_suffix}"] = _packed_scalars(_func, _name + _suffix)
        __all__.append(f"foreach_tensor_{_name}_tensor_slow{_suffix}")


def _norm(call, kwargs):
    """One tensor's vector norm, over all its elements."""
    t, ord, dtype = call
    return dispatcher.call("linalg_vector_norm", t, ord, None, False, dtype=dtype)


_NORM = FunctionSchema.parse("_foreach_norm.Scalar(Tensor[] self, Scalar ord=2, ScalarType? dtype=None) -> Tensor[]")
PER_ELEMENT[str(_NORM.name)] = _norm


def foreach_tensor_norm_slow(self, ord=2, dtype=None):
    """``_foreach_norm.Scalar``: the vector norm of each tensor, over all its elements."""
    return tuple(_norm(call, {}) for call in per_element_calls(_NORM, (self, ord, dtype)))


__all__.append("foreach_tensor_norm_slow")


def _max(call, kwargs):
    """One tensor's maximum over all its elements. An empty tensor is refused with the foreach
    operator's own message (``max()`` would ask for a dimension)."""
    if call[0].numel() == 0:
        raise RuntimeError("_foreach_max cannot compute the maximum of an empty tensor; max over zero elements is "
                           "undefined.")
    return dispatcher.call("max", call[0])


_MAX = FunctionSchema.parse("_foreach_max(Tensor[] self) -> Tensor[]")
PER_ELEMENT[str(_MAX.name)] = _max


def foreach_tensor_max_slow(self):
    """``_foreach_max``: the largest element of each tensor, a 0-dim tensor of its dtype."""
    return tuple(_max(call, {}) for call in per_element_calls(_MAX, (self,)))


def _powsum(call, kwargs):
    """``sum(|x| ** ord)`` over one tensor, taken after casting it to ``dtype`` when given: the
    vector norm without its final root, and with no special case for ``ord`` 0 or infinite
    (``|0| ** 0`` counts 1). Half-width floats are computed in float32, as torch's reduction
    accumulates them, and the sum is cast back."""
    t, ord, dtype = call
    if dtype is not None and t.dtype is not dtype:
        t = dispatcher.call("_to_copy", t, dtype=dtype)
    if not (t.dtype.is_floating_point or t.dtype.is_complex):
        raise NotImplementedError(f"\"powsum_cpu\" not implemented for '{t.dtype.torch_name}'")
    magnitude = dispatcher.call("abs", t)
    real = magnitude.dtype
    if real.is_reduced_float:
        magnitude = dispatcher.call("_to_copy", magnitude, dtype=float32)
    total = dispatcher.call("sum", dispatcher.call("pow.Tensor_Scalar", magnitude, ord))
    return total if total.dtype is real else dispatcher.call("_to_copy", total, dtype=real)


_POWSUM = FunctionSchema.parse("_foreach_powsum.Scalar(Tensor[] self, Scalar ord=2, ScalarType? dtype=None) "
                               "-> Tensor[]")
PER_ELEMENT[str(_POWSUM.name)] = _powsum


def foreach_tensor_powsum_slow(self, ord=2, dtype=None):
    """``_foreach_powsum.Scalar``: ``sum(|x| ** ord)`` of each tensor (what ``_foreach_norm``
    computes before its root), a 0-dim tensor of the real dtype."""
    return tuple(_powsum(call, {}) for call in per_element_calls(_POWSUM, (self, ord, dtype)))


def _check_mm(schema, args):
    """``_foreach_mm``'s own checks (``ForeachOpsKernels.cpp``), before each ``mm`` checks its pair."""
    self, mat2 = args
    if len(self) == 0:
        raise RuntimeError("_foreach_mm requires non-empty tensor lists")
    if len(self) != len(mat2):
        raise RuntimeError("_foreach_mm: self and mat2 must have the same number of tensors")
    return len(self)


_MM = FunctionSchema.parse("_foreach_mm(Tensor[] self, Tensor[] mat2) -> Tensor[]")
PER_ELEMENT[str(_MM.name)] = _one("mm")
_OWN_CHECKS = {str(_MM.name): _check_mm}


def foreach_tensor_mm_slow(self, mat2):
    """``_foreach_mm``: ``mm`` of each pair of matrices."""
    return tuple(dispatcher.call("mm", a, b) for a, b in per_element_calls(_MM, (self, mat2)))


def foreach_tensor_copy_functional(self, src, non_blocking=False):
    """``_foreach_copy``, the functional form of ``_foreach_copy_`` (torch generates it for
    functionalization: each of ``self`` cloned, then the in-place copy onto the clones). torch
    binds no Python name for it; ``torch.ops.aten._foreach_copy`` reaches it."""
    clones = tuple(dispatcher.call("clone", t) for t in self)
    if clones:
        dispatcher.call("_foreach_copy_", clones, src, non_blocking)
    return clones


def _out_form(functional, name):
    """The ``out=`` form torch generates for a foreach operator (``autogen`` in its YAML; the
    kernel is written out in ``CompositeViewCopyKernels.cpp``): the functional operator, then
    every ``out`` resized to its result, then each result copied in, which wants equal dtypes."""
    def kernel(*args, out, **kwargs):
        results = functional(*args, **kwargs)
        if len(out) != len(results):
            raise RuntimeError(f"{name}: expected {len(results)} out tensors, but got {len(out)}")
        for o, r in zip(out, results):
            resize_output(o, r.shape)
        for o, r in zip(out, results):
            if o.dtype is not r.dtype:
                raise RuntimeError(f"Expected out tensor to have dtype {type_meta_name(r.dtype)}, but got "
                                   f"{type_meta_name(o.dtype)} instead")
            dispatcher.call("copy_", o, r)
    kernel.__name__ = kernel.__qualname__ = f"{functional.__name__}_out"
    kernel.__doc__ = f"``{name}``: {functional.__name__} written into ``out``."
    return kernel


foreach_tensor_max_slow_out = _out_form(foreach_tensor_max_slow, "_foreach_max.out")
foreach_tensor_powsum_slow_out = _out_form(foreach_tensor_powsum_slow, "_foreach_powsum.Scalar_out")
__all__ += ["foreach_tensor_max_slow", "foreach_tensor_powsum_slow", "foreach_tensor_mm_slow",
            "foreach_tensor_copy_functional", "foreach_tensor_max_slow_out", "foreach_tensor_powsum_slow_out"]
