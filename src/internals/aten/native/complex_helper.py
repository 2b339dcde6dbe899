"""Complex tensors as pairs of floats: the views ``view_as_real`` / ``view_as_complex``
(``aten/src/ATen/native/ComplexHelper.h``), ``real`` / ``imag`` built on them (``UnaryOps.cpp``),
``complex`` (``TensorFactories.cpp``) and conjugation.

A complex64 element is two float32 side by side, real part first. So a complex tensor seen as
floats has one more dim, of size 2 and stride 1, every other stride doubled and the offset
doubled; ``real`` and ``imag`` select index 0 or 1 of that last dim: views with strides twice
the complex tensor's, of the real dtype.

Conjugation: torch's ``conj()`` is lazy, a view with a conjugate bit that kernels read
(``is_conj()``). internals has no conjugate bit: ``conj()`` of a complex tensor returns
``conj_physical()``, a new tensor (``is_conj()`` is False), and ``resolve_conj()`` has nothing
to resolve.
"""
from ...c10 import scalar_type as st
from .. import dispatcher
from ..tensor_iterator import TensorIteratorConfig
from . import scalar_ops as ops
from .tensor_shape import make_view
from .unary_ops import unary_op_impl


def _call(name, *args):
    return dispatcher.call(name, *args)


def view_as_real(x):
    """``_view_as_real_physical``: the floats behind a complex tensor, one dim more."""
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
    dtype = st.to_complex(x.dtype)       # float16 would be complex32: not supported here
    if x.storage_offset() % 2:
        raise RuntimeError("Tensor must have a storage_offset divisible by 2")
    return make_view(x, tuple(x.shape[:-1]), tuple(s // 2 for s in strides[:-1]), x.storage_offset() // 2, dtype)


def real(x):
    """A complex tensor's real parts (a view); a real tensor is its own real part."""
    return _call("select.int", _call("view_as_real", x), -1, 0) if x.dtype.is_complex else x


def imag(x):
    if not x.dtype.is_complex:
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return _call("select.int", _call("view_as_real", x), -1, 1)


def complex(real, imag):
    """``torch.complex``: real + imag * 1j, broadcast, both of one float dtype."""
    floats = (st.float16, st.float32, st.float64)
    if real.dtype not in floats or imag.dtype not in floats:
        raise RuntimeError("Expected both inputs to be Half, Float or Double tensors but got "
                           f"{real.dtype.torch_name} and {imag.dtype.torch_name}")
    if real.dtype is not imag.dtype:
        raise RuntimeError(f"Expected object of scalar type {real.dtype.torch_name} but got scalar type "
                           f"{imag.dtype.torch_name} for second argument")
    # TensorIterator gives the output its shape and layout; its two halves are then filled by
    # two copies through the float view (a loop would have to store complex into an input's type).
    out = (TensorIteratorConfig().add_output(None, st.to_complex(real.dtype)).add_const_input(real)
           .add_const_input(imag).compute_in_opmath(False).build()).result
    parts = view_as_real(out)
    for k, part in enumerate((real, imag)):
        half = dispatcher.call("select.int", parts, -1, k)
        dispatcher.call("copy_", half, dispatcher.call("expand", part, list(out.shape)))
    return out


def conj_physical(x):
    """The conjugates, computed now; a real tensor is its own conjugate."""
    return unary_op_impl(ops.CONJ, x) if x.dtype.is_complex else x


def conj(x):
    """torch returns a lazy view with the conjugate bit set; internals computes the conjugates
    (see the module docstring). A real tensor is returned as it is, as in torch."""
    return _call("conj_physical", x)


def resolve_conj(x):
    """Nothing to resolve: no tensor here carries a conjugate bit."""
    return x
