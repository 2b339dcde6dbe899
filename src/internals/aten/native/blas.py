"""Products with a sum: ``dot``, ``outer``, ``addmm``, ``addmv``, ``mv``, ``baddbmm``
(``aten/src/ATen/native/Blas.cpp``, ``LinearAlgebra.cpp``), and ``linear`` and ``einsum``
(``Linear.cpp``).

dot, addmm, addmv, mv and baddbmm check their operands as torch does, then run the matrix product
kernels of ``linear_algebra`` (a dot product is a 1 x K by K x 1 product) and scale with
elementwise ops. outer, linear and einsum are CompositeImplicitAutograd: written with other
operators only, so a dispatch mode sees what they decompose into.
"""
from ...c10.local_dispatch_key_set import below_ad_inplace_or_view
from ...utils._python_dispatch import _get_current_dispatch_mode
from .. import dispatcher
from .linear_algebra import bmm, mm
from .tensor_factories import wrap_scalar


def dot(a, b):
    if a.dim() != 1 or b.dim() != 1:
        raise RuntimeError(f"1D tensors expected, but got {a.dim()}D and {b.dim()}D tensors")
    if a.dtype is not b.dtype:
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found {a.dtype.torch_name} "
                           f"and {b.dtype.torch_name}")
    if a.shape[0] != b.shape[0]:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{a.shape[0]}] and src [{b.shape[0]}] to "
                           f"have the same number of elements, but got {a.shape[0]} and {b.shape[0]} elements "
                           "respectively")
    return dispatcher.call("reshape", mm(dispatcher.call("unsqueeze", a, 0), dispatcher.call("unsqueeze", b, 1)), [])


def _scaled_sum(self, product, beta, alpha):
    """beta * self + alpha * product; beta == 0 ignores self (its NaN too), as BLAS does."""
    if alpha != 1:
        product = dispatcher.call("mul.Tensor", product, wrap_scalar(alpha))
    if beta == 0:
        return product
    scaled = self if beta == 1 else dispatcher.call("mul.Tensor", self, wrap_scalar(beta))
    return dispatcher.call("add.Tensor", product, scaled)


def _check_scalars(dtype, beta, alpha):
    if not dtype.is_floating_point and (isinstance(beta, float) or isinstance(alpha, float)):
        raise RuntimeError("For integral input tensors, argument beta must not be a floating point number."
                           if isinstance(beta, float) else
                           "For integral input tensors, argument alpha must not be a floating point number.")


def addmm(self, mat1, mat2, *, beta=1, alpha=1):
    """beta * self + alpha * (mat1 @ mat2), ``self`` broadcast to (N, M) (``addmm_out_cpu``)."""
    for name, m in (("mat1", mat1), ("mat2", mat2)):
        if m.dim() != 2:
            raise RuntimeError(f"{name} must be a matrix, got {m.dim()}-D tensor")
    if mat1.shape[1] != mat2.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({mat1.shape[0]}x{mat1.shape[1]} and "
                           f"{mat2.shape[0]}x{mat2.shape[1]})")
    for name, m in (("mat1", mat1), ("self", self)):
        if m.dtype is not mat2.dtype:
            raise RuntimeError(f"{name} and mat2 must have the same dtype, but got {m.dtype.torch_name} and "
                               f"{mat2.dtype.torch_name}")
    if not mat2.dtype.is_floating_point:     # integral results take the scalars' integer parts
        beta, alpha = int(beta), int(alpha)
    self = dispatcher.call("expand", self, [mat1.shape[0], mat2.shape[1]])
    return _scaled_sum(self, mm(mat1, mat2), beta, alpha)


def linear(input, weight, bias=None):
    """input @ weight.T + bias (``Linear.cpp``): one ``addmm`` where the input folds to a matrix.

    A 2-D input with a bias is one fused ``addmm``; a contiguous input of other rank is viewed as
    a matrix, multiplied with ``addmm`` and viewed back (``_flatten_nd_linear``). The rest go
    through ``matmul``, then add the bias: in place, unless a dispatch mode is watching
    (``isTensorSubclassLike`` is true under one, and then torch adds out of place).
    """
    if input.dim() == 2 and bias is not None:
        return dispatcher.call("addmm", bias, input, dispatcher.call("t", weight))
    if bias is not None and input.is_contiguous() and bias.dim() == 1:
        *batch, k = input.shape
        rows = 1
        for s in batch:
            rows *= s
        matrix = dispatcher.call("reshape", input, [rows, k])
        out = dispatcher.call("addmm", bias, matrix, dispatcher.call("t", weight))
        return dispatcher.call("view", out, [*batch, out.shape[1]])
    out = dispatcher.call("matmul", input, dispatcher.call("t", weight))
    if bias is None:
        return out
    watched = _get_current_dispatch_mode() is not None
    return dispatcher.call("add.Tensor" if watched else "add_.Tensor", out, bias)


