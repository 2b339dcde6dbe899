"""Products with a sum: ``dot``, ``vdot``, ``outer``, ``addmm``, ``addmv``, ``mv``, ``baddbmm``, ``addbmm``
and the in-place ``addmm_``, ``addmv_``, ``baddbmm_``, ``addbmm_`` (``aten/src/ATen/native/Blas.cpp``,
``LinearAlgebra.cpp``), and ``linear`` and ``einsum`` (``Linear.cpp``).

dot, addmm, addmv, mv and baddbmm check their operands as torch does, then run the matrix product
kernels of ``linear_algebra`` (a dot product is a 1 x K by K x 1 product) and scale with
elementwise ops. addmm, addmv and baddbmm are declared as torch declares them, structured: a meta
step (the checks, the output's sizes and dtype) and an impl step (beta * self + alpha * the
product, written into the output), ``.out`` the primary form and the functional and in-place
forms derived from it. outer, linear and einsum are CompositeImplicitAutograd: written with other
operators only, so a dispatch mode sees what they decompose into.
"""
from ...c10 import scalar_type as st
from ...c10.local_dispatch_key_set import below_ad_inplace_or_view
from ...c10.wrap_dim import wrap_dim
from ...utils._python_dispatch import _get_current_dispatch_mode
from .. import dispatcher
from ..empty_tensor import is_meta_execution
from ..tensor_iterator import output_layout
from .copy import to
from .dispatch_stub import refuse_float8
from .linear_algebra import bmm, mm
from .resize import resize_output
from .structured import _check_dtype, set_output, structured
from .tensor_factories import wrap_scalar


def _refuse_bool(kernel, dtype):
    """The products' kernels dispatch over numbers only, and not over uint16, uint32 and uint64:
    a bool, complex32 or such unsigned operand is refused by name."""
    if dtype is st.bool_ or dtype is st.complex32 or dtype in st.LIMITED_UNSIGNED:
        raise NotImplementedError(f'"{kernel}" not implemented for \'{dtype.torch_name}\'')


def dot_check(a, b, name="dot"):
    """``dot``'s and ``vdot``'s checks of their operands (``Blas.cpp``'s ``dot_check``), shared
    with their meta function."""
    if a.dim() != 1 or b.dim() != 1:
        raise RuntimeError(f"1D tensors expected, but got {a.dim()}D and {b.dim()}D tensors")
    if a.dtype is not b.dtype:
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found {a.dtype.torch_name} "
                           f"and {b.dtype.torch_name}")
    if a.shape[0] != b.shape[0]:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{a.shape[0]}] and src [{b.shape[0]}] to "
                           f"have the same number of elements, but got {a.shape[0]} and {b.shape[0]} elements "
                           "respectively")
    _refuse_bool(name, a.dtype)


def dot(a, b):
    dot_check(a, b)
    refuse_float8("dot", a)
    return dispatcher.call("reshape", mm(dispatcher.call("unsqueeze", a, 0), dispatcher.call("unsqueeze", b, 1)), [])



def vdot(a, b):
    """``vdot`` (``Blas.cpp``): ``dot`` for real vectors; for complex ones, ``a`` conjugated first."""
    if not a.dtype.is_complex:
        return dot(a, b)
    _refuse_bool("vdot", a.dtype)
    return dot(dispatcher.call("conj_physical", a), b)

def _scaled_sum(self, product, beta, alpha):
    """beta * self + alpha * product; beta == 0 ignores self (its NaN too), as BLAS does."""
    if alpha != 1:
        product = dispatcher.call("mul.Tensor", product, wrap_scalar(alpha))
    if beta == 0:
        return product
    scaled = self if beta == 1 else dispatcher.call("mul.Tensor", self, wrap_scalar(beta))
    return dispatcher.call("add.Tensor", product, scaled)


