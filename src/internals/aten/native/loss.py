"""``nll_loss`` and ``mse_loss`` and their backward operators (``aten/src/ATen/native/LossNLL.cpp``,
``Loss.cpp``).

torch runs each in one fused loop; here each kernel is a short composition of internals'
operators, called below autograd as any kernel's inner calls are, so a dispatch mode sees
``nll_loss_forward`` and ``nll_loss_backward`` alone, as in torch. ``reduction`` is torch's enum:
0 none, 1 mean, 2 sum. The class picked for each sample is found with a one-hot mask
(``target.unsqueeze(-1) == arange(C)``); an ignored target matches no class.
"""
import numpy as np

from ...c10 import scalar_type as st
from ...c10.memory_format import contiguous_format, preserve_format
from ..dispatcher import call
from ..tensor_iterator import TensorIterator
from .copy import to
from .structured import set_output, structured
from .tensor_factories import arange, wrap_scalar
from .tensor_shape import check_dim_size

NONE, MEAN, SUM = 0, 1, 2


def _picked(self, target, weight, ignore_index):
    """The one-hot mask of the targets (..., C) and each target's weight (0 where ignored)."""
    counted = call("where.self", call("ne.Scalar", target, ignore_index), target, wrap_scalar(-1))
    onehot = call("eq.Tensor", call("unsqueeze", counted, -1), arange(self.shape[-1], device=self.device))
    if weight is None:
        return onehot, to(call("sum.dim_IntList", onehot, [-1], False), self.dtype)
    return onehot, call("sum.dim_IntList", call("mul.Tensor", onehot, weight), [-1], False)


def _check_targets(target, num_classes, ignore_index):
    """Class indices lie in [0, C) or equal ignore_index: the one-hot mask would give any other
    value a loss of 0, where torch's kernel raises, naming the first such target."""
    outside = call("bitwise_or.Tensor", call("lt.Scalar", target, 0), call("ge.Scalar", target, num_classes))
    bad = call("masked_select", target, call("bitwise_and.Tensor", outside, call("ne.Scalar", target, ignore_index)))
    if bad.numel():
        raise IndexError(f"Target {call('_local_scalar_dense', call('select.int', bad, 0, 0))} is out of bounds.")


def _reduce(loss, reduction):
    return loss if reduction == NONE else call("sum", loss) if reduction == SUM else call("mean", loss)


def binary_cross_entropy(self, target, weight=None, reduction=MEAN):
    """(t − 1)·max(log(1 − x), −100) − t·max(log x, −100) per element (``binary_cross_entropy_out_cpu``,
    which takes ``log1p(−x)``, a last-bit difference at most; the logs are clamped so a 0 or 1 input
    gives a finite loss), times ``weight``, reduced. Torch's iterator neither promotes nor
    casts: input and target share a floating dtype, and the loss is laid out as the input."""
    _check_same_dtype(self.dtype, (self.dtype, self.dtype, target.dtype))
    if not self.dtype.is_floating_point:
        raise NotImplementedError(f'"binary_cross_entropy" not implemented for \'{self.dtype.torch_name}\'')
    for values, name in ((self, "input"), (target, "target")):
        inside = call("bitwise_and.Tensor", call("ge.Scalar", values, 0), call("le.Scalar", values, 1))
        if not call("all", inside).item():
            raise RuntimeError(f"all elements of {name} should be between 0 and 1")
    log_x = call("clamp", call("log", self), -100)
    log_1mx = call("clamp", call("log", call("rsub.Scalar", self, 1)), -100)
    t_1 = call("sub.Tensor", target, wrap_scalar(1))
    loss = call("sub.Tensor", call("mul.Tensor", t_1, log_1mx), call("mul.Tensor", target, log_x))
    loss = _written_into(loss, self, preserve_format)
    if weight is not None:
        loss = call("mul_.Tensor", loss, weight)
    return _reduce(loss, reduction)


def binary_cross_entropy_backward(grad_output, self, target, weight=None, reduction=MEAN):
    """grad·(x − t) / max((1 − x)·x, ε), times ``weight``, ÷ numel for 'mean'; grad, input
    and target share one floating dtype (the grad's is the reference), as torch's iterator checks.
    ε is Loss.cpp's float constant 1e-12 (``_EPSILON``): an input of exactly 0 or 1 shows it."""
    _check_same_dtype(grad_output.dtype, (self.dtype, grad_output.dtype, self.dtype, target.dtype))
    if not self.dtype.is_floating_point:
        raise NotImplementedError(f'"binary_cross_entropy_backward" not implemented for '
                                  f"'{self.dtype.torch_name}'")
    denominator = call("clamp", call("mul.Tensor", call("rsub.Scalar", self, 1), self), _EPSILON)
    grad = call("div.Tensor", call("mul.Tensor", grad_output, call("sub.Tensor", self, target)), denominator)
    grad = _written_into(grad, self, preserve_format)
    if weight is not None:
        grad = call("mul_.Tensor", grad, weight)
    return call("div_.Scalar", grad, self.numel()) if reduction == MEAN else grad


