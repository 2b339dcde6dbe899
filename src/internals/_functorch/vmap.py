"""``vmap`` (``torch/_functorch/vmap.py``, ``apis.py``): run a function written for one example
on a batch.

Each input gets wrapped as a batched value of a fresh level (``batched_tensor.py``); the function
runs once, every operator on a batched value runs through its batching rule
(``batch_rules.py``); each output is unwrapped with its batch dim moved to ``out_dims``. While it
runs, a dispatch mode of the level sees every operator first: it runs the level's batching rules
before any other mode (a tracer) sees the call, so that one records the physical operators; and
it watches for random operators, which have no batch argument to tell them apart:
``randomness`` says whether they raise (``'error'``), draw once for the whole batch
(``'same'``) or draw per example (``'different'``). Under ``'same'`` a draw whose probabilities,
means or weights are batched (``bernoulli(p)``, ``normal(mean)``, ``multinomial``) raises, as
torch's does: there is no one example's draw to broadcast.
"""
import functools

from .. import autograd
from .._functional import cat, stack
from .._tensor import Tensor
from ..random import get_rng_state, set_rng_state
from ..utils._python_dispatch import TorchDispatchMode
from ..utils._pytree import _broadcast_to_and_flatten, tree_flatten, tree_unflatten
from .batch_rules import register_rules, run_batched
from .batch_rules_nn import NN_RULES
from .batched_tensor import BatchedTensor, add_batch_dim, is_batched, new_level, remove_batch_dim

__all__ = ["vmap"]

_RANDOM = {"rand", "randn", "randint", "randperm", "normal", "bernoulli", "uniform", "random", "exponential",
           "cauchy", "log_normal", "geometric", "rand_like", "randn_like", "randint_like", "multinomial",
           "native_dropout", "poisson", "_standard_gamma", "rrelu_with_noise", "_fused_dropout"}
_LIKE = {"rand_like", "randn_like", "randint_like"}


def _name(func):
    if isinstance(func, functools.partial):
        return f"functools.partial({_name(func.func)}, ...)"
    return getattr(func, "__name__", repr(func))


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """``func`` vectorized over dim ``in_dims`` of its inputs; the outputs stacked at ``out_dims``."""
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. Got {randomness}")
    if chunk_size is not None and chunk_size <= 0:
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")
    if chunk_size is not None and not isinstance(chunk_size, int):
        # torch's chunking multiplies a list by it
        raise TypeError(f"can't multiply sequence by non-int of type '{type(chunk_size).__name__}'")

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        flat_args, spec, flat_dims, size = _process_inputs(func, in_dims, args)
        if chunk_size is None or chunk_size >= size:
            return _run(func, flat_args, spec, flat_dims, size, out_dims, randomness, kwargs)
        return _run_chunks(func, flat_args, spec, flat_dims, size, out_dims, randomness, kwargs, chunk_size)

    return wrapped


def _process_inputs(func, in_dims, args):
    name = _name(func)
    if not isinstance(in_dims, (int, tuple)):
        raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): expected `in_dims` to be int or a "
                         f"(potentially nested) tuple matching the structure of inputs, got: {type(in_dims)}.")
    if not args:
        raise ValueError(f"vmap({name})(<inputs>): got no inputs. Maybe you forgot to add inputs, or you are trying "
                         f"to vmap over a function with no inputs. The latter is unsupported.")
    flat_args, spec = tree_flatten(args)
    flat_dims = _broadcast_to_and_flatten(in_dims, spec)
    if flat_dims is None:
        raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): in_dims is not compatible with the "
                         f"structure of `inputs`.")
    normalized = []
    for arg, d in zip(flat_args, flat_dims, strict=True):
        if d is not None and not isinstance(d, int):
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for an input but in_dim "
                             f"must be either an integer dimension or None.")
        if isinstance(d, int) and not isinstance(arg, Tensor):
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for an input but the "
                             f"input is of type {type(arg)}. We cannot vmap over non-Tensor arguments, please use "
                             f"None as the respective in_dim")
        if d is not None and not -arg.dim() <= d < arg.dim():
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for some input, but "
                             f"that input is a Tensor of dimensionality {arg.dim()} so expected in_dim to satisfy "
                             f"-{arg.dim()} <= in_dim < {arg.dim()}.")
        if isinstance(d, bool):     # an int to Python, but torch's ``size(dim)`` refuses it
            raise TypeError("size(): argument 'dim' (position 1) must be int, not bool")
        normalized.append(None if d is None else d % arg.dim())
    sizes = [a.shape[d] for a, d in zip(flat_args, normalized, strict=True) if d is not None]
    if not sizes:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    if any(s != sizes[0] for s in sizes):
        raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
                         f"{sizes} for the mapped dimension")
    return flat_args, spec, normalized, sizes[0]