def _write_scaled_sum(out, self, expanded, product, beta, alpha):
    """The products' impl steps: ``out`` = beta * self + alpha * product(), the product computed
    before anything is written (an ``out`` that is also an operand has no defined result in
    torch: here it reads as it was). The sum is written straight into ``out`` (``add.out``),
    unless ``out`` shares memory with ``self`` other than as ``self`` itself, which the sum
    would read part-written: then it is summed apart and copied in."""
    product = product()
    if out is self or out._impl.storage is not self._impl.storage or beta == 0:
        if alpha != 1:
            product = dispatcher.call("mul.Tensor", product, wrap_scalar(alpha))
        if beta == 0:
            return dispatcher.call("copy_", out, product)
        scaled = expanded if beta == 1 else dispatcher.call("mul.Tensor", expanded, wrap_scalar(beta))
        return dispatcher.call("add.out", product, scaled, out=out)
    return dispatcher.call("copy_", out, _scaled_sum(expanded, product, beta, alpha))


def _integral_scalars(dtype, beta, alpha):
    """An integral product takes the scalars' integer parts (``beta.to<scalar_t>()``)."""
    if dtype.is_floating_point or dtype.is_complex:
        return beta, alpha
    return int(beta), int(alpha)


def _check_same_dtype(self, mat1, mat2):
    for name, m in (("self", self), ("mat1", mat1)):
        if m.dtype is not mat2.dtype:
            raise RuntimeError(f"{name} and mat2 must have the same dtype, but got {m.dtype.torch_name} and "
                               f"{mat2.dtype.torch_name}")


def meta_addmm(out, self, mat1, mat2, *, beta=1, alpha=1):
    """``TORCH_META_FUNC(addmm)`` (``ADDMM_META``, LinearAlgebra.cpp): self, mat1 and mat2 of one
    dtype, two matrices that can be multiplied; the output (N, M) in mat1's dtype, contiguous
    (or ``out=`` checked and resized; the in-place form's ``self`` must have those sizes)."""
    _check_same_dtype(self, mat1, mat2)
    for name, m in (("mat1", mat1), ("mat2", mat2)):
        if m.dim() != 2:
            raise RuntimeError(f"{name} must be a matrix, got {m.dim()}-D tensor")
    if mat1.shape[1] != mat2.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({mat1.shape[0]}x{mat1.shape[1]} and "
                           f"{mat2.shape[0]}x{mat2.shape[1]})")
    if is_meta_execution():
        # a fake tensor runs no impl step: the impl's broadcast of self to (N, M) is checked here,
        # so that a fake refuses the self a real call refuses (torch's fake addmm checks it too)
        dispatcher.call("expand", self, [mat1.shape[0], mat2.shape[1]])
    return set_output(out, (mat1.shape[0], mat2.shape[1]), mat1.dtype, mat1.device, self=self)


def impl_addmm(out, self, mat1, mat2, *, beta=1, alpha=1):
    """``TORCH_IMPL_FUNC(addmm_out_cpu)`` (``addmm_impl_cpu_``): beta * self + alpha * (mat1 @
    mat2) written into the output, ``self`` broadcast to (N, M)."""
    beta, alpha = _integral_scalars(mat2.dtype, beta, alpha)
    expanded = dispatcher.call("expand", self, [mat1.shape[0], mat2.shape[1]])
    if mat2.dtype in (st.float16, st.bfloat16):
        # torch's 16-bit gemm keeps the product in float32 and adds beta·self there, rounding
        # once at the end: rounding the product first moves a bias-added result by an ulp
        if mat1.shape[1] == 0:      # no product: torch scales self by beta rounded to self's type
            beta = dispatcher.call("_local_scalar_dense", to(wrap_scalar(beta), mat2.dtype))
        wide = [to(t, st.float32) for t in (expanded, mat1, mat2)]
        return dispatcher.call("copy_", out, _scaled_sum(wide[0], mm(*wide[1:]), beta, alpha))
    return _write_scaled_sum(out, self, expanded, lambda: mm(mat1, mat2), beta, alpha)


addmm_out = structured(meta_addmm, impl_addmm)


def linear(input, weight, bias=None):
    """input @ weight.T + bias (``Linear.cpp``): one ``addmm`` where the input folds to a matrix.

    A 2-D input with a bias is one fused ``addmm``; a contiguous input of other rank is viewed as
    a matrix, multiplied with ``addmm`` and viewed back (``_flatten_nd_linear``). The rest go
    through ``matmul``, then add the bias: in place, unless a dispatch mode is watching
    (``isTensorSubclassLike`` is true under one, and then torch adds out of place).
    """
    if input.dim() == 0 or weight.dim() == 0:      # the reshape below cannot take a 0-dim input
        raise RuntimeError(f"both arguments to linear need to be at least 1D, but they are {input.dim()}D and "
                           f"{weight.dim()}D")
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


