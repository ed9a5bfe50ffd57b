"""``qb.tree_util``: ``jax.tree_util``'s names over :mod:`quabla.tree` (one registry, so a
node registered here is a node for ``jit``, the transforms and ``qb.tree`` alike).

``tree_map``, ``tree_leaves`` ... are :mod:`quabla.tree`'s functions under JAX's older
names; this module adds ``tree_transpose``, ``register_pytree_node_class``, ``Partial``,
``all_leaves``, ``treedef_is_leaf`` and ``keystr``'s ``simple=``/``separator=``.
``PyTreeDef`` is :class:`quabla.tree.TreeDef`.

Example:
    >>> from quabla import tree_util
    >>> tree_util.tree_map(lambda x: x * 2, {"a": [1, 2]})
    {'a': [2, 4]}
"""

import functools

from . import tree as _tree
from .errors import ArgumentTypeError
from .tree import DictKey, FlattenedIndexKey, GetAttrKey, PyTreeError, SequenceKey, register_dataclass, register_pytree_node
from .tree import TreeDef as PyTreeDef
from .tree import register_pytree_with_keys

__all__ = [
    "PyTreeDef", "SequenceKey", "DictKey", "GetAttrKey", "FlattenedIndexKey", "Partial",
    "tree_map", "tree_leaves", "tree_flatten", "tree_unflatten", "tree_structure", "tree_reduce", "tree_all",
    "tree_transpose", "tree_flatten_with_path", "tree_leaves_with_path", "tree_map_with_path", "keystr",
    "register_pytree_node", "register_pytree_with_keys", "register_dataclass", "register_pytree_node_class",
    "all_leaves", "treedef_is_leaf",
]

tree_flatten = _tree.flatten
tree_unflatten = _tree.unflatten
tree_leaves = _tree.leaves
tree_structure = _tree.structure
tree_map = _tree.map
tree_reduce = _tree.reduce
tree_flatten_with_path = _tree.flatten_with_path
tree_leaves_with_path = _tree.leaves_with_path
tree_map_with_path = _tree.map_with_path


def tree_all(tree, *, is_leaf=None):
    """True when every leaf of ``tree`` is truthy (``jax.tree_util.tree_all``).

    Example:
        >>> qb.tree_util.tree_all([True, {"a": 1}]), qb.tree_util.tree_all([0, 1])
        (True, False)
    """
    return _tree.all(tree, is_leaf)


def _simple(key):
    for attr in ("idx", "key", "name"):
        if hasattr(key, attr):
            return str(getattr(key, attr))
    return str(key)


def keystr(keys, *, simple=False, separator=""):
    """A key path as text (``jax.tree_util.keystr``): JAX's bracketed form, or with
    ``simple=True`` the bare keys joined by ``separator``.

    Example:
        >>> (path, _), = qb.tree_util.tree_leaves_with_path({"w": [None, 3]})
        >>> qb.tree_util.keystr(path), qb.tree_util.keystr(path, simple=True, separator="/")
        ("['w'][1]", 'w/1')
    """
    if not isinstance(keys, (tuple, list)):
        raise PyTreeError(f"keystr: keys must be a tuple of path keys, got a {type(keys).__name__}")
    return separator.join((_simple if simple else str)(k) for k in keys)


def register_pytree_node_class(cls):
    """Class decorator registering ``cls`` as a pytree node through its ``tree_flatten()``
    method and ``tree_unflatten(aux_data, children)`` classmethod
    (``jax.tree_util.register_pytree_node_class``); returns ``cls``.

    Example:
        >>> @qb.tree_util.register_pytree_node_class
        ... class Point:
        ...     def __init__(self, x, y):
        ...         self.x, self.y = x, y
        ...     def tree_flatten(self):
        ...         return (self.x, self.y), None
        ...     @classmethod
        ...     def tree_unflatten(cls, aux, children):
        ...         return cls(*children)
        >>> qb.tree_util.tree_leaves([Point(1, 2), 3])
        [1, 2, 3]
    """
    if not isinstance(cls, type):
        raise ArgumentTypeError(f"register_pytree_node_class: expected a class, got a {type(cls).__name__}")
    for m in ("tree_flatten", "tree_unflatten"):
        if not callable(getattr(cls, m, None)):
            raise ArgumentTypeError(f"register_pytree_node_class: {cls.__name__} needs a {m} method")
    register_pytree_node(cls, lambda x: x.tree_flatten(), cls.tree_unflatten)
    return cls