def _run(func, flat_args, spec, flat_dims, size, out_dims, randomness, kwargs):
    level = new_level()
    batched = [a if d is None else add_batch_dim(a, d, level) for a, d in zip(flat_args, flat_dims, strict=True)]
    with _RandomnessMode(level, size, randomness):
        out = func(*tree_unflatten(batched, spec), **kwargs)
    return _unwrap_outputs(func, out, out_dims, level, size)


def _run_chunks(func, flat_args, spec, flat_dims, size, out_dims, randomness, kwargs, chunk_size):
    """Run the batch in chunks of ``chunk_size`` and concatenate each output along its out dim."""
    results = []
    state = get_rng_state() if randomness == "same" else None
    for start in range(0, size, chunk_size):
        if state is not None:       # 'same': every chunk draws what the first drew, as one vmap would
            set_rng_state(state)
        n = min(chunk_size, size - start)
        chunk = [a if d is None else a.narrow(d, start, n) for a, d in zip(flat_args, flat_dims, strict=True)]
        results.append(_run(func, chunk, spec, flat_dims, n, out_dims, randomness, kwargs))
    flats = [tree_flatten(r)[0] for r in results]
    out_spec = tree_flatten(results[0])[1]
    dims = _broadcast_to_and_flatten(out_dims, out_spec)
    joined = [cat([f[i] for f in flats], dim=d) if d is not None else flats[0][i] for i, d in enumerate(dims)]
    return tree_unflatten(joined, out_spec)


def _flat_out_dims(out, out_dims, spec):
    """One out dim per output leaf; a lone tensor output also takes a 1-tuple (torch's edge case)."""
    if isinstance(out, Tensor):
        if not isinstance(out_dims, (tuple, list, dict)):
            return [out_dims]       # a leaf: an int, None, or what the check of each raises for
        return list(out_dims) if isinstance(out_dims, tuple) and len(out_dims) == 1 else None
    return _broadcast_to_and_flatten(out_dims, spec)


def _unwrap_outputs(func, out, out_dims, level, size):
    name = _name(func)
    flat, spec = tree_flatten(out)
    dims = _flat_out_dims(out, out_dims, spec)
    if dims is None:
        raise ValueError(f"vmap({name}, ..., out_dims={out_dims})(<inputs>): out_dims is not compatible with the "
                         f"structure of `outputs`.")
    result = []
    for x, d in zip(flat, dims, strict=True):
        if d is None:
            if is_batched(x):       # batched at any level, as torch's ``is_batchedtensor`` asks
                raise ValueError(f"vmap({name}, ...): `{name}` can not return a BatchedTensor when out_dim is None")
            result.append(x)
            continue
        if not isinstance(d, int):
            raise ValueError(f"vmap({name}, ..., out_dims={out_dims}): `out_dims` must be an int, None or a python "
                             f"collection of ints representing where in the outputs the vmapped dimension should "
                             f"appear.")
        if not isinstance(x, Tensor):
            raise ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got type {type(x)}. Did you "
                             f"mean to set out_dims= to None for output?")
        rank = x.dim() + 1
        if not -rank <= d < rank:       # (``True`` is dim 1, as to torch's ``isinstance(d, int)``)
            raise IndexError(f"Dimension out of range (expected to be in range of [{-rank}, {rank - 1}], but got {d})")
        result.append(remove_batch_dim(x, level, size, d % rank))
    return tree_unflatten(result, spec)


