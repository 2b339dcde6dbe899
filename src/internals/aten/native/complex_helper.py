"""Complex tensors as pairs of floats: the views ``view_as_real`` / ``view_as_complex``
(``aten/src/ATen/native/ComplexHelper.h``), ``real`` / ``imag`` built on them (``UnaryOps.cpp``),
``complex`` (``TensorFactories.cpp``) and conjugation.

A complex64 element is two float32 side by side, real part first. So a complex tensor seen as
floats has one more dim, of size 2 and stride 1, every other stride doubled and the offset
doubled; ``real`` and ``imag`` select index 0 or 1 of that last dim: views with strides twice
the complex tensor's, of the real dtype.

Conjugation is lazy, as torch's: ``conj()`` of a complex tensor is a view with the conjugate
bit set (``_conj``), whose values are the conjugates of the stored ones; operators that do not
read the bit get resolved inputs from the ``Conjugate`` key's fallback (``conjugate_fallback.py``).
``conj_physical()`` computes the conjugates into a new tensor, ``resolve_conj()`` materializes a
lazy view. ``view_as_real`` refuses a lazy view, as its floats would be the stored ones.
"""
from ...c10 import scalar_type as st
from ...c10.memory_format import contiguous_format
from .. import dispatcher
from ..tensor_iterator import TensorIteratorConfig
from . import scalar_ops as ops
from .copy import conj_complex32_
from .elementwise import binary_loop
from .tensor_shape import make_view
from .unary_ops import unary_op_impl


def _call(name, *args):
    return dispatcher.call(name, *args)


def view_as_real(x):
    """``view_as_real``: the floats behind a complex tensor, one dim more; not of a lazy conjugate."""
    if x._impl.is_conj():
        raise RuntimeError("view_as_real doesn't work on unresolved conjugated tensors.  To resolve the conjugate "
                           "tensor so you can view it as real, use self.resolve_conj(); however, be warned that the "
                           "resulting tensor will NOT alias the original.")
    return _view_as_real_physical(x)


def _view_as_real_physical(x):
    """``_view_as_real_physical``: the stored floats, whatever the bit says."""
    if not x.dtype.is_complex:
        raise RuntimeError("view_as_real is only supported for complex tensors")
    return make_view(x, (*x.shape, 2), (*(2 * s for s in x.stride()), 1), 2 * x.storage_offset(),
                     st.to_real(x.dtype))