def binary_cross_entropy_with_logits(self, target, weight=None, pos_weight=None, reduction=MEAN):
    """(1 − t)·x − (1 + (pos_weight − 1)·t)·log σ(x), with ``log_sigmoid``, which never
    exponentiates a large number; times ``weight``, reduced. The steps of ``Loss.cpp``, in place
    where torch's are."""
    log_sigmoid_input = call("log_sigmoid", self)
    if pos_weight is not None:
        pos_1 = call("sub.Tensor", pos_weight, wrap_scalar(1))
        log_weight = call("add_.Tensor", call("mul.Tensor", pos_1, target), wrap_scalar(1))
        call("mul_.Tensor", log_sigmoid_input, log_weight)
    loss = call("sub_.Tensor", call("mul_.Tensor", call("rsub.Scalar", target, 1), self), log_sigmoid_input)
    if weight is not None:
        call("mul_.Tensor", loss, weight)
    return _reduce(loss, reduction)


def _nll_loss_values(self, target, weight, reduction, ignore_index):
    """(output, total_weight): −w[t]·self[t] per sample, reduced; 'mean' divides the sum by the
    total weight of the counted targets (0/0 is NaN when every target is ignored, as in torch)."""
    if self.dim() == 1 and target.dim() == 1:          # (C,) scores, their one target in a (1,) tensor
        target = call("squeeze.dim", target, 0)
    _check_targets(target, self.shape[-1], ignore_index)
    onehot, w = _picked(self, target, weight, ignore_index)
    zero = wrap_scalar(0)
    picked = call("sum.dim_IntList", call("where.self", onehot, self, zero), [-1], False)
    loss = call("neg", call("mul.Tensor", picked, w))
    if reduction == NONE and self.dim() != 1:   # one loss per sample: no total weight, 0
        return loss, call("scalar_tensor", 0, dtype=self.dtype, device=self.device)
    total_weight = call("sum", w)
    if reduction == MEAN:
        return call("div.Tensor", call("sum", loss), total_weight), total_weight
    return call("sum", loss), total_weight


def _nll_loss_gradient(grad_output, self, target, weight, reduction, ignore_index, total_weight):
    """−w[t]·grad at each sample's target class (÷ total_weight for 'mean'), 0 elsewhere."""
    onehot, w = _picked(self, target, weight, ignore_index)
    grad = call("div.Tensor", grad_output, total_weight) if reduction == MEAN else grad_output
    coefficient = call("unsqueeze", call("neg", call("mul.Tensor", w, grad)), -1)
    return call("where.self", onehot, to(coefficient, self.dtype), wrap_scalar(0))


# ---- TORCH_META_FUNC(nll_loss_forward) / TORCH_IMPL_FUNC(nll_loss_forward_out_cpu), and the
# backward's: the meta steps check the shapes and lay out the outputs in the input's dtype
# (the loss per sample or one number, the total weight one number; the gradient the input's
# sizes, contiguous); the impl steps check the dtypes the CPU loops take, then write the values.
def _check_nll_shapes(self, target, one_target_in_a_vector=False):
    """The forward also takes (C,) scores with their one target in a (1,) tensor (its loop reads
    the target's first element); the backward's check does not, so such a loss has no gradient."""
    if not 0 < self.dim() <= 2:
        raise RuntimeError("input tensor should be 1D or 2D")
    if target.dim() > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    no_batch_dim = self.dim() == 1 and (target.dim() == 0 or one_target_in_a_vector and target.shape == (1,))
    if not no_batch_dim and self.shape[0] != target.shape[0]:
        raise RuntimeError(f"size mismatch (got input: {list(self.shape)}, target: {list(target.shape)})")


def _check_nll_dtypes(kernel, self, target):
    """The loops take a floating input (``AT_DISPATCH_FLOATING_TYPES_AND2``), and int64 or uint8 targets."""
    if target.dtype not in (st.int64, st.uint8):
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got {target.dtype.torch_name}")
    if not self.dtype.is_floating_point:
        raise NotImplementedError(f'"{kernel}" not implemented for \'{self.dtype.torch_name}\'')


def meta_nll_loss_forward(output, total_weight, self, target, weight, reduction, ignore_index):
    _check_nll_shapes(self, target, one_target_in_a_vector=True)
    classes = self.shape[-1]
    if weight is not None and (weight.dim() != 1 or weight.numel() != classes):
        raise RuntimeError(f"weight tensor should be defined either for all {classes} classes or no classes but "
                           f"got weight tensor of shape: {list(weight.shape)}")
    shape = (self.shape[0],) if reduction == NONE and self.dim() == 2 else ()
    return (set_output(output, shape, self.dtype, self.device),
            set_output(total_weight, (), self.dtype, self.device))


