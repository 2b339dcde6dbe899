"""The namespace functions (``torch.add(a, b)``, ``torch.exp(x)``, ...).

The operators' functions are generated from ``aten/native_functions.yaml`` into
``_generated/python_torch_functions.py``. Written here in Python, as torch writes some in
``torch/functional.py``: what is not an operator in internals.
"""
import builtins
import collections.abc
import functools

import numpy as np

from . import linalg
from ._disable_torch_function import check_has_torch_function
from ._generated.python_torch_functions import FUNCTIONS
from ._python_arg_parser import append_overloaded_arg, handle_torch_function_no_python_arg_parser, public_function
from ._tensor_base import Size, TensorBase, torch_size_text
from .aten import dispatcher
from .aten import python_torch_function_tls as _tf
from .aten.native import tensor_factories
from .aten.native.tensor_factories import check_dtype_argument, from_numpy
from .aten.tensor_iterator import broadcast_shapes as _infer_broadcast
from .overrides import handle_torch_function, has_torch_function, has_torch_function_unary

# The generated bindings become this module's functions, as torch/__init__.py copies those of
# ``torch._C._VariableFunctions`` into its namespace; the functions below replace a few of them.
globals().update(FUNCTIONS)
__all__ = [*FUNCTIONS] + ["cat", "stack", "nonzero", "broadcast_to", "broadcast_shapes", "is_tensor", "norm",
                          "meshgrid", "broadcast_tensors", "numel", "as_tensor", "is_floating_point", "is_complex",
                          "is_conj", "is_neg", "unique", "unique_consecutive", "adjoint", "atleast_1d", "atleast_2d",
                          "atleast_3d", "tensordot", "cdist", "block_diag", "cartesian_prod", "chain_matmul", "split",
                          "einsum", "tensor"]


def _asks_as_a_binding(tensor_params):
    """For a function torch writes in C++ and internals in Python (``torch.tensor``,
    ``torch.nonzero``): before anything else, hand the call to ``__torch_function__`` as torch's
    binding does -- the public function, the arguments as given, ``kwargs`` None when there were
    none -- when a mode is on or one of the first ``tensor_params`` arguments (its Tensor
    parameters) overrides."""
    def wrap(fn):
        @functools.wraps(fn)
        def public(*args, **kwargs):
            overloaded = None
            for arg in args[:tensor_params]:
                if check_has_torch_function(arg, ignore_mode=True):
                    overloaded = append_overloaded_arg(overloaded, arg)
            if overloaded or _tf.any_mode_enabled():
                return handle_torch_function_no_python_arg_parser(overloaded or [], args, kwargs or None,
                                                                  fn.__name__, public, "internals")
            return fn(*args, **kwargs)
        return public
    return wrap


tensor = _asks_as_a_binding(0)(tensor_factories.tensor)   # ``data`` is no Tensor parameter in torch's parser


def meshgrid(*tensors, indexing=None):
    """``torch.functional.meshgrid``: the tensors given one by one or as one list; the operator
    without ``indexing`` warns that it will be required."""
    if has_torch_function(tensors):
        return handle_torch_function(meshgrid, tensors, *tensors, indexing=indexing)
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tensors[0]
    if not tensors:     # no tensor to dispatch on: refused as torch's kernel does
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    kwargs = {} if indexing is None else {"indexing": indexing}
    return tuple(FUNCTIONS["meshgrid"](tensors, **kwargs))


def _cat_binding(name):
    def binding(*args, **kwargs):
        if _empty_list(args, kwargs):
            raise ValueError("torch.cat(): expected a non-empty list of Tensors")
        return FUNCTIONS[name](*args, **kwargs)
    binding.__name__ = binding.__qualname__ = name
    binding.__doc__ = f"``torch.{name}``: an empty list is refused by the binding, before any dispatch."
    return binding


cat, concat, concatenate = (public_function(_cat_binding(name)) for name in ("cat", "concat", "concatenate"))


@public_function
def stack(*args, **kwargs):
    """``torch.stack``: an empty list has no tensor to dispatch on; refused as torch's kernel does."""
    if _empty_list(args, kwargs):
        raise RuntimeError("stack expects a non-empty TensorList")
    return FUNCTIONS["stack"](*args, **kwargs)


def _empty_list(args, kwargs):
    tensors = args[0] if args else kwargs.get("tensors")
    return isinstance(tensors, (list, tuple)) and not tensors


def split(tensor, split_size_or_sections, dim=0):
    """``torch.split`` is Python (torch/functional.py): ``Tensor.split``."""
    if has_torch_function_unary(tensor):
        return handle_torch_function(split, (tensor,), tensor, split_size_or_sections, dim=dim)
    return tensor.split(split_size_or_sections, dim)


@_asks_as_a_binding(1)
def nonzero(input, *, as_tuple=False):
    """``torch.nonzero``: ``as_tuple`` is a keyword of the Python binding, not of the operator."""
    return dispatcher.call("where", input) if as_tuple else dispatcher.call("nonzero", input)


