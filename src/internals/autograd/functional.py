"""Higher-order derivatives of a whole function (``torch/autograd/functional.py``).

``vjp``, ``jvp``, ``jacobian``, ``hessian``, ``vhp`` and ``hvp`` take a Python function and its
inputs, run it once under grad mode on fresh copies of the inputs, and ask the engine
(``autograd.grad``) for the wanted products: one pass per output element, or with
``vectorize=True`` one pass batched over them (``is_grads_batched``, which runs under vmap).
``strategy="forward-mode"`` (with ``vectorize=True``) pushes the identity's rows through the function
as tangents instead, with forward AD (``forward_ad.py``), batched by vmap.
"""
from .._tensor_base import TensorBase
from ..aten import dispatcher
from . import forward_ad
from .grad_mode import enable_grad, is_grad_enabled, set_grad_enabled

__all__ = ["vjp", "jvp", "jacobian", "hessian", "vhp", "hvp"]

_STRATEGIES = ("forward-mode", "reverse-mode")


def _zeros_like(t):
    # through the dispatcher, as the rest of autograd calls operators: importing the kernels'
    # module here would make ``import internals.autograd`` load aten.native, which imports autograd
    return dispatcher.call("zeros_like", t)


def _tupled(value, arg_name, fn_name):
    """``(was_tuple, tuple_of_tensors)``; anything but tensors raises ``TypeError`` naming the culprit."""
    was_tuple = isinstance(value, tuple)
    items = value if was_tuple else (value,)
    for i, item in enumerate(items):
        if isinstance(item, TensorBase):
            continue
        where = f"value at index {i}" if was_tuple else f"given {arg_name}"
        raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of Tensors but "
                        f"the {where} has type {type(item)}.")
    return was_tuple, items


def _untupled(result, was_tuple):
    """Undo ``_tupled``: a flag for a flat tuple, a pair of flags (outer, inner) for a nested one."""
    if isinstance(was_tuple, tuple):
        outer, inner = was_tuple
        if not inner:
            result = tuple(row[0] for row in result)
        return result if outer else result[0]
    return result if was_tuple else result[0]


def _fresh(tensors, create_graph, need_graph):
    """New tensor objects for the inputs, so the function's own captured tensors stay apart.

    With ``create_graph`` an input that requires grad is viewed (the result stays connected to it,
    so the products can be differentiated again); otherwise it is detached.
    """
    out = []
    for t in tensors:
        if create_graph and t.requires_grad:
            out.append(t.clone() if t.is_sparse else t.view_as(t))
        else:
            out.append(t.detach().requires_grad_(need_graph))
    return tuple(out)


def _finish(tensors, create_graph):
    """Drop the history of (possibly nested tuples of) results unless the caller asked for a graph."""
    if isinstance(tensors[0], TensorBase):
        return tensors if create_graph else tuple(t.detach() for t in tensors)
    return tuple(_finish(row, create_graph) for row in tensors)