def _check_weight_dtype(self, weight):
    """The loops read the class weights as the input's scalar type (``const_data_ptr<scalar_t>``)."""
    if weight is not None and weight.dtype is not self.dtype:
        raise RuntimeError(f"expected scalar type {self.dtype.torch_name} but found {weight.dtype.torch_name}")


def impl_nll_loss_forward(outputs, self, target, weight, reduction, ignore_index):
    _check_nll_dtypes("nll_loss_out_frame", self, target)
    _check_weight_dtype(self, weight)
    for out, value in zip(outputs, _nll_loss_values(self, target, weight, reduction, ignore_index)):
        call("copy_", out, value)
    return outputs


def meta_nll_loss_backward(grad_input, grad_output, self, target, weight, reduction, ignore_index, total_weight):
    _check_nll_shapes(self, target)
    if total_weight.numel() != 1:
        raise RuntimeError(f"expected total_weight to be a  single element tensor, got: {list(total_weight.shape)} "
                           f"({total_weight.numel()} elements)")     # torch's message has the two spaces
    if weight is not None and weight.numel() != self.shape[-1]:
        raise RuntimeError("weight tensor should be defined either for all or no classes")
    if reduction == NONE and self.dim() == 2:
        check_dim_size(grad_output, 1, 0, self.shape[0])
    elif grad_output.dim() > 1 or grad_output.numel() != 1:
        raise RuntimeError(f"Expected a single element grad_output tensor, but got: {list(grad_output.shape)}")
    return set_output(grad_input, self.shape, self.dtype, self.device)


def impl_nll_loss_backward(grad_input, grad_output, self, target, weight, reduction, ignore_index, total_weight):
    _check_nll_dtypes("nll_loss_backward_out_frame", self, target)
    read = (grad_output,) if reduction == NONE and self.dim() == 2 else (total_weight, grad_output)
    read += (weight,) if weight is not None else ()
    for t in read:      # each read as the input's dtype
        if t.dtype is not self.dtype:
            raise RuntimeError(f"expected scalar type {self.dtype.torch_name} but found {t.dtype.torch_name}")
    gradient = _nll_loss_gradient(grad_output, self, target, weight, reduction, ignore_index, total_weight)
    return call("copy_", grad_input, gradient)


nll_loss_forward_out_cpu = structured(meta_nll_loss_forward, impl_nll_loss_forward, outputs=2)
nll_loss_backward_out_cpu = structured(meta_nll_loss_backward, impl_nll_loss_backward)


def _classes_last(self):
    """(N, C, H, W) viewed as (N, H, W, C): the kernels above pick along the last dimension."""
    return call("permute", self, [0, 2, 3, 1])


def _check_2d(self, target):
    """``nll_loss2d_forward_out_cpu_template``'s checks, RuntimeErrors with its messages."""
    if self.dim() != 4:
        raise RuntimeError(f"only batches of spatial inputs supported (4D tensors), but got input of dimension: "
                           f"{self.dim()}")
    if target.dim() != 3:
        raise RuntimeError(f"only batches of spatial targets supported (3D tensors) but got targets of dimension: "
                           f"{target.dim()}")
    if self.shape[0] != target.shape[0] or tuple(self.shape[2:]) != tuple(target.shape[1:]):
        raise RuntimeError(f"input and target batch or spatial sizes don't match: target {list(target.shape)}, "
                           f"input {list(self.shape)}")


def _check_2d_inputs(kernel, self, target, weight):
    """``LossNLL2d.cpp``'s order: the target's dtype, the weight's size, the shapes, then the loop's
    dispatch on the input's dtype and its reading of the weights as that dtype."""
    if target.dtype not in (st.int64, st.uint8):
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got {target.dtype.torch_name}")
    if weight is not None and self.dim() > 1 and weight.numel() != self.shape[1]:
        raise RuntimeError("weight tensor should be defined either for all or no classes")
    _check_2d(self, target)
    if not self.dtype.is_floating_point:
        raise NotImplementedError(f'"{kernel}" not implemented for \'{self.dtype.torch_name}\'')
    _check_weight_dtype(self, weight)


def nll_loss2d_forward(self, target, weight, reduction, ignore_index):
    """nll_loss over (N, C, H, W) log-probabilities and (N, H, W) targets (``LossNLL2d.cpp``): the
    same per-pixel loss as ``nll_loss_forward``, with the classes in dimension 1."""
    _check_2d_inputs("nll_loss2d_forward_out_frame", self, target, weight)
    return _nll_loss_values(_classes_last(self), target, weight, reduction, ignore_index)


