"""Nested containers (``torch/utils/_pytree.py``): map over their leaves, list them, flatten them
with their structure (a ``TreeSpec``) and rebuild them. ``vmap`` matches ``in_dims`` against its
inputs' structure; ``grad`` and ``jacrev`` rebuild the outputs' structure around gradients.

The containers are torch's: tuples (named ones and ``torch.Size`` too), lists, dicts (ordered and
default ones keep their kind), and deques; anything else is a leaf, ``None`` included.
``is_leaf`` stops the descent early; ``tree_map`` maps several trees of one structure at once.
"""
import collections

__all__ = ["TreeSpec", "LEAF", "tree_flatten", "tree_unflatten", "tree_map", "tree_map_only", "tree_leaves",
           "tree_structure", "tree_all", "tree_any", "tree_all_only", "tree_any_only"]


class TreeSpec:
    """A tree's shape without its leaves: the container's type, what rebuilds it beside its
    children (a dict's keys, a deque's maxlen, a named tuple's class), and each child's spec."""

    __slots__ = ("type", "context", "children_specs", "num_leaves")

    def __init__(self, kind, context, children_specs):
        self.type, self.context, self.children_specs = kind, context, children_specs
        self.num_leaves = 1 if kind is None else sum(s.num_leaves for s in children_specs)

    @property
    def num_children(self):
        return len(self.children_specs)

    def is_leaf(self):
        return self.type is None

    def __eq__(self, other):
        return isinstance(other, TreeSpec) and (self.type, self.context, self.children_specs) == (
            other.type, other.context, other.children_specs)

    def __hash__(self):
        return hash((self.type, self.num_leaves))

    def __repr__(self, indent=0):
        if self.is_leaf():
            return "*"
        inner = (",\n" + " " * (indent + 2)).join(s.__repr__(indent + 2) for s in self.children_specs)
        name = "namedtuple" if _is_namedtuple(self.type) else self.type.__name__
        return f"TreeSpec({name}, {self.context}, [{inner}])"

    def unflatten(self, leaves):
        return tree_unflatten(leaves, self)


LEAF = TreeSpec(None, None, [])


def _is_namedtuple(kind):
    return issubclass(kind, tuple) and hasattr(kind, "_fields")


def _node(tree):
    """``(type, context, children)`` of a container; None for a leaf."""
    kind = type(tree)
    if kind is list or kind is tuple:
        return kind, None, list(tree)
    if isinstance(tree, dict):
        keys = list(tree)
        context = [tree.default_factory, keys] if isinstance(tree, collections.defaultdict) else keys
        return kind, context, [tree[k] for k in keys]
    if isinstance(tree, tuple):
        return kind, (kind if _is_namedtuple(kind) else None), list(tree)
    if isinstance(tree, list):
        return kind, None, list(tree)
    if isinstance(tree, collections.deque):
        return kind, tree.maxlen, list(tree)
    return None


def _rebuild(kind, context, children):
    if issubclass(kind, dict):
        if issubclass(kind, collections.defaultdict):
            factory, keys = context
            return kind(factory, zip(keys, children, strict=True))
        return kind(zip(context, children, strict=True))
    if issubclass(kind, collections.deque):
        return kind(children, maxlen=context)
    if _is_namedtuple(kind):
        return kind(*children)
    return kind(children)


def tree_flatten(tree, is_leaf=None):
    """``(leaves, spec)``: the leaves in order, and a spec that ``tree_unflatten`` rebuilds from."""
    leaves = []
    return leaves, _flatten_into(tree, leaves, is_leaf)


def _flatten_into(tree, leaves, is_leaf):
    node = None if is_leaf is not None and is_leaf(tree) else _node(tree)
    if node is None:
        leaves.append(tree)
        return LEAF
    kind, context, children = node
    return TreeSpec(kind, context, [_flatten_into(c, leaves, is_leaf) for c in children])


def tree_unflatten(leaves, spec):
    """The tree ``tree_flatten`` took apart, with ``leaves`` in its leaves' places."""
    leaves = list(leaves)
    if len(leaves) != spec.num_leaves:
        raise ValueError(f"treespec.unflatten(leaves): `leaves` has length {len(leaves)} but the spec refers to a "
                         f"pytree that holds {spec.num_leaves} items ({spec}).")
    return _build(iter(leaves), spec)


