"""Grouping parameters into gradient buckets (``compute_bucket_assignment_by_size`` in
``torch/csrc/distributed/c10d/reducer.cpp``).

Tensors are taken in the order given; each joins the open bucket of its dtype and device, and a
bucket closes as soon as its bytes reach the current limit. The limits are a list: the first
closed bucket uses the first limit, later ones move down the list and stay on its last entry.
DDP passes ``[1 MiB, bucket_cap]`` when the cap is left at its default, so the first bucket --
the parameters registered first, whose gradients arrive last -- stays small and its all-reduce
does not hold up the end of backward.
"""
_DEFAULT_FIRST_BUCKET_BYTES = 1024 * 1024


def _close(result, limits_out, bucket, limit):
    result.append(bucket)
    limits_out.append(limit)


def _compute_bucket_assignment_by_size(tensors, bucket_size_limits, expect_sparse_gradient=(),
                                       tensor_indices=()):
    """The buckets as lists of tensor indices, and each bucket's size limit.

    ``tensor_indices``, when given, names each tensor of ``tensors`` (the reducer passes the
    parameters in the order their gradients arrived, with their indices): the buckets then keep
    that order. Without, the index is the position, and the buckets are sorted by the smallest
    index each holds, as torch sorts them."""
    if not bucket_size_limits:
        raise RuntimeError("Expected at least one bucket size limit")
    labels = list(tensor_indices) if tensor_indices else range(len(tensors))
    open_buckets, sizes, level = {}, {}, {}        # per (dtype, device): indices, bytes, limit index
    result, limits_out = [], []
    for t, i in zip(tensors, labels):
        if expect_sparse_gradient and expect_sparse_gradient[i]:
            _close(result, limits_out, [i], 1)      # a sparse gradient travels alone
            continue
        key = (t.dtype, str(t.device))
        open_buckets.setdefault(key, []).append(i)
        sizes[key] = sizes.get(key, 0) + t.numel() * t.element_size()
        limit = bucket_size_limits[level.setdefault(key, 0)]
        if sizes[key] >= limit:
            _close(result, limits_out, open_buckets.pop(key), limit)
            sizes[key] = 0
            level[key] = min(level[key] + 1, len(bucket_size_limits) - 1)
    for key, bucket in open_buckets.items():        # the partly filled buckets
        _close(result, limits_out, bucket, bucket_size_limits[level[key]])
    if not tensor_indices:
        pairs = sorted(zip(result, limits_out), key=lambda p: min(p[0]))
        result, limits_out = [p[0] for p in pairs], [p[1] for p in pairs]
    return result, limits_out
