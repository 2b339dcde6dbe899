"""Nested tuples, lists and dicts (``torch/utils/_pytree.py``): map over their leaves, list them,
flatten them with their structure and rebuild them (``vmap`` matches ``in_dims`` against its
inputs' structure; ``grad`` and ``jacrev`` rebuild the outputs' structure around gradients)."""
__all__ = ["tree_map", "tree_leaves", "tree_flatten", "tree_unflatten", "LEAF"]

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
    """The tree ``tree_flatten`` took apart, with ``leaves`` in its leaves' places."""
    return _build(iter(leaves), spec)


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


def _broadcast_to_and_flatten(prefix, spec):
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
        flat = _broadcast_to_and_flatten(child, sub)
        if flat is None:
            return None
        out += flat
    return out


def tree_map(fn, tree):
    """``fn`` applied to every leaf of nested tuples, lists and dict values; structure kept."""
    if isinstance(tree, tuple) and hasattr(tree, "_fields"):           # namedtuple (max.dim's result)
        return type(tree)(*(tree_map(fn, x) for x in tree))
    if isinstance(tree, (tuple, list)):
        return type(tree)(tree_map(fn, x) for x in tree)
    if isinstance(tree, dict):
        return {k: tree_map(fn, v) for k, v in tree.items()}
    return fn(tree)


def tree_leaves(tree):
    """The leaves, in order (``tree_flatten`` without the structure)."""
    leaves = []
    tree_map(leaves.append, tree)
    return leaves