def _build(it, spec):
    if spec.type is None:
        return next(it)
    return _rebuild(spec.type, spec.context, [_build(it, s) for s in spec.children_specs])


def tree_structure(tree, is_leaf=None):
    return tree_flatten(tree, is_leaf)[1]


def tree_leaves(tree, is_leaf=None):
    """The leaves, in order (``tree_flatten`` without the structure)."""
    if is_leaf is not None:
        return tree_flatten(tree, is_leaf)[0]
    leaves = []
    _map(leaves.append, tree)      # no specs built: the dispatch layers list leaves on every call
    return leaves


def _flatten_up_to(spec, tree):
    """``tree``'s subtrees at ``spec``'s leaves: ``tree`` has ``spec``'s structure down to them."""
    if spec.type is None:
        return [tree]
    node = _node(tree)
    if node is None or node[0] is not spec.type:
        raise ValueError(f"Node type mismatch; expected {spec.type}, but got {type(tree)}.")
    kind, context, children = node
    if len(children) != spec.num_children:
        raise ValueError(f"Node arity mismatch; expected {spec.num_children}, but got {len(children)}.")
    if issubclass(kind, dict) and context != spec.context:
        raise ValueError(f"Node context mismatch for custom node type {kind}.")
    return [x for s, c in zip(spec.children_specs, children, strict=True) for x in _flatten_up_to(s, c)]


def tree_map(fn, tree, *rests, is_leaf=None):
    """``fn`` applied to every leaf (to the leaves in the same places of ``rests`` too); structure kept."""
    if rests or is_leaf is not None:
        leaves, spec = tree_flatten(tree, is_leaf)
        columns = [leaves] + [_flatten_up_to(spec, r) for r in rests]
        return tree_unflatten([fn(*xs) for xs in zip(*columns, strict=True)], spec)
    return _map(fn, tree)


def _map(fn, tree):
    """``tree_map`` of one tree: a walk without specs, for the many callers in the tracing layers."""
    kind = type(tree)
    if kind is list or kind is tuple:
        return kind(_map(fn, x) for x in tree)
    if kind is dict:
        return {k: _map(fn, v) for k, v in tree.items()}
    node = _node(tree)
    if node is None:
        return fn(tree)
    kind, context, children = node
    return _rebuild(kind, context, [_map(fn, c) for c in children])


def _matcher(type_or_types_or_pred):
    if isinstance(type_or_types_or_pred, (type, tuple)):
        return lambda x: isinstance(x, type_or_types_or_pred)
    return type_or_types_or_pred


def tree_map_only(type_or_types_or_pred, fn, tree, is_leaf=None):
    """``fn`` on the leaves of the given types (or for which the predicate holds); others kept."""
    match = _matcher(type_or_types_or_pred)
    return tree_map(lambda x: fn(x) if match(x) else x, tree, is_leaf=is_leaf)


def tree_all(pred, tree, is_leaf=None):
    return all(pred(x) for x in tree_leaves(tree, is_leaf))


def tree_any(pred, tree, is_leaf=None):
    return any(pred(x) for x in tree_leaves(tree, is_leaf))


def tree_all_only(type_or_types, pred, tree, is_leaf=None):
    match = _matcher(type_or_types)
    return all(pred(x) for x in tree_leaves(tree, is_leaf) if match(x))


def tree_any_only(type_or_types, pred, tree, is_leaf=None):
    match = _matcher(type_or_types)
    return any(pred(x) for x in tree_leaves(tree, is_leaf) if match(x))


def _broadcast_to_and_flatten(prefix, spec):
    """``prefix`` (a leaf, or a tree whose structure is a prefix of ``spec``'s) spread over
    ``spec``'s leaves, as ``vmap`` spreads ``in_dims``; None where the structures do not fit."""
    if not isinstance(prefix, (tuple, list, dict)):
        return [prefix] * spec.num_leaves
    if spec.type is None:
        return None
    kind, keys, specs = spec.type, spec.context, spec.children_specs
    if issubclass(kind, collections.defaultdict):
        keys = keys[1]
    if isinstance(prefix, dict):
        if not issubclass(kind, dict) or set(prefix) != set(keys):
            return None
        children = [prefix[k] for k in keys]
    else:
        if not (issubclass(kind, tuple) and isinstance(prefix, tuple) or issubclass(kind, list)
                and isinstance(prefix, list)):
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