def meta_addmv(out, self, mat, vec, *, beta=1, alpha=1):
    """``TORCH_META_FUNC(addmv)`` (Blas.cpp): a matrix and a vector that can be multiplied, a
    ``self`` of one element or the result's length, all of one dtype; the output (N,) in vec's
    dtype (or ``out=`` checked and resized; the in-place form's ``self`` must be that size)."""
    if mat.dim() != 2 or vec.dim() != 1 or self.dim() > 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {self.dim()}, {mat.dim()}, {vec.dim()}")
    if mat.shape[1] != vec.shape[0] or self.numel() not in (1, mat.shape[0]):
        raise RuntimeError(f"size mismatch, got input ({self.shape[0] if self.dim() else 1}), mat "
                           f"({mat.shape[0]}x{mat.shape[1]}), vec ({vec.shape[0]})")
    if not (self.dtype is mat.dtype is vec.dtype):
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got {self.dtype.torch_name}, "
                           f"{mat.dtype.torch_name}, and {vec.dtype.torch_name}")
    return set_output(out, (mat.shape[0],), vec.dtype, vec.device, self=self)


def impl_addmv(out, self, mat, vec, *, beta=1, alpha=1):
    """``TORCH_IMPL_FUNC(addmv_out_cpu)``: beta * self + alpha * (mat @ vec) written into the
    output, ``self`` broadcast to its length."""
    beta, alpha = _integral_scalars(mat.dtype, beta, alpha)
    expanded = dispatcher.call("expand", self, [mat.shape[0]])
    if mat.numel() == 0:        # no product to add: beta * self, or zeros, in any dtype
        if beta == 0:
            return dispatcher.call("zero_", out)
        scale = dispatcher.call("_to_copy", wrap_scalar(beta), dtype=out.dtype)    # scalar_tensor(beta, dtype)
        return dispatcher.call("mul.out", expanded, scale, out=out)
    if out.numel():
        _refuse_bool("addmv_impl_cpu", mat.dtype)
    return _write_scaled_sum(out, self, expanded, lambda: dispatcher.call(
        "squeeze.dim", mm(mat, dispatcher.call("unsqueeze", vec, 1)), 1), beta, alpha)


addmv_out = structured(meta_addmv, impl_addmv)


def _addmv(self, mat, vec, *, beta=1, alpha=1):
    """``addmv``'s derived functional kernel, for ``mv``."""
    return impl_addmv(meta_addmv(None, self, mat, vec, beta=beta, alpha=alpha), self, mat, vec, beta=beta,
                      alpha=alpha)


def mv(self, vec):
    """matrix @ vector: ``addmv`` into a fresh result with beta 0, as torch's (so its errors are
    addmv's)."""
    with below_ad_inplace_or_view():        # as the frontend's ``new_empty`` makes it
        out = dispatcher.call("new_empty", vec, list(self.shape[:1]), dtype=None, layout=None, device=None,
                              pin_memory=False)
    return _addmv(out, self, vec, beta=0)


def meta_baddbmm(out, self, batch1, batch2, *, beta=1, alpha=1):
    """``TORCH_META_FUNC(baddbmm)`` (``common_checks_baddbmm_bmm``, LinearAlgebra.cpp): ``self``
    broadcast to (B, M, N) and of batch1's dtype, two batches of matrices that can be multiplied;
    the output (B, M, N) in batch2's dtype (or ``out=`` checked and resized; the in-place form's
    ``self`` must have those sizes)."""
    for name, b in (("batch1", batch1), ("batch2", batch2)):
        if b.dim() != 3:
            raise RuntimeError(f"{name} must be a 3D tensor")
    shape = [batch1.shape[0], batch1.shape[1], batch2.shape[2]]
    dispatcher.call("expand", self, shape)      # its sizes' error first, as torch's expand_size
    if self.dtype is not batch1.dtype:
        raise RuntimeError(f"Input dtypes must be the same, got: input {st.type_meta_name(self.dtype)}, batch1: "
                           f"{st.type_meta_name(batch1.dtype)}, batch2: {st.type_meta_name(batch2.dtype)}")
    if batch2.shape[0] != batch1.shape[0] or batch2.shape[1] != batch1.shape[2]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{batch1.shape[0]}, {batch1.shape[2]}] but got: [{batch2.shape[0]}, {batch2.shape[1]}].")
    return set_output(out, shape, batch2.dtype, batch2.device, self=self)