def nll_loss2d_backward(grad_output, self, target, weight, reduction, ignore_index, total_weight):
    """``nll_loss_backward`` with the classes in dimension 1, laid out contiguous as torch's."""
    _check_2d_inputs("nll_loss2d_backward_out_frame", self, target, weight)
    for t in (grad_output, total_weight):      # each read as the input's dtype
        if t.dtype is not self.dtype:
            raise RuntimeError(f"expected scalar type {self.dtype.torch_name} but found {t.dtype.torch_name}")
    grad = _nll_loss_gradient(grad_output, _classes_last(self), target, weight, reduction, ignore_index,
                              total_weight)
    return call("clone", call("permute", grad, [0, 3, 1, 2]), memory_format=contiguous_format)


def _check_kernel_dtype(kernel, device, dtype, allowed):
    """The ``AT_DISPATCH`` of torch's loop: a dtype the loop has no case for raises as torch's
    (the backward loops are named after their ``_out`` functions)."""
    if not allowed(dtype):
        name = kernel.replace("_out", f"_{device.type}_out") if kernel.endswith("_out") else f"{kernel}_{device.type}"
        raise NotImplementedError(f'"{name}" not implemented for \'{dtype.torch_name}\'')


def _floating(d):
    return d.is_floating_point


def _real_not_bool(d):
    return not (d.is_complex or d is st.bool_)


def _promoted_into(out_dtype, operands, kernel, device, allowed):
    """A TensorIterator that promotes its inputs and casts safely into an output of
    ``out_dtype``: the common dtype (checked castable and against the loop's cases) and the
    operands cast to it."""
    common = st.result_type(*operands)
    if not st.can_cast(common, out_dtype):
        raise RuntimeError(f"result type {common.torch_name} can't be cast to the desired output type "
                           f"{out_dtype.torch_name}")
    _check_kernel_dtype(kernel, device, common, allowed)
    return common, [to(t, common) for t in operands]


def _check_same_dtype(reference, operands):
    """A TensorIterator left at ``check_all_same_dtype``: every operand, the output first, has
    the first input's dtype."""
    for d in operands:
        if d is not reference:
            raise RuntimeError(f"Found dtype {d.torch_name} but expected {reference.torch_name}")


def _written_into(result, like, memory_format):
    """``result`` copied into ``empty_like(like)`` (its dtype, and its layout or a contiguous
    one), the tensor torch's loops write into."""
    out = call("empty_like", like, memory_format=memory_format)
    call("copy_", out, result)
    return out


def _norm(reduction, numel, scale, dtype):
    """scale (÷ numel for 'mean') as the loops' ``scalar_t`` (an integer truncates; no element
    means nothing to scale)."""
    norm = scale / numel if reduction == MEAN and numel else scale
    return norm if dtype.is_floating_point else int(norm)


def _meta_pointwise_loss(out, self, target, reduction):
    """``TORCH_META_FUNC(mse_loss)`` and ``(smooth_l1_loss)``: the binary iterator over input
    and target (``build_borrowing_binary_op``: promoted, cast safely into ``out``, which it
    resizes to the broadcast shape), then a reduced loss's output resized to 0-dim."""
    it = TensorIterator.binary_op(out, self, target)
    if reduction != NONE:
        if reduction not in (MEAN, SUM):
            raise RuntimeError("reduction == Reduction::Mean || reduction == Reduction::Sum INTERNAL ASSERT FAILED")
        call("resize_", it.result, [])
    return it


def _impl_pointwise_loss(it, loss, reduction):
    """The impl's last step: the per-element loss written into the output, or its mean or sum
    (``mean_out``/``sum_out`` over every dim, into the 0-dim output)."""
    if reduction == NONE:
        return call("copy_", it.result, loss)
    reduce = "mean.out" if reduction == MEAN else "sum.IntList_out"
    return call(reduce, loss, [], False, dtype=None, out=it.result)


def meta_mse_loss(out, self, target, reduction=MEAN):
    return _meta_pointwise_loss(out, self, target, reduction)


def impl_mse_loss(it, self, target, reduction=MEAN):
    """(self − target)² per element in the common dtype (``mse_stub``): torch's ``mse_cpu`` loop
    has cases for floating dtypes only, so integer, bool and complex inputs raise."""
    _, (self, target) = _promoted_into(it.common_dtype, (self, target), "mse", self.device, _floating)
    diff = call("sub.Tensor", self, target)
    return _impl_pointwise_loss(it, call("mul.Tensor", diff, diff), reduction)


mse_loss_out = structured(meta_mse_loss, impl_mse_loss)