def addmv(self, mat, vec, *, beta=1, alpha=1):
    """beta * self + alpha * (mat @ vec), ``self`` broadcast to the result's length."""
    if mat.dim() != 2 or vec.dim() != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {self.dim()}, {mat.dim()}, {vec.dim()}")
    if mat.shape[1] != vec.shape[0] or not (self.dim() <= 1 and self.numel() in (1, mat.shape[0])):
        raise RuntimeError(f"size mismatch, got input ({self.shape[0] if self.dim() else 1}), mat "
                           f"({mat.shape[0]}x{mat.shape[1]}), vec ({vec.shape[0]})")
    _check_scalars(mat.dtype, beta, alpha)
    product = dispatcher.call("squeeze.dims", mm(mat, dispatcher.call("unsqueeze", vec, 1)), 1)
    return _scaled_sum(dispatcher.call("expand", self, list(product.shape)), product, beta, alpha)


def mv(self, vec):
    """matrix @ vector: ``addmv`` into a fresh result with beta 0, as torch's (so its errors are
    addmv's)."""
    with below_ad_inplace_or_view():        # as the frontend's ``new_empty`` makes it
        out = dispatcher.call("new_empty", self, list(self.shape[:1]), dtype=None, layout=None, device=None,
                              pin_memory=False)
    return addmv(out, self, vec, beta=0)


def baddbmm(self, batch1, batch2, *, beta=1, alpha=1):
    """beta * self + alpha * (batch1 @ batch2), ``self`` broadcast to (B, M, N)."""
    if batch1.dim() != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if batch2.dim() != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    _check_scalars(batch1.dtype, beta, alpha)
    if self.dtype is not batch1.dtype:
        raise RuntimeError(f"expected scalar type {batch1.dtype.torch_name} but found {self.dtype.torch_name}")
    product = bmm(batch1, batch2)
    return _scaled_sum(dispatcher.call("expand", self, list(product.shape)), product, beta, alpha)


def outer(self, vec2):
    if self.dim() != 1:
        raise RuntimeError(f"outer: Expected 1-D argument self, but got {self.dim()}-D")
    if vec2.dim() != 1:
        raise RuntimeError(f"outer: Expected 1-D argument vec2, but got {vec2.dim()}-D")
    return dispatcher.call("mul.Tensor", dispatcher.call("reshape", self, [self.shape[0], 1]), vec2)


# ---- einsum: each operand's subscripts lined up on one list of letters, then one broadcast
# product summed over the letters the output lacks (torch contracts pairwise with bmm; the
# results agree to rounding).
def einsum(equation, tensors, *, path=None):
    inputs, output = _parse_equation(equation.replace(" ", ""), tensors)
    letters = list(output) + sorted({c for term in inputs for c in term} - set(output))
    operands = [_aligned(t, term, letters) for t, term in zip(tensors, inputs)]
    product = operands[0]
    for t in operands[1:]:
        product = dispatcher.call("mul.Tensor", product, t)
    summed = list(range(len(output), len(letters)))
    if summed:
        product = dispatcher.call("sum.dim_IntList", product, summed, False)
    return product


def _parse_equation(equation, tensors):
    """Subscript strings per operand and for the output, with "..." spelled out as upper-case
    letters (one per broadcast dim; einsum's own subscripts are a-z and A-Z, so the spare
    letters are the Greek ones)."""
    lhs, arrow, rhs = equation.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(tensors):
        raise RuntimeError("einsum(): more operands were provided than specified in the equation"
                           if len(tensors) > len(terms) else
                           "einsum(): fewer operands were provided than specified in the equation")
    ellipsis = max((t.dim() - len(term.replace("...", "")) for t, term in zip(tensors, terms) if "..." in term),
                   default=0)
    spare = "".join(chr(0x3B1 + i) for i in range(ellipsis))
    expanded = []
    for t, term in zip(tensors, terms):
        n = t.dim() - len(term.replace("...", "")) if "..." in term else 0
        expanded.append(term.replace("...", spare[ellipsis - n:]))
        if len(expanded[-1]) != t.dim():
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({len(term)}) does not match "
                               f"the number of dimensions ({t.dim()}) for operand {len(expanded) - 1}"
                               f"{' and no ellipsis was given' if '...' not in term else ''}")
    if arrow:
        out = rhs.replace("...", spare)
    else:
        counts = {}
        for term in expanded:
            for c in term:
                counts[c] = counts.get(c, 0) + 1
        out = spare + "".join(sorted(c for c, n in counts.items() if n == 1 and c not in spare))
    return expanded, out


def _aligned(t, term, letters):
    """``t`` with one dim per letter, in ``letters``' order: a repeated subscript takes the
    diagonal, a missing letter is a size-1 dim to broadcast."""
    term = list(term)
    for c in set(term):
        while term.count(c) > 1:
            i = term.index(c)
            j = term.index(c, i + 1)
            t = dispatcher.call("diagonal", t, 0, i, j)            # the diagonal becomes the last dim
            term = [x for k, x in enumerate(term) if k not in (i, j)] + [c]
    present = [c for c in letters if c in term]
    t = dispatcher.call("permute", t, [term.index(c) for c in present]) if present else t
    shape, k = [], 0
    for c in letters:
        if c in term:
            shape.append(t.shape[k])
            k += 1
        else:
            shape.append(1)
    return dispatcher.call("reshape", t, shape)
