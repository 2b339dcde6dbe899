"""``grad``, ``vjp``, ``jvp``, ``jacrev``, ``jacfwd``, ``hessian`` (``torch/_functorch/eager_transforms.py``).

Torch runs these as interpreters with levels of their own. Here they are built on the package's
autograd engine: each call makes its inputs fresh differentiable tensors (a view of an input
that already requires grad, so an outer transform still sees through it), runs the function
with grad mode on, and asks ``autograd.grad`` with ``create_graph=True``, so that a transform
around this one can differentiate the result again. The outermost call detaches what it
returns, as torch's results leave the transform unattached to any graph.

``jvp`` is forward mode computed with two reverse passes (the "double vjp"): ``g(u) = J^T u`` is
linear in ``u``, so differentiating ``g`` at any ``u`` (ones) against the tangent gives ``J t``. torch runs
it with forward AD instead; the package has forward AD too (``autograd.forward_ad``), but it
allows one level at a time, as torch's does, while these transforms nest (``jacfwd(jacfwd(f))``,
``jvp`` of ``grad``), so they keep the double vjp, which nests through the engine.
Inside ``vmap`` all of it runs on batched values: ``vmap(grad(f))`` gives per-example gradients.
"""
import functools
import threading

from .. import autograd
from .._functional import stack
from .._tensor import Tensor
from ..autograd.grad_mode import _inference_mode, is_inference_mode_enabled
from ..autograd.graph import AccumulateGrad
from ..utils._python_dispatch import TorchDispatchMode
from ..utils._pytree import tree_flatten, tree_leaves, tree_unflatten
from .batched_tensor import BatchedTensor
from .vmap import _RANDOM

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "linearize", "jacrev", "jacfwd", "hessian"]


class _Depth(threading.local):
    value = 0
    inner = None    # the outermost transform's set of inputs made differentiable, nested ones' included


_depth = _Depth()


class _Level:
    """Counts nested transforms, so the outermost one knows to detach what it returns."""

    def __init__(self):
        self.attached = False       # an input required grad outside any transform: the results stay on its graph
        self.inner = None           # ids of the impls of the inputs this and nested transforms made differentiable

    def __enter__(self):
        _depth.value += 1
        self.outermost = _depth.value == 1
        if self.outermost:      # (``vjp_fn`` enters its level again: it keeps the set of the first time)
            self.inner = _depth.inner = self.inner if self.inner is not None else set()
        elif self.inner is None:
            self.inner = _depth.inner
        # grad mode on, and inference mode off: torch's transforms differentiate inside both
        self.grad_mode = _inference_mode(False) if is_inference_mode_enabled() else autograd.enable_grad()
        self.grad_mode.__enter__()
        return self

    def __exit__(self, *exc):
        self.grad_mode.__exit__(*exc)
        _depth.value -= 1

    def undo(self, tree):
        """What leaves the transform: detached at the outermost level, unless an input was on a
        graph of the caller's, or the result depends on a tensor the function captured that
        requires grad (then, as torch's, the result stays on that graph)."""
        if not self.outermost or self.attached:
            return tree
        flat, spec = tree_flatten(tree)
        return tree_unflatten([self._unattached(x) for x in flat], spec)

    def _unattached(self, x):
        if isinstance(x, BatchedTensor):
            # inside a vmap: the batched value's own history goes; its physical tensor's stays
            # where it reaches a tensor outside the transforms (the vmap's input requiring grad)
            value = x._value if self._reaches_outside(x._value) else x._value.detach()
            return BatchedTensor(value, x._level)
        return x.detach() if isinstance(x, Tensor) and not self._reaches_outside(x) else x

    def _reaches_outside(self, t):
        """Whether ``t``'s graph reaches a leaf that is not one of this transform's inputs."""
        if t.grad_fn is None:
            return t.requires_grad and id(t._impl) not in self.inner
        stack, seen = [t.grad_fn], set()
        while stack:
            node = stack.pop()
            if node is None or id(node) in seen:
                continue
            seen.add(id(node))
            if isinstance(node, AccumulateGrad):
                if id(node.variable._impl) not in self.inner:
                    return True
                continue
            stack.extend(f for f, _ in node.next_functions)
        return False