def impl_baddbmm(out, self, batch1, batch2, *, beta=1, alpha=1):
    """``TORCH_IMPL_FUNC(baddbmm_out_cpu)``: beta * self + alpha * (batch1 @ batch2) written into
    the output, ``self`` broadcast to (B, M, N)."""
    _refuse_bool("baddbmm", batch1.dtype)      # its own kernel's name, before bmm's
    beta, alpha = _integral_scalars(batch1.dtype, beta, alpha)
    expanded = dispatcher.call("expand", self, list(out.shape))
    return _write_scaled_sum(out, self, expanded, lambda: bmm(batch1, batch2), beta, alpha)


baddbmm_out = structured(meta_baddbmm, impl_baddbmm)


def addbmm(self, batch1, batch2, *, beta=1, alpha=1):
    """beta * self + alpha * (the sum of batch1[b] @ batch2[b]): ``self`` broadcast to (M, N)
    first (so its sizes are read before the operands are checked), then one ``addmm_`` per
    matrix (``addbmm_impl_``), whose dtype checks these are."""
    shape = [batch1.shape[wrap_dim(1, batch1.dim())], batch2.shape[wrap_dim(2, batch2.dim())]]
    expanded = dispatcher.call("expand", self, shape)
    for name, b in (("batch1", batch1), ("batch2", batch2)):
        if b.dim() != 3:
            raise RuntimeError(f"{name} must be a 3D tensor")
    if batch1.shape[0] != batch2.shape[0]:
        raise RuntimeError(f"batch1 and batch2 must have same number of batches, got {batch1.shape[0]} and "
                           f"{batch2.shape[0]}")
    if batch1.shape[2] != batch2.shape[1]:
        raise RuntimeError(f"Incompatible matrix sizes for bmm ({batch1.shape[1]}x{batch1.shape[2]} and "
                           f"{batch2.shape[1]}x{batch2.shape[2]})")
    if batch1.shape[0]:
        _check_same_dtype(self, batch1, batch2)
    if not (batch2.dtype.is_floating_point or batch2.dtype.is_complex):     # integral: the scalars' integer parts
        beta, alpha = int(beta), int(alpha)
    out = dispatcher.call("empty.memory_format", shape, dtype=self.dtype, device=self.device)
    if beta != 0:
        dispatcher.call("copy_", out, expanded)
    _addbmm_(out, batch1, batch2, beta, alpha)
    return out


def addbmm_(self, batch1, batch2, *, beta=1, alpha=1):
    """``addbmm_``: the out= kernel with ``self`` as ``out``, resized to the result's sizes
    (``resize_as_``, as its out= kernel) and written after the product is computed, so an
    aliased ``self`` reads as it was."""
    result = addbmm(self, batch1, batch2, beta=beta, alpha=alpha)
    if result.shape != self.shape:
        dispatcher.call("resize_", self, list(result.shape))
    return dispatcher.call("copy_", self, result)


def ger(self, vec2):
    """``ger``: the old name of ``outer`` (CompositeImplicitAutograd: it calls ``outer``)."""
    return dispatcher.call("outer", self, vec2)


def outer(self, vec2):
    if self.dim() != 1:
        raise RuntimeError(f"outer: Expected 1-D argument self, but got {self.dim()}-D")
    if vec2.dim() != 1:
        raise RuntimeError(f"outer: Expected 1-D argument vec2, but got {vec2.dim()}-D")
    return dispatcher.call("mul.Tensor", dispatcher.call("reshape", self, [self.shape[0], 1]), vec2)


# ---- einsum (``Linear.cpp``): the operands' dims aligned on one list, output labels first and
# contraction labels after, then contracted left to right in pairs, each pair a ``bmm``
# (``sumproduct_pair``); a dim that only one operand still has is summed before its pair.
_LETTERS = 26
_ELLIPSIS = 2 * _LETTERS


