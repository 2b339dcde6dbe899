"""Weight normalization's operators (``aten/src/ATen/native/WeightNorm.cpp``): the norm of a
tensor over every dimension but one, and ``w = g * v / ||v||`` that
``nn.utils.parametrizations.weight_norm`` reads its weight through.

Both are composite here. Torch routes ``_weight_norm`` with ``dim`` first or last (and no 16-bit
operand) to a fused kernel, ``_weight_norm_interface``, with a backward of its own; the composite
form below is torch's other path, which it takes for the middle dimensions, so its gradients are
those of ``mul``, ``div`` and ``linalg_vector_norm``.
"""
from .. import dispatcher


def norm_except_dim(v, pow=2, dim=0):
    """The ``pow``-norm of each slice ``v.select(dim, i)``, shaped to broadcast against ``v``
    (size 1 everywhere but ``dim``); ``dim=-1`` means the norm of the whole tensor, a scalar."""
    if dim == -1:
        return dispatcher.call("linalg_vector_norm", v, pow)
    if dim != 0 and dim != v.dim() - 1:
        # A middle dimension: move it to the front, reduce there, and move it back.
        moved = dispatcher.call("transpose.int", v, 0, dim)
        return dispatcher.call("transpose.int", norm_except_dim(moved, pow, 0), 0, dim)
    # Every dimension but ``dim`` reduced, kept as size 1 so the result broadcasts against v.
    others = [d for d in range(v.dim()) if d != dim]
    return dispatcher.call("linalg_vector_norm", v, pow, others, True)


def _weight_norm(v, g, dim=0):
    return dispatcher.call("mul.Tensor", v, dispatcher.call("div.Tensor", g, norm_except_dim(v, 2, dim)))