def _zeros_like(x):
    from .. import zeros_like  # a generated binding: made when the package registers its operators, after this import

    return zeros_like(x)


def _ones_like(x):
    from .. import ones_like  # a generated binding: made when the package registers its operators, after this import

    return ones_like(x)


def _differentiable(x):
    if not isinstance(x, Tensor):
        raise ValueError(f"Thing passed to transform API must be Tensor, got {type(x)}")
    if x.requires_grad:
        return x.view_as(x)
    if x.is_inference():    # made under inference mode, which the transform has left: a normal copy
        return x.clone().requires_grad_()
    if isinstance(x, BatchedTensor):
        # a new batched value over the same physical tensor: detaching that would cut the graph a
        # transform outside the vmap records on it (``grad(vmap(grad(f)))``)
        return BatchedTensor(x._value, x._level).requires_grad_()
    return x.detach().requires_grad_()


def _fresh(tree, level):
    flat, spec = tree_flatten(tree)
    level.attached |= any(isinstance(x, Tensor) and x.requires_grad for x in flat) and level.outermost
    fresh = [_differentiable(x) for x in flat]
    level.inner.update(id(x._impl) for x in fresh)
    return tree_unflatten(fresh, spec)


def _check_aux(aux):
    """Auxiliary outputs are tensors (in any structure), as torch unwraps them."""
    for x in tree_leaves(aux):
        if not isinstance(x, Tensor):
            raise RuntimeError(f"Expected tensors, got unsupported type {type(x)}")
    return aux


def _is_differentiable(t):
    return t.dtype.is_floating_point or t.dtype.is_complex


def _refuse_complex(api, tree, is_input):
    """``jacrev`` and ``jacfwd`` take and give real tensors only (torch's ``error_if_complex``)."""
    for idx, x in enumerate(tree_leaves(tree)):
        if isinstance(x, Tensor) and x.dtype.is_complex:
            what = "inputs" if is_input else "outputs"
            raise RuntimeError(f"{api}: Expected all {what} to be real but received complex tensor at flattened "
                               f"input idx: {idx}")


def _wrap_argnum(argnum, count):
    if not isinstance(argnum, int):
        raise RuntimeError(f"argnum must be int, got: {type(argnum)}")
    if -count <= argnum < count:
        return argnum % count
    raise RuntimeError(f"Got argnum={argnum}, but only {count} positional inputs")


def _check_argnums(argnums, count):
    """``argnums`` checked and wrapped (``_slice_argnums``)."""
    if not isinstance(argnums, (int, tuple)):
        raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
    if isinstance(argnums, int):
        return _wrap_argnum(argnums, count)
    wrapped = tuple(_wrap_argnum(a, count) for a in argnums)
    if not wrapped:
        raise RuntimeError("argnums must be non-empty")
    if len(set(wrapped)) != len(wrapped):
        raise RuntimeError(f"argnums elements must be unique, got {argnums}")
    return wrapped


def _with_fresh(args, argnums, level):
    """The arguments with those at ``argnums`` made differentiable, and those (one, or a tuple)."""
    args = list(args)
    picked = (argnums,) if isinstance(argnums, int) else argnums
    for i in picked:
        args[i] = _fresh(args[i], level)
    diff = args[argnums] if isinstance(argnums, int) else tuple(args[i] for i in argnums)
    return args, diff


def _grads(outputs, inputs, cotangents=None, retain_graph=None):
    """``autograd.grad`` with zeros for inputs the outputs do not depend on."""
    pairs = [(o, c) for o, c in zip(outputs, cotangents or [None] * len(outputs), strict=True) if o.requires_grad]
    if not pairs:
        return [_zeros_like(x) for x in inputs]
    outs = [o for o, _ in pairs]
    # a cotangent made under inference mode, which the transform has left, taken as a normal copy
    cots = None if cotangents is None else [c.clone() if isinstance(c, Tensor) and c.is_inference() else c
                                            for _, c in pairs]
    got = autograd.grad(outs, inputs, cots, retain_graph=retain_graph, create_graph=True, allow_unused=True)
    return [_zeros_like(x) if g is None else g for x, g in zip(inputs, got, strict=True)]