def mse_loss_backward(grad_output, self, target, reduction):
    """norm·(self − target)·grad, norm = 2 (÷ numel for 'mean'), as ``mse_loss_backward_out``:
    computed in the common dtype of the three, written into a contiguous tensor of ``self``'s
    dtype (a common dtype that cannot be cast safely into it raises); the loop has cases for
    every real dtype but bool, and the norm is first cast to the computing dtype (0 for an
    integer 'mean' over more than two elements, as in torch)."""
    common, (x, t, g) = _promoted_into(self.dtype, (self, target, grad_output), "mse_backward_out", self.device,
                                       _real_not_bool)
    norm = _norm(reduction, self.numel(), 2.0, common)
    grad = call("mul.Tensor", call("mul.Tensor", call("sub.Tensor", x, t), wrap_scalar(norm)), g)
    return _written_into(grad, self, contiguous_format)


# ---- smooth L1, Huber and KL divergence (``Loss.cpp``; the pointwise loops of
# ``cpu/BinaryOpsKernel.cpp`` and ``cpu/PointwiseOpsKernel.cpp``, written with operators)
def _abs_diff(self, target):
    return call("abs", call("sub.Tensor", self, target))


def _half(t):
    return call("mul.Tensor", t, wrap_scalar(0.5))


def meta_smooth_l1_loss(out, self, target, reduction=MEAN, beta=1.0):
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    return _meta_pointwise_loss(out, self, target, reduction)


def impl_smooth_l1_loss(it, self, target, reduction=MEAN, beta=1.0):
    """|d| < beta: 0.5·d²/beta, else |d| - 0.5·beta, with d = self - target, in the common
    dtype (``smooth_l1_stub``: floating loops only); then the reduction."""
    _, (self, target) = _promoted_into(it.common_dtype, (self, target), "smooth_l1", self.device, _floating)
    z = _abs_diff(self, target)
    if beta == 0:
        return _impl_pointwise_loss(it, z, reduction)
    quadratic = call("div.Tensor", call("mul.Tensor", _half(z), z), wrap_scalar(beta))
    linear = call("sub.Tensor", z, wrap_scalar(0.5 * _as_dtype(beta, z)))
    return _impl_pointwise_loss(it, call("where.self", call("lt.Scalar", z, beta), quadratic, linear), reduction)


smooth_l1_loss_out = structured(meta_smooth_l1_loss, impl_smooth_l1_loss)


def _as_dtype(value, t):
    """A parameter rounded to the tensor's computing dtype first, as the kernels' ``scalar_t beta_val(beta)``."""
    return float(np.array(value).astype(st.opmath_type(t.dtype).numpy_type))


def _clipped_slope(x, t, bound, g, norm, scale_by_bound):
    """The derivative of both losses: ±norm·grad (times the bound for Huber) beyond ±bound,
    norm·d·grad (÷ beta for smooth L1) inside."""
    d = call("sub.Tensor", x, t)
    outer = call("mul.Tensor", wrap_scalar(norm), g)
    inner = call("mul.Tensor", call("mul.Tensor", wrap_scalar(norm), d), g)
    if scale_by_bound:
        outer = call("mul.Tensor", outer, wrap_scalar(bound))
    elif bound:          # an integer loop's beta of 0 never reaches the inner branch: no division
        inner = call("div.Tensor", inner, wrap_scalar(bound))
    side = call("where.self", call("le.Scalar", d, -bound), call("neg", outer), inner)
    return call("where.self", call("ge.Scalar", d, bound), outer, side)


def smooth_l1_loss_backward(grad_output, self, target, reduction, beta):
    """Computed in the common dtype and written into a contiguous tensor of ``self``'s dtype, as
    ``smooth_l1_loss_backward_out`` (integer loops too, with norm and beta truncated)."""
    common, (x, t, g) = _promoted_into(self.dtype, (self, target, grad_output), "smooth_l1_backward_out",
                                       self.device, _real_not_bool)
    norm = _norm(reduction, self.numel(), 1.0, common)
    if beta == 0:        # torch's kernel for beta 0 is l1's gradient: sign(d)·norm·grad
        sign = call("sign", call("sub.Tensor", x, t))
        grad = call("mul.Tensor", call("mul.Tensor", sign, wrap_scalar(norm)), g)
    else:
        grad = _clipped_slope(x, t, beta if common.is_floating_point else int(beta), g, norm, scale_by_bound=False)
    return _written_into(grad, self, contiguous_format)


