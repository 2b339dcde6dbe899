"""The losses' legacy ``size_average`` and ``reduce`` arguments (``torch/nn/_reduction.py``)."""
import warnings

__all__ = ["legacy_get_string"]


def legacy_get_string(size_average, reduce, emit_warning=True):
    """The reduction the two legacy flags name: both true (or unset) is 'mean', reduce alone
    'sum', no reduce 'none'; a warning names it, as torch's does."""
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    reduction = "mean" if size_average and reduce else "sum" if reduce else "none"
    if emit_warning:
        warnings.warn(f"size_average and reduce args will be deprecated, please use reduction='{reduction}' "
                      "instead.", stacklevel=3)
    return reduction
