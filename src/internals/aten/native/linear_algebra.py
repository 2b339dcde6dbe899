"""Matrix products: ``mm``, ``bmm``, ``matmul`` (``aten/src/ATen/native/LinearAlgebra.cpp``).

``mm`` and ``bmm`` check shapes and dtypes, pass each operand as it lies in memory, row-major or
transposed (BLAS's ``transa``/``transb``: so ``x @ w.t()`` copies nothing), copy only operands that
are neither, as torch does before calling a BLAS, and run the device's blocked or tiled loop.
``matmul`` reduces every case (vectors, batches with broadcasting) to them, as torch's ``matmul``
does. ``mm`` and ``bmm`` are structured, as torch's: a meta step (the checks and the output) and
an impl step (the loop, into the output), ``mm.out`` and ``bmm.out`` the primary forms.
"""
from ...c10 import scalar_type as st
from ...c10.memory_format import contiguous_format
from ...c10.tensor_impl import contiguous_strides, is_contiguous
from .. import dispatcher
from ..empty_tensor import empty_strided_generic
from ..fallbacks import check_out_no_requires_grad
from ..tensor_iterator import broadcast_shapes, common_device
from .copy import cast_like, contiguous
from .dispatch_stub import loops
from .resize import resize_output
from .structured import set_output, structured


def _check_dtypes(name, a, b):
    if a.dtype is not b.dtype and name == "bmm":
        raise RuntimeError(f"expected scalar type {a.dtype.torch_name} but found {b.dtype.torch_name}")
    if a.dtype is not b.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {st.type_meta_name(a.dtype)} "
                           f"!= {st.type_meta_name(b.dtype)}")


def _product_into(out, a, b, name):
    """The impl step of ``mm`` and ``bmm`` (``addmm_impl_cpu_``, ``bmm_out_or_baddbmm_``): a (M, K)
    @ b (K, N), or a batch of them, written into ``out``, which the meta step sized. The loop
    writes straight into ``out`` when it is row-major in the compute type and shares no memory
    with an operand; otherwise into a scratch result copied in after (an ``out`` that is an
    operand has no defined result in torch: here it reads as it was)."""
    if out.numel() == 0:
        return out
    *lead, M, K = a.shape
    if K == 0:
        return dispatcher.call("zero_", out)
    if a.dtype is st.bool_ or a.dtype is st.complex32:     # the product kernels' dispatch has neither
        raise NotImplementedError(f'"{name}" not implemented for \'{a.dtype.torch_name}\'')
    N = b.shape[-1]
    batch = lead[0] if lead else 1
    compute = st.opmath_type(a.dtype)
    (ac, trans_a), (bc, trans_b) = _blas_operand(a, compute), _blas_operand(b, compute)
    impl = out._impl
    direct = (out.dtype is compute and is_contiguous(impl.sizes, impl.strides)
              and not any(impl.storage is t._impl.storage for t in (a, b)))
    target = out if direct else empty_strided_generic(impl.sizes, contiguous_strides(impl.sizes), compute,
                                                      impl.device)
    loops(a.device, "linalg").mm_loop(target._flat_buffer(), ac._flat_buffer(), bc._flat_buffer(), batch, M, N, K,
                                      trans_a, trans_b)
    return out if target is out else dispatcher.call("copy_", out, target)


def _blas_operand(t, compute):
    """A matrix (or batch of them) as a gemm reads it: ``(tensor, False)`` when each matrix is
    row-major, ``(tensor, True)`` when it is column-major (a transposed row-major matrix, as
    ``w.t()`` in ``linear``), otherwise a row-major copy. Casts make row-major copies too."""
    if t.dtype is not compute:
        return cast_like(contiguous(t), compute), False
    sizes, strides = t._impl.sizes, t._impl.strides
    if is_contiguous(sizes, strides):
        return t, False
    if is_contiguous(sizes[:-2] + (sizes[-1], sizes[-2]), strides[:-2] + (strides[-1], strides[-2])):
        return t, True
    return contiguous(t), False


def meta_mm(out, self, mat2):
    """``TORCH_META_FUNC(mm)`` (LinearAlgebra.cpp): two matrices that can be multiplied, of one
    dtype and device; the output (M, N) in that dtype, contiguous (or ``out=`` checked and
    resized)."""
    if self.dim() != 2:
        raise RuntimeError("self must be a matrix")
    if mat2.dim() != 2:
        raise RuntimeError("mat2 must be a matrix")
    if self.shape[1] != mat2.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({self.shape[0]}x{self.shape[1]} and "
                           f"{mat2.shape[0]}x{mat2.shape[1]})")
    _check_dtypes("mm", self, mat2)
    common_device(self, mat2)
    return set_output(out, (self.shape[0], mat2.shape[1]), self.dtype, self.device)


