"""Pytrees, as in ``jax.tree_util``: nested containers whose leaves are arrays or numbers.

Owns the registry of pytree node types and every traversal of pytrees in Quabla (the
transforms, ``jit`` and ``quabla.optim`` flatten through it).

Nodes: ``tuple``, ``list``, ``dict`` (keys traversed in sorted order), ``None`` (a node
without children), every namedtuple, and the types registered with
:func:`register_pytree_node`, :func:`register_pytree_with_keys` or
:func:`register_dataclass`. Everything else is a leaf. Leaves come in the same order as
JAX's, and structures (:class:`TreeDef`) are hashable and compare equal exactly when JAX's
would: the node types, dict keys, namedtuple types and registered nodes' auxiliary data
(a dataclass's meta fields) are part of the structure.

Example:
    >>> leaves, treedef = qb.tree.flatten({"b": [1, 2], "a": (3, None)})
    >>> leaves
    [3, 1, 2]
    >>> qb.tree.unflatten(treedef, [x * 10 for x in leaves])
    {'a': (30, None), 'b': [10, 20]}
"""

import builtins
import dataclasses
import functools

from .errors import QuablaError

__all__ = [
    "TreeDef",
    "PyTreeError",
    "SequenceKey",
    "DictKey",
    "GetAttrKey",
    "FlattenedIndexKey",
    "flatten",
    "unflatten",
    "leaves",
    "structure",
    "map",
    "reduce",
    "all",
    "flatten_with_path",
    "leaves_with_path",
    "map_with_path",
    "keystr",
    "register_pytree_node",
    "register_pytree_with_keys",
    "register_dataclass",
    "register_static",
    "static",
    "transpose",
    "broadcast",
    "reduce_associative",
    "flatten_one_level",
    "flatten_one_level_with_keys",
    "is_tree_node",
    "treedef_children",
    "treedef_tuple",
]

_LEAF = "*"


class PyTreeError(QuablaError, ValueError):
    """Pytrees that do not fit: structures that differ where they must match, a wrong
    number of leaves for :func:`unflatten`, or a node type registered twice. The message
    names the argument and both structures."""


class _RegistrationError(QuablaError, TypeError):
    pass


# ---------------------------------------------------------------------------------------------
# Keys of paths


class SequenceKey:
    """The key of a child of a tuple or list: its index ``idx``.

    Example:
        >>> qb.tree.keystr((qb.tree.SequenceKey(1),))
        '[1]'
    """

    __slots__ = ("idx",)

    def __init__(self, idx):
        self.idx = idx

    def __str__(self):
        return f"[{self.idx!r}]"

    def __repr__(self):
        return f"SequenceKey(idx={self.idx!r})"

    def __eq__(self, other):
        return type(other) is SequenceKey and other.idx == self.idx

    def __hash__(self):
        return hash(("SequenceKey", self.idx))


class DictKey:
    """The key of a child of a dict: the dict key ``key``.

    Example:
        >>> qb.tree.keystr((qb.tree.DictKey("w"),))
        "['w']"
    """

    __slots__ = ("key",)

    def __init__(self, key):
        self.key = key

    def __str__(self):
        return f"[{self.key!r}]"

    def __repr__(self):
        return f"DictKey(key={self.key!r})"

    def __eq__(self, other):
        return type(other) is DictKey and other.key == self.key

    def __hash__(self):
        return hash(("DictKey", self.key))


class GetAttrKey:
    """The key of a namedtuple field or a dataclass field: the attribute ``name``.

    Example:
        >>> qb.tree.keystr((qb.tree.GetAttrKey("bias"),))
        '.bias'
    """

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __str__(self):
        return f".{self.name}"

    def __repr__(self):
        return f"GetAttrKey(name={self.name!r})"

    def __eq__(self, other):
        return type(other) is GetAttrKey and other.name == self.name

    def __hash__(self):
        return hash(("GetAttrKey", self.name))


class FlattenedIndexKey:
    """The key of a child of a node registered without keys: its position ``key`` among
    the node's children.

    Example:
        >>> qb.tree.keystr((qb.tree.FlattenedIndexKey(0),))
        '[<flat index 0>]'
    """

    __slots__ = ("key",)

    def __init__(self, key):
        self.key = key

    def __str__(self):
        return f"[<flat index {self.key}>]"

    def __repr__(self):
        return f"FlattenedIndexKey(key={self.key!r})"

    def __eq__(self, other):
        return type(other) is FlattenedIndexKey and other.key == self.key

    def __hash__(self):
        return hash(("FlattenedIndexKey", self.key))


