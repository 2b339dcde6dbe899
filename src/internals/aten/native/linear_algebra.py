"""Matrix products: ``mm``, ``bmm``, ``matmul`` (``aten/src/ATen/native/LinearAlgebra.cpp``).

``mm`` and ``bmm`` check shapes and dtypes, pass each operand as it lies in memory, row-major or
transposed (BLAS's ``transa``/``transb``: so ``x @ w.t()`` copies nothing), copy only operands that
are neither, as torch does before calling a BLAS, and run the device's blocked or tiled loop.
``matmul`` reduces every case (vectors, batches with broadcasting) to them, as torch's ``matmul``
does. ``mm`` and ``bmm`` are structured, as torch's: a meta step (the checks and the output) and
an impl step (the loop, into the output), ``mm.out`` and ``bmm.out`` the primary forms.
"""
import math

from ...c10 import scalar_type as st
from ...c10.memory_format import contiguous_format
from ...c10.tensor_impl import contiguous_strides, is_contiguous
from ...c10.wrap_dim import wrap_dim
from .. import dispatcher
from ..empty_tensor import empty_strided_generic
from ..fallbacks import check_out_no_requires_grad
from ..tensor_iterator import broadcast_shapes, common_device
from .batch_linear_algebra import _check_floating, _check_matrix, _square_check, _warn_once
from .copy import cast_like, contiguous
from .dispatch_stub import loops, refuse_float8
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
    if a.dtype in (st.bool_, st.complex32, *st.LIMITED_UNSIGNED):     # the product kernels' dispatch has none
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
    """``TORCH_IMPL_FUNC(mm_out_cpu)``: the product written into the output (its dispatch lists
    the float8 types but e8m0fnu)."""
    if self.dtype is st.float8_e8m0fnu:
        refuse_float8("addmm_impl_cpu_", self)
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
    """``TORCH_IMPL_FUNC(bmm_out_cpu)``: the products written into the output (mm's dispatch
    lists the float8 types, bmm's not)."""
    refuse_float8("bmm", self)
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


# ---- torch.linalg's compositions (LinearAlgebra.cpp): CompositeImplicitAutograd, made of the
# operators above and of the decompositions, so autograd records the operators they call.
def linalg_matmul(a, b):
    """``linalg.matmul`` is ``matmul`` under torch.linalg's name."""
    return dispatcher.call("matmul", a, b)


def linalg_matmul_out(a, b, *, out):
    return dispatcher.call("matmul.out", a, b, out=out)


def linalg_diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    """``diagonal`` with the last two dims by default: a view."""
    return dispatcher.call("diagonal", A, offset, dim1, dim2)


def linalg_vecdot(x, y, *, dim=-1):
    """The dot product of the vectors along ``dim``, the first conjugated: sum(conj(x) * y).
    Both operands of one floating or complex dtype, as torch requires (no promotion)."""
    _check_floating(x, "linalg.vecdot")
    if x.dtype != y.dtype:
        raise RuntimeError(f"linalg.vecdot: Expected x and y to have the same dtype, but found x of type "
                           f"{x.dtype.torch_name} and y of type {y.dtype.torch_name} instead")
    x = dispatcher.call("conj", x) if x.dtype.is_complex else x
    return dispatcher.call("sum.dim_IntList", dispatcher.call("mul.Tensor", x, y), [dim])


def linalg_vander(x, *, N=None):
    """The Vandermonde matrix of ``x`` along a new last dim: 1, x, x^2, ..., x^(N-1), the powers a
    cumulative product of x repeated (``linalg_vander_symint``), a column of ones before them."""
    if x.dtype not in (st.float32, st.float64, st.complex64, st.complex128, st.uint8, st.int8, st.int16, st.int32,
                       st.int64):
        raise RuntimeError(f"linalg.vander supports floating point, complex, and integer tensors, but got "
                           f"{x.dtype.torch_name}")
    x = dispatcher.call("unsqueeze", x, -1) if x.dim() == 0 else x
    shape = list(x.shape)
    n = shape[-1] if N is None else N
    if n <= 1:
        raise RuntimeError("N must be greater than 1.")
    powers = dispatcher.call("cumprod", dispatcher.call("expand", dispatcher.call("unsqueeze", x, -1),
                                                        [*shape, n - 1]), -1)
    ones = dispatcher.call("new_ones", powers, [*shape, 1])
    return dispatcher.call("cat", [ones, powers], -1)