def norm(input, p="fro", dim=None, keepdim=False, out=None, dtype=None):
    """``torch.norm`` (torch/functional.py): a vector norm, 'fro' over at most two dims included
    (the 2-norm of the elements); any other string ``p`` is a matrix norm."""
    if has_torch_function_unary(input):
        return handle_torch_function(norm, (input,), input, p=p, dim=dim, keepdim=keepdim, out=out, dtype=dtype)
    if out is not None:       # torch hands ``out`` to the operator; here the result is copied into it
        result = norm(input, p, dim, keepdim, dtype=dtype)
        return out.resize_(result.shape).copy_(result)
    dims = [dim] if isinstance(dim, int) else dim
    if isinstance(p, str):
        if p == "fro" and (dim is None or isinstance(dim, int) or len(dim) <= 2):
            return linalg.vector_norm(input, 2, dims, keepdim, dtype=dtype)
        return linalg.matrix_norm(input, p, list(range(input.dim())) if dims is None else dims, keepdim, dtype=dtype)
    return linalg.vector_norm(input, 2.0 if p is None else p, dims, keepdim, dtype=dtype)


@_asks_as_a_binding(1)
def broadcast_to(input, size):
    return input.broadcast_to(size)


def broadcast_tensors(*tensors):
    """``torch.functional.broadcast_tensors``: each tensor expanded to the shape they broadcast to."""
    if has_torch_function(tensors):
        return handle_torch_function(broadcast_tensors, tensors, *tensors)
    shape = _infer_broadcast(*(t.shape for t in tensors))
    return tuple(t.expand(shape) for t in tensors)


