"""Pytrees: nested ``tuple``, ``list``, ``dict`` (string keys, traversed in sorted order) and
``None`` (a node without leaves). Everything else is a leaf.

Example:
    >>> leaves, treedef = qb.tree.flatten({"b": [1, 2], "a": (3, None)})
    >>> leaves
    [3, 1, 2]
    >>> qb.tree.unflatten(treedef, [x * 10 for x in leaves])
    {'a': (30, None), 'b': [10, 20]}
"""

__all__ = ["TreeDef", "flatten", "unflatten", "map"]

_LEAF = "*"


class TreeDef:
    """The structure of a pytree (hashable; equal structures compare equal)."""

    __slots__ = ("_t", "num_leaves", "_hash")

    def __init__(self, t, num_leaves):
        self._t = t
        self.num_leaves = num_leaves
        self._hash = hash(t)

    def __eq__(self, other):
        return isinstance(other, TreeDef) and self._t == other._t

    def __hash__(self):
        return self._hash

    def __repr__(self):
        return f"TreeDef({_show(self._t)})"


def _show(t):
    if t == _LEAF:
        return "*"
    kind = t[0]
    if kind == "none":
        return "None"
    if kind == "dict":
        return "{" + ", ".join(f"{k!r}: {_show(c)}" for k, c in zip(t[1], t[2])) + "}"
    inner = ", ".join(_show(c) for c in t[1])
    return f"({inner},)" if kind == "tuple" and len(t[1]) == 1 else (f"({inner})" if kind == "tuple" else f"[{inner}]")


def _flatten(x, leaves):
    tx = type(x)
    if tx is tuple or tx is list:
        return ("tuple" if tx is tuple else "list", tuple(_flatten(c, leaves) for c in x))
    if tx is dict:
        try:
            keys = tuple(sorted(x))
        except TypeError:
            raise TypeError(f"pytree dict keys must be sortable (strings), got {list(x)!r}") from None
        return ("dict", keys, tuple(_flatten(x[k], leaves) for k in keys))
    if x is None:
        return ("none",)
    leaves.append(x)
    return _LEAF


def flatten(tree):
    """Returns ``(leaves, treedef)``: the leaves in traversal order and the structure.

    Args:
        tree: a pytree.

    Returns:
        A list of leaves and a :class:`TreeDef`.
    """
    leaves = []
    t = _flatten(tree, leaves)
    return leaves, TreeDef(t, len(leaves))


def _build(t, it):
    if t == _LEAF:
        return next(it)
    kind = t[0]
    if kind == "tuple":
        return tuple(_build(c, it) for c in t[1])
    if kind == "list":
        return [_build(c, it) for c in t[1]]
    if kind == "dict":
        return {k: _build(c, it) for k, c in zip(t[1], t[2])}
    return None


def unflatten(treedef, leaves):
    """Rebuilds a pytree of structure ``treedef`` from ``leaves`` (in traversal order).

    Raises:
        ValueError: when the number of leaves differs from the structure's.
    """
    leaves = list(leaves)
    if len(leaves) != treedef.num_leaves:
        raise ValueError(f"unflatten: {treedef!r} needs {treedef.num_leaves} leaves, got {len(leaves)}")
    return _build(treedef._t, iter(leaves))


def map(f, tree, *rest):  # noqa: A001 - the public name is quabla.tree.map
    """Applies ``f`` leaf-wise over one or more pytrees of the same structure.

    Example:
        >>> qb.tree.map(lambda a, b: a + b, [1, (2, 3)], [10, (20, 30)])
        [11, (22, 33)]
    """
    leaves, td = flatten(tree)
    others = []
    for r in rest:
        ls, tr = flatten(r)
        if tr != td:
            raise ValueError(f"tree.map: structures differ: {td!r} and {tr!r}")
        others.append(ls)
    return unflatten(td, [f(*xs) for xs in zip(leaves, *others)])