def linalg_tensorinv(A, ind=2):
    """The inverse of ``A`` read as a square matrix of its first ``ind`` dims by the rest,
    reshaped to the rest's shape followed by the first ``ind`` dims'."""
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    shape = list(A.shape)
    rows, cols = math.prod(shape[:ind]), math.prod(shape[ind:])
    if rows != cols:
        raise RuntimeError("Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {cols} != {rows}")
    inverse, info = dispatcher.call("linalg_inv_ex", dispatcher.call("reshape", A, [cols, cols]))
    dispatcher.call("_linalg_check_errors", info, "inv", is_matrix=True)   # an operator: vmap's rule sees it
    return dispatcher.call("reshape", inverse, shape[ind:] + shape[:ind])


def linalg_tensorsolve(A, B, dims=None):
    """The X of tensordot(A, X, X.dim()) == B: ``dims`` of A moved last, A read as a square matrix
    of B's dims by the rest, solved against B flattened, X reshaped to A's trailing dims."""
    ndim = A.dim()
    if dims is not None:
        A = dispatcher.call("movedim.intlist", A, list(dims), list(range(ndim - len(dims), ndim)))
    result_shape = list(A.shape)[B.dim():]
    n, m = math.prod(result_shape), math.prod(B.shape)
    if n != m:
        raise RuntimeError("Expected self to satisfy the requirement prod(self.shape[other.ndim:]) == "
                           f"prod(self.shape[:other.ndim]), but got {n} != {m}")
    solution = dispatcher.call("linalg_solve", dispatcher.call("reshape", A, [n, n]),
                               dispatcher.call("flatten.using_ints", B, 0, -1))
    return dispatcher.call("reshape", solution, result_shape)


def linalg_multi_dot(tensors):
    """The product of a chain of matrices (the first and last may be vectors), in the order of
    fewest scalar multiplications (``multi_dot_impl``): two by ``mm``, three by comparing the two
    orders' costs, more by the classic dynamic programme over split points."""
    return _multi_dot(tensors, None)


def linalg_multi_dot_out(tensors, *, out):
    """``linalg_multi_dot_out``: the same chain, its last product written by ``mm.out`` into
    ``out`` (so inputs that require grad are refused, as ``mm.out`` refuses them)."""
    return _multi_dot(tensors, out)


