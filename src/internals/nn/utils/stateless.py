"""Call a module with other tensors in place of its parameters and buffers
(``torch/nn/utils/stateless.py``).

The tensors are swapped into the module's own dictionaries for the length of one call and the
originals swapped back afterwards, also when the call raises. Nothing is copied: gradients flow to
the tensors passed in, and a module that updates a buffer in place updates the passed tensor."""
import contextlib
import warnings

from ._named_member_accessor import NamedMemberAccessor

__all__ = ["functional_call"]


def _tied_names(module):
    """Each name of a tensor the module holds under more than one name, mapped to all its names."""
    names_of = {}
    named = list(module.named_parameters(remove_duplicate=False))
    named += module.named_buffers(remove_duplicate=False)
    for name, tensor in dict(named).items():
        names_of.setdefault(id(tensor), set()).add(name)
    return {name: names for names in names_of.values() if len(names) > 1 for name in names}


def _untie_named_tensors_map(module, parameters_and_buffers):
    """A copy of ``parameters_and_buffers`` in which a value given for one name of a tied tensor
    is given for all its names; two different values for one tied tensor are an error."""
    tied = _tied_names(module)
    given = [name for name in parameters_and_buffers if name in tied]
    for name in given:
        values = {id(parameters_and_buffers[other]) for other in tied[name] if other in parameters_and_buffers}
        if len(values) > 1:
            raise ValueError(f"functional_call got multiple values for keys {sorted(tied[name])}, "
                             f"which are tied. Consider using tie_weights=False")
    untied = dict(parameters_and_buffers)
    for name in given:
        for other in tied[name]:
            untied[other] = parameters_and_buffers[name]
    return untied


def _check_strict(module, accessor, names):
    """With ``strict=True`` the names must be exactly the module's parameters and buffers."""
    missing, unexpected = accessor.check_keys(names)
    errors = []
    if unexpected:
        errors.append(f"Unexpected key(s): {', '.join(map(repr, unexpected))}.")
    if missing:
        errors.append(f"Missing key(s): {', '.join(map(repr, missing))}.")
    if errors:
        raise RuntimeError(f"Error(s) in reparametrizing for {module._get_name()}:\n\t" + "\n\t".join(errors))


@contextlib.contextmanager
def _reparametrize_module(module, parameters_and_buffers, tie_weights=False, strict=False):
    """Inside the ``with``, ``module`` holds ``parameters_and_buffers``; on leaving it holds its own
    tensors again, and the dictionary passed in holds what the module ended with under its keys
    (a buffer the forward replaced, ``self.x = self.x + 1``, comes back that way)."""
    untied = _untie_named_tensors_map(module, parameters_and_buffers) if tie_weights else parameters_and_buffers
    accessor = NamedMemberAccessor(module)
    if strict:
        _check_strict(module, accessor, untied)
    originals = {}
    try:
        originals, _ = accessor.swap_tensors_dict(untied, allow_missing=True)
        yield
    finally:
        ended_with, _ = accessor.swap_tensors_dict(originals, allow_missing=True)
        parameters_and_buffers.update({k: ended_with[k] for k in parameters_and_buffers if k in ended_with})


def functional_call(module, parameters_and_buffers, args=None, kwargs=None, *, tie_weights=True, strict=False):
    """The older spelling of ``torch.func.functional_call`` (one dictionary only): warns that it is
    deprecated, then does the same."""
    warnings.warn("`torch.nn.utils.stateless.functional_call` is deprecated as of PyTorch 2.0 and will be "
                  "removed in a future version of PyTorch. Please use `torch.func.functional_call` instead "
                  "which is a drop-in replacement.", FutureWarning, stacklevel=2)
    return _functional_call(module, parameters_and_buffers, args, kwargs, tie_weights=tie_weights, strict=strict)


def _functional_call(module, parameters_and_buffers, args=None, kwargs=None, *, tie_weights=True, strict=False):
    """``module(*args, **kwargs)`` with ``parameters_and_buffers`` swapped in; a lone ``args`` that
    is not a tuple is the one positional argument."""
    kwargs = {} if kwargs is None else kwargs
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with _reparametrize_module(module, parameters_and_buffers, tie_weights=tie_weights, strict=strict):
        return module(*args, **kwargs)
