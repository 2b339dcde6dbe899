"""Native operator implementations, by family, as in ``aten/src/ATen/native``.

``native_functions.yaml`` names each kernel as torch's names a function of ``at::native``;
:func:`kernel` finds it among the families.
"""
from . import (
    activation,
    adaptive_max_pooling3d,
    attention,
    average_pool3d,
    batch_linear_algebra,
    binary_ops,
    blas,
    bucketization,
    channel_shuffle,
    complex_helper,
    convolution,
    convolution_tbc,
    copy,
    cross,
    dilated_max_pool3d,
    distance,
    distributions,
    elementwise,
    embedding,
    embedding_bag,
    foreach_ops_kernels,
    fractional_max_pooling,
    grid_sampler,
    im2col,
    indexing,
    linear,
    linear_algebra,
    loss,
    loss_ctc,
    loss_multilabel_margin,
    matrix_exp,
    max_unpooling,
    normalization,
    onehot,
    packed_sequence,
    pad_nd,
    pixel_shuffle,
    pointwise_ops,
    pooling,
    reduce_ops,
    reduce_ops_math,
    resize,
    rnn,
    scalar,
    softmax,
    sorting,
    summary_ops,
    tensor_compare,
    tensor_factories,
    tensor_properties,
    tensor_shape,
    tensor_transformations,
    triangular_ops,
    unary_ops,
    upsample,
    weight_norm,
)
from .sparse import sparse_csr_tensor, sparse_csr_tensor_math, sparse_tensor, sparse_tensor_math

__all__ = ["kernel", "FAMILIES"]

FAMILIES = (copy, distributions, elementwise, unary_ops, activation, binary_ops, indexing, linear_algebra,
            batch_linear_algebra, blas, reduce_ops, reduce_ops_math, sorting, summary_ops, softmax,
            tensor_factories, tensor_shape, tensor_transformations, triangular_ops, sparse_tensor,
            sparse_tensor_math, sparse_csr_tensor, sparse_csr_tensor_math, convolution, pooling, pad_nd, onehot,
            normalization, loss, embedding,
            resize, complex_helper, scalar, pointwise_ops, bucketization, cross, distance, linear,
            upsample, embedding_bag, packed_sequence, grid_sampler, im2col, pixel_shuffle,
            weight_norm, matrix_exp, loss_multilabel_margin, loss_ctc, average_pool3d, dilated_max_pool3d,
            max_unpooling, adaptive_max_pooling3d, tensor_properties, attention, fractional_max_pooling,
            channel_shuffle, foreach_ops_kernels, tensor_compare, rnn, convolution_tbc)


def kernel(name):
    """The kernel function called ``name`` in one of the families (exactly one: names are unique)."""
    found = {id(f): f for f in (getattr(m, name, None) for m in FAMILIES) if callable(f)}
    if len(found) != 1:
        raise LookupError(f"native kernel {name!r}: {'not found' if not found else 'ambiguous'}")
    return next(iter(found.values()))