def keystr(keys):
    """A key path (a tuple of keys, as :func:`flatten_with_path` gives) as text, JAX's way.

    Example:
        >>> [p for p, _ in qb.tree.flatten_with_path({"a": [1, (2,)]})[0]]
        [(DictKey(key='a'), SequenceKey(idx=0)), (DictKey(key='a'), SequenceKey(idx=1), SequenceKey(idx=0))]
        >>> qb.tree.keystr(qb.tree.flatten_with_path({"a": [1, (2,)]})[0][1][0])
        "['a'][1][0]"
    """
    if not isinstance(keys, (tuple, list)):
        raise PyTreeError(f"keystr: keys must be a tuple of path keys, got a {type(keys).__name__}")
    return "".join(str(k) for k in keys)


# ---------------------------------------------------------------------------------------------
# The registry


class _Node:
    """A registered node type: ``flatten(x) -> (children, aux)``, ``unflatten(aux, children)``
    and optionally ``flatten_with_keys(x) -> ([(key, child)], aux)``; ``show`` names it in
    structures."""

    __slots__ = ("type", "flatten", "unflatten", "flatten_with_keys", "show")

    def __init__(self, nodetype, flatten_fn, unflatten_fn, flatten_with_keys_fn, show):
        self.type = nodetype
        self.flatten = flatten_fn
        self.unflatten = unflatten_fn
        self.flatten_with_keys = flatten_with_keys_fn
        self.show = show


_REGISTRY = {}

# Classes whose instances are always leaves (the package adds its array types): the hot path
# of flatten skips the registry lookup for them. Registering a class removes it.
LEAF_TYPES = {int, float, bool, str}


def _check_registration(fname, nodetype):
    if not isinstance(nodetype, type):
        raise _RegistrationError(f"{fname}: nodetype must be a class, got a {type(nodetype).__name__}")
    if nodetype in (tuple, list, dict, type(None)) or nodetype in _REGISTRY:
        raise PyTreeError(f"{fname}: {nodetype.__name__} is already registered as a pytree node")
    LEAF_TYPES.discard(nodetype)


def register_pytree_node(nodetype, flatten_func, unflatten_func, flatten_with_keys_func=None):
    """Makes ``nodetype`` a pytree node type, as ``jax.tree_util.register_pytree_node``.

    Args:
        nodetype: the class.
        flatten_func: ``x -> (children, aux_data)``: an iterable of children (pytrees) and
            auxiliary data (static: part of the structure and of jit's cache key, compared
            with ``==``; it need not be hashable, as in JAX).
        unflatten_func: ``(aux_data, children) -> x``.
        flatten_with_keys_func: optional ``x -> ([(key, child), ...], aux_data)``; without
            it, paths name children by :class:`FlattenedIndexKey`.

    Example:
        >>> class Pair:
        ...     def __init__(self, a, b):
        ...         self.a, self.b = a, b
        >>> qb.tree.register_pytree_node(Pair, lambda p: ((p.a, p.b), None), lambda _, c: Pair(*c))
        >>> qb.tree.leaves([Pair(1, 2), 3])
        [1, 2, 3]
    """
    _check_registration("register_pytree_node", nodetype)
    for what, fn in (("flatten_func", flatten_func), ("unflatten_func", unflatten_func)):
        if not callable(fn):
            raise _RegistrationError(f"register_pytree_node: {what} must be callable, got a {type(fn).__name__}")
    if flatten_with_keys_func is not None and not callable(flatten_with_keys_func):
        raise _RegistrationError(
            f"register_pytree_node: flatten_with_keys_func must be callable or None, got a {type(flatten_with_keys_func).__name__}"
        )
    _REGISTRY[nodetype] = _Node(nodetype, flatten_func, unflatten_func, flatten_with_keys_func, nodetype.__name__)