def _subscript(label):
    """A-Z are 0-25, a-z 26-51: torch's label order, which orders the contraction dims."""
    return ord(label) - ord("A") if label.isupper() else ord(label) - ord("a") + _LETTERS


def _label(s):
    return chr(s + ord("A")) if s < _LETTERS else chr(s - _LETTERS + ord("a"))


def _is_ellipsis(text, i):
    return i + 2 < len(text) and text[i + 1] == "." and text[i + 2] == "."


def _invalid_subscript(label, index):
    if not (label.isascii() and label.isalpha()):
        raise RuntimeError(f"einsum(): invalid subscript given at index {index} in the equation string, "
                           "subscripts must be in [a-zA-Z]")


def _operand_labels(lhs, num_ops):
    """Each operand's labels as subscripts, ``_ELLIPSIS`` where it has "..."."""
    labels, current, i = [[]], 0, 0
    while i < len(lhs):
        c = lhs[i]
        if c == ".":
            if _ELLIPSIS in labels[current]:
                raise RuntimeError(f"einsum(): found '.' for operand {current} for which an ellipsis was "
                                   "already found")
            if not _is_ellipsis(lhs, i):
                raise RuntimeError(f"einsum(): found '.' for operand {current} that is not part of any ellipsis")
            labels[current].append(_ELLIPSIS)
            i += 2
        elif c == ",":
            current += 1
            if current >= num_ops:
                raise RuntimeError("einsum(): fewer operands were provided than specified in the equation")
            labels.append([])
        elif c != " ":
            _invalid_subscript(c, i)
            labels[current].append(_subscript(c))
        i += 1
    if current != num_ops - 1:
        raise RuntimeError("einsum(): more operands were provided than specified in the equation")
    return labels


def _ellipsis_dims(tensors, labels):
    """How many dims the widest "..." covers, after checking each operand's label count."""
    widest = 0
    for i, (t, op_labels) in enumerate(zip(tensors, labels)):
        n = len(op_labels) - (_ELLIPSIS in op_labels)
        if _ELLIPSIS in op_labels:
            widest = max(widest, t.dim() - n)
            if n > t.dim():
                raise RuntimeError(f"einsum(): the number of subscripts in the equation ({n}) is more than the "
                                   f"number of dimensions ({t.dim()}) for operand {i}")
        elif n != t.dim():
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({n}) does not match the "
                               f"number of dimensions ({t.dim()}) for operand {i} and no ellipsis was given")
    return widest


def _aligned_positions(equation, arrow, labels, ell_dims):
    """Where each label sits in the aligned shape: (positions, ellipsis start, output rank, rank)."""
    counts = [0] * _ELLIPSIS
    for op_labels in labels:
        for s in op_labels:
            if s != _ELLIPSIS:
                counts[s] += 1
    position, index, ell_index, ell_in_output = [-1] * _ELLIPSIS, 0, 0, arrow < 0
    if arrow < 0:               # implicit output: the ellipsis, then the labels seen once, in order
        index = ell_dims
        for s in range(_ELLIPSIS):
            if counts[s] == 1:
                position[s], index = index, index + 1
    else:
        rhs, i = equation[arrow + 2:], 0
        while i < len(rhs):
            c = rhs[i]
            if c == ".":
                if ell_in_output:
                    raise RuntimeError("einsum(): found '.' for output but an ellipsis (...) was already found")
                if not _is_ellipsis(rhs, i):
                    raise RuntimeError("einsum(): found '.' for output that is not part of any ellipsis (...)")
                ell_index, index, ell_in_output = index, index + ell_dims, True
                i += 2
            elif c != " ":
                _invalid_subscript(c, arrow + 2 + i)
                s = _subscript(c)
                if counts[s] == 0 or position[s] != -1:
                    raise RuntimeError(f"einsum(): output subscript {c}" + (
                        " appears more than once in the output" if position[s] != -1 else
                        " does not appear in the equation for any input operand"))
                position[s], index = index, index + 1
            i += 1
    out_dims = index
    if not ell_in_output:
        ell_index, index = index, index + ell_dims
    for s in range(_ELLIPSIS):
        if counts[s] and position[s] == -1:
            position[s], index = index, index + 1
    return position, ell_index, out_dims, index