def _multi_dot(tensors, out):
    n = len(tensors)
    if n < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {n}")
    first, last = tensors[0], tensors[-1]
    if first.dim() not in (1, 2):
        raise RuntimeError(f"multi_dot(): the first tensor must be 1D or 2D but got {first.dim()}D")
    if last.dim() not in (1, 2):
        raise RuntimeError(f"multi_dot(): the last tensor must be 1D or 2D but got {last.dim()}D")
    for i in range(1, n - 1):
        if tensors[i].dim() != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {tensors[i].dim()}D")
    out_shape = ([first.shape[0]] if first.dim() == 2 else []) + ([last.shape[1]] if last.dim() == 2 else [])
    mats = [dispatcher.call("unsqueeze", first, 0) if first.dim() == 1 else first, *tensors[1:-1],
            dispatcher.call("unsqueeze", last, -1) if last.dim() == 1 else last]
    for i in range(1, n):
        if mats[i].dtype != mats[0].dtype:
            raise RuntimeError(f"multi_dot(): all tensors must have be the same dtype but tensor 0 is "
                               f"{st.type_meta_name(mats[0].dtype)} and tensor {i} {st.type_meta_name(mats[i].dtype)}")
        if mats[i - 1].shape[-1] != mats[i].shape[0]:
            raise RuntimeError(f"multi_dot(): tensors {i - 1} and {i} with shapes {list(tensors[i - 1].shape)} and "
                               f"{list(tensors[i].shape)} cannot be multiplied")

    if out is not None:
        if out.dtype is not mats[0].dtype:
            raise RuntimeError(f"multi_dot(): expected out tensor to have dtype {st.type_meta_name(mats[0].dtype)} "
                               f"but got {st.type_meta_name(out.dtype)}")
        check_out_no_requires_grad("mm", tensors, out)     # the last product's check, before out is resized
        resize_output(out, out_shape)
        final = dispatcher.call("view", out, [mats[0].shape[0], mats[-1].shape[1]])

    def mm(a, b, last=False):
        if last and out is not None:
            return dispatcher.call("mm.out", a, b, out=final)
        return dispatcher.call("mm", a, b)
    if n == 2:
        result = mm(*mats, last=True)
    elif n == 3:
        a, b, c, d = mats[0].shape[0], mats[1].shape[0], mats[2].shape[0], mats[2].shape[1]
        if (a * c) * (b + d) > (b * d) * (a + c):
            result = mm(mats[0], mm(mats[1], mats[2]), last=True)
        else:
            result = mm(mm(mats[0], mats[1]), mats[2], last=True)
    else:
        split = _matrix_chain_order(mats)

        def chain(i, j, last=False):
            return mats[i] if i == j else mm(chain(i, split[i][j]), chain(split[i][j] + 1, j), last)
        result = chain(0, n - 1, last=True)
    return out if out is not None else dispatcher.call("view", result, out_shape)


_CHAIN_MATMUL_DEPRECATED = ("torch.chain_matmul is deprecated and will be removed in a future PyTorch release. Use "
                            "torch.linalg.multi_dot instead, which accepts a list of two or more tensors rather than "
                            "multiple parameters.")


def _check_chain(matrices):
    """``checkAllSameDim(matrices, 2)``, then at least one matrix."""
    for m in matrices:
        if m.dim() != 2:
            raise RuntimeError(f"Tensor dimension is {m.dim()}, expected 2 instead.")
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")


def chain_matmul(matrices):
    """``chain_matmul`` (``LinearAlgebra.cpp``), deprecated: ``linalg_multi_dot`` of matrices
    only; one matrix comes back cloned."""
    _warn_once(_CHAIN_MATMUL_DEPRECATED, "chain_matmul")
    _check_chain(matrices)
    if len(matrices) == 1:
        return dispatcher.call("clone", matrices[0])
    return dispatcher.call("linalg_multi_dot", list(matrices))


def chain_matmul_out(matrices, *, out):
    """``chain_matmul_out``: ``linalg_multi_dot``'s out= form; one matrix copied into ``out``."""
    _warn_once(_CHAIN_MATMUL_DEPRECATED, "chain_matmul_out")
    _check_chain(matrices)
    if len(matrices) == 1:
        resize_output(out, tuple(matrices[0].shape))
        return dispatcher.call("copy_", out, matrices[0])
    return dispatcher.call("linalg_multi_dot.out", list(matrices), out=out)


def _matrix_chain_order(mats):
    """``matrix_chain_order``: split[i][j], where the product of matrices i..j is best split."""
    n = len(mats)
    p = [m.shape[0] for m in mats] + [mats[-1].shape[1]]
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = None
            for k in range(i, j):
                q = cost[i][k] + cost[k + 1][j] + p[i] * p[k + 1] * p[j + 1]
                if cost[i][j] is None or q < cost[i][j]:
                    cost[i][j], split[i][j] = q, k
    return split


def _matrix_norm_checks(A, dim, dtype, low_precision):
    """``_linalg_matrix_norm_checks``: a (batch of) floating matrices, two different dims."""
    _check_matrix(A, "linalg.matrix_norm")
    _check_floating(A, "linalg.matrix_norm", low_precision=low_precision)
    if len(dim) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {' '.join(map(str, dim))}")
    dim = [wrap_dim(d, A.dim()) for d in dim]
    if dim[0] == dim[1]:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({dim[0]}, {dim[1]})")
    return dim