def impl_mm(out, self, mat2):
    """``TORCH_IMPL_FUNC(mm_out_cpu)``: the product written into the output."""
    return _product_into(out, self, mat2, "addmm_impl_cpu_")


mm_out = structured(meta_mm, impl_mm)


def mm(a, b):
    """The product into a fresh output: ``mm``'s derived functional kernel, for the products
    written with it (``dot``, ``addmm``...)."""
    return impl_mm(meta_mm(None, a, b), a, b)


def meta_bmm(out, self, mat2):
    """``TORCH_META_FUNC(bmm)`` (``common_checks_baddbmm_bmm``): two batches of matrices, as many
    of each, that can be multiplied, of one dtype; the output (B, M, N) in that dtype."""
    if self.dim() != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if mat2.dim() != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    if self.shape[0] != mat2.shape[0] or self.shape[2] != mat2.shape[1]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{self.shape[0]}, {self.shape[2]}] but got: [{mat2.shape[0]}, {mat2.shape[1]}].")
    _check_dtypes("bmm", self, mat2)
    common_device(self, mat2)
    return set_output(out, (self.shape[0], self.shape[1], mat2.shape[2]), self.dtype, self.device)


def impl_bmm(out, self, mat2):
    """``TORCH_IMPL_FUNC(bmm_out_cpu)``: the products written into the output."""
    return _product_into(out, self, mat2, "bmm")


bmm_out = structured(meta_bmm, impl_bmm)


def bmm(a, b):
    """``bmm``'s derived functional kernel, for the products written with it (``baddbmm``)."""
    return impl_bmm(meta_bmm(None, a, b), a, b)


def matmul(a, b):
    """CompositeImplicitAutograd: only calls other operators (through the dispatcher), never a loop."""
    return _matmul_impl(a, b, None)


def matmul_out(a, b, *, out):
    """``matmul.out``: an operator made of operators, as the functional one, so its own autograd
    check (the parts run with inputs that need no grad). Each product writes with the out=
    overload of the operator it calls (``dot.out``, ``mv.out``, ``mm.out``, ``bmm.out``): the
    folded and batched ones into ``out`` resized to the result's sizes and reshaped to the
    product's (copied back if that reshape had to copy)."""
    check_out_no_requires_grad("matmul", a, b, out)
    return _matmul_impl(a, b, out)


def _matmul_impl(a, b, out):
    """``_matmul_impl`` (``LinearAlgebra.cpp``): the product each pair of ranks calls, with or
    without an ``out``."""
    if a.dim() == 0 or b.dim() == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {a.dim()}D and {b.dim()}D")
    if a.dim() == 1 and b.dim() == 1:
        if out is not None:
            return dispatcher.call("dot.out", a, b, out=out)
        return dispatcher.call("dot", a, b)
    if a.dim() == 2 and b.dim() == 1:
        return dispatcher.call("mv", a, b) if out is None else dispatcher.call("mv.out", a, b, out=out)
    if a.dim() == 1 and b.dim() == 2:
        if out is None:
            return dispatcher.call("squeeze_.dim", dispatcher.call("mm", dispatcher.call("unsqueeze", a, 0), b), 0)
        return dispatcher.call("squeeze_.dim", dispatcher.call("mm.out", dispatcher.call("unsqueeze", a, 0), b,
                                                               out=out), 0)
    if a.dim() == 2 and b.dim() == 2:
        return dispatcher.call("mm", a, b) if out is None else dispatcher.call("mm.out", a, b, out=out)
    if _should_fold(a, b, out is not None):
        return _folded_matmul(a, b, out)
    # Batched: broadcast the batch dims, then one bmm over their product. A vector is a 1 x K
    # (or K x 1) matrix; expand adds the leading dims itself, so ``a`` needs no unsqueeze.
    a_shape = (1, *a.shape) if a.dim() == 1 else tuple(a.shape)
    b2 = dispatcher.call("unsqueeze", b, 1) if b.dim() == 1 else b
    batch = broadcast_shapes(a_shape[:-2], tuple(b2.shape[:-2]))
    M, K, N = a_shape[-2], a_shape[-1], b2.shape[-1]
    n = 1
    for s in batch:
        n *= s
    if K != b2.shape[-2]:       # bmm's check, on the folded batch torch hands it
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{n}, {K}] but got: [{n}, {b2.shape[-2]}].")
    a3 = dispatcher.call("reshape", dispatcher.call("expand", a, [*batch, M, K]), [n, M, K])
    b3 = dispatcher.call("reshape", dispatcher.call("expand", b2, [*batch, K, N]), [n, K, N])
    shape = [*batch] + ([M] if a.dim() > 1 else []) + ([N] if b.dim() > 1 else [])
    if out is None:
        return dispatcher.call("_unsafe_view", dispatcher.call("bmm", a3, b3), shape)
    return _into_out("bmm.out", a3, b3, out, shape, [n, M, N], view_back=True)