def _align(i, op, op_labels, where, ell_dims, sizes, counts):
    """Operand ``i`` permuted to the aligned order: repeated labels become diagonals, missing
    ones size-1 dims. ``sizes`` (per label, and per ellipsis dim) and ``counts`` (how many
    operands have each aligned dim with a size other than 1) are updated."""
    position, ell_index, rank = where
    permutation, dim = [-1] * rank, 0
    for s in op_labels:
        if s == _ELLIPSIS:
            covered = op.dim() - (len(op_labels) - 1)
            for j in range(ell_dims - covered, ell_dims):
                size = op.shape[dim]
                if size != 1:
                    if sizes[_ELLIPSIS + j] not in (1, size):
                        raise RuntimeError(f"einsum(): dimension {dim} covered by ellipsis in operand {i}has size "
                                           f"{size} which does not broadcast with previously seen ellipsis with "
                                           f"size {sizes[_ELLIPSIS + j]} for the respective dimension")
                    sizes[_ELLIPSIS + j] = size
                    counts[ell_index + j] += 1
                permutation[ell_index + j], dim = dim, dim + 1
        elif permutation[position[s]] == -1:
            size = op.shape[dim]
            if size != 1:
                if sizes[s] not in (1, size):
                    raise RuntimeError(f"einsum(): subscript {_label(s)} has size {size} for operand {i} which "
                                       f"does not broadcast with previously seen size {sizes[s]}")
                sizes[s] = size
                counts[position[s]] += 1
            permutation[position[s]], dim = dim, dim + 1
        else:
            previous = permutation[position[s]]
            if op.shape[dim] != op.shape[previous]:
                raise RuntimeError(f"einsum(): subscript {_label(s)} is repeated for operand {i} but the sizes "
                                   f"don't match, {op.shape[dim]} != {op.shape[previous]}")
            op = dispatcher.call("diagonal", op, 0, previous, dim)
            rest = list(range(op.dim() - 1))            # movedim(-1, previous), as the permute it is
            op = dispatcher.call("permute", op, rest[:previous] + [op.dim() - 1] + rest[previous:])
    for k, p in enumerate(permutation):
        if p == -1:
            op = dispatcher.call("unsqueeze", op, dim)
            permutation[k], dim = dim, dim + 1
    return dispatcher.call("permute", op, permutation)


def einsum(equation, tensors, *, path=None):
    if not tensors:
        raise RuntimeError("einsum(): must provide at least one operand")
    if path is not None:
        expected = 1 if len(tensors) == 1 else (len(tensors) - 1) * 2
        if len(path) != expected:
            raise RuntimeError(f"einsum(): expected contraction path given in path parameter to have size "
                               f"{expected} but got {len(path)}")
    arrow = equation.find("->")
    labels = _operand_labels(equation if arrow < 0 else equation[:arrow], len(tensors))
    ell_dims = _ellipsis_dims(tensors, labels)
    position, ell_index, out_dims, rank = _aligned_positions(equation, arrow, labels, ell_dims)
    sizes, counts = [1] * (_ELLIPSIS + ell_dims), [0] * rank
    ops = [_align(i, t, op_labels, (position, ell_index, rank), ell_dims, sizes, counts)
           for i, (t, op_labels) in enumerate(zip(tensors, labels))]
    steps = iter(path or ())
    while len(ops) > 1:
        i, j = (0, 1) if path is None else sorted((next(steps), next(steps)))
        if path is not None and (i == j or i < 0 or j >= len(ops)):
            raise RuntimeError(f"einsum(): invalid contraction ({i}, {j})" + (
                " cannot contract an operand with itself" if i == j else " operand index is out of bounds"))
        a, b = ops[i], ops[j]
        del ops[j], ops[i]
        product = _contract(a, b, range(out_dims, rank), counts)
        ops.insert(0 if path is None else len(ops), product)
    result = ops[0]
    if rank == out_dims:
        return result
    if len(tensors) > 1:        # every contraction dim is size 1 by now: view it away
        return dispatcher.call("view", result, list(result.shape[:out_dims]))
    return dispatcher.call("sum.dim_IntList", result, list(range(out_dims, rank)))