def _max_min(t, d, ord, keepdim):
    """The largest (ord > 0) or smallest entry along ``d``; where ``d`` is empty, the largest is 0
    (a norm of no entries, without a gradient, as torch's), the smallest an error (amin's)."""
    if ord > 0 and t.shape[d] == 0:
        shape = list(t.shape)
        shape[d] = 1
        return dispatcher.call("new_zeros", t, shape if keepdim else shape[:d % t.dim()] + shape[d % t.dim() + 1:])
    return dispatcher.call("amax" if ord > 0 else "amin", t, [d], keepdim)


def _singular_values_last(A, dim, dtype, keepdim, reduction):
    """``reduction(S, -1, keepdim)`` of the singular values S of the matrices over ``dim`` (those
    two dims moved last, ``create_dim_backshift_permutation``), put back in place with ``keepdim``."""
    A = A if dtype is None else dispatcher.call("_to_copy", A, dtype=dtype)
    order = [d for d in range(A.dim()) if d not in dim] + dim
    result = reduction(dispatcher.call("linalg_svdvals", dispatcher.call("permute", A, order)), -1, keepdim)
    if keepdim:
        result = dispatcher.call("permute", dispatcher.call("unsqueeze", result, -1),
                                 [order.index(d) for d in range(A.dim())])
    return result


def linalg_matrix_norm(A, ord, dim=(-2, -1), keepdim=False, *, dtype=None):
    """The matrix norms of a number ``ord``: the largest (ord > 0) or smallest singular value for
    +-2; for +-1 the largest or smallest column sum of absolute values, a vector 1-norm over one
    dim then a max or min over the other (rows for +-inf, the dims swapped)."""
    ord = float(ord)
    if abs(ord) not in (1.0, 2.0, math.inf):
        raise RuntimeError(f"linalg.matrix_norm: Order {ord:g} not supported.")
    dim = _matrix_norm_checks(A, list(dim), dtype, low_precision=abs(ord) != 2.0)
    if abs(ord) == 2.0:
        return _singular_values_last(A, dim, dtype, keepdim, lambda s, d, k: _max_min(s, d, ord, k))
    if abs(ord) == math.inf:
        dim = dim[::-1]
    if not keepdim and dim[0] < dim[1]:
        dim[1] -= 1
    return _max_min(dispatcher.call("linalg_vector_norm", A, 1.0, [dim[0]], keepdim, dtype=dtype), dim[1], ord, keepdim)


def linalg_matrix_norm_str_ord(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    """'fro', the vector 2-norm over the two dims, or 'nuc', the sum of the singular values."""
    if ord not in ("fro", "nuc"):
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    dim = _matrix_norm_checks(A, list(dim), dtype, low_precision=ord != "nuc")
    if ord == "fro":
        return dispatcher.call("linalg_vector_norm", A, 2, dim, keepdim, dtype=dtype)
    return _singular_values_last(A, dim, dtype, keepdim,
                                 lambda s, d, k: dispatcher.call("sum.dim_IntList", s, [d], k))


def linalg_norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):
    """A matrix norm where ``ord`` is given and two dims are (or A is a matrix and no dim is
    given), else a vector norm, the 2-norm by default (for a matrix, the Frobenius norm)."""
    if dim is not None:
        if len(dim) not in (1, 2):
            raise RuntimeError(f"linalg.norm: If dim is specified, it must be of length 1 or 2. Got {list(dim)}")
    elif ord is not None and A.dim() not in (1, 2):
        raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. "
                           f"Got {A.dim()}D.")
    if ord is not None and ((dim is not None and len(dim) == 2) or (dim is None and A.dim() == 2)):
        return dispatcher.call("linalg_matrix_norm", A, ord, [0, 1] if dim is None else list(dim), keepdim,
                               dtype=dtype)
    return dispatcher.call("linalg_vector_norm", A, 2 if ord is None else ord, dim, keepdim, dtype=dtype)