def huber_loss(self, target, reduction=MEAN, delta=1.0):
    """|d| < delta: 0.5·d², else delta·(|d| - 0.5·delta), computed in the common dtype and
    written into ``empty_like(self)``, as ``Loss.cpp``'s ``huber_loss`` (so the loss has the
    input's dtype and layout); then the reduction."""
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    _, (x, t) = _promoted_into(self.dtype, (self, target), "huber", self.device, _floating)
    z = _abs_diff(x, t)
    quadratic = call("mul.Tensor", _half(z), z)
    linear = call("mul.Tensor", wrap_scalar(delta),
                  call("sub.Tensor", z, wrap_scalar(0.5 * _as_dtype(delta, z))))
    loss = call("where.self", call("lt.Scalar", z, delta), quadratic, linear)
    return _reduce(_written_into(loss, self, preserve_format), reduction)


def huber_loss_backward(grad_output, self, target, reduction, delta):
    """``huber_loss_backward_out``'s iterator does not promote: input, target and grad share
    ``self``'s dtype, a floating one; the gradient is contiguous."""
    _check_same_dtype(self.dtype, (self.dtype, self.dtype, target.dtype, grad_output.dtype))
    _check_kernel_dtype("huber_backward_out", self.device, self.dtype, _floating)
    grad = _clipped_slope(self, target, delta, grad_output, _norm(reduction, self.numel(), 1.0, self.dtype),
                          scale_by_bound=True)
    return _written_into(grad, self, contiguous_format)


def kl_div(self, target, reduction=MEAN, *, log_target=False):
    """CompositeImplicitAutograd: target·(log target - input) pointwise (``xlogy`` makes 0·log 0 = 0;
    with ``log_target``, exp(target)·(target - input)), then the reduction."""
    if self.dtype.is_complex or target.dtype.is_complex:
        raise RuntimeError("kl_div: Complex inputs not supported.")
    if not self.dtype.is_floating_point or not target.dtype.is_floating_point:
        raise RuntimeError("kl_div: Integral inputs not supported.")
    if log_target:
        difference = call("sub.Tensor", target, self)     # C++ evaluates the right operand first
        pointwise = call("mul.Tensor", call("exp", target), difference)
    else:
        pointwise = call("sub.Tensor", call("xlogy.Tensor", target, target), call("mul.Tensor", target, self))
    return _reduce(pointwise, reduction)


# ---- the embedding and ranking losses: CompositeImplicitAutograd in torch (``Loss.cpp``), so
# their graphs are those of the operators they are written with, and so are their grad_fn names.
# Loss.cpp's constant, added to the squared magnitudes: a C++ float, so a float64 input gets
# float32's nearest value to 1e-12 (9.99999996e-13), which a zero input's gradient shows
_EPSILON = float(np.float32(1e-12))


def margin_ranking_loss(input1, input2, target, margin=0.0, reduction=MEAN):
    """max(0, -target·(input1 - input2) + margin), clamped in place as torch's composition is."""
    difference = call("sub.Tensor", input1, input2)   # C++ evaluates the right operand first
    scaled = call("mul.Tensor", call("neg", target), difference)
    return _reduce(call("clamp_min_", call("add.Scalar", scaled, float(margin)), 0), reduction)   # a C++ double


def hinge_embedding_loss(self, target, margin=1.0, reduction=MEAN):
    """self where target is 1, max(0, margin - self) where it is -1; both terms for any other value."""
    zeros = call("zeros_like", self, memory_format=contiguous_format)
    margin_clamp = call("clamp_min_", call("sub.Tensor", wrap_scalar(margin), self), 0)
    output_margin = call("where.self", call("ne.Scalar", target, 1), margin_clamp, zeros)
    output_self = call("where.self", call("ne.Scalar", target, -1), self, zeros)
    return _reduce(call("add.Tensor", output_margin, output_self), reduction)


def poisson_nll_loss(input, target, log_input, full, eps, reduction):
    """exp(input) - target·input (or input - target·log(input + eps)), plus Stirling's
    approximation of log(target!) where target > 1 when ``full``."""
    # torch's C++ evaluates the operands of ``exp(input) - target * input`` right to left (as GCC
    # orders a call's arguments): the product is recorded first, so its backward runs last and
    # input's gradient takes the other term's layout.
    if log_input:
        product = call("mul.Tensor", target, input)
        loss = call("sub.Tensor", call("exp", input), product)
    else:
        loss = call("sub.Tensor", input, call("mul.Tensor", target, call("log", call("add.Scalar", input, eps))))
    if full:
        stirling = call("add.Tensor", call("sub.Tensor", call("mul.Tensor", target, call("log", target)), target),
                        call("mul.Tensor", wrap_scalar(0.5),
                             call("log", call("mul.Tensor", wrap_scalar(2 * np.pi), target))))
        loss = call("add_.Tensor", loss, call("masked_fill.Scalar", stirling, call("le.Scalar", target, 1), 0))
    return _reduce(loss, reduction)