def _contract(a, b, contraction_dims, counts):
    """One pairwise step: the dims no later operand has are summed, those both have by the
    product, those only one has before it."""
    summed, a_only, b_only = [], [], []
    for d in contraction_dims:
        if a.shape[d] != 1 and b.shape[d] != 1:
            counts[d] -= 1
            if counts[d] == 1:
                summed.append(d)
                counts[d] = 0
        elif counts[d] == 1:
            if a.shape[d] != 1:
                a_only.append(d)
                counts[d] = 0
            elif b.shape[d] != 1:
                b_only.append(d)
                counts[d] = 0
    if a_only:
        a = dispatcher.call("sum.dim_IntList", a, a_only, True)
    if b_only:
        b = dispatcher.call("sum.dim_IntList", b, b_only, True)
    return _sumproduct_pair(a, b, summed)


def _sumproduct_pair(left, right, sum_dims):
    """``(left * right).sum(sum_dims, keepdim=True)`` as one ``bmm`` (``sumproduct_pair``): the
    dims both have become the batch, the dims one has the rows or columns, the summed ones the
    inner dim; the product is viewed and permuted back to the operands' order."""
    if not sum_dims:
        return dispatcher.call("mul.Tensor", left, right)
    lro, lo, ro, summed_size = [], [], [], 1
    for d in range(left.dim()):
        in_left, in_right = left.shape[d] != 1, right.shape[d] != 1
        if d in sum_dims:
            if in_left and in_right:
                summed_size *= left.shape[d]
            elif in_left:
                left = dispatcher.call("sum.dim_IntList", left, [d], True)
            elif in_right:
                right = dispatcher.call("sum.dim_IntList", right, [d], True)
        elif in_left and in_right:
            lro.append(d)
        elif in_left:
            lo.append(d)
        else:
            ro.append(d)
    if lo and ro and ro[-1] < lo[0]:    # right's output dims all come first: bmm(right, left) is in order
        left, right, lo, ro = right, left, ro, lo
    lro_size, lo_size, ro_size = (_numel(left, lro), _numel(left, lo), _numel(right, ro))
    out_size = [left.shape[d] for d in lro + lo] + [1] * len(sum_dims) + [right.shape[d] for d in ro]
    order = lro + lo + list(sum_dims) + ro
    left = dispatcher.call("reshape", dispatcher.call("permute", left, order), [lro_size, lo_size, summed_size])
    right = dispatcher.call("reshape", dispatcher.call("permute", right, lro + list(sum_dims) + ro + lo),
                            [lro_size, summed_size, ro_size])
    result = dispatcher.call("view", dispatcher.call("bmm", left, right), out_size)
    return dispatcher.call("permute", result, [order.index(d) for d in range(len(order))])


def _numel(t, dims):
    n = 1
    for d in dims:
        n *= t.shape[d]
    return n


# ---- the accumulating products (``addbmm``): BLAS's ``C = beta * C + alpha * A @ B`` into a
# fresh output. A product whose ``out`` shares memory with an operand has no defined result in
# torch (BLAS reads what it already overwrote, in an order that follows the library and the CPU);
# here the product is computed first and then copied in (CONTRIBUTING.md: what torch leaves undefined).
def _scale_(out, beta):
    """BLAS's ``C = beta * C`` (beta 0 zeroes, so a NaN in C does not stay)."""
    if beta == 0:
        dispatcher.call("zero_", out)
    elif beta != 1:
        dispatcher.call("mul_.Tensor", out, wrap_scalar(beta))


def _accumulate_(out, product, alpha):
    if alpha != 1:
        product = dispatcher.call("mul.Tensor", product, wrap_scalar(alpha))
    dispatcher.call("add_.Tensor", out, product)


def _gemm_(out, mat1, mat2, beta, alpha):
    """``out = beta * out + alpha * mat1 @ mat2``."""
    _scale_(out, beta)
    _accumulate_(out, mm(mat1, mat2), alpha)


def _addbmm_(out, batch1, batch2, beta, alpha):
    """``addbmm_impl_``: one ``addmm_`` per matrix of the batch, beta applied by the first."""
    if batch1.shape[0] == 0:
        _scale_(out, beta)
    for b in range(batch1.shape[0]):
        _gemm_(out, dispatcher.call("select.int", batch1, 0, b), dispatcher.call("select.int", batch2, 0, b),
               beta if b == 0 else 1, alpha)