def _split_aux(api, output, has_aux):
    if not has_aux:
        return output, None
    if not (isinstance(output, tuple) and len(output) == 2):
        raise RuntimeError(f"{api}: output of function f should be a tuple: (output, aux) if has_aux is True")
    return output[0], _check_aux(output[1])


# ---------------------------------------------------------------------------- grad
def grad_and_value(func, argnums=0, has_aux=False):
    """``func``'s gradient with respect to the arguments at ``argnums``, and its value."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        api = "grad_and_value(f)(*args)"
        with _Level() as level:
            argnums_ = _check_argnums(argnums, len(args))
            args, diff = _with_fresh(args, argnums_, level)
            output, aux = _split_aux(api, func(*args, **kwargs), has_aux)
            if not isinstance(output, Tensor):
                raise RuntimeError(f"{api}: Expected f(*args) to return a Tensor, got {type(output)}")
            if output.dim() != 0:
                raise RuntimeError(f"{api}: Expected f(*args) to return a scalar Tensor, got tensor with "
                                   f"{output.dim()} dims. Maybe you wanted to use the vjp or jacrev APIs instead?")
            flat, spec = tree_flatten(diff)
            grads = level.undo(tree_unflatten(_grads([output], flat), spec))
            output = level.undo(output)
            if has_aux:
                return grads, (output, level.undo(aux))
            return grads, output

    return wrapper


def grad(func, argnums=0, has_aux=False):
    """``func``'s gradient with respect to the arguments at ``argnums`` (``func`` returns a scalar)."""
    both = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        grads, value = both(*args, **kwargs)
        return (grads, value[1]) if has_aux else grads

    return wrapper


# ---------------------------------------------------------------------------- vjp
def vjp(func, *primals, has_aux=False):
    """``(func(*primals), vjp_fn[, aux])``; ``vjp_fn(cotangents)`` gives one gradient per primal."""
    level = _Level()
    with level:
        fresh = _fresh(primals, level)
        output, aux = _split_aux("vjp(f, *primals)", func(*fresh), has_aux)
        flat_out, out_spec = tree_flatten(output)
        for o in flat_out:
            if not isinstance(o, Tensor):
                raise RuntimeError(f"vjp(f, ...): Expected output of f to be a Tensor or Tensors, got {type(o)} "
                                   f"as an output")
            if not (o.dtype.is_floating_point or o.dtype.is_complex):
                raise RuntimeError(f"vjp(f, ...): All outputs of f must be floating-point or complex Tensors, got "
                                   f"Tensor with dtype {o.dtype}")
    flat_in, in_spec = tree_flatten(fresh)

    def vjp_fn(cotangents, retain_graph=True):
        flat_cot, cot_spec = tree_flatten(cotangents)
        if cot_spec != out_spec:
            raise RuntimeError("Expected pytree structure of cotangents to be the same as pytree structure of "
                               "outputs to the function.")
        for o, c in zip(flat_out, flat_cot, strict=True):
            if c is None:
                continue        # autograd makes it, for a one-element output only
            if not isinstance(c, Tensor):
                raise TypeError(f"gradients can be either Tensors or None, but got {type(c).__name__}")
            if tuple(o.shape) != tuple(c.shape):
                raise RuntimeError(f"Mismatch in shape: grad_output[0] has a shape of {c.shape} and output[0] has a "
                                   f"shape of {o.shape}.")
        with level:
            return level.undo(tree_unflatten(_grads(flat_out, flat_in, flat_cot, retain_graph), in_spec))

    result = (level.undo(output), vjp_fn)
    return (*result, level.undo(aux)) if has_aux else result