def cosine_embedding_loss(input1, input2, target, margin=0.0, reduction=MEAN):
    """1 - cos where target is 1, max(0, cos - margin) where it is -1, 0 elsewhere; cos from the
    sums of products along the last dim, each squared magnitude raised by 1e-12."""
    dim = target.dim()
    if dim not in (0, 1):
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if input1.dim() != 2 - (dim == 0):
        raise RuntimeError(f"{dim}D target tensor expects {2 - (dim == 0)}D input tensors, but found inputs with "
                           f"sizes {list(input1.shape)} and {list(input2.shape)}.")

    def summed(a, b):
        return call("sum.dim_IntList", call("mul.Tensor", a, b), [dim], False, dtype=None)
    # in torch's order (the product's sum first): the engine runs later nodes first, and the order
    # the gradients reach input1 decides its gradient's layout
    product = summed(input1, input2)
    magnitude1 = call("add.Scalar", summed(input1, input1), _EPSILON)
    magnitude2 = call("add.Scalar", summed(input2, input2), _EPSILON)
    cos = call("div.Tensor", product, call("sqrt_", call("mul.Tensor", magnitude1, magnitude2)))
    zeros = call("zeros_like", cos, memory_format=contiguous_format)
    # C++'s scalar - tensor (``ATen/TensorOperators.h``): the scalar filled into an empty_like, then sub_
    pos = call("sub_.Tensor", call("fill_.Scalar", call("empty_like", cos, memory_format=preserve_format), 1), cos)
    neg = call("clamp_min_", call("sub.Scalar", cos, float(margin)), 0)     # margin is a C++ double
    output = call("add.Tensor", call("where.self", call("eq.Scalar", target, 1), pos, zeros),
                  call("where.self", call("eq.Scalar", target, -1), neg, zeros))
    return _reduce(output, reduction)


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2.0, eps=1e-6, swap=False, reduction=MEAN):
    """max(0, margin + d(anchor, positive) - d(anchor, negative)), d the pairwise distance; with
    ``swap`` the negative's distance is the smaller of its distances to anchor and positive."""
    if not anchor.dim() == positive.dim() == negative.dim():
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the same number of "
                           f"dimensions, but got: anchor {anchor.dim()}D, positive {positive.dim()}D, and negative "
                           f"{negative.dim()}D inputs")
    dist_pos = call("pairwise_distance", anchor, positive, p, eps)
    dist_neg = call("pairwise_distance", anchor, negative, p, eps)
    if swap:
        dist_neg = call("minimum", dist_neg, call("pairwise_distance", positive, negative, p, eps))
    gap = call("sub.Tensor", call("add.Scalar", dist_pos, margin), dist_neg)
    return _reduce(call("clamp_min", gap, 0), reduction)


# ---- the soft margin loss (``Loss.cpp``): CompositeExplicitAutograd in torch, so one node,
# SoftMarginLossBackward0, whose backward operator has a derivative of its own.
def soft_margin_loss(self, target, reduction=MEAN):
    """log(1 + exp(-target·input)) per element, written as torch's in-place chain into a tensor of
    ``self``'s dtype (neg, mul_, exp_, log1p_), then reduced."""
    loss = call("log1p_", call("exp_", call("mul_.Tensor", call("neg", self), target)))
    return _reduce(loss, reduction)


def soft_margin_loss_backward(grad_output, self, target, reduction):
    """-norm·target·z/(1 + z)·grad_output with z = exp(-target·input); norm 1/numel for 'mean'."""
    norm = (1.0 / self.numel() if self.numel() else float("inf")) if reduction == MEAN else 1.0   # C++'s 1./0
    z = call("exp", call("mul.Tensor", call("neg", target), self))
    grad = call("mul_.Tensor", call("mul.Tensor", target, z), wrap_scalar(-norm))
    return call("mul_.Tensor", call("div_.Tensor", grad, call("add_.Tensor", z, wrap_scalar(1))), grad_output)


# ---- the multi-class margin loss (``LossMultiMargin.cpp``): for each sample, the mean over the
# other classes j of max(0, margin - x[y] + x[j])^p, times weight[y]. torch loops per sample;
# here the same sums are tensor operations, masked to leave out each sample's own class.
def _multi_margin_check(self, target, p, weight):
    """``multi_margin_loss_shape_check``: (N, C) or (C,) input, one class index per sample."""
    if p not in (1, 2):
        raise RuntimeError("only p == 1 and p == 2 supported")
    ndims = self.dim()
    if not (ndims <= 2 and (ndims < 2 or self.shape[1] != 0) and (ndims != 1 or self.numel() > 0)):
        raise RuntimeError("Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
                           f"{list(self.shape)}")
    nframe = 1 if ndims <= 1 else self.shape[0]
    dim = 1 if ndims == 0 else self.shape[-1]
    if not ((ndims <= 1 and target.numel() == 1) or (ndims == 2 and target.dim() <= 1 and target.numel() == nframe)):
        raise RuntimeError("multi_margin_loss: target tensor should be 1-D with size equal to the number of input "
                           f"samples (batch size). Expected target size [{nframe}], but got {list(target.shape)}. "
                           f"Input has shape {list(self.shape)}.")
    if weight is not None and not (weight.dim() <= 1 and weight.numel() == dim):
        raise RuntimeError(f"inconsistent weight size, expected {dim} but got {list(weight.shape)}")
    return nframe, dim