# ---- addr (``LinearAlgebra.cpp``, ``cpu/LinearAlgebraKernel.cpp``): beta * self + alpha * the
# outer product of two vectors, elementwise over one TensorIterator of (self, vec1 as a column,
# vec2) in their common dtype; a beta of 0 ignores self (its NaNs too).
def _addr_check(self, vec1, vec2, beta, alpha):
    """The operands' checks; the common dtype and the result's sizes."""
    for name, v in (("vec1", vec1), ("vec2", vec2)):
        if v.dim() != 1:
            raise RuntimeError(f"addr: Expected 1-D argument {name}, but got {v.dim()}-D")
    dtype = st.result_type(self, vec1, vec2)
    if not (dtype.is_floating_point or dtype.is_complex):
        for name, scalar in (("beta", beta), ("alpha", alpha)):
            if isinstance(scalar, (float, complex)):
                raise RuntimeError(f"For integral input tensors, argument {name} must not be a floating point "
                                   "number.")
    return dtype, [vec1.shape[0], vec2.shape[0]]


def _addr_into(out, self, vec1, vec2, beta, alpha, dtype):
    """``addr_kernel``: ``beta * self + (alpha * vec1) * vec2`` in ``dtype``, each step rounded as
    torch's loop rounds it; for bools ``(beta and self) or (alpha and vec1 and vec2)``. The scalars
    are first rounded to the dtype (``beta.to<scalar_t>()``): a 16-bit float's alpha of 0.2 is not
    float32's."""
    if dtype in (st.float16, st.bfloat16):
        beta, alpha = (dispatcher.call("scalar_tensor", s, dtype=dtype).item() for s in (beta, alpha))
    column = dispatcher.call("unsqueeze", to(vec1, dtype), 1)
    row = to(vec2, dtype)
    if dtype is st.bool_:
        product = dispatcher.call("mul.Tensor", column, row)
        if not alpha:
            product = dispatcher.call("zeros_like", product)
    else:
        product = dispatcher.call("mul.Tensor", dispatcher.call("mul.Tensor", column, wrap_scalar(alpha)), row)
    if not beta:
        return dispatcher.call("copy_", out, product)
    scaled = to(self, dtype) if dtype is st.bool_ else dispatcher.call("mul.Tensor", to(self, dtype),
                                                                       wrap_scalar(beta))
    return dispatcher.call("copy_", out, dispatcher.call("add.Tensor", scaled, product))


def addr(self, vec1, vec2, *, beta=1, alpha=1):
    dtype, shape = _addr_check(self, vec1, vec2, beta, alpha)
    expanded = dispatcher.call("expand", self, shape)
    column = dispatcher.call("unsqueeze", vec1, 1)
    strides = output_layout([expanded._impl, column._impl, vec2._impl], shape)
    out = dispatcher.call("empty_strided", shape, strides, dtype=dtype, device=self.device)
    return _addr_into(out, expanded, vec1, vec2, beta, alpha, dtype)


def addr_(self, vec1, vec2, *, beta=1, alpha=1):
    """In place: ``self`` must have the outer product's sizes, and hold the common dtype."""
    dtype, shape = _addr_check(self, vec1, vec2, beta, alpha)
    if self.dim() != 2:
        raise RuntimeError(f"2D tensor expected, got {self.dim()}D tensor for input")
    if list(self.shape) != shape:
        raise RuntimeError(f"size mismatch, input: {list(self.shape)}, v1: [{shape[0]}], v2: [{shape[1]}]")
    if not st.can_cast(dtype, self.dtype):
        raise RuntimeError(f"result type {dtype.torch_name} can't be cast to the desired output type "
                           f"{self.dtype.torch_name}")
    return _addr_into(self, self, vec1, vec2, beta, alpha, dtype)


def addr_out(self, vec1, vec2, *, beta=1, alpha=1, out):
    """``addr.out``: the functional result cast into ``out`` (TensorIterator's rule: any type it
    can be cast to), ``out`` resized as ``resize_output`` resizes, with its warning where it had
    elements."""
    result = addr(self, vec1, vec2, beta=beta, alpha=alpha)
    _check_dtype("iterator", "addr", result, out)
    resize_output(out, tuple(result.shape))
    return dispatcher.call("copy_", out, result)