def register_pytree_with_keys(nodetype, flatten_with_keys, unflatten_func, flatten_func=None):
    """Like :func:`register_pytree_node`, with a flatten function that names each child:
    ``flatten_with_keys(x) -> ([(key, child), ...], aux_data)``.

    Example:
        >>> class Box:
        ...     def __init__(self, v):
        ...         self.v = v
        >>> qb.tree.register_pytree_with_keys(
        ...     Box, lambda b: ([(qb.tree.GetAttrKey("v"), b.v)], None), lambda _, c: Box(*c))
        >>> qb.tree.keystr(qb.tree.flatten_with_path(Box(1))[0][0][0])
        '.v'
    """
    _check_registration("register_pytree_with_keys", nodetype)
    if not callable(flatten_with_keys) or not callable(unflatten_func):
        raise _RegistrationError("register_pytree_with_keys: flatten_with_keys and unflatten_func must be callable")
    if flatten_func is None:

        def flatten_func(x):
            kc, aux = flatten_with_keys(x)
            return [c for _, c in kc], aux

    _REGISTRY[nodetype] = _Node(nodetype, flatten_func, unflatten_func, flatten_with_keys, nodetype.__name__)


def _names(fname, what, fields):
    if isinstance(fields, str) or not all(isinstance(f, str) for f in fields):
        raise _RegistrationError(f"{fname}: {what} must be a sequence of field names (strings), got {fields!r}")
    return tuple(fields)


def register_dataclass(nodetype=None, data_fields=None, meta_fields=None, drop_fields=()):
    """Makes a dataclass (or any class whose constructor takes its fields as keywords) a
    pytree node, as ``jax.tree_util.register_dataclass``: ``data_fields`` are children,
    ``meta_fields`` are static (part of the structure and of jit's cache key, compared with
    ``==``).

    For a dataclass both may be omitted: fields are data unless declared with
    ``dataclasses.field(metadata=dict(static=True))``. Returns ``nodetype``, so it is a
    decorator; ``register_dataclass(data_fields=..., meta_fields=...)`` without a type
    returns one too.

    Example:
        >>> import dataclasses
        >>> @qb.tree.register_dataclass
        ... @dataclasses.dataclass
        ... class Layer:
        ...     w: object
        ...     b: object
        ...     act: str = dataclasses.field(default="relu", metadata=dict(static=True))
        >>> qb.tree.leaves(Layer(1.0, 2.0))
        [1.0, 2.0]
        >>> qb.tree.structure(Layer(1.0, 2.0)) == qb.tree.structure(Layer(1.0, 2.0, act="tanh"))
        False
    """
    fname = "register_dataclass"
    if nodetype is None:
        return functools.partial(register_dataclass, data_fields=data_fields, meta_fields=meta_fields, drop_fields=drop_fields)
    if not isinstance(nodetype, type):
        raise _RegistrationError(f"{fname}: nodetype must be a class, got a {type(nodetype).__name__}")
    drop = _names(fname, "drop_fields", drop_fields)
    if data_fields is None or meta_fields is None:
        if (data_fields is None) != (meta_fields is None):
            raise _RegistrationError(
                f"{fname}: data_fields and meta_fields must both be given when either is "
                f"(data_fields={data_fields!r}, meta_fields={meta_fields!r})"
            )
        if not dataclasses.is_dataclass(nodetype):
            raise _RegistrationError(
                f"{fname}: data_fields and meta_fields are required for {nodetype.__name__}, which is not a dataclass"
            )
        fs = [f for f in dataclasses.fields(nodetype) if f.init and f.name not in drop]
        data_fields = [f.name for f in fs if not f.metadata.get("static", False)]
        meta_fields = [f.name for f in fs if f.metadata.get("static", False)]
    data = _names(fname, "data_fields", data_fields)
    meta = _names(fname, "meta_fields", meta_fields)
    if set(data) & set(meta):
        raise _RegistrationError(f"{fname}: fields {sorted(set(data) & set(meta))} are in both data_fields and meta_fields")
    if dataclasses.is_dataclass(nodetype):
        init = {f.name for f in dataclasses.fields(nodetype) if f.init} - set(drop)
        if set(data) | set(meta) != init:
            raise _RegistrationError(
                f"{fname}: data_fields and meta_fields of {nodetype.__name__} must list exactly its init fields "
                f"{sorted(init)} (less drop_fields), got data_fields={list(data)}, meta_fields={list(meta)}"
            )
    _check_registration(fname, nodetype)

    def flat(x):
        return [getattr(x, n) for n in data], tuple(getattr(x, n) for n in meta)

    def flat_keys(x):
        return [(GetAttrKey(n), getattr(x, n)) for n in data], tuple(getattr(x, n) for n in meta)

    def unflat(aux, children):
        kw = dict(zip(data, children))
        kw.update(zip(meta, aux))
        return nodetype(**kw)

    _REGISTRY[nodetype] = _Node(nodetype, flat, unflat, flat_keys, nodetype.__name__)
    return nodetype