def _check_v(v, ref, ref_was_tuple):
    """``v`` must have one tensor per reference tensor, of the same size."""
    if len(v) != len(ref):
        if ref_was_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(ref)} but got {len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for i, (a, b) in enumerate(zip(v, ref)):
        if a.size() != b.size():
            entry = f"Entry {i} in " if ref_was_tuple else ""
            raise RuntimeError(f"{entry}v has invalid size: should be {b.size()} but got {a.size()}.")


_NO_GRAD_MESSAGES = {
    "outputs": ("Output {i} of the user-provided function does not require gradients. The outputs must be "
                "computed in a differentiable manner from the input when running in strict mode."),
    "grad_inputs": ("The gradient with respect to input {i} is independent of the inputs of the user-provided "
                    "function. This is not allowed in strict mode."),
    "jacobian": ("While computing the hessian, found that the jacobian of the user-provided function with respect "
                 "to input {i} is independent of the input. This is not allowed in strict mode. You should ensure "
                 "that your function is twice differentiable and that the jacobian depends on the inputs (this "
                 "would be violated by a linear function for example)."),
    "hessian": ("The hessian of the user-provided function with respect to input {i} is independent of the input. "
                "This is not allowed in strict mode. You should ensure that your function is thrice differentiable "
                "and that the hessian depends on the inputs."),
}


def _require_grad(tensors, kind, strict):
    """In strict mode every tensor of ``kind`` must exist and be part of a graph."""
    if not strict:
        return
    for i, t in enumerate(tensors):
        if t is None:
            raise RuntimeError(f"The output of the user-provided function is independent of input {i}. "
                               "This is not allowed in strict mode.")
        if not t.requires_grad:
            raise RuntimeError(_NO_GRAD_MESSAGES[kind].format(i=i))


def _grad(outputs, inputs, grad_outputs=None, create_graph=False, retain_graph=None, is_grads_batched=False):
    """``autograd.grad`` that skips outputs outside any graph and gives ``None`` for unused inputs."""
    from . import grad  # the autograd package imports this module
    grad_outputs = (None,) * len(outputs) if grad_outputs is None else grad_outputs
    kept = [(o, g) for o, g in zip(outputs, grad_outputs) if o is not None and o.requires_grad]
    if not kept:
        return (None,) * len(inputs)
    outs, gos = zip(*kept)
    return grad(outs, inputs, gos, allow_unused=True, create_graph=create_graph, retain_graph=retain_graph,
                is_grads_batched=is_grads_batched)


_MISSING_MESSAGES = {
    "back": "The output of the user-provided function is independent of input {i}. This is not allowed in strict "
            "mode.",
    "back_trick": "The gradient with respect to the input is independent of entry {i} in the grad_outputs when "
                  "using the double backward trick to compute forward mode gradients. This is not allowed in strict "
                  "mode.",
    "double_back": "The jacobian of the user-provided function is independent of input {i}. This is not allowed in "
                   "strict mode.",
    "double_back_trick": "The hessian of the user-provided function is independent of entry {i} in the "
                         "grad_jacobian. This is not allowed in strict mode as it prevents from using the double "
                         "backward trick to replace forward mode AD.",
}


def _zeros_for_missing(grads, refs, strict, create_graph, stage):
    """Replace each ``None`` gradient by zeros shaped like its reference (strict mode raises instead)."""
    out = []
    for i, g in enumerate(grads):
        if g is None:
            if strict:
                raise RuntimeError(_MISSING_MESSAGES[stage].format(i=i))
            g = _zeros_like(refs[i])
        elif strict and create_graph and not g.requires_grad:
            what = "hessian" if stage.startswith("double") else "jacobian"
            raise RuntimeError(f"The {what} of the user-provided function is independent of input {i}. This is not "
                               "allowed in strict mode when create_graph=True.")
        out.append(g)
    return tuple(out)


def _prepare_v(v, ref, ref_was_tuple, create_graph, fn_name, single_what):
    """Tuple, copy and check ``v``; ``None`` is allowed only when ``ref`` is one single-element tensor."""
    if v is not None:
        _, v = _tupled(v, "v", fn_name)
        v = _fresh(v, create_graph, need_graph=False)
        _check_v(v, ref, ref_was_tuple)
    elif len(ref) != 1 or ref[0].nelement() != 1:
        raise RuntimeError(f"The vector v can only be None if {single_what} single Tensor with a single element.")
    return v


_INPUT_IS = "the input to the user-provided function is a"


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), v^T J)``: one backward pass seeded with ``v`` (``torch.autograd.functional.vjp``)."""
    with enable_grad():
        in_tuple, inputs = _tupled(inputs, "inputs", "vjp")
        inputs = _fresh(inputs, create_graph, need_graph=True)
        out_tuple, outputs = _tupled(func(*inputs), "outputs of the user-provided function", "vjp")
        _require_grad(outputs, "outputs", strict)
        v = _prepare_v(v, outputs, out_tuple, create_graph, "vjp", "the user-provided function returns a")
    with set_grad_enabled(create_graph or is_grad_enabled()):
        grads = _zeros_for_missing(_grad(outputs, inputs, v, create_graph), inputs, strict, create_graph, "back")
    return _untupled(_finish(outputs, create_graph), out_tuple), _untupled(_finish(grads, create_graph), in_tuple)


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), J v)`` by the double-backward trick (``torch.autograd.functional.jvp``).

    ``g -> g^T J`` is linear in a dummy cotangent ``g``; differentiating it with respect to ``g``
    along ``v`` gives ``J v`` without forward-mode AD.
    """
    with enable_grad():
        in_tuple, inputs = _tupled(inputs, "inputs", "jvp")
        inputs = _fresh(inputs, create_graph, need_graph=True)
        v = _prepare_v(v, inputs, in_tuple, create_graph, "jvp", _INPUT_IS)
        out_tuple, outputs = _tupled(func(*inputs), "outputs of the user-provided function", "jvp")
        _require_grad(outputs, "outputs", strict)
        dummies = tuple(_zeros_like(o).requires_grad_() for o in outputs)
        vjps = _grad(outputs, inputs, dummies, create_graph=True)
        _require_grad(vjps, "grad_inputs", strict)
    with set_grad_enabled(create_graph or is_grad_enabled()):
        grads = _grad(vjps, dummies, v, create_graph)
        grads = _zeros_for_missing(grads, outputs, strict, create_graph, "back_trick")
    return _untupled(_finish(outputs, create_graph), out_tuple), _untupled(_finish(grads, create_graph), out_tuple)


