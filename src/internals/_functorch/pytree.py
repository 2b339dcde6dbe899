"""Flatten and rebuild nested tuples, lists and dicts with their structure (``torch/utils/_pytree.py``,
the part the transforms need: ``vmap`` matches ``in_dims`` against its inputs' structure, ``grad``
and ``jacrev`` rebuild the outputs' structure around gradients)."""
__all__ = ["tree_flatten", "tree_unflatten", "broadcast_prefix", "LEAF"]

LEAF = "*"


def _children(tree):
    if isinstance(tree, dict):
        return list(tree.keys()), list(tree.values())
    if isinstance(tree, (tuple, list)):
        return None, list(tree)
    return None


def tree_flatten(tree):
    """``(leaves, spec)``: the leaves in order, and a spec that ``tree_unflatten`` rebuilds from."""
    parts = _children(tree)
    if parts is None:
        return [tree], LEAF
    keys, children = parts
    leaves, specs = [], []
    for child in children:
        sub, spec = tree_flatten(child)
        leaves += sub
        specs.append(spec)
    return leaves, (type(tree), keys, specs)


def _count(spec):
    return 1 if spec == LEAF else sum(_count(s) for s in spec[2])


def tree_unflatten(leaves, spec):
    leaves = list(leaves)
    out = _build(iter(leaves), spec)
    return out


def _build(it, spec):
    if spec == LEAF:
        return next(it)
    kind, keys, specs = spec
    children = [_build(it, s) for s in specs]
    if kind is dict:
        return dict(zip(keys, children, strict=True))
    if hasattr(kind, "_fields"):                 # a named tuple
        return kind(*children)
    return kind(children)


def broadcast_prefix(prefix, spec):
    """``prefix`` (a leaf, or a tree whose structure is a prefix of ``spec``'s) spread over
    ``spec``'s leaves, as ``vmap`` spreads ``in_dims``; None where the structures do not fit."""
    if not isinstance(prefix, (tuple, list, dict)):
        return [prefix] * _count(spec)
    if spec == LEAF:
        return None
    kind, keys, specs = spec
    if isinstance(prefix, dict):
        if kind is not dict or set(prefix) != set(keys):
            return None
        children = [prefix[k] for k in keys]
    else:
        if not (issubclass(kind, tuple) and isinstance(prefix, tuple) or kind is list and isinstance(prefix, list)):
            return None
        if len(prefix) != len(specs):
            return None
        children = list(prefix)
    out = []
    for child, sub in zip(children, specs, strict=True):
        flat = broadcast_prefix(child, sub)
        if flat is None:
            return None
        out += flat
    return out