def _multi_margin_read(self, target, weight, dim):
    """Inside the loop's dtype dispatch: the targets read as int64, the weights as the input's
    dtype, then each target checked against the classes."""
    if target.dtype is not st.int64:
        raise RuntimeError(f"expected scalar type Long but found {target.dtype.torch_name}")
    _check_weight_dtype(self, weight)
    if target.numel() and (call("min", target).item() < 0 or call("max", target).item() >= dim):
        raise RuntimeError("target out of range")


def _multi_margin_terms(self, target, margin, nframe, dim):
    """(N, C) rows of the input, the one-hot mask of each row's class, and margin - x[y] + x[j]."""
    x = call("reshape", self, [nframe, dim])
    y = call("reshape", target, [nframe, 1])
    own = call("eq.Tensor", y, arange(dim, device=self.device))
    z = call("add.Tensor", call("rsub.Scalar", call("gather", x, 1, y), margin), x)
    return own, z


def multi_margin_loss(self, target, p=1, margin=1, weight=None, reduction=MEAN):
    """Per sample, sum over j != y of max(0, margin - x[y] + x[j])^p (times weight[y]), over C;
    then none (per sample), the mean over samples, or their sum."""
    nframe, dim = _multi_margin_check(self, target, p, weight)
    # the CPU kernel is dispatched for float and double only; CUDA's takes the 16-bit floats too
    if not self.dtype.is_floating_point or (self.dtype.is_reduced_float and self.device.type == "cpu"):
        raise NotImplementedError(f'"multi_margin_loss_cpu_kernel" not implemented for \'{self.dtype.torch_name}\'')
    _multi_margin_read(self, target, weight, dim)
    own, z = _multi_margin_terms(self, target, margin, nframe, dim)
    h = call("masked_fill.Scalar", call("clamp_min", z, 0), own, 0)
    if p == 2:
        h = call("mul.Tensor", h, h)
    if weight is not None:
        h = call("mul.Tensor", h, call("unsqueeze", call("index_select", call("reshape", weight, [-1]), 0,
                                                         call("reshape", target, [-1])), 1))
    per_sample = call("div.Scalar", call("sum.dim_IntList", h, [1], False), dim)
    if reduction == NONE:
        return call("reshape", per_sample, list(target.shape)) if self.dim() == 2 else \
            call("reshape", per_sample, list(target.shape) if target.dim() else [])
    return _reduce(per_sample, reduction)


def multi_margin_loss_backward(grad_output, self, target, p, margin, weight=None, reduction=MEAN):
    """d/dx[j] = g·(1 or 2z) where z = margin - x[y] + x[j] > 0 (times weight[y]), and x[y] gets
    minus their sum; g = 1/C, or 1/(N·C) for 'mean'; then scaled by grad_output."""
    nframe, dim = _multi_margin_check(self, target, p, weight)
    if self.dtype.is_reduced_float and self.device.type == "cpu":
        raise NotImplementedError('"multi_margin_loss_backward_cpu_kernel" not implemented for '
                                  f"'{self.dtype.torch_name}'")
    _multi_margin_read(self, target, weight, dim)
    own, z = _multi_margin_terms(self, target, margin, nframe, dim)
    count = nframe * dim if reduction == MEAN else dim
    g = 1.0 / count if count else float("inf")     # (C++'s double division; an empty batch has no gradient)
    active = call("bitwise_and.Tensor", call("gt.Scalar", z, 0), call("logical_not", own))
    h = call("mul.Scalar", z, 2 * g) if p == 2 else call("full_like", z, g)
    if weight is not None:
        h = call("mul.Tensor", h, call("unsqueeze", call("index_select", call("reshape", weight, [-1]), 0,
                                                         call("reshape", target, [-1])), 1))
    h = call("masked_fill.Scalar", h, call("logical_not", active), 0)
    grad = call("sub.Tensor", h, call("mul.Tensor", own, call("sum.dim_IntList", h, [1], True)))
    go = grad_output
    if reduction == NONE and go.dim() > 0:
        go = call("reshape", go, [nframe, 1])
    grad = call("mul.Tensor", grad, go)
    return call("reshape", grad, list(self.shape))