def _is_namedtuple(tx):
    return issubclass(tx, tuple) and hasattr(tx, "_fields") and hasattr(tx, "_make")


# ---------------------------------------------------------------------------------------------
# Structures


class TreeDef:
    """The structure of a pytree (hashable; equal structures compare equal).

    Attributes:
        num_leaves: the number of leaves.
        num_nodes: the number of nodes and leaves.

    Example:
        >>> td = qb.tree.structure({"w": [1.0, 2.0], "b": None})
        >>> td, td.num_leaves
        (TreeDef({'b': None, 'w': [*, *]}), 2)
        >>> td.unflatten([3, 4])
        {'b': None, 'w': [3, 4]}
    """

    __slots__ = ("_t", "num_leaves", "_hash")

    def __init__(self, t, num_leaves):
        self._t = t
        self.num_leaves = num_leaves
        self._hash = None

    @property
    def num_nodes(self):
        return _count_nodes(self._t)

    def __eq__(self, other):
        return isinstance(other, TreeDef) and self._t == other._t

    def __hash__(self):
        # As JAX's, a structure hashes even when a registered node's auxiliary data does not
        # (a dict of static fields): that node then hashes by its type alone and equality
        # compares the auxiliary data with ``==``.
        if self._hash is None:
            try:
                self._hash = hash(self._t)
            except TypeError:
                self._hash = hash(_loose_key(self._t))
        return self._hash

    def __repr__(self):
        return f"TreeDef({_show(self._t)})"

    def unflatten(self, leaves):
        """The pytree of this structure with ``leaves`` (see :func:`unflatten`)."""
        return unflatten(self, leaves)

    def is_leaf(self):
        """True for the structure of a single leaf."""
        return self._t == _LEAF

    def is_flat_tuple(self):
        """True for a tuple of leaves (no nesting)."""
        t = self._t
        return t != _LEAF and t[0] == "tuple" and builtins.all(c == _LEAF for c in t[2])

    def flatten_up_to(self, tree):
        """The subtrees of ``tree`` at the leaves of this structure (``tree`` must have this
        structure as a prefix)."""
        out = []
        _up_to(self._t, tree, out, "tree")
        return out


def _loose_key(t):
    """``t`` with every unhashable auxiliary datum replaced by its type's name."""
    if t == _LEAF:
        return t
    kind, aux, ch = t
    try:
        hash(aux)
    except TypeError:
        aux = ("<unhashable>", type(aux).__name__)
    return (kind, aux, tuple(_loose_key(c) for c in ch))


def _count_nodes(t):
    if t == _LEAF:
        return 1
    return 1 + builtins.sum(_count_nodes(c) for c in t[2])


def _show(t):
    if t == _LEAF:
        return "*"
    kind, aux, ch = t
    inner = ", ".join(_show(c) for c in ch)
    if kind == "none":
        return "None"
    if kind == "dict":
        return "{" + ", ".join(f"{k!r}: {_show(c)}" for k, c in zip(aux, ch)) + "}"
    if kind == "tuple":
        return f"({inner},)" if len(ch) == 1 else f"({inner})"
    if kind == "list":
        return f"[{inner}]"
    if _is_namedtuple(kind):
        return f"{kind.__name__}(" + ", ".join(f"{n}={_show(c)}" for n, c in zip(kind._fields, ch)) + ")"
    return f"{kind.__name__}[{aux!r}]({inner})"


def _sorted_keys(x):
    try:
        return tuple(sorted(x))
    except TypeError:
        # A ValueError, as JAX's ("Comparator raised exception while sorting ...").
        raise PyTreeError(f"pytree dict keys must be sortable (of one comparable type), got {list(x)!r}") from None