class _RandomnessMode(TorchDispatchMode):
    """Sees every operator while the vmap of ``level`` runs; acts only on the random ones."""

    def __init__(self, level, size, randomness):
        self.level, self.size, self.randomness = level, size, randomness

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = func.overloadpacket.__name__.rstrip("_")
        batched = any(is_batched(a, self.level) for a in tree_flatten((args, kwargs))[0])
        if name not in _RANDOM:
            # this level's batching rules run here, before any mode below (a tracer, a fake mode)
            # sees the call: those see the rules' physical operators, as torch's vmap interpreter
            # sits above them
            out = run_batched(func, args, kwargs) if batched else func(*args, **kwargs)
            # a ``Tensor[]`` result reaches Python as a tuple, as torch's binding turns a handler's list into one
            return tuple(out) if type(out) is list else out
        if self.randomness == "error":
            raise RuntimeError("vmap: called random operation while in randomness error mode. Please either use the "
                               "'same' or 'different' randomness flags on vmap or perform the randomness operation "
                               "out of vmap")
        if self.randomness == "different":
            if batched:
                return run_batched(func, args, kwargs)
            return self._different_factory(func, args, kwargs)
        return self._same(func, name, batched, args, kwargs)

    def _different_factory(self, func, args, kwargs):
        """A factory such as ``randn(3)``: one draw of the batched size, a batched value of it;
        ``randperm`` draws one permutation per example, and a draw shaped by an unbatched tensor
        draws for that tensor expanded over the batch, as torch's rules do."""
        name = func.overloadpacket.__name__
        if name == "randperm":
            return BatchedTensor(stack([func(*args, **kwargs) for _ in range(self.size)]), self.level)
        if name.endswith("_"):
            raise RuntimeError("vmap: Cannot ask for different inplace randomness on an unbatched tensor. This will "
                               "appear like same randomness. If this is necessary for your usage, please file an "
                               "issue with functorch.")
        names = [a.name for a in func._handle.schema.arguments.flat_positional]
        if "size" not in names:
            # ``rand_like(x)``, ``bernoulli(p)``, ``normal(mean)``, ``multinomial(w)`` of unbatched
            # tensors: drawn as for those tensors expanded over the batch
            args = [self._expanded(a) if isinstance(a, Tensor) else a for a in args]
            return BatchedTensor(func(*args, **kwargs), self.level)
        args = list(args)
        i = names.index("size")
        if i < len(args):
            args[i] = [self.size, *args[i]]
        else:
            kwargs = {**kwargs, "size": [self.size, *kwargs["size"]]}
        return BatchedTensor(func(*args, **kwargs), self.level)

    def _expanded(self, t):
        return t.unsqueeze(0).expand(self.size, *t.shape)

    def _same(self, func, name, batched, args, kwargs):
        """One draw for the whole batch: a factory as it is; ``*_like`` and the in-place fills draw
        one example's worth, which broadcasts over the batch."""
        if not batched:
            return func(*args, **kwargs)
        if name in _LIKE:
            return func(args[0]._value[0], *args[1:], **kwargs)
        if func.overloadpacket.__name__.endswith("_") and is_batched(args[0], self.level):
            one = func(args[0]._value[0].clone(), *args[1:], **kwargs)
            args[0]._value.copy_(one.expand_as(args[0]._value))
            return args[0]
        # torch draws one example's worth only where the draw's shape is the output's (``*_like``,
        # in-place fills); a batched probability, mean or weight has no single example to draw for
        raise RuntimeError("Vmap does not currently support same randomness with a batched tensor input. Please "
                           "file an issue with functorch")


register_rules(NN_RULES)

# autograd.grad(is_grads_batched=True) runs its backward under this vmap (autograd is a layer below).
autograd.vmap = vmap