def linalg_norm_ord_str(A, ord, dim=None, keepdim=False, *, dtype=None):
    if dim is not None:
        if len(dim) not in (1, 2):
            raise RuntimeError(f"linalg.norm: If dim is specified, it must be of length 1 or 2. Got {list(dim)}")
    elif A.dim() not in (1, 2):
        raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. "
                           f"Got {A.dim()}D.")
    return dispatcher.call("linalg_matrix_norm.str_ord", A, ord, [0, 1] if dim is None else list(dim), keepdim,
                           dtype=dtype)


def _cond_check_ord(ord):
    """``_linalg_cond_check_ord``: the norms whose condition numbers torch defines."""
    if isinstance(ord, str):
        if ord not in ("fro", "nuc"):
            raise RuntimeError(f"linalg.cond got an invalid norm type: {ord}")
    elif abs(float(ord)) not in (1.0, 2.0, math.inf):
        raise RuntimeError(f"linalg.cond got an invalid norm type: {float(ord):g}")


def _cond_of_empty(A, dtype):
    """NumPy defines no condition number of a 0x0 matrix: torch's is 0, one per matrix."""
    return dispatcher.call("zeros", list(A.shape[:-2]), dtype=dtype, device=A.device)


def _cond_by_inverse(A, ord):
    """``_linalg_cond_helper``: norm(A) * norm(inv(A)), a singular matrix's inverse filled with
    inf, and 0 * inf (NaN) read as inf, as NumPy reads it."""
    inverse, info = dispatcher.call("linalg_inv_ex", A)
    singular = dispatcher.call("gt.Scalar", dispatcher.call("unsqueeze", dispatcher.call("unsqueeze", info, -1), -1), 0)
    dispatcher.call("masked_fill_.Scalar", inverse, singular, math.inf)
    name = "linalg_matrix_norm.str_ord" if isinstance(ord, str) else "linalg_matrix_norm"
    result = dispatcher.call("mul.Tensor", dispatcher.call(name, A, ord), dispatcher.call(name, inverse, ord))
    return dispatcher.call("nan_to_num_", result, math.inf, math.inf, -math.inf)


def linalg_cond(A, p=None):
    """The condition number of each matrix in the norm ``p``: for +-2 (and None) the ratio of the
    extreme singular values (any shape of matrix), else norm(A) * norm(inv(A)) (square only)."""
    if A.dim() < 2:
        raise RuntimeError("linalg.cond: The input tensor must have at least 2 dimensions.")
    ord = 2 if p is None else p
    _cond_check_ord(ord)
    if A.numel() == 0:
        return _cond_of_empty(A, A.dtype.to_real())
    if abs(float(ord)) == 2.0:
        s = dispatcher.call("linalg_svdvals", A)
        s_max, s_min = dispatcher.call("narrow", s, -1, 0, 1), dispatcher.call("narrow", s, -1, -1, 1)
        ratio = (dispatcher.call("div.Tensor", s_min, s_max) if float(ord) == -2.0
                 else dispatcher.call("div.Tensor", s_max, s_min))
        return dispatcher.call("squeeze.dim", ratio, -1)
    # torch names the order as C++'s std::to_string prints the number it was given
    shown = ("inf" if ord > 0 else "-inf") if math.isinf(ord) else f"{ord:f}" if isinstance(ord, float) else str(ord)
    _square_check(A, f"linalg.cond(ord={shown})")
    return _cond_by_inverse(A, ord)


def linalg_cond_p_str(A, p):
    """'fro' through the inverse; 'nuc' from the singular values, sum(s) * sum(1 / s) (a norm of
    an inverse full of inf would be refused by the SVD)."""
    _square_check(A, f"linalg.cond(ord={p})")
    _cond_check_ord(p)
    if A.numel() == 0:
        return _cond_of_empty(A, A.dtype)
    if p == "nuc":
        s = dispatcher.call("linalg_svdvals", A)
        return dispatcher.call("mul.Tensor", dispatcher.call("sum.dim_IntList", s, [-1]),
                               dispatcher.call("sum.dim_IntList", dispatcher.call("reciprocal", s), [-1]))
    return _cond_by_inverse(A, p)