def _children(x):
    """``(kind, aux, [(key, child), ...])`` for a node, None for a leaf."""
    tx = type(x)
    if tx is tuple or tx is list:
        return ("tuple" if tx is tuple else "list", None, [(SequenceKey(i), c) for i, c in enumerate(x)])
    if tx is dict:
        keys = _sorted_keys(x)
        return ("dict", keys, [(DictKey(k), x[k]) for k in keys])
    if x is None:
        return ("none", None, [])
    node = _REGISTRY.get(tx)
    if node is not None:
        if node.flatten_with_keys is not None:
            kc, aux = node.flatten_with_keys(x)
            kc = list(kc)
        else:
            ch, aux = node.flatten(x)
            kc = [(FlattenedIndexKey(i), c) for i, c in enumerate(ch)]
        return (tx, aux, kc)
    if _is_namedtuple(tx):
        return (tx, None, [(GetAttrKey(n), c) for n, c in zip(tx._fields, x)])
    return None


def _walk_fast(x, is_leaf, out):
    """:func:`_walk` without paths (the hot path of jit and the transforms): the builtin
    containers are traversed without building keys."""
    if is_leaf is not None and is_leaf(x):
        out.append(x)
        return _LEAF
    tx = type(x)
    if tx is tuple or tx is list:
        return ("tuple" if tx is tuple else "list", None, tuple(_walk_fast(c, is_leaf, out) for c in x))
    if tx is dict:
        keys = _sorted_keys(x)
        return ("dict", keys, tuple(_walk_fast(x[k], is_leaf, out) for k in keys))
    if x is None:
        return ("none", None, ())
    if tx in LEAF_TYPES:
        out.append(x)
        return _LEAF
    node = _children(x)
    if node is None:
        out.append(x)
        return _LEAF
    kind, aux, kc = node
    return (kind, aux, tuple(_walk_fast(c, is_leaf, out) for _, c in kc))


def _walk(x, is_leaf, path, out, with_path):
    if not with_path:
        return _walk_fast(x, is_leaf, out)
    if is_leaf is not None and is_leaf(x):
        out.append((path, x) if with_path else x)
        return _LEAF
    node = _children(x)
    if node is None:
        out.append((path, x) if with_path else x)
        return _LEAF
    kind, aux, kc = node
    if with_path:
        ch = tuple(_walk(c, is_leaf, path + (k,), out, True) for k, c in kc)
    else:
        ch = tuple(_walk(c, is_leaf, path, out, False) for _, c in kc)
    return (kind, aux, ch)


def _check_is_leaf(fname, is_leaf):
    if is_leaf is not None and not callable(is_leaf):
        raise _RegistrationError(f"{fname}: is_leaf must be a callable or None, got a {type(is_leaf).__name__}")


def flatten(tree, is_leaf=None):
    """Returns ``(leaves, treedef)``: the leaves in traversal order and the structure.

    Args:
        tree: a pytree.
        is_leaf: optional predicate; subtrees for which it is true are leaves.

    Returns:
        A list of leaves and a :class:`TreeDef`.
    """
    _check_is_leaf("flatten", is_leaf)
    out = []
    t = _walk(tree, is_leaf, (), out, False)
    return out, TreeDef(t, len(out))


def leaves(tree, is_leaf=None):
    """The leaves of ``tree`` in traversal order.

    Example:
        >>> qb.tree.leaves({"b": (1, None), "a": [2, 3]})
        [2, 3, 1]
    """
    return flatten(tree, is_leaf)[0]


def structure(tree, is_leaf=None):
    """The :class:`TreeDef` of ``tree``.

    Example:
        >>> qb.tree.structure((1, [2, 3]))
        TreeDef((*, [*, *]))
    """
    return flatten(tree, is_leaf)[1]


def flatten_with_path(tree, is_leaf=None):
    """Returns ``([(path, leaf), ...], treedef)``; a path is a tuple of keys
    (:class:`SequenceKey`, :class:`DictKey`, :class:`GetAttrKey`, :class:`FlattenedIndexKey`).

    Example:
        >>> pairs, _ = qb.tree.flatten_with_path({"w": [5, 6]})
        >>> [(qb.tree.keystr(p), x) for p, x in pairs]
        [("['w'][0]", 5), ("['w'][1]", 6)]
    """
    _check_is_leaf("flatten_with_path", is_leaf)
    out = []
    t = _walk(tree, is_leaf, (), out, True)
    return out, TreeDef(t, len(out))