def _check_strategy(strategy, hint):
    if strategy not in _STRATEGIES:
        extra = (' Hint: If your function has more outputs than inputs, "forward-mode" tends to be more '
                 'performant. Otherwise, prefer to use "reverse-mode".') if hint else ""
        raise AssertionError(f'Expected strategy to be either "forward-mode" or "reverse-mode".{extra}')


def _forward_mode_jacobian(func, inputs, strict, vectorize):
    """``strategy="forward-mode"``: one forward-AD pass batched over the rows of the identity,
    each row a tangent for the inputs (torch's ``_jacfwd``); only with ``vectorize=True``."""
    if strict:
        raise RuntimeError('torch.autograd.functional.jacobian: `strict=True` and `strategy="forward-mode"` are not '
                           'supported together (yet). Please either set `strict=False` or `strategy="reverse-mode"`.')
    if not vectorize:
        raise NotImplementedError("Computing Jacobian using forward-AD or forward-over-reverse Hessian isonly "
                                  "implemented for `vectorize=True`.")
    from . import vmap  # handed down by the frontend, as for is_grads_batched
    in_tuple, inputs = _tupled(inputs, "inputs", "jacobian")
    numels, basis = _standard_basis(inputs)
    info = []
    columns = vmap(lambda tangents: _jvp_of_basis(func, inputs, tangents, info))(basis)
    out_tuple, outputs = info
    # lists, not tuples, as torch's _jacfwd gives them
    jac = [[_forward_block(block, out, inp) for block, inp in zip(column.split(numels, 0), inputs)]
           for column, out in zip(columns, outputs)]
    return _untupled(jac, (out_tuple, in_tuple))


def _jvp_of_basis(func, inputs, tangents, info):
    """The outputs' tangents for one row of the basis (zeros for an output that has none)."""
    with forward_ad.dual_level():
        duals = tuple(forward_ad.make_dual(inp, t.view_as(inp)) for inp, t in zip(inputs, tangents))
        out_tuple, outputs = _tupled(func(*duals), "outputs of the user-provided function", "jacobian")
        unpacked = [forward_ad.unpack_dual(out) for out in outputs]
        info[:] = [out_tuple, [u.primal for u in unpacked]]
        return tuple(_zeros_like(u.primal) if u.tangent is None else u.tangent for u in unpacked)


