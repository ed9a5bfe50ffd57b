"""qb.tree_util against jax.tree_util: the same leaves, paths, key strings, transposes and
node registrations; Partial through jit, grad and vmap; the doctests of the module."""

import builtins
import collections
import dataclasses
import doctest

import numpy as np
import pytest

import quabla as qb
import quabla.tree_util as tu

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jax.config.update("jax_platforms", "cpu")
jtu = jax.tree_util

Pt = collections.namedtuple("Pt", "x y")
TREES = [
    {"b": [1, 2, (3, None)], "a": Pt(4, {"z": 5, "y": 6})},
    [1, [2, [3, []]], ()],
    7,
    None,
    (None, {"k": [8]}),
]


@pytest.mark.parametrize("t", TREES)
def test_flatten_paths_against_jax(t):
    assert tu.tree_leaves(t) == jtu.tree_leaves(t)
    assert tu.tree_structure(t).num_leaves == jtu.tree_structure(t).num_leaves
    assert tu.tree_structure(t).num_nodes == jtu.tree_structure(t).num_nodes
    ls, td = tu.tree_flatten(t)
    assert tu.tree_unflatten(td, ls) == t
    got = [(tu.keystr(p), v) for p, v in tu.tree_leaves_with_path(t)]
    assert got == [(jtu.keystr(p), v) for p, v in jtu.tree_leaves_with_path(t)]
    got = [tu.keystr(p, simple=True, separator="/") for p, _ in tu.tree_flatten_with_path(t)[0]]
    assert got == [jtu.keystr(p, simple=True, separator="/") for p, _ in jtu.tree_flatten_with_path(t)[0]]
    assert tu.tree_map(lambda v: v * 3, t) == jtu.tree_map(lambda v: v * 3, t)
    f = lambda p, v: tu.keystr(p) + str(v)  # noqa: E731
    g = lambda p, v: jtu.keystr(p) + str(v)  # noqa: E731
    assert tu.tree_map_with_path(f, t) == jtu.tree_map_with_path(g, t)
    assert tu.tree_reduce(lambda a, b: a + b, t, 0) == jtu.tree_reduce(lambda a, b: a + b, t, 0)
    assert tu.tree_all(t) == jtu.tree_all(t)
    assert tu.treedef_is_leaf(td) == jtu.treedef_is_leaf(jtu.tree_structure(t))
    assert tu.all_leaves(ls) == jtu.all_leaves(ls)
    assert tu.all_leaves([t]) == jtu.all_leaves([t])


def test_map_multiple_and_is_leaf():
    a, b = {"x": [1, 2], "y": 3}, {"x": [10, 20], "y": 30}
    assert tu.tree_map(lambda u, v: u + v, a, b) == jtu.tree_map(lambda u, v: u + v, a, b)
    isl = lambda v: isinstance(v, list)  # noqa: E731
    assert tu.tree_leaves(a, is_leaf=isl) == jtu.tree_leaves(a, is_leaf=isl)
    assert tu.all_leaves([[1], 2], is_leaf=isl) == jtu.all_leaves([[1], 2], is_leaf=isl)


@pytest.mark.parametrize("outer,inner", [([0, 0, 0], {"a": 0, "b": (0, 0)}), ((0, {"q": 0}), [0, 0])])
def test_tree_transpose_against_jax(outer, inner):
    count = iter(range(100))
    pytree = jtu.tree_map(lambda _: jtu.tree_map(lambda _: next(count), inner), outer)
    want = jtu.tree_transpose(jtu.tree_structure(outer), jtu.tree_structure(inner), pytree)
    assert tu.tree_transpose(tu.tree_structure(outer), tu.tree_structure(inner), pytree) == want
    assert tu.tree_transpose(tu.tree_structure(outer), None, pytree) == want
    with pytest.raises(qb.tree.PyTreeError):
        tu.tree_transpose(tu.tree_structure(outer), tu.tree_structure([0]), pytree)


def test_register_pytree_node_class_and_keys():
    @tu.register_pytree_node_class
    class Pair:
        def __init__(self, a, b):
            self.a, self.b = a, b

        def tree_flatten(self):
            return (self.a, self.b), "tag"

        @classmethod
        def tree_unflatten(cls, aux, children):
            assert aux == "tag"
            return cls(*children)

    p = tu.tree_map(lambda v: v + 1, Pair(1, [2]))
    assert (p.a, p.b) == (2, [3])
    assert [tu.keystr(k) for k, _ in tu.tree_leaves_with_path(Pair(1, 2))] == ["[<flat index 0>]", "[<flat index 1>]"]
    out = qb.jit(lambda q: q.a * q.b)(Pair(qb.array(2.0), qb.array(3.0)))
    assert out.item() == 6.0
    with pytest.raises(qb.ArgumentTypeError):
        tu.register_pytree_node_class(int.__class__("NoMethods", (), {}))

    @tu.register_dataclass
    @dataclasses.dataclass
    class DC:
        w: object
        n: int = dataclasses.field(default=1, metadata=dict(static=True))

    assert [tu.keystr(k) for k, _ in tu.tree_leaves_with_path(DC(1.0))] == [".w"]
    assert tu.SequenceKey is qb.tree.SequenceKey and tu.PyTreeDef is qb.tree.TreeDef