def leaves_with_path(tree, is_leaf=None):
    """The ``(path, leaf)`` pairs of :func:`flatten_with_path`.

    Example:
        >>> [qb.tree.keystr(p) for p, _ in qb.tree.leaves_with_path([1, {"a": 2}])]
        ['[0]', "[1]['a']"]
    """
    return flatten_with_path(tree, is_leaf)[0]


def _build(t, it):
    if t == _LEAF:
        return next(it)
    kind, aux, ch = t
    if kind == "tuple":
        return tuple(_build(c, it) for c in ch)
    if kind == "list":
        return [_build(c, it) for c in ch]
    if kind == "dict":
        return {k: _build(c, it) for k, c in zip(aux, ch)}
    if kind == "none":
        return None
    children = [_build(c, it) for c in ch]
    node = _REGISTRY.get(kind)
    if node is not None:
        return node.unflatten(aux, children)
    return kind(*children)  # a namedtuple


def unflatten(treedef, leaves):
    """Rebuilds a pytree of structure ``treedef`` from ``leaves`` (in traversal order).

    Raises:
        PyTreeError: (a ValueError) when the number of leaves differs from the structure's.
    """
    if not isinstance(treedef, TreeDef):
        raise _RegistrationError(f"unflatten: treedef must be a TreeDef, got a {type(treedef).__name__}")
    leaves = list(leaves)
    if len(leaves) != treedef.num_leaves:
        raise PyTreeError(f"unflatten: {treedef!r} needs {treedef.num_leaves} leaves, got {len(leaves)}")
    return _build(treedef._t, iter(leaves))


def _up_to(t, x, out, where):
    """Appends the subtrees of ``x`` at the leaves of structure ``t``."""
    if t == _LEAF:
        out.append(x)
        return
    kind, aux, ch = t
    node = _children(x)
    if node is None or node[0] != kind or node[1] != aux or len(node[2]) != len(ch):
        got = "a leaf" if node is None else _show(_walk(x, None, (), [], False))
        raise PyTreeError(f"{where} has structure {got} where {_show(t)} was expected")
    for c, (k, sub) in zip(ch, node[2]):
        _up_to(c, sub, out, where + str(k))


def map(f, tree, *rest, is_leaf=None):  # noqa: A001 - the public name is quabla.tree.map
    """Applies ``f`` leaf-wise over one or more pytrees: each of ``rest`` must have
    ``tree``'s structure as a prefix (its subtrees at ``tree``'s leaves are passed whole).

    Example:
        >>> qb.tree.map(lambda a, b: a + b, [1, (2, 3)], [10, (20, 30)])
        [11, (22, 33)]
    """
    ls, td = flatten(tree, is_leaf)
    others = [_rest_leaves("tree.map", td, r, i) for i, r in enumerate(rest)]
    return unflatten(td, [f(*xs) for xs in zip(ls, *others)])


def _rest_leaves(fname, td, r, i):
    try:
        return td.flatten_up_to(r)
    except PyTreeError as e:
        raise PyTreeError(f"{fname}: structures differ: {td!r} and {structure(r)!r} (rest[{i}]: {e})") from None


def map_with_path(f, tree, *rest, is_leaf=None):
    """Like :func:`map`, with the leaf's key path as ``f``'s first argument.

    Example:
        >>> qb.tree.map_with_path(lambda p, x: qb.tree.keystr(p) + "=" + str(x), {"a": [1, 2]})
        {'a': ["['a'][0]=1", "['a'][1]=2"]}
    """
    pairs, td = flatten_with_path(tree, is_leaf)
    others = [_rest_leaves("tree.map_with_path", td, r, i) for i, r in enumerate(rest)]
    return unflatten(td, [f(p, x, *xs) for (p, x), *xs in zip(pairs, *others)])


class _Missing:
    def __repr__(self):
        return "<no initializer>"


_MISSING = _Missing()


def reduce(function, tree, initializer=_MISSING, is_leaf=None):
    """Folds ``function(accumulated, leaf)`` over the leaves (``functools.reduce``).

    Example:
        >>> qb.tree.reduce(lambda a, b: a + b, {"x": [1, 2], "y": 3}, 100)
        106
    """
    ls = leaves(tree, is_leaf)
    if initializer is _MISSING:
        if not ls:
            raise PyTreeError("tree.reduce: a tree without leaves needs an initializer")
        return functools.reduce(function, ls)
    return functools.reduce(function, ls, initializer)