class Partial(functools.partial):
    """A ``functools.partial`` that is a pytree (``jax.tree_util.Partial``): the bound
    arguments are its children, the function is static, so it can be passed through ``jit``
    and the transforms.

    Example:
        >>> f = qb.tree_util.Partial(qb.multiply, qb.array([2.0]))
        >>> qb.jit(lambda g, x: g(x))(f, qb.array([3.0])).tolist()
        [6.0]
        >>> qb.tree_util.tree_leaves(f)
        [Tensor([2.], dtype=float64)]
    """


register_pytree_node(
    Partial,
    lambda p: ((p.args, p.keywords), p.func),
    lambda func, xs: Partial(func, *xs[0], **xs[1]),
)


def all_leaves(iterable, is_leaf=None):
    """True when every element of ``iterable`` is a pytree leaf (``jax.tree_util.all_leaves``).

    Example:
        >>> qb.tree_util.all_leaves([1.0, qb.array(2.0)]), qb.tree_util.all_leaves([1.0, (2.0,)])
        (True, False)
    """
    items = list(iterable)
    leaves = _tree.leaves(items, is_leaf)
    return len(leaves) == len(items) and all(a is b for a, b in zip(leaves, items))


def treedef_is_leaf(treedef):
    """True when ``treedef`` has a single node: a leaf, or a childless node such as ``None``
    (``jax.tree_util.treedef_is_leaf``).

    Example:
        >>> qb.tree_util.treedef_is_leaf(qb.tree_util.tree_structure(1.0))
        True
        >>> qb.tree_util.treedef_is_leaf(qb.tree_util.tree_structure([1.0]))
        False
    """
    if not isinstance(treedef, PyTreeDef):
        raise ArgumentTypeError(f"treedef_is_leaf: expected a PyTreeDef, got a {type(treedef).__name__}")
    return treedef.num_nodes == 1


def tree_transpose(outer_treedef, inner_treedef, pytree_to_transpose):
    """Turns a pytree of structure ``outer`` whose leaves are pytrees of structure ``inner``
    into one of structure ``inner`` whose leaves are pytrees of structure ``outer``
    (``jax.tree_util.tree_transpose``); ``inner_treedef=None`` takes the structure of the
    first inner tree.

    Example:
        >>> outer = qb.tree_util.tree_structure([0, 0])
        >>> inner = qb.tree_util.tree_structure({"a": 0, "b": 0})
        >>> qb.tree_util.tree_transpose(outer, inner, [{"a": 1, "b": 2}, {"a": 3, "b": 4}])
        {'a': [1, 3], 'b': [2, 4]}
    """
    for what, td in (("outer_treedef", outer_treedef), ("inner_treedef", inner_treedef)):
        if td is not None and not isinstance(td, PyTreeDef):
            raise ArgumentTypeError(f"tree_transpose: {what} must be a PyTreeDef, got a {type(td).__name__}")
    if outer_treedef is None:
        raise ArgumentTypeError("tree_transpose: outer_treedef must be a PyTreeDef, got None")
    subtrees = outer_treedef.flatten_up_to(pytree_to_transpose)
    if inner_treedef is None:
        if not subtrees:
            raise PyTreeError("tree_transpose: inner_treedef=None needs at least one inner tree")
        inner_treedef = _tree.structure(subtrees[0])
    inner_leaves = []
    for i, sub in enumerate(subtrees):
        ls, td = _tree.flatten(sub)
        if td != inner_treedef:
            raise PyTreeError(f"tree_transpose: inner tree {i} has structure {td!r} where {inner_treedef!r} was expected")
        inner_leaves.append(ls)
    columns = [outer_treedef.unflatten([row[j] for row in inner_leaves]) for j in range(inner_treedef.num_leaves)]
    return inner_treedef.unflatten(columns)
