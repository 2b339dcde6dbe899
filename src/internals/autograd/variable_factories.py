"""Factories as the Python API calls them (torch's generated ``torch/csrc/autograd/generated/variable_factories.h``).

``torch.zeros(3, requires_grad=True)``: the binding calls ``torch::zeros``, which runs the
operator below ADInplaceOrView -- the factory's fill of its own fresh tensor (``zero_``,
``fill_``, ``copy_``) is no user's in-place write: no version bump, no graph -- and then makes
the result a leaf that requires grad if asked. ``requires_grad`` is not an argument of the
operator (its schema has none): a TorchDispatchMode sees ``aten.zeros.default`` without it.
"""
from ..aten import dispatcher
from ..c10.local_dispatch_key_set import below_ad_inplace_or_view

__all__ = ["variable_factory"]


def variable_factory(requires_grad, name, *args, **kwargs):
    with below_ad_inplace_or_view():
        result = dispatcher.call(name, *args, **kwargs)
    if requires_grad:
        # ``make_variable`` -> ``set_requires_grad``'s check, in its words (not ``requires_grad_``'s)
        if not result.dtype.is_floating_point:
            raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
        result._requires_grad = True
    return result
