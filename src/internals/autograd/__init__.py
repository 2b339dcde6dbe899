"""Autograd (``torch/autograd``, ``torch/csrc/autograd``).

The layer that records, for every operation on tensors that require grad, a backward node
(``graph.py``, generated ``generated/functions.py``) and the engine that runs those nodes in
reverse (``engine.py``). The recording is done by the kernels of the ``Autograd`` dispatch key
(generated ``generated/variable_type.py``, from ``derivatives.yaml``; regenerate with
``python -m internals.codegen``).
"""
from ..c10.exception import warn_once
from . import forward_ad, functional, graph  # noqa: F401
from .anomaly_mode import detect_anomaly, set_detect_anomaly
from .engine import is_checkpoint_valid as _is_checkpoint_valid  # noqa: F401  torch.autograd._is_checkpoint_valid
from .engine import make_grads as _make_grads
from .engine import run_backward as _run_backward
from .function import Function, FunctionCtx, once_differentiable
from .functions_manual import zeros_like
from .grad_mode import (  # noqa: F401
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from .gradcheck import GradcheckError, gradcheck, gradgradcheck
from .variable import Variable

__all__ = ["backward", "grad", "Function", "FunctionCtx", "once_differentiable", "gradcheck", "GradcheckError",
           "gradgradcheck", "forward_ad", "functional", "graph", "no_grad", "enable_grad", "set_grad_enabled",
           "inference_mode", "is_grad_enabled", "is_inference_mode_enabled", "Variable", "detect_anomaly",
           "set_detect_anomaly"]


def _as_tuple(x):
    if x is None:
        return ()
    return tuple(x) if isinstance(x, (list, tuple)) else (x,)


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, grad_variables=None, inputs=None):
    """Accumulate into ``.grad`` of the leaves the gradient of ``tensors`` (``torch.autograd.backward``)."""
    tensors = _as_tuple(tensors)
    grads = _as_tuple(grad_tensors if grad_variables is None else grad_variables) or (None,) * len(tensors)
    if inputs is not None and not _as_tuple(inputs):
        raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    inputs = _as_tuple(inputs)
    for t in inputs:
        if t.grad_fn is not None:
            t.retain_grad()         # a non-leaf input gets its .grad too (``run_backward`` in autograd.cpp)
    if retain_graph is None:
        retain_graph = create_graph
    grads = _make_grads(tensors, grads)
    if create_graph:
        warn_once("backward(create_graph=True)", _CREATE_GRAPH_CYCLE, UserWarning, stacklevel=2)
    _run_backward(tensors, grads, retain_graph, create_graph, inputs, allow_unused=True)


# torch's engine warns once per process (TORCH_WARN_ONCE) when backward() accumulates gradients
# that carry a graph: parameter -> .grad -> its grad_fn -> the saved parameter is a cycle
_CREATE_GRAPH_CYCLE = ("Using backward() with create_graph=True will create a reference cycle between the parameter "
                       "and its gradient which can cause a memory leak. We recommend using autograd.grad when "
                       "creating the graph to avoid this. If you have to use this function, make sure to reset the "
                       ".grad fields of your parameters to None after use to break the cycle and avoid the leak.")


# ``is_grads_batched`` maps the backward over the first dim of the grads with vmap, as torch's
# autograd calls its vmap (torch._vmap_internals). vmap is frontend (internals._functorch), a layer
# above this one, so it hands itself down when it is imported (``import internals`` imports it).
vmap = None


def _batched_backward(outputs, grads, retain_graph, create_graph, inputs, allow_unused):
    """One backward pass per row of the grads, run as one vmapped pass. An unused input's None
    stays None (torch's ``allow_none_pass_through``): vmap's results must be tensors, so the
    Nones are left out of them and put back afterwards."""
    unused = []

    def vjp(*rows):
        got = _run_backward(outputs, rows, retain_graph, create_graph, inputs, allow_unused=allow_unused,
                            accumulate_grad=False)
        unused[:] = [g is None for g in got]
        return tuple(g for g in got if g is not None)
    batched = iter(vmap(vjp)(*grads))
    return [None if none else next(batched) for none in unused]


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, only_inputs=True,
         allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """The gradients of ``outputs`` with respect to ``inputs``, returned, not accumulated (``torch.autograd.grad``)."""
    if materialize_grads and allow_unused is False:     # zeros for unused inputs need them allowed
        raise ValueError("Expected allow_unused to be True or not passed when materialize_grads=True, but got: "
                         "allow_unused=False.")
    outputs, inputs = _as_tuple(outputs), _as_tuple(inputs)
    if not inputs:      # the engine's first check (python_engine.cpp)
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty.")
    grads = _as_tuple(grad_outputs) or (None,) * len(outputs)
    if retain_graph is None:
        retain_graph = create_graph
    allow_unused = materialize_grads if allow_unused is None else allow_unused
    grads = _make_grads(outputs, grads, is_grads_batched=is_grads_batched)
    if is_grads_batched:
        result = _batched_backward(outputs, grads, retain_graph, create_graph, inputs, allow_unused)
    else:
        result = _run_backward(outputs, grads, retain_graph, create_graph, inputs, allow_unused=allow_unused,
                               accumulate_grad=False)
    if materialize_grads:
        result = [zeros_like(t) if g is None else g for t, g in zip(inputs, result)]
    return tuple(result)
