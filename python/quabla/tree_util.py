"""``qb.tree_util``: ``jax.tree_util``'s names over :mod:`quabla.tree` (one registry, so a
node registered here is a node for ``jit``, the transforms and ``qb.tree`` alike).

``tree_map``, ``tree_leaves`` ... are :mod:`quabla.tree`'s functions under JAX's older
names; this module adds ``tree_transpose``, ``tree_broadcast``, ``tree_reduce_associative``, ``register_pytree_node_class``, ``register_pytree_with_keys_class``, ``Partial``,
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
from .tree import flatten_one_level, flatten_one_level_with_keys, is_tree_node, register_static, treedef_children, treedef_tuple

__all__ = [
    "PyTreeDef", "SequenceKey", "DictKey", "GetAttrKey", "FlattenedIndexKey", "Partial",
    "tree_map", "tree_leaves", "tree_flatten", "tree_unflatten", "tree_structure", "tree_reduce", "tree_all",
    "tree_transpose", "tree_flatten_with_path", "tree_leaves_with_path", "tree_map_with_path", "keystr",
    "register_pytree_node", "register_pytree_with_keys", "register_dataclass", "register_pytree_node_class",
    "all_leaves", "treedef_is_leaf", "tree_broadcast", "tree_reduce_associative", "register_pytree_with_keys_class",
    "register_static", "flatten_one_level", "flatten_one_level_with_keys", "is_tree_node", "treedef_children",
    "treedef_tuple", "KeyEntry", "KeyPath",
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


tree_transpose = _tree.transpose
tree_broadcast = _tree.broadcast
tree_reduce_associative = _tree.reduce_associative
KeyEntry = object
KeyPath = tuple


def register_pytree_with_keys_class(cls):
    """Registers ``cls`` from its methods ``tree_flatten_with_keys() -> ([(key, child), ...],
    aux)`` and classmethod ``tree_unflatten(aux, children)`` (``tree_flatten`` is used when
    defined), as ``jax.tree_util.register_pytree_with_keys_class``; returns ``cls``.

    Example:
        >>> @qb.tree_util.register_pytree_with_keys_class
        ... class P:
        ...     def __init__(self, a):
        ...         self.a = a
        ...     def tree_flatten_with_keys(self):
        ...         return [(qb.tree_util.GetAttrKey("a"), self.a)], None
        ...     @classmethod
        ...     def tree_unflatten(cls, aux, children):
        ...         return cls(*children)
        >>> qb.tree_util.keystr(qb.tree_util.tree_flatten_with_path(P(1))[0][0][0])
        '.a'
    """
    if not isinstance(cls, type) or not callable(getattr(cls, "tree_flatten_with_keys", None)) or not callable(getattr(cls, "tree_unflatten", None)):
        raise ArgumentTypeError("register_pytree_with_keys_class: the class needs tree_flatten_with_keys and tree_unflatten methods")
    flat = getattr(cls, "tree_flatten", None)
    register_pytree_with_keys(cls, lambda x: x.tree_flatten_with_keys(), cls.tree_unflatten, (lambda x: x.tree_flatten()) if callable(flat) else None)
    return cls