# ---------------------------------------------------------------------------- jvp
def _check_tuple(api, name, elts):
    if not isinstance(elts, tuple):
        raise RuntimeError(f"{api}: Expected {name} to be a tuple. E.g. it should be valid to call f(*{name}).")


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """``(func(*primals), J @ tangents)``: the output and its directional derivative, by the
    double vjp (see the module's docstring), not forward AD."""
    api = "jvp(f, primals, tangents)"
    _check_tuple(api, "primals", primals)
    flat_p, p_spec = tree_flatten(primals)
    flat_t, t_spec = tree_flatten(tangents)
    if p_spec != t_spec or not isinstance(tangents, tuple):
        raise RuntimeError(f"{api}: Expected primals and tangents to have the same python structure. For example, if "
                           f"primals is a tuple of 3 tensors, tangents also must be.")
    if not flat_p:
        raise RuntimeError(f"{api}: Expected primals to contain at least one Tensor.")
    for p, t in zip(flat_p, flat_t, strict=True):
        if not isinstance(p, Tensor) or not isinstance(t, Tensor):
            raise RuntimeError(f"{api}: Expected primals and tangents to only contain Tensors")
        for what, x in (("primal", p), ("tangent", t)):     # the checks of torch's ``make_dual``, in its order
            if not (x.dtype.is_floating_point or x.dtype.is_complex):
                raise ValueError(f"Expected {what} to be floating point or complex, but got: {x.dtype}")
        if tuple(p.shape) != tuple(t.shape):
            raise RuntimeError(f"Trying to set a forward gradient that has a different size than that of the original "
                               f"Tensor, this is not supported. Tensor is of size {list(p.shape)} while the given "
                               f"forward gradient is of size {list(t.shape)}.")
    with _Level() as level:
        fresh = _fresh(primals, level)
        output, aux = _split_aux(api, func(*fresh), has_aux)
        flat_out, out_spec = tree_flatten(output)
        for o in flat_out:
            if not isinstance(o, Tensor):
                raise RuntimeError(f"{api}: expected f(*args) to return only tensors, got unsupported type {type(o)}")
        tangents_out = _forward(flat_out, tree_flatten(fresh)[0], [flat_t])[0]
        result = (level.undo(output), level.undo(tree_unflatten(tangents_out, out_spec)))
        return (*result, level.undo(aux)) if has_aux else result


def _forward(outputs, inputs, tangent_sets):
    """``J t`` for each tangent list in ``tangent_sets`` by the double vjp."""
    apply = _transposed(outputs, inputs)
    return [apply(tangents) for tangents in tangent_sets]


def _transposed(outputs, inputs):
    """The first pass of the double vjp, ``g(u) = J^T u`` at ``u = 1``; returns the second, which
    maps a tangent list ``t`` to ``J t`` (the gradient of ``g . t`` with respect to ``u``)."""
    # an integer or bool output has no tangent but zeros of its own dtype. ``g`` is linear in
    # ``u``, so any ``u`` serves: ones, where a formula's own arithmetic is smooth (zeros would
    # make logcumsumexp's backward take log(0) and give NaN where torch's forward AD does not)
    diff = [i for i, o in enumerate(outputs) if _is_differentiable(o)]
    dummies = [_ones_like(outputs[i]).requires_grad_() for i in diff]
    if _depth.inner is not None:    # the transform's own leaves: a result reaching them is not attached
        _depth.inner.update(id(d._impl) for d in dummies)
    g = _grads([outputs[i] for i in diff], inputs, dummies, retain_graph=True) if diff else []
    linked = [(gi, i) for i, gi in enumerate(g) if gi.requires_grad]

    def apply(tangents):
        out = [_zeros_like(o) for o in outputs]
        if linked:
            try:
                got = _grads([gi for gi, _ in linked], dummies, [tangents[i] for _, i in linked], retain_graph=True)
            except RuntimeError as e:
                _refuse_forward_ad(e)
                raise
            for i, t in zip(diff, got, strict=True):
                out[i] = t
        return out
    return apply


# the losses torch gives no forward formula: their gradient's own derivative is a NotImplemented
# node, which the double vjp's second pass meets; torch names the forward operator
_NO_FORWARD_AD = {"aten::multi_margin_loss_backward": "multi_margin_loss",
                  "aten::multilabel_margin_loss_backward": "multilabel_margin_loss_forward",
                  "aten::_ctc_loss_backward": "_ctc_loss"}