def test_partial_is_a_pytree():
    f = tu.Partial(qb.multiply, qb.array([2.0, 3.0]))
    jf = jtu.Partial(np.multiply, np.array([2.0, 3.0]))
    assert len(tu.tree_leaves(f)) == len(jtu.tree_leaves(jf)) == 1
    x = qb.array([1.0, 4.0])
    assert qb.jit(lambda g, v: g(v))(f, x).tolist() == [2.0, 12.0]
    g = qb.grad(lambda p: qb.sum(p(x)))(f)
    assert isinstance(g, tu.Partial) and g.args[0].tolist() == [1.0, 4.0]
    kw = tu.Partial(lambda a, *, s: a * s, s=qb.array(3.0))
    assert qb.jit(lambda h: h(qb.array(2.0)))(kw).item() == 6.0
    batched = qb.vmap(lambda p: p(qb.array(1.0)))(tu.Partial(qb.add, qb.array([1.0, 2.0])))
    assert batched.tolist() == [2.0, 3.0]


def test_errors():
    with pytest.raises(qb.ArgumentTypeError, match="treedef_is_leaf"):
        tu.treedef_is_leaf([1])
    with pytest.raises(qb.tree.PyTreeError, match="keystr"):
        tu.keystr("abc")
    with pytest.raises(qb.QuablaError, match="transpose: outer_treedef"):
        tu.tree_transpose(None, None, [1])


def test_doctests():
    qb.tree_util = tu
    r = doctest.testmod(tu, extraglobs={"qb": qb, "round": builtins.round}, optionflags=doctest.ELLIPSIS)
    assert r.failed == 0 and r.attempted > 10


def test_more_of_jax_tree_util():
    import dataclasses

    import jax

    T, J = qb.tree_util, jax.tree_util
    tree = [1, {"a": 2, "b": (3, 4)}, None]
    assert T.flatten_one_level(tree[1]) == J.flatten_one_level(tree[1])
    assert [(str(k), c) for k, c in T.flatten_one_level_with_keys((5, 6))[0]] == [(str(k), c) for k, c in J.flatten_one_level_with_keys((5, 6))[0]]
    with pytest.raises(qb.tree.PyTreeError):
        T.flatten_one_level(1.0)
    for typ in (list, tuple, dict, type(None), float, int):
        assert T.is_tree_node(typ) == J.is_tree_node(typ)
    assert [c.num_leaves for c in T.treedef_children(T.tree_structure(tree))] == [c.num_leaves for c in J.treedef_children(J.tree_structure(tree))]
    td = T.treedef_tuple([T.tree_structure(1), T.tree_structure([2, 3])])
    assert td == T.tree_structure((0, [0, 0])) and td.num_leaves == 3
    assert T.tree_broadcast([1, {"a": 2}], [[0, 0], {"a": (0, 0)}]) == J.tree_broadcast([1, {"a": 2}], [[0, 0], {"a": (0, 0)}])
    seen = []

    def op(a, b):
        seen.append((a, b))
        return a + b

    assert T.tree_reduce_associative(op, [1, 2, (3, 4), 5]) == 15 and seen[:2] == [(1, 2), (3, 4)]
    assert qb.tree.reduce_associative(op, [], identity=0) == 0
    outer, inner = T.tree_structure([0, 0]), T.tree_structure({"a": 0, "b": 0})
    assert qb.tree.transpose(outer, inner, [{"a": 1, "b": 2}, {"a": 3, "b": 4}]) == {"a": [1, 3], "b": [2, 4]}

    @T.register_static
    class Tag(str):
        pass

    assert T.tree_leaves([Tag("x"), 1.0]) == [1.0]
    assert T.tree_structure(Tag("x")) != T.tree_structure(Tag("y"))

    @qb.tree.register_dataclass
    @dataclasses.dataclass
    class Op:
        x: object
        kind: str = qb.tree.static(default="add")

    assert qb.tree.leaves(Op(qb.ones(2))) and qb.jit(lambda o: o.x * 2 if o.kind == "add" else o.x)(Op(qb.ones(2))).tolist() == [2.0, 2.0]

    @T.register_pytree_with_keys_class
    class P:
        def __init__(self, a, b):
            self.a, self.b = a, b

        def tree_flatten_with_keys(self):
            return [(T.GetAttrKey("a"), self.a), (T.GetAttrKey("b"), self.b)], None

        @classmethod
        def tree_unflatten(cls, aux, children):
            return cls(*children)

    assert [T.keystr(p) for p, _ in T.tree_flatten_with_path(P(1, 2))[0]] == [".a", ".b"]
    assert qb.jit(lambda p: p.a + p.b)(P(qb.ones(1), qb.ones(1))).tolist() == [2.0]