def all(tree, is_leaf=None):  # noqa: A001 - the public name is quabla.tree.all
    """True when every leaf is truthy (``builtins.all`` over the leaves).

    Example:
        >>> qb.tree.all([True, (1, None)]), qb.tree.all({"a": 0})
        (True, False)
    """
    return builtins.all(leaves(tree, is_leaf))


def static(**kwargs):
    """A dataclass field declared static (``dataclasses.field(**kwargs)`` with
    ``metadata={"static": True}``), as ``jax.tree.static``: :func:`register_dataclass` makes
    such fields part of the structure instead of children.

    Example:
        >>> import dataclasses
        >>> @qb.tree.register_dataclass
        ... @dataclasses.dataclass
        ... class Op:
        ...     x: object
        ...     kind: str = qb.tree.static(default="add")
        >>> qb.tree.leaves(Op(1.0))
        [1.0]
    """
    meta = dict(kwargs.pop("metadata", None) or {})
    meta["static"] = True
    try:
        return dataclasses.field(metadata=meta, **kwargs)
    except TypeError as e:
        raise _RegistrationError(f"static: {e}") from None


def register_static(cls):
    """Makes ``cls`` a pytree node without children whose instances are their own (hashable)
    auxiliary data, as ``jax.tree_util.register_static``: such values are static, part of the
    structure (and of jit's cache key). Returns ``cls``.

    Example:
        >>> @qb.tree.register_static
        ... class Tag(str):
        ...     pass
        >>> qb.tree.leaves([Tag("a"), 1.0])
        [1.0]
    """
    _check_registration("register_static", cls)
    _REGISTRY[cls] = _Node(cls, lambda x: ((), x), lambda aux, _: aux, None, cls.__name__)
    return cls


def transpose(outer_treedef, inner_treedef, pytree_to_transpose):
    """Turns a pytree of structure ``outer`` whose leaves are pytrees of structure ``inner``
    into one of structure ``inner`` whose leaves are pytrees of structure ``outer``
    (``jax.tree.transpose``); ``inner_treedef=None`` takes the structure of the first inner
    tree.

    Example:
        >>> outer = qb.tree.structure([0, 0])
        >>> inner = qb.tree.structure({"a": 0, "b": 0})
        >>> qb.tree.transpose(outer, inner, [{"a": 1, "b": 2}, {"a": 3, "b": 4}])
        {'a': [1, 3], 'b': [2, 4]}
    """
    for what, td in (("outer_treedef", outer_treedef), ("inner_treedef", inner_treedef)):
        if td is not None and not isinstance(td, TreeDef):
            raise _RegistrationError(f"tree.transpose: {what} must be a TreeDef, got a {type(td).__name__}")
    if outer_treedef is None:
        raise _RegistrationError("tree.transpose: outer_treedef must be a TreeDef, got None")
    subtrees = outer_treedef.flatten_up_to(pytree_to_transpose)
    if inner_treedef is None:
        if not subtrees:
            raise PyTreeError("tree.transpose: inner_treedef=None needs at least one inner tree")
        inner_treedef = structure(subtrees[0])
    inner_leaves = []
    for i, sub in enumerate(subtrees):
        ls, td = flatten(sub)
        if td != inner_treedef:
            raise PyTreeError(f"tree.transpose: inner tree {i} has structure {td!r} where {inner_treedef!r} was expected")
        inner_leaves.append(ls)
    columns = [outer_treedef.unflatten([row[j] for row in inner_leaves]) for j in range(inner_treedef.num_leaves)]
    return inner_treedef.unflatten(columns)


def broadcast(prefix_tree, full_tree, is_leaf=None):
    """``prefix_tree`` with each leaf repeated over the subtree of ``full_tree`` at its place
    (``jax.tree.broadcast``): the result has ``full_tree``'s structure.

    Example:
        >>> qb.tree.broadcast([1, {"a": 2}], [[0, 0], {"a": (0, 0)}])
        [[1, 1], {'a': (2, 2)}]
    """
    ls, td = flatten(prefix_tree, is_leaf)
    subs = _rest_leaves("tree.broadcast", td, full_tree, 0)
    return unflatten(td, [map(lambda _, v=v: v, sub, is_leaf=is_leaf) for v, sub in zip(ls, subs)])


