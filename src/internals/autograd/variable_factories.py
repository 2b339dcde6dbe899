"""Factories as the Python API calls them (torch's generated ``torch/csrc/autograd/generated/variable_factories.h``).

``torch.zeros(3, requires_grad=True)``: the binding calls ``torch::zeros``, which runs the
operator below ADInplaceOrView -- the factory's fill of its own fresh tensor (``zero_``,
``fill_``, ``copy_``) is no user's in-place write: no version bump, no graph -- and then makes
the result a leaf that requires grad if asked. ``requires_grad`` is not an argument of the
operator (its schema has none): a TorchDispatchMode sees ``aten.zeros.default`` without it.
"""
from ..aten import dispatcher
from ..c10.local_dispatch_key_set import below_ad_inplace_or_view

__all__ = ["variable_factory", "out_variable_factory", "check_out_type_matches"]


def variable_factory(requires_grad, name, *args, **kwargs):
    with below_ad_inplace_or_view():
        result = dispatcher.call(name, *args, **kwargs)
    return _set_requires_grad(result, requires_grad)


def check_out_type_matches(out, dtype, layout, device):
    """``check_out_type_matches`` (``torch/csrc/utils/out_types.cpp``): the options a factory's
    out= call gives must be ``out``'s own (the device's type only)."""
    if dtype is not None and out.dtype is not dtype:
        raise RuntimeError(f"dtype {dtype.torch_name} does not match dtype of out parameter ({out.dtype.torch_name})")
    if layout is not None and out.layout is not layout:
        raise RuntimeError(f"layout {layout} does not match layout of out parameter ({out.layout})")
    if device is not None and out.device.type != device.type:
        raise RuntimeError(f"device type {device.type} does not match device type of out parameter "
                           f"({out.device.type})")


def out_variable_factory(requires_grad, options, name, *args, **kwargs):
    """``torch.arange(5, out=x)``: the options checked against ``x``, the out= operator called
    (a user's write into ``x``: its version moves), and ``x`` made to require grad if asked."""
    check_out_type_matches(kwargs["out"], *options)
    result = dispatcher.call(name, *args, **kwargs)
    return _set_requires_grad(result, requires_grad)


def _set_requires_grad(result, requires_grad):
    """``make_variable`` -> ``set_requires_grad``'s check, in its words (not ``requires_grad_``'s)."""
    if requires_grad:
        if not (result.dtype.is_floating_point or result.dtype.is_complex):
            raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
        result._requires_grad = True
    return result