def _refuse_forward_ad(error):
    """torch's forward-mode refusal (``NotImplementedError``) for an operator it has no
    forward derivative for, in place of the backward node's ``RuntimeError``."""
    for backward, forward in _NO_FORWARD_AD.items():
        if str(error) == f"derivative for {backward} is not implemented":
            raise NotImplementedError(
                f"Trying to use forward AD with {forward} that does not support it because it has not been "
                "implemented yet.\nPlease file an issue to PyTorch at https://github.com/pytorch/pytorch/issues/new?"
                "template=feature-request.yml so that we can prioritize its implementation or submit a PR adding the "
                "implementation to derivatives.yaml") from None


def linearize(func, *primals):
    """``(func(*primals), jvp_fn)``: ``jvp_fn(*tangents)`` is ``jvp``'s second result, for many
    tangents at the cost of one forward (torch traces a graph of the linear map; here the double
    vjp's first pass is kept)."""
    level = _Level()
    with level:
        fresh = _fresh(primals, level)
        output = func(*fresh)
        flat_out, out_spec = tree_flatten(output)
        flat_in, in_spec = tree_flatten(fresh)
        apply = _transposed(flat_out, flat_in)

    def jvp_fn(*tangents):
        flat_t, t_spec = tree_flatten(tangents)
        if t_spec != in_spec:
            raise RuntimeError("Expected the tangents to have the same argspec as the primals")
        for idx, (t, p) in enumerate(zip(flat_t, flat_in, strict=True)):
            for what in ("shape", "device", "dtype"):
                if getattr(t, what) != getattr(p, what):
                    raise RuntimeError(f"tangent:{idx} with {what} {getattr(t, what)} in flattened pytree doesn't "
                                       f"match the {what} {getattr(p, what)} of the corresponding primal.")
        with level:
            return level.undo(tree_unflatten(apply(flat_t), out_spec))

    return level.undo(output), jvp_fn


# ---------------------------------------------------------------------------- jacobians
def _basis(x):
    """The standard basis for ``x``'s elements, one tensor of ``x``'s shape per element."""
    from .. import eye  # a generated binding: made when the package registers its operators, after this import

    n = x.numel()
    rows = eye(n, dtype=x.dtype, device=x.device)
    return [rows[i].view(x.shape) for i in range(n)]


def _stack_rows(rows, lead_shape, tail_shape, like):
    """The rows stacked into ``lead_shape + tail_shape``; zeros of ``like``'s dtype where there are none."""
    shape = (*lead_shape, *tail_shape)
    if not rows:
        from .. import zeros  # a generated binding: made when the package registers its operators, after this import

        return zeros(shape, dtype=like.dtype, device=like.device)
    return stack(rows).view(shape)


def _jacobian_rows_in_chunks(o, flat_in, chunk_size):
    """The rows of ``o``'s Jacobian, ``chunk_size`` basis vectors at a time, each chunk one
    backward pass under vmap (``autograd.grad(is_grads_batched=True)``), as torch's jacrev runs
    its vjp over chunks of the basis."""
    from .. import cat, eye, zeros  # generated bindings: made when the package registers its operators

    n = o.numel()
    if not o.requires_grad or n == 0:
        return [zeros(*o.shape, *x.shape, dtype=x.dtype, device=x.device) for x in flat_in]
    basis = eye(n, dtype=o.dtype, device=o.device)
    parts = [[] for _ in flat_in]
    for start in range(0, n, chunk_size):
        rows = basis[start:start + chunk_size]
        got = autograd.grad([o], flat_in, [rows.view(rows.shape[0], *o.shape)], retain_graph=True,
                            create_graph=True, allow_unused=True, is_grads_batched=True)
        for j, (x, g) in enumerate(zip(flat_in, got, strict=True)):
            parts[j].append(zeros(rows.shape[0], *x.shape, dtype=x.dtype, device=x.device) if g is None else g)
    return [cat(p).view((*o.shape, *x.shape)) for p, x in zip(parts, flat_in, strict=True)]


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None, _preallocate_and_copy=False):
    """The Jacobian by reverse mode: one vector-Jacobian product per output element."""
    if chunk_size is not None and chunk_size <= 0:
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")

    @functools.wraps(func)
    def wrapper(*args):
        _refuse_complex("jacrev", args, is_input=True)
        with _Level() as level:
            argnums_ = _check_argnums(argnums, len(args))
            args, diff = _with_fresh(args, argnums_, level)
            output, aux = _split_aux("jacrev(f, ...)(*args)", func(*args), has_aux)
            flat_out, out_spec = tree_flatten(output)
            for o in flat_out:     # the checks of the vjp torch's jacrev runs
                if not isinstance(o, Tensor):
                    raise RuntimeError(f"vjp(f, ...): Expected output of f to be a Tensor or Tensors, got {type(o)} "
                                       f"as an output")
                if not _is_differentiable(o):
                    raise RuntimeError(f"vjp(f, ...): All outputs of f must be floating-point or complex Tensors, "
                                       f"got Tensor with dtype {o.dtype}")
            _refuse_complex("jacrev", flat_out, is_input=False)
            flat_in, in_spec = tree_flatten(diff)
            jacs = []
            for o in flat_out:
                if chunk_size is not None and chunk_size > 1:
                    blocks = _jacobian_rows_in_chunks(o, flat_in, chunk_size)
                else:
                    rows = [_grads([o], flat_in, [e], retain_graph=True) for e in _basis(o)]
                    blocks = [_stack_rows([r[j] for r in rows], o.shape, x.shape, x) for j, x in enumerate(flat_in)]
                jacs.append(tree_unflatten(blocks, in_spec))
            result = level.undo(tree_unflatten(jacs, out_spec))
            return (result, level.undo(aux)) if has_aux else result

    return wrapper