@_asks_as_a_binding(1)
def numel(input):
    """``torch.numel``: a binding of its own, which takes a tensor only."""
    if not isinstance(input, TensorBase):
        raise TypeError(f"numel(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    return input.numel()


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """``torch.functional.unique`` over all the elements (``_unique2``) or the slices along
    ``dim`` (``unique_dim``): the values alone, or a tuple with the inverse and/or the counts asked for."""
    if has_torch_function_unary(input):
        return handle_torch_function(unique, (input,), input, sorted=sorted, return_inverse=return_inverse,
                                     return_counts=return_counts, dim=dim)
    if dim is None:
        output, inverse, counts = dispatcher.call("_unique2", input, sorted, return_inverse, return_counts)
    else:
        output, inverse, counts = dispatcher.call("unique_dim", input, dim, sorted, return_inverse, return_counts)
    if return_inverse and return_counts:
        return output, inverse, counts
    if return_inverse or return_counts:
        return output, inverse if return_inverse else counts
    return output



def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """``torch.functional.unique_consecutive``: the operator's values alone, or a tuple with the
    inverse and/or the counts asked for."""
    if has_torch_function_unary(input):
        return handle_torch_function(unique_consecutive, (input,), input, return_inverse=return_inverse,
                                     return_counts=return_counts, dim=dim)
    output, inverse, counts = dispatcher.call("unique_consecutive", input, return_inverse, return_counts, dim)
    if return_inverse and return_counts:
        return output, inverse, counts
    if return_inverse or return_counts:
        return output, inverse if return_inverse else counts
    return output

def tensordot(a, b, dims=2, out=None):
    """``torch.functional.tensordot``: ``dims`` as a count (the last dims of ``a`` with the first
    of ``b``) or as two lists, checked as torch checks them."""
    if has_torch_function((a, b)):
        return handle_torch_function(tensordot, (a, b), a, b, dims=dims, out=out)
    if not isinstance(dims, (tuple, list, TensorBase, int)):
        raise RuntimeError(f"tensordot expects dims to be int or tuple[list[int], list[int]] or list[list[int]] "
                           f"containing two lists, but got dims={dims}")
    if isinstance(dims, TensorBase):
        dims = dims.item() if dims.numel() == 1 else dims.tolist()
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > a.dim() or dims > b.dim():      # (``min`` is the operator here)
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        dims_a, dims_b = list(range(-dims, 0)), list(range(dims))
    else:
        dims_a, dims_b = dims
        dims_a, dims_b = ([dims_a] if isinstance(dims_a, int) else list(dims_a),
                          [dims_b] if isinstance(dims_b, int) else list(dims_b))
    if out is None:
        return FUNCTIONS["tensordot"](a, b, dims_a, dims_b)
    return FUNCTIONS["tensordot"](a, b, dims_a, dims_b, out=out)


_CDIST_MODES = {"use_mm_for_euclid_dist_if_necessary": None, "use_mm_for_euclid_dist": 1,
                "donot_use_mm_for_euclid_dist": 2}


def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """``torch.functional.cdist``: the ``compute_mode`` string as the operator's number."""
    if has_torch_function((x1, x2)):
        return handle_torch_function(cdist, (x1, x2), x1, x2, p=p, compute_mode=compute_mode)
    if compute_mode not in _CDIST_MODES:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    return FUNCTIONS["cdist"](x1, x2, p, _CDIST_MODES[compute_mode])


def block_diag(*tensors):
    """``torch.functional.block_diag``: the tensors one by one."""
    if has_torch_function(tensors):
        return handle_torch_function(block_diag, tensors, *tensors)
    return FUNCTIONS["block_diag"](tensors)


def chain_matmul(*matrices, out=None):
    """``torch.functional.chain_matmul`` (deprecated for ``linalg.multi_dot``): the matrices
    one by one."""
    if has_torch_function(matrices):
        return handle_torch_function(chain_matmul, matrices, *matrices)
    if out is None:
        return FUNCTIONS["chain_matmul"](matrices)
    return FUNCTIONS["chain_matmul"](matrices, out=out)


def cartesian_prod(*tensors):
    """``torch.functional.cartesian_prod``: the tensors one by one."""
    if has_torch_function(tensors):
        return handle_torch_function(cartesian_prod, tensors, *tensors)
    return FUNCTIONS["cartesian_prod"](tensors)


@_asks_as_a_binding(1)
def is_floating_point(input):
    return input.is_floating_point()


@_asks_as_a_binding(1)
def is_complex(input):
    return input.is_complex()


@_asks_as_a_binding(1)
def is_conj(input):
    return input.is_conj()


@_asks_as_a_binding(1)
def is_neg(input):
    return input.is_neg()


@_asks_as_a_binding(1)
def adjoint(input):
    return input.adjoint()


def _atleast(name):
    """``torch.functional.atleast_*d(*tensors)``: one tensor, or tensors given one by one or as a
    sequence (then a tuple back)."""
    binding = FUNCTIONS[name]

    def atleast(*tensors):
        if has_torch_function(tensors):
            return handle_torch_function(atleast, tensors, *tensors)
        result = binding(tensors[0] if len(tensors) == 1 else tensors)
        return tuple(result) if isinstance(result, list) else result
    atleast.__name__ = atleast.__qualname__ = name
    return atleast


atleast_1d, atleast_2d, atleast_3d = (_atleast(f"atleast_{n}d") for n in (1, 2, 3))


@_asks_as_a_binding(0)
def as_tensor(data, dtype=None, device=None):
    """``torch.as_tensor``: a tensor or a NumPy array is used as it is where its dtype and device
    are the ones asked for (a NumPy array's memory shared, as ``from_numpy`` shares it), else
    converted; any other data is copied, as ``tensor()`` copies it."""
    dtype = check_dtype_argument("as_tensor", dtype)
    if isinstance(data, TensorBase):
        return data.to(dtype=dtype, device=device)
    if isinstance(data, np.ndarray):
        return from_numpy(data).to(dtype=dtype, device=device)
    return tensor_factories.tensor(data, dtype=dtype, device=device)


def broadcast_shapes(*shapes):
    """As torch/functional.py's (through ``torch._refs._broadcast_shapes``): the shapes (an int
    is a one-dim shape, None is passed over) broadcast from the right into one common shape,
    grown as each is read; a mismatch names the shape as given and the common shape so far."""
    shapes = [(s,) if isinstance(s, int) else s for s in shapes if s is not None]
    for shape in shapes:
        if not isinstance(shape, collections.abc.Sequence):
            raise RuntimeError(f"Input shapes should be of type ints, a tuple of ints, or a list of ints, got {shape}")
    common = [1] * builtins.max((len(shape) for shape in shapes), default=0)
    for index, shape in enumerate(shapes):
        for dim in range(-1, -1 - len(shape), -1):
            if shape[dim] == common[dim]:
                continue
            if common[dim] == 1:
                if shape[dim] < 0:
                    raise ValueError("Attempting to broadcast a dimension with negative length!")
                common[dim] = shape[dim]
            if shape[dim] != 1 and shape[dim] != common[dim]:
                given = torch_size_text(shape) if isinstance(shape, Size) else shape
                raise RuntimeError(f"Attempting to broadcast a dimension of length {shape[dim]} at {dim}! Mismatching "
                                   f"argument at index {index} had {given}; but expected shape should be "
                                   f"broadcastable to {common}")
    return Size(common)


def is_tensor(obj):
    return isinstance(obj, TensorBase)


def einsum(*args):
    """As torch/functional.py's: an equation and the operands (separately or as one list), or
    operands interleaved with their subscript lists (0-25 are A-Z, 26-51 a-z) and an optional
    output list."""
    if len(args) < 2:
        raise ValueError("einsum(): must specify the equation string and at least one operand, "
                         "or at least one operand and its subscripts list")
    if isinstance(args[0], TensorBase):
        equation = ",".join("".join(_einsum_subscript(s) for s in sub) for sub in args[1::2])
        if len(args) % 2 == 1:
            equation += "->" + "".join(_einsum_subscript(s) for s in args[-1])
        operands = args[:-1:2] if len(args) % 2 == 1 else args[::2]
    else:
        equation, operands = args[0], args[1:]
    if has_torch_function(operands):
        return handle_torch_function(einsum, operands, equation, *operands)
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        return einsum(equation, *operands[0])
    return FUNCTIONS["einsum"](equation, operands)      # the binding checks the equation and the operands


def _einsum_subscript(n):
    if n is Ellipsis:
        return "..."
    if 0 <= n < 52:
        return chr(ord("A") + n) if n < 26 else chr(ord("a") + n - 26)
    raise ValueError("einsum(): subscript in subscript list is not within the valid range [0, 52)")