def reduce_associative(operation, tree, *, identity=_MISSING, is_leaf=None):
    """Combines the leaves with the associative ``operation`` as a balanced tree of pairs
    (``jax.tree.reduce_associative``: ``((a . b) . (c . d))`` rather than a left fold);
    ``identity`` is returned for a tree without leaves.

    Example:
        >>> qb.tree.reduce_associative(lambda a, b: a + b, [1, 2, (3, 4), 5])
        15
    """
    if not callable(operation):
        raise _RegistrationError(f"tree.reduce_associative: operation must be callable, got a {type(operation).__name__}")
    ls = leaves(tree, is_leaf)
    if not ls:
        if identity is _MISSING:
            raise PyTreeError("tree.reduce_associative: a tree without leaves needs an identity")
        return identity
    while len(ls) > 1:
        nxt = [operation(ls[i], ls[i + 1]) for i in range(0, len(ls) - 1, 2)]
        if len(ls) % 2:
            nxt.append(ls[-1])
        ls = nxt
    return ls[0]


def flatten_one_level(tree):
    """``(children, aux)`` of a pytree node, one level down (``jax.tree_util.flatten_one_level``):
    a dict's children in key order with its keys as aux, a registered node's flatten output.

    Raises:
        PyTreeError: ``tree`` is a leaf.

    Example:
        >>> qb.tree.flatten_one_level({"a": 1, "b": [2]})
        ((1, [2]), ('a', 'b'))
    """
    kc, aux = flatten_one_level_with_keys(tree)
    return tuple(c for _, c in kc), aux


def flatten_one_level_with_keys(tree):
    """``([(key, child), ...], aux)`` of a pytree node, one level down.

    Example:
        >>> qb.tree.flatten_one_level_with_keys((1, 2))
        (((SequenceKey(idx=0), 1), (SequenceKey(idx=1), 2)), None)
    """
    node = _children(tree)
    if node is None:
        raise PyTreeError(f"flatten_one_level: {type(tree).__name__} is a leaf, not a pytree node")
    _, aux, kc = node
    return tuple(kc), aux


def is_tree_node(typ):
    """True when instances of the class ``typ`` are pytree nodes (tuple, list, dict, None's
    type, namedtuples and registered classes), as ``jax.tree_util.is_tree_node``.

    Example:
        >>> qb.tree.is_tree_node(list), qb.tree.is_tree_node(float)
        (True, False)
    """
    if not isinstance(typ, type):
        raise _RegistrationError(f"is_tree_node: expected a class, got a {type(typ).__name__}")
    return typ in (tuple, list, dict, type(None)) or typ in _REGISTRY or _is_namedtuple(typ)


def treedef_children(treedef):
    """The structures of the root's children (``jax.tree_util.treedef_children``).

    Example:
        >>> qb.tree.treedef_children(qb.tree.structure([1, (2, 3)]))
        [TreeDef(*), TreeDef((*, *))]
    """
    if not isinstance(treedef, TreeDef):
        raise _RegistrationError(f"treedef_children: expected a TreeDef, got a {type(treedef).__name__}")
    t = treedef._t
    if t == _LEAF:
        return []
    return [TreeDef(c, _count_leaves(c)) for c in t[2]]


def treedef_tuple(treedefs):
    """The structure of a tuple whose items have the structures ``treedefs``
    (``jax.tree_util.treedef_tuple``).

    Example:
        >>> qb.tree.treedef_tuple([qb.tree.structure(1), qb.tree.structure([2, 3])])
        TreeDef((*, [*, *]))
    """
    tds = list(treedefs)
    bad = [type(td).__name__ for td in tds if not isinstance(td, TreeDef)]
    if bad:
        raise _RegistrationError(f"treedef_tuple: expected TreeDefs, got {bad}")
    return TreeDef(("tuple", None, tuple(td._t for td in tds)), builtins.sum(td.num_leaves for td in tds))


def _count_leaves(t):
    if t == _LEAF:
        return 1
    return builtins.sum(_count_leaves(c) for c in t[2])