def _forward_block(block, out, inp):
    """One (output, input) block: the batch dim (the input's elements) moved last, then reshaped."""
    return block.permute(*range(1, block.dim()), 0).reshape((*out.shape, *inp.shape))


def _standard_basis(outputs):
    """The rows of the identity over every output element, split by output: for outputs of n_j
    elements, one (Σn, n_j) block each (``_construct_standard_basis_for``)."""
    numels = [out.nelement() for out in outputs]
    blocks, start = [], 0
    for out, n in zip(outputs, numels):
        block = out.new_zeros(sum(numels), n)
        block.diagonal(-start).fill_(1)
        blocks.append(block)
        start += n
    return numels, tuple(blocks)


def _vectorized_jacobian(outputs, inputs, create_graph):
    """``vectorize=True``: one backward pass batched over the identity's rows (``autograd.grad``
    with ``is_grads_batched``, which runs under vmap), then each input's block split by output."""
    numels, basis = _standard_basis(outputs)
    flat = tuple(out.reshape(-1) for out in outputs)
    rows = _grad(flat, inputs, basis, retain_graph=True, create_graph=create_graph, is_grads_batched=True)
    per_input = []
    for g, inp in zip(rows, inputs):
        if g is None:       # the input is unused: zeros, expanded over every row
            g = _zeros_like(inp).expand((sum(numels), *inp.shape))
        per_input.append([block.view((*out.shape, *inp.shape)) for block, out in zip(g.split(numels, 0), outputs)])
    return tuple(zip(*per_input))