def view_as_complex(x):
    """Pairs of floats along a last dim of size 2 and stride 1, read as complex numbers."""
    if x.dtype not in (st.float16, st.float32, st.float64):
        raise RuntimeError("view_as_complex is only supported for half, float and double tensors, but got a "
                           f"tensor of scalar type: {x.dtype.torch_name}")
    if x.dim() == 0:
        raise RuntimeError("Input tensor must have one or more dimensions")
    if x.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    strides = x.stride()
    if strides[-1] != 1:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if any(s % 2 for s in strides[:-1]):
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last dimension")
    dtype = st.to_complex(x.dtype)       # float16 pairs make complex32
    if x.storage_offset() % 2:
        raise RuntimeError("Tensor must have a storage_offset divisible by 2")
    return make_view(x, tuple(x.shape[:-1]), tuple(s // 2 for s in strides[:-1]), x.storage_offset() // 2, dtype)


def real(x):
    """A complex tensor's real parts (a view); a real tensor is its own real part. A lazy
    conjugate's real parts are the stored ones: read through ``_conj``, which clears the bit."""
    if not x.dtype.is_complex:
        return x
    pairs = _call("view_as_real", _stored(x))
    return _call("select.int", pairs, pairs.dim() - 1, 0)    # the last dim counted from the front, as torch's


def imag(x):
    """The imaginary parts (a view). A lazy conjugate's are its stored ones negated: a view of
    them with the negative bit flipped (``_neg_view``), so nothing is computed."""
    if not x.dtype.is_complex:
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    pairs = _call("view_as_real", _stored(x))
    if x._impl.is_conj():
        pairs = _call("_neg_view", pairs)
    return _call("select.int", pairs, pairs.dim() - 1, 1)


def _stored(x):
    """``x``, or for a lazy conjugate the view of its stored values (conj of conj: no bit)."""
    return _call("_conj", x) if x._impl.is_conj() else x


def _check_floating(a, b):
    """``complex_check_floating`` (TensorFactories.cpp): both parts of Half, Float or Double."""
    floats = (st.float16, st.float32, st.float64)
    if a.dtype not in floats or b.dtype not in floats:
        raise RuntimeError("Expected both inputs to be Half, Float or Double tensors but got "
                           f"{a.dtype.torch_name} and {b.dtype.torch_name}")


def _check_same_floating(a, b):
    _check_floating(a, b)
    if a.dtype is not b.dtype:
        raise RuntimeError(f"Expected object of scalar type {a.dtype.torch_name} but got scalar type "
                           f"{b.dtype.torch_name} for second argument")


def complex(real, imag):
    """``torch.complex``: real + imag * 1j, broadcast, both of one float dtype."""
    _check_same_floating(real, imag)
    # TensorIterator gives the output its shape and layout; its two halves are then filled by
    # two copies through the float view (a loop would have to store complex into an input's type).
    out = (TensorIteratorConfig().add_output(None, st.to_complex(real.dtype)).add_const_input(real)
           .add_const_input(imag).compute_in_opmath(False).build()).result
    parts = view_as_real(out)
    for k, part in enumerate((real, imag)):
        half = dispatcher.call("select.int", parts, -1, k)
        dispatcher.call("copy_", half, dispatcher.call("expand", part, list(out.shape)))
    return out


def polar_out(abs, angle, *, out):
    """``polar_out`` (TensorFactories.cpp): abs (cos angle + i sin angle) into ``out``, which
    must be the complex type of the inputs' float type (``complex_check_dtype``); the iterator
    broadcasts and resizes it, each operand keeping its dtype; the kernel (``polar_cpu``)
    dispatches on Float and Double only."""
    _check_same_floating(abs, angle)
    wanted = st.to_complex(abs.dtype)
    if out.dtype is not wanted:
        raise RuntimeError(f"Expected object of scalar type {wanted.torch_name} but got scalar type "
                           f"{out.dtype.torch_name} for argument 'out'")
    it = (TensorIteratorConfig().add_output(out).add_const_input(abs).add_const_input(angle)
          .check_all_same_dtype(False).compute_in_opmath(False).build())
    if abs.dtype is st.float16:
        raise NotImplementedError(f"\"polar_{it.device.type}\" not implemented for 'Half'")
    pairs = _view_as_real_physical(it.result)
    for k, op in enumerate((ops.POLAR_REAL, ops.POLAR_IMAG)):     # the real parts, then the imaginary
        half = make_view(pairs, tuple(pairs.shape[:-1]), tuple(pairs.stride()[:-1]), pairs.storage_offset() + k)
        binary_loop(TensorIteratorConfig().add_output(half).add_const_input(abs).add_const_input(angle)
                    .compute_in_opmath(False).build(), op, 0.0)
    return it.result


def polar(abs, angle):
    """``polar``: an empty tensor of the complex type, which ``polar_out`` fills (the float types
    are checked first, so ``polar(int, float)`` names both types)."""
    _check_floating(abs, angle)
    out = dispatcher.call("empty.memory_format", [0], dtype=st.to_complex(abs.dtype), device=abs.device)
    return dispatcher.call("polar.out", abs, angle, out=out)


def _conj_physical(x):
    """The conjugates, computed now, into a new tensor (a real tensor's values, copied)."""
    if x.dtype is st.complex32:
        return conj_complex32_(_call("clone", x))
    return unary_op_impl(ops.CONJ, x) if x.dtype.is_complex else _call("clone", x)


def conj_physical(x):
    """A real tensor is its own conjugate: returned as it is, before any kernel runs."""
    return _call("_conj_physical", x) if x.dtype.is_complex else x


def conj_physical_(x):
    """The conjugates written over the stored values; a real tensor is left alone."""
    if x.dtype is st.complex32:
        conj_complex32_(x)
    elif x.dtype.is_complex:
        unary_op_impl(ops.CONJ, x, out=x)
    return x


def _conj(x):
    """A view of the same elements with the conjugate bit flipped (``_conj`` in UnaryOps.cpp)."""
    view = make_view(x, x.shape, x.stride())
    view._impl._set_conj(not x._impl.is_conj())
    return view


def conj(x):
    """The lazy conjugate of a complex tensor; a real tensor is returned as it is, as in torch."""
    return _call("_conj", x) if x.dtype.is_complex else x


def resolve_conj(x):
    """A lazy conjugate materialized (``clone`` resolves the bit); any other tensor as it is."""
    return _call("clone", x) if x._impl.is_conj() else x


def _neg_view(x):
    """A view of the same elements with the negative bit flipped (``_neg_view`` in UnaryOps.cpp):
    any dtype, real or complex, as torch's."""
    view = make_view(x, x.shape, x.stride())
    view._impl._set_neg(not x._impl.is_neg())
    return view


def resolve_neg(x):
    """A lazy negative materialized (``clone`` resolves the bit); any other tensor as it is."""
    return _call("clone", x) if x._impl.is_neg() else x


def _neg_view_copy(x):
    """``_neg_view_copy``: the negated values in a new contiguous tensor, without the bit."""
    return dispatcher.call("clone", _call("_neg_view", x), memory_format=contiguous_format)
