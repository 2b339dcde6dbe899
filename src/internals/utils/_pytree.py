"""Just enough of ``torch/utils/_pytree.py`` for dispatch handlers: map over nested args."""
__all__ = ["tree_map", "tree_flatten"]


def tree_map(fn, tree):
    """``fn`` applied to every leaf of nested tuples, lists and dict values; structure kept."""
    if isinstance(tree, tuple) and hasattr(tree, "_fields"):           # namedtuple (max.dim's result)
        return type(tree)(*(tree_map(fn, x) for x in tree))
    if isinstance(tree, (tuple, list)):
        return type(tree)(tree_map(fn, x) for x in tree)
    if isinstance(tree, dict):
        return {k: tree_map(fn, v) for k, v in tree.items()}
    return fn(tree)


def tree_flatten(tree):
    """The leaves, in order (the structure half of torch's result is not needed here)."""
    leaves = []
    tree_map(leaves.append, tree)
    return leaves
