"""``multilabel_margin_loss`` (``aten/src/ATen/native/LossMultiLabelMargin.cpp``).

Each sample's target row lists its classes, ended by the first -1; the loss of a sample is
sum over its listed classes j and over the classes d it does not list of max(0, 1 - x[j] + x[d]),
divided by the number of classes C. ``multilabel_margin_loss_forward`` also returns
``is_target``, the 0/1 mask of the listed classes, which the backward reuses.

torch runs one loop per sample; here each kernel is a composition of internals' operators over
(sample, listed position, class) triples, so the sums are grouped differently and the values
agree with torch's within a few ulps. ``reduction`` is torch's enum: 0 none, 1 mean, 2 sum.
"""
from ...c10 import scalar_type as st
from ..dispatcher import call
from .tensor_factories import arange, wrap_scalar

__all__ = ["multilabel_margin_loss", "multilabel_margin_loss_forward", "multilabel_margin_loss_backward"]

NONE, MEAN, SUM = 0, 1, 2


def _shape_check(self, target):
    """``multilabel_margin_loss_shape_check``: (C,), () or (N, C) with C > 0; target the same
    shape (a vector of C for a vector). Returns (N, C)."""
    ndims = self.dim()
    if not ((ndims == 2 and self.shape[1] != 0) or (ndims == 1 and self.shape[0] != 0) or ndims == 0):
        raise RuntimeError("Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
                           f"{list(self.shape)}")
    if ndims <= 1:
        nframe, dim = 1, (1 if ndims == 0 else self.shape[0])
        ok = target.dim() <= 1 and target.numel() == dim
    else:
        nframe, dim = self.shape
        ok = target.dim() == 2 and target.shape[0] == nframe and target.shape[1] == dim
    if not ok:
        raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of size: {list(self.shape)}")
    return nframe, dim


def _checked(self, target, kernel):
    """The checks of ``multilabel_margin_loss_forward_out_cpu_template`` in its order: shapes,
    the target's dtype and range (-1 <= t < C), then the input dtypes the loop is compiled for."""
    nframe, dim = _shape_check(self, target)
    if target.dtype is not st.int64:
        raise RuntimeError(f"expected scalar type Long but found {target.dtype.torch_name}")
    if target.numel() and (call("min", target).item() < -1 or call("max", target).item() >= dim):
        raise RuntimeError("argument #2 'target' is out of range")
    if not self.dtype.is_floating_point or (self.dtype.is_reduced_float and self.device.type == "cpu"):
        raise NotImplementedError(f'"{kernel}" not implemented for \'{self.dtype.torch_name}\'')
    return nframe, dim


def _terms(self, target, nframe, dim):
    """As (N, C) rows: is_target (0/1 in the input's dtype), and the hinge terms
    1 - x[target[p]] + x[d] of each listed position p and class d, masked to the counted ones
    (p before the first -1, d not listed) as a boolean (N, C, C)."""
    x = call("reshape", self, [nframe, dim])
    y = call("reshape", target, [nframe, dim])
    listed = call("eq.Scalar", call("cumsum", call("lt.Scalar", y, 0), 1), 0)          # before the first -1
    index = call("clamp_min", y, 0)
    classes = arange(dim, device=self.device)
    onehot = call("bitwise_and.Tensor", call("eq.Tensor", call("unsqueeze", index, -1), classes),
                  call("unsqueeze", listed, -1))
    is_target = call("any.dim", onehot, 1, False)
    z = call("add.Tensor", call("unsqueeze", call("rsub.Scalar", call("gather", x, 1, index), 1), -1),
             call("unsqueeze", x, 1))
    counted = call("bitwise_and.Tensor", call("unsqueeze", listed, -1),
                   call("unsqueeze", call("logical_not", is_target), 1))
    active = call("bitwise_and.Tensor", counted, call("gt.Scalar", z, 0))
    return x, index, is_target, z, active


def multilabel_margin_loss_forward(self, target, reduction):
    """(loss, is_target): the loss per sample (reduction none: shape (N,), or () for a vector), or
    their mean or sum; is_target shaped as the target."""
    nframe, dim = _checked(self, target, "multilabel_margin_loss_forward_out_frame")
    x, _, is_target, z, active = _terms(self, target, nframe, dim)
    hinge = call("where.self", active, z, wrap_scalar(0.0))
    per_sample = call("div.Scalar", call("sum.dim_IntList", hinge, [1, 2], False), dim)
    if reduction == NONE:
        output = per_sample if self.dim() == 2 else call("reshape", per_sample, [])
    elif reduction == SUM:
        output = call("sum", per_sample)
    else:
        output = call("mean", per_sample)
    is_target = call("reshape", call("_to_copy", is_target, dtype=self.dtype), list(target.shape))
    return output, is_target        # a plain tuple: torch has no return type for this operator


def multilabel_margin_loss_backward(grad_output, self, target, reduction, is_target):
    """Each counted term with 1 - x[j] + x[d] > 0 gives x[d] +g and x[j] -g, g = 1/C (1/(N C) for
    'mean'); then scaled by grad_output (per sample for reduction none)."""
    nframe, dim = _checked(self, target, "multilabel_margin_loss_backward_out_frame")
    x, index, _, _, active = _terms(self, target, nframe, dim)
    count = nframe * dim if reduction == MEAN else dim
    g = 1.0 / count if count else float("inf")     # (C++'s double division; an empty batch has no gradient)
    hits = call("_to_copy", active, dtype=self.dtype)
    grad = call("mul.Scalar", call("sum.dim_IntList", hits, [1], False), g)
    taken = call("mul.Scalar", call("sum.dim_IntList", hits, [2], False), -g)
    grad = call("scatter_add", grad, 1, index, taken)
    go = grad_output
    if reduction == NONE and go.dim() > 0:
        go = call("reshape", go, [nframe, 1])
    grad = call("mul.Tensor", grad, go)
    return call("reshape", grad, list(self.shape))


def multilabel_margin_loss(self, target, reduction=MEAN):
    """CompositeImplicitAutograd: the forward's loss, is_target dropped."""
    return call("multilabel_margin_loss_forward", self, target, reduction)[0]