def _into_out(product, x, y, out, shape, product_shape, view_back):
    """``out`` resized to ``shape``, then written by ``product`` through a reshape of it to the
    product's sizes, copied back where that reshape is not a view of ``out``: viewed as ``out``
    first on the batched path; the folded path copies it as it is (torch's ``out.copy_(reshaped_out)``,
    which fails to broadcast when ``out`` has more dims, as it does there)."""
    resize_output(out, shape)
    reshaped = dispatcher.call("reshape", out, product_shape)
    dispatcher.call(product, x, y, out=reshaped)
    if reshaped._impl.storage is not out._impl.storage:
        dispatcher.call("copy_", out, dispatcher.call("view", reshaped, list(out.shape)) if view_back else reshaped)
    return out


def _should_fold(a, b, has_out=False):
    """Can the larger operand fold into one matrix, so one mm replaces a bmm (``should_fold``)?

    Only a 3-d-or-more operand times a matrix or vector qualifies. It folds when the small operand
    requires grad (its gradient is then one mm, not a bmm and a sum; not with an ``out``, which
    has no gradient), or when folding copies nothing: the leading dims are contiguous with each other.
    """
    big, small = (a, b) if a.dim() >= b.dim() else (_mT(b), a)
    if not (big.dim() >= 3 and small.dim() <= 2):
        return False
    if (b if a.dim() >= b.dim() else a)._requires_grad and not has_out:
        return True
    if a.dim() == 2:          # folding would need the product transposed and copied
        return False
    if big.numel() == 0:
        return True
    sizes, strides = big.shape, big.stride()
    return all(strides[i] == strides[i + 1] * sizes[i + 1] for i in range(big.dim() - 2))


def _folded_matmul(a, b, out=None):
    """(..., M, K) @ (K, N): one (M', K) @ (K, N) product, viewed back (or its transpose, for the
    1-d/2-d times batch case, which never folds with an ``out``)."""
    transpose = b.dim() > a.dim()
    big = _mT(b) if transpose else a
    small = (dispatcher.call("t", a) if a.dim() == 2 else a) if transpose else b
    *lead, k = big.shape
    rows = 1
    for s in lead:
        rows *= s
    folded = dispatcher.call("reshape", big, [rows, k])
    if out is not None:
        if small.dim() == 2:
            return _into_out("mm.out", folded, small, out, [*lead, small.shape[1]], [rows, small.shape[1]], False)
        return _into_out("mv.out", folded, small, out, lead, [rows], False)
    if small.dim() == 2:
        out = dispatcher.call("_unsafe_view", dispatcher.call("mm", folded, small), [*lead, small.shape[1]])
        return contiguous(_mT(out)) if transpose else out
    return dispatcher.call("_unsafe_view", dispatcher.call("mv", folded, small), lead)


def _mT(t):
    """``t.mT`` of a matrix or batch of them: its last two dims swapped."""
    return dispatcher.call("transpose.int", t, -2, -1)


def linalg_matrix_power(A, n):
    """``linalg_matrix_power_impl`` (LinearAlgebra.cpp): A^n by repeated squaring, every product a
    ``matmul``; A^0 the identity, copied into a clone of A; a negative power A's inverse's."""
    if A.dim() < 2:
        raise RuntimeError("linalg.matrix_power: The input tensor A must have at least 2 dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError("linalg.matrix_power: A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")
    if n == 0:
        eye = dispatcher.call("eye", A.shape[-2], dtype=A.dtype, device=A.device)
        clone = dispatcher.call("clone", A, memory_format=contiguous_format)
        return dispatcher.call("copy_", clone, dispatcher.call("expand", eye, list(A.shape)))
    if n < 0:
        A, n = dispatcher.call("linalg_inv", A), -n
        if n == 1:
            return A        # already new, laid out as linalg_inv lays it out (column-major)
    if n == 1:
        return dispatcher.call("clone", A, memory_format=contiguous_format)
    if n in (2, 3):
        square = dispatcher.call("matmul", A, A)
        return square if n == 2 else dispatcher.call("matmul", square, A)
    z = result = None
    while n > 0:
        bit, n = n % 2, n // 2
        z = A if z is None else dispatcher.call("matmul", z, z)
        if bit:
            result = z if result is None else dispatcher.call("matmul", result, z)
    return result


def matrix_power(A, n):
    return dispatcher.call("linalg_matrix_power", A, n)