class _RefuseRandom(TorchDispatchMode):
    """``jacfwd``'s ``randomness='error'``: torch runs the function under a vmap over the basis,
    which refuses random operators; here it runs once, and this mode refuses them."""

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if func.overloadpacket.__name__.rstrip("_") in _RANDOM:
            raise RuntimeError("vmap: called random operation while in randomness error mode. Please either use "
                               "the 'same' or 'different' randomness flags on vmap or perform the randomness "
                               "operation out of vmap")
        return func(*args, **(kwargs or {}))


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """The Jacobian by forward mode: one Jacobian-vector product per input element, each by the
    double vjp (see the module's docstring), not forward AD."""

    @functools.wraps(func)
    def wrapper(*args):
        _refuse_complex("jacfwd", args, is_input=True)
        if randomness not in ("error", "different", "same"):
            raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. "
                               f"Got {randomness}")
        with _Level() as level:
            argnums_ = _check_argnums(argnums, len(args))
            args, diff = _with_fresh(args, argnums_, level)
            if randomness == "error":
                with _RefuseRandom():
                    output, aux = _split_aux("jacfwd(f, ...)(*args)", func(*args), has_aux)
            else:
                output, aux = _split_aux("jacfwd(f, ...)(*args)", func(*args), has_aux)
            flat_out, out_spec = tree_flatten(output)
            for o in flat_out:
                if not isinstance(o, Tensor):
                    raise RuntimeError(f"jvp(f, primals, tangents): expected f(*primals) to return only tensors, got "
                                       f"unsupported type {type(o)}")
            _refuse_complex("jacfwd", flat_out, is_input=False)
            flat_in, in_spec = tree_flatten(diff)
            jacs = [[] for _ in flat_out]
            for j, x in enumerate(flat_in):
                zeros = [_zeros_like(y) for y in flat_in]
                sets = [[e if k == j else zeros[k] for k in range(len(flat_in))] for e in _basis(x)]
                cols = _forward(flat_out, flat_in, sets)
                for i, o in enumerate(flat_out):
                    # columns stacked last: out.shape + x.shape
                    col = _stack_rows([c[i] for c in cols], x.shape, o.shape, o)
                    perm = list(range(x.dim(), x.dim() + o.dim())) + list(range(x.dim()))
                    jacs[i].append(col.permute(perm))     # columns last, a view as torch's out_dims=-1 leaves it
            result = level.undo(tree_unflatten([tree_unflatten(js, in_spec) for js in jacs], out_spec))
            return (result, level.undo(aux)) if has_aux else result

    return wrapper


def hessian(func, argnums=0):
    """The Hessian: ``jacfwd`` of ``jacrev``, as torch composes it."""
    return jacfwd(jacrev(func, argnums), argnums)