def _jacobian_rows(out, i, inputs, create_graph, strict):
    """The Jacobian of one output, one backward pass per element, stacked per input."""
    per_input = [[] for _ in inputs]
    flat = out.reshape(-1)
    for j in range(out.nelement()):
        row = _grad((flat[j],), inputs, retain_graph=True, create_graph=create_graph)
        for k, (g, inp) in enumerate(zip(row, inputs)):
            if g is None:
                if strict:
                    raise RuntimeError(f"Output {i} of the user-provided function is independent of input {k}. "
                                       "This is not allowed in strict mode.")
                g = _zeros_like(inp)
            elif strict and create_graph and not g.requires_grad:
                raise RuntimeError(f"The jacobian of the user-provided function is independent of input {i}. This "
                                   "is not allowed in strict mode when create_graph=True.")
            per_input[k].append(g)
    return tuple(dispatcher.call("stack", rows, 0).view(out.size() + inp.size())
                 for rows, inp in zip(per_input, inputs))


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False, strategy="reverse-mode"):
    """The Jacobian of ``func`` at ``inputs``, nested (outputs, inputs) (``torch.autograd.functional.jacobian``).

    Entry ``[i][k]`` has shape ``outputs[i].shape + inputs[k].shape``; a level of nesting is dropped
    where the function took or returned a single tensor.
    """
    _check_strategy(strategy, hint=True)
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError(
                'torch.autograd.functional.jacobian: `create_graph=True` and `strategy="forward-mode"` are not '
                'supported together (yet). Please either set `create_graph=False` or `strategy="reverse-mode"`.')
        return _forward_mode_jacobian(func, inputs, strict, vectorize)
    with enable_grad():
        in_tuple, inputs = _tupled(inputs, "inputs", "jacobian")
        inputs = _fresh(inputs, create_graph, need_graph=True)
        out_tuple, outputs = _tupled(func(*inputs), "outputs of the user-provided function", "jacobian")
        _require_grad(outputs, "outputs", strict)
        if vectorize:
            if strict:
                raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` are not "
                                   "supported together. Please either set `strict=False` or `vectorize=False`.")
            return _untupled(_finish(_vectorized_jacobian(outputs, inputs, create_graph), create_graph),
                             (out_tuple, in_tuple))
        jac = tuple(_jacobian_rows(out, i, inputs, create_graph, strict) for i, out in enumerate(outputs))
        return _untupled(_finish(jac, create_graph), (out_tuple, in_tuple))


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False, outer_jacobian_strategy="reverse-mode"):
    """The Hessian of a scalar ``func``: the Jacobian of its Jacobian (``torch.autograd.functional.hessian``)."""
    in_tuple, inputs = _tupled(inputs, "inputs", "hessian")
    _check_strategy(outer_jacobian_strategy, hint=False)

    def scalar_func(*args):
        out = func(*args)
        out_tuple, outs = _tupled(out, "outputs of the user-provided function", "hessian")
        _require_grad(outs, "outputs", strict)
        if out_tuple or not isinstance(out, TensorBase):
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out.nelement() != 1:
            raise RuntimeError("The Tensor returned by the function given to hessian should contain a single element")
        return out.squeeze()

    def gradient(*args):
        if outer_jacobian_strategy == "forward-mode":
            args = tuple(a.requires_grad_(True) for a in args)
        g = jacobian(scalar_func, args, create_graph=True)
        _require_grad(g, "jacobian", strict)
        return g

    res = jacobian(gradient, inputs, create_graph=create_graph, strict=strict, vectorize=vectorize,
                   strategy=outer_jacobian_strategy)
    return _untupled(res, (in_tuple, in_tuple))


def _scalar_output(func, inputs, strict, fn_name):
    """Run ``func`` and check it returned one single-element tensor (``vhp`` / ``hvp``)."""
    out_tuple, outputs = _tupled(func(*inputs), "outputs of the user-provided function", fn_name)
    _require_grad(outputs, "outputs", strict)
    if out_tuple or not isinstance(outputs[0], TensorBase):
        raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
    if outputs[0].nelement() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {fn_name} should contain a single element")
    return out_tuple, outputs


def _gradient_of_scalar(func, inputs, v, create_graph, strict, fn_name):
    """What ``vhp`` and ``hvp`` share, under grad mode: fresh inputs, ``v`` checked against them,
    ``func``'s single-element output and its gradient, kept differentiable for the second pass."""
    in_tuple, inputs = _tupled(inputs, "inputs", fn_name)
    inputs = _fresh(inputs, create_graph, need_graph=True)
    v = _prepare_v(v, inputs, in_tuple, create_graph, fn_name, _INPUT_IS)
    out_tuple, outputs = _scalar_output(func, inputs, strict, fn_name)
    gradient = _grad(outputs, inputs, create_graph=True)
    _require_grad(gradient, "jacobian", strict)
    return in_tuple, inputs, v, out_tuple, outputs, gradient


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), v^T H)``: backward through the gradient (``torch.autograd.functional.vhp``)."""
    with enable_grad():
        in_tuple, inputs, v, out_tuple, outputs, gradient = _gradient_of_scalar(func, inputs, v, create_graph,
                                                                                strict, "vhp")
    with set_grad_enabled(create_graph or is_grad_enabled()):
        res = _grad(gradient, inputs, v, create_graph)
        res = _zeros_for_missing(res, inputs, strict, create_graph, "double_back")
    return _untupled(_finish(outputs, create_graph), out_tuple), _untupled(_finish(res, create_graph), in_tuple)


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), H v)`` by the double-backward trick on the gradient (``torch.autograd.functional.hvp``)."""
    with enable_grad():
        in_tuple, inputs, v, out_tuple, outputs, gradient = _gradient_of_scalar(func, inputs, v, create_graph,
                                                                                strict, "hvp")
        dummies = tuple(_zeros_like(inp).requires_grad_() for inp in inputs)
        double_back = _grad(gradient, inputs, dummies, create_graph=True)
        _require_grad(gradient, "hessian", strict)  # torch checks the gradient here too, not double_back
    with set_grad_enabled(create_graph or is_grad_enabled()):
        res = _grad(double_back, dummies, v, create_graph)
        res = _zeros_for_missing(res, inputs, strict, create_graph, "double_back_trick")
    return _untupled(_finish(outputs, create_graph), out_tuple), _untupled(_finish(res, create_graph), in_tuple)
