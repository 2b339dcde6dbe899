"""Module backward hooks (``torch/utils/hooks.py`` ``BackwardHook``, ``torch/nn/modules/_functions.py``).

A module is not a node of the autograd graph: its forward is many operators. To see "the
gradients of the module's inputs and outputs", torch passes the tensor inputs, and then the tensor
outputs, through an identity ``autograd.Function`` (``BackwardHookFunction``). Each of the two
calls makes one graph node that every gradient crossing the module boundary must pass:

* the output node runs first in backward: its hook records grad_output (after the backward
  pre-hooks, which may replace it);
* the input node runs last: its hook calls the user's hooks with (module, grad_input,
  grad_output), and may replace grad_input.

Non-tensor arguments keep their place in the tuples as None, so the hook sees one entry per
positional argument, as torch's does.
"""
import warnings

from .._tensor import Tensor
from ..autograd.function import Function
from ..autograd.graph import RemovableHandle
from ..c10.grad_mode import _state as _grad_mode

__all__ = ["RemovableHandle", "BackwardHook", "BackwardHookFunction"]


class BackwardHookFunction(Function):
    """Identity on its tensors, which gives them a ``BackwardHookFunctionBackward`` grad_fn to hook."""

    @staticmethod
    def forward(ctx, *args):
        # A tensor that needs no grad must stay so after passing through.
        ctx.mark_non_differentiable(*[arg for arg in args if not arg.requires_grad])
        return args

    @staticmethod
    def backward(ctx, *grads):
        return grads


def _pack_with_none(indices, values, size):
    """Gradients of the tensor positions spread over ``size`` slots, None elsewhere."""
    packed = [None] * size
    for idx, value in zip(indices, values, strict=True):
        packed[idx] = value
    return tuple(packed)


def _unpack_none(indices, values):
    return tuple(values[idx] for idx in indices)


class BackwardHook:
    """One module call's backward hooks: made by ``Module.__call__`` when the module has any."""

    def __init__(self, module, user_hooks, user_pre_hooks):
        self.module = module
        self.user_hooks = user_hooks
        self.user_pre_hooks = user_pre_hooks
        self.grad_outputs = None
        self.n_outputs = -1
        self.output_tensors_index = None
        self.n_inputs = -1
        self.input_tensors_index = None

    def _apply_on_tensors(self, register, args):
        """Pass the tensors of ``args`` through BackwardHookFunction and ``register`` a hook on the
        node that made; returns the new args and the tensors' positions (None when no graph is recorded)."""
        tensors_idx = [i for i, arg in enumerate(args) if isinstance(arg, Tensor)]
        tensors = [args[i] for i in tensors_idx]
        if not (any(t.requires_grad for t in tensors) and _grad_mode.grad_enabled):
            return args, None
        new_tensors = BackwardHookFunction.apply(*tensors)
        grad_fns = [t.grad_fn for t in new_tensors
                    if t.grad_fn is not None and t.grad_fn.name() == "BackwardHookFunctionBackward"]
        register(grad_fns[0])          # all the outputs share this one node
        arg_list = list(args)
        for idx, value in zip(tensors_idx, new_tensors, strict=True):
            arg_list[idx] = value
        return (tuple(arg_list) if type(args) is tuple else type(args)(*arg_list)), tensors_idx

    def setup_input_hook(self, args):
        res, self.input_tensors_index = self._apply_on_tensors(lambda node: node.register_hook(self._input_hook), args)
        self.n_inputs = len(args)
        return res

    def setup_output_hook(self, output):
        is_tuple = isinstance(output, tuple)
        args = output if is_tuple else (output,)
        res, self.output_tensors_index = self._apply_on_tensors(
            lambda node: node.register_hook(self._output_hook), args)
        self.n_outputs = len(args)
        return res if is_tuple else res[0]

    def _input_hook(self, grad_input, _):
        """Post-hook of the input node: the user's hooks, in order, each seeing the previous one's result."""
        if self.grad_outputs is None:       # reached without passing the outputs (e.g. double backward)
            return None
        res = _pack_with_none(self.input_tensors_index, grad_input, self.n_inputs)
        for hook in self.user_hooks:
            out = hook(self.module, res, self.grad_outputs)
            if out is None:
                continue
            if len(out) != len(res):
                raise RuntimeError("Backward hook returned an invalid number of grad_input, "
                                   f"got {len(out)}, but expected {len(res)}")
            res = out
        self.grad_outputs = None            # this call's backward is done
        return _unpack_none(self.input_tensors_index, res)

    def _output_hook(self, _, grad_output):
        """Post-hook of the output node: record grad_output, letting the pre-hooks replace it."""
        self.grad_outputs = _pack_with_none(self.output_tensors_index, grad_output, self.n_outputs)
        for pre_hook in self.user_pre_hooks:
            replaced = pre_hook(self.module, self.grad_outputs)
            if replaced is None:
                continue
            if len(replaced) != len(self.grad_outputs):
                raise RuntimeError("Backward pre hook returned an invalid number of grad_output, "
                                   f"got {len(replaced)}, but expected {len(self.grad_outputs)}")
            self.grad_outputs = replaced
        local_grad_outputs = self.grad_outputs
        if self.input_tensors_index is None:
            self._call_hooks_without_input_grads()
        return _unpack_none(self.output_tensors_index, local_grad_outputs)

    def _call_hooks_without_input_grads(self):
        """No input needs a gradient, so the input node does not exist: call the hooks here, with
        all-None grad_input, which they may not replace."""
        warnings.warn("Full backward hook is firing when gradients are computed with respect to module outputs "
                      "since no inputs require gradients. See https://docs.pytorch.org/docs/main/generated/"
                      "torch.nn.Module.html#torch.nn.Module.register_full_backward_hook for more details.",
                      stacklevel=5)
        grad_inputs = (None,) * self.n_inputs
        for hook in self.user_hooks:
            res = hook(self.module, grad_inputs, self.grad_outputs)
            if res is not None and not (isinstance(res, tuple) and all(el is None for el in res)):
                raise RuntimeError("Backward hook for Modules where no input requires "
                                   "gradient should always return None or None for all gradients.")
        self.grad_outputs = None
