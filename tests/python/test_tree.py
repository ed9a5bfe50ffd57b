"""quabla.tree against jax.tree_util on the same structures (leaf order, structure equality,
map, paths), registration of custom nodes and dataclasses, and pytrees through grad, jit,
vmap and the optimizers; misuse of every entry point."""

import collections
import dataclasses

import numpy as np
import pytest

import quabla as qb
from misuse import raises

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jax.config.update("jax_platforms", "cpu")
from jax import tree_util as jtu  # noqa: E402

Point = collections.namedtuple("Point", "x y")
Other = collections.namedtuple("Other", "x y")


@dataclasses.dataclass
class Layer:
    w: object
    b: object
    act: str = dataclasses.field(default="tanh", metadata=dict(static=True))


qb.tree.register_dataclass(Layer)
jtu.register_dataclass(Layer)


@dataclasses.dataclass
class Explicit:
    a: object
    n: int


qb.tree.register_dataclass(Explicit, data_fields=["a"], meta_fields=["n"])
jtu.register_dataclass(Explicit, data_fields=["a"], meta_fields=["n"])


class Pair:
    def __init__(self, first, second, tag=None):
        self.first, self.second, self.tag = first, second, tag

    def __eq__(self, other):
        return type(other) is Pair and (self.first, self.second, self.tag) == (other.first, other.second, other.tag)


def _pair_flat(p):
    return (p.first, p.second), p.tag


def _pair_unflat(tag, ch):
    return Pair(ch[0], ch[1], tag)


qb.tree.register_pytree_node(Pair, _pair_flat, _pair_unflat)
jtu.register_pytree_node(Pair, _pair_flat, _pair_unflat)


class Keyed:
    def __init__(self, u, v):
        self.u, self.v = u, v


def _keyed_flat(k):
    return [(qb.tree.GetAttrKey("u"), k.u), (qb.tree.GetAttrKey("v"), k.v)], None


def _jkeyed_flat(k):
    return [(jtu.GetAttrKey("u"), k.u), (jtu.GetAttrKey("v"), k.v)], None


qb.tree.register_pytree_with_keys(Keyed, _keyed_flat, lambda _, c: Keyed(*c))
jtu.register_pytree_with_keys(Keyed, _jkeyed_flat, lambda _, c: Keyed(*c))

STRUCTURES = {
    "scalar": 1,
    "none": None,
    "nested": {"b": [1, (2, None)], "a": 3, "c": {}},
    "namedtuple": Point(1, [2, Point(3, 4)]),
    "dataclass": Layer(w=[1, 2], b=3, act="relu"),
    "explicit_dataclass": Explicit(a=(1, 2), n=7),
    "custom": [Pair(1, {"z": 2, "y": 3}, tag="t"), 4],
    "with_keys": {"k": Keyed(1, (2, 3))},
    "empty": ((), [], {}),
    "int_dict_keys": {2: "b", 1: "a"},
}


def _jkey(k):
    """A JAX key as (class name, value) for comparison with Quabla's."""
    for attr in ("idx", "key", "name"):
        if hasattr(k, attr):
            return type(k).__name__, getattr(k, attr)
    raise AssertionError(k)


def _qkey(k):
    for attr in ("idx", "key", "name"):
        if hasattr(k, attr):
            return type(k).__name__, getattr(k, attr)
    raise AssertionError(k)


@pytest.mark.parametrize("name", list(STRUCTURES))
def test_leaves_paths_and_keystr_match_jax(name):
    t = STRUCTURES[name]
    assert qb.tree.leaves(t) == jtu.tree_leaves(t)
    qp, qtd = qb.tree.flatten_with_path(t)
    jp, jtd = jtu.tree_flatten_with_path(t)
    assert [x for _, x in qp] == [x for _, x in jp]
    assert [tuple(_qkey(k) for k in p) for p, _ in qp] == [tuple(_jkey(k) for k in p) for p, _ in jp]
    assert [qb.tree.keystr(p) for p, _ in qp] == [jtu.keystr(p) for p, _ in jp]
    assert qtd.num_leaves == jtd.num_leaves
    assert qtd.num_nodes == jtd.num_nodes
    # unflatten round trip
    leaves = [("leaf", i) for i in range(qtd.num_leaves)]
    back = qb.tree.unflatten(qtd, leaves)
    assert qb.tree.leaves(back, is_leaf=lambda x: isinstance(x, tuple) and x[:1] == ("leaf",)) == leaves
    jback = jtu.tree_unflatten(jtd, leaves)
    assert jtu.tree_structure(back, is_leaf=lambda x: isinstance(x, tuple) and x[:1] == ("leaf",)) == jtu.tree_structure(
        jback, is_leaf=lambda x: isinstance(x, tuple) and x[:1] == ("leaf",)
    )


def test_structure_equality_matches_jax():
    cases = [
        (Point(1, 2), (1, 2)),
        (Point(1, 2), Other(1, 2)),
        (Point(1, 2), Point(3, 4)),
        ([1, 2], (1, 2)),
        ({"a": 1}, {"b": 1}),
        ({"a": 1, "b": 2}, {"b": 5, "a": 6}),
        (Layer(1, 2, "relu"), Layer(1, 2, "tanh")),
        (Layer(1, 2, "relu"), Layer(5, 6, "relu")),
        (Explicit(1, 7), Explicit(1, 8)),
        (Pair(1, 2, "a"), Pair(1, 2, "b")),
        (Pair(1, 2, "a"), Pair(3, 4, "a")),
        (None, ()),
        ([None], [1]),
    ]
    for a, b in cases:
        want = jtu.tree_structure(a) == jtu.tree_structure(b)
        got = qb.tree.structure(a) == qb.tree.structure(b)
        assert got == want, (a, b)
        if got:
            assert hash(qb.tree.structure(a)) == hash(qb.tree.structure(b))


def test_map_and_map_with_path_match_jax():
    t = {"p": Point(1, 2), "l": Layer([3, 4], 5), "c": Pair(6, 7, "x"), "n": None}
    assert qb.tree.leaves(qb.tree.map(lambda x: x * 10, t)) == jtu.tree_leaves(jtu.tree_map(lambda x: x * 10, t))
    got = qb.tree.map(lambda x: x * 10, t)
    assert isinstance(got["p"], Point) and isinstance(got["l"], Layer) and got["l"].act == "tanh"
    assert got["c"] == Pair(60, 70, "x") and got["n"] is None
    # several trees, and a rest tree with deeper subtrees at the leaves (a prefix)
    assert qb.tree.map(lambda a, b: a + b, [1, Point(2, 3)], [10, Point(20, 30)]) == [11, Point(22, 33)]
    assert qb.tree.map(lambda a, b: (a, b), [1, 2], [(5, 6), {"k": 7}]) == jtu.tree_map(
        lambda a, b: (a, b), [1, 2], [(5, 6), {"k": 7}]
    )
    # is_leaf
    isl = lambda x: isinstance(x, Point)  # noqa: E731
    assert qb.tree.map(lambda x: type(x).__name__, t, is_leaf=isl) == jtu.tree_map(lambda x: type(x).__name__, t, is_leaf=isl)
    assert qb.tree.leaves([None, 1], is_leaf=lambda x: x is None) == jtu.tree_leaves([None, 1], is_leaf=lambda x: x is None)
    # map_with_path
    q = qb.tree.map_with_path(lambda p, x: qb.tree.keystr(p) + str(x), t)
    j = jtu.tree_map_with_path(lambda p, x: jtu.keystr(p) + str(x), t)
    assert qb.tree.leaves(q) == jtu.tree_leaves(j)
    q2 = qb.tree.map_with_path(lambda p, x, y: (qb.tree.keystr(p), x + y), [1, {"a": 2}], [3, {"a": 4}])
    assert q2 == [("[0]", 4), {"a": ("[1]['a']", 6)}]


def test_reduce_all_and_treedef_methods():
    t = {"a": [1, 2], "b": Point(3, 4)}
    assert qb.tree.reduce(lambda a, b: a + b, t) == jtu.tree_reduce(lambda a, b: a + b, t) == 10
    assert qb.tree.reduce(lambda a, b: a * b, t, 2) == jtu.tree_reduce(lambda a, b: a * b, t, 2) == 48
    assert qb.tree.all([True, Point(1, None)]) is jtu.tree_all([True, Point(1, None)]) is True
    assert qb.tree.all({"a": 1, "b": 0}) is jtu.tree_all({"a": 1, "b": 0}) is False
    assert qb.tree.all(None) is jtu.tree_all(None) is True
    td = qb.tree.structure(t)
    assert td.unflatten([5, 6, 7, 8]) == {"a": [5, 6], "b": Point(7, 8)}
    assert td.flatten_up_to({"a": [(1, 2), 3], "b": Point([4], 5)}) == [(1, 2), 3, [4], 5]
    assert qb.tree.structure(1).is_leaf() and not td.is_leaf()
    assert qb.tree.structure((1, 2)).is_flat_tuple() and not qb.tree.structure((1, (2,))).is_flat_tuple()
    assert repr(qb.tree.structure(Point(1, None))) == "TreeDef(Point(x=*, y=None))"


def test_register_dataclass_as_decorator_and_partial():
    @qb.tree.register_dataclass
    @dataclasses.dataclass
    class A:
        u: object
        tag: str = dataclasses.field(default="x", metadata=dict(static=True))

    @qb.tree.register_dataclass(data_fields=["u"], meta_fields=["k"])
    @dataclasses.dataclass
    class B:
        u: object
        k: int

    assert qb.tree.leaves(A(1)) == [1] and qb.tree.leaves(B(2, 3)) == [2]
    assert qb.tree.map(lambda v: v + 1, B(2, 3)) == B(3, 3)
    assert [qb.tree.keystr(p) for p, _ in qb.tree.flatten_with_path(A([1, 2]))[0]] == [".u[0]", ".u[1]"]


# ---------------------------------------------------------------------------------------------
# Pytrees through the transforms, jit and the optimizers

Params = collections.namedtuple("Params", "w b")


def _loss(p, x):
    return qb.sum(qb.tanh(x @ p.w + p.b) ** 2)


def _jloss(p, x):
    import jax.numpy as jnp

    return jnp.sum(jnp.tanh(x @ p.w + p.b) ** 2)


def _data():
    rng = np.random.default_rng(0)
    return rng.normal(size=(3, 2)), rng.normal(size=(2,)), rng.normal(size=(4, 3))


def test_grad_jit_vmap_over_namedtuple_params():
    w, b, x = _data()
    p = Params(qb.array(w), qb.array(b))
    g = qb.grad(_loss)(p, qb.array(x))
    jg = jax.grad(_jloss)(Params(w, b), x)
    assert isinstance(g, Params)
    np.testing.assert_allclose(g.w.numpy(), np.asarray(jg.w), rtol=1e-12)
    np.testing.assert_allclose(g.b.numpy(), np.asarray(jg.b), rtol=1e-12)
    v, g2 = qb.jit(qb.value_and_grad(_loss))(p, qb.array(x))
    np.testing.assert_allclose(v.item(), float(_jloss(Params(w, b), x)), rtol=1e-12)
    np.testing.assert_allclose(g2.w.numpy(), np.asarray(jg.w), rtol=1e-12)
    # vmap over a batch of params, in_axes as a namedtuple prefix
    ws = np.stack([w, 2 * w])
    out = qb.vmap(_loss, in_axes=(Params(0, None), None))(Params(qb.array(ws), p.b), qb.array(x))
    want = jax.vmap(_jloss, in_axes=(Params(0, None), None))(Params(ws, b), x)
    np.testing.assert_allclose(out.numpy(), np.asarray(want), rtol=1e-12)
    # jacobian / hessian over namedtuple params
    h = qb.hessian(_loss)(p, qb.array(x))
    jh = jax.hessian(_jloss)(Params(w, b), x)
    assert isinstance(h, Params) and isinstance(h.w, Params)
    np.testing.assert_allclose(h.w.b.numpy(), np.asarray(jh.w.b), rtol=1e-10, atol=1e-12)


def test_grad_and_jit_over_dataclass_params_with_meta_fields():
    w, b, x = _data()
    calls = []

    def f(layer, x):
        calls.append(layer.act)
        return qb.sum(getattr(qb, layer.act)(x @ layer.w + layer.b))

    jf = qb.jit(f)
    lay = Layer(qb.array(w), qb.array(b), "tanh")
    a = jf(lay, qb.array(x))
    jf(Layer(qb.array(w * 2), qb.array(b), "tanh"), qb.array(x))
    assert calls == ["tanh"]  # same structure and meta: one trace
    s = jf(Layer(qb.array(w), qb.array(b), "sin"), qb.array(x))
    assert calls == ["tanh", "sin"]  # a meta field is part of the key
    np.testing.assert_allclose(a.item(), np.sum(np.tanh(x @ w + b)), rtol=1e-12)
    np.testing.assert_allclose(s.item(), np.sum(np.sin(x @ w + b)), rtol=1e-12)
    # namedtuple types are part of the key too
    g = qb.jit(lambda p: p.x * 2)
    g(Point(qb.ones(2), None))
    g(Other(qb.ones(2), None))
    assert g._cache_size == 2
    gr = qb.grad(f)(lay, qb.array(x))
    assert isinstance(gr, Layer) and gr.act == "tanh"
    jgr = jax.grad(lambda l, x: jax.numpy.sum(jax.numpy.tanh(x @ l.w + l.b)))(Layer(w, b, "tanh"), x)
    np.testing.assert_allclose(gr.w.numpy(), np.asarray(jgr.w), rtol=1e-12)


def test_custom_node_through_jit_and_grad():
    f = lambda p: qb.sum(p.first * p.second)  # noqa: E731
    p = Pair(qb.array([1.0, 2.0]), qb.array([3.0, 4.0]), tag="t")
    assert qb.jit(f)(p).item() == 11.0
    g = qb.grad(f)(p)
    assert isinstance(g, Pair) and g.tag == "t" and g.first.tolist() == [3.0, 4.0]


def test_optimizers_over_namedtuple_and_dataclass_params():
    w, b, x = _data()
    for params in (Params(qb.array(w), qb.array(b)), Layer(qb.array(w), qb.array(b))):
        for opt in (qb.optim.Adam(learning_rate=0.05), qb.optim.SGD(learning_rate=0.05, momentum=0.9)):
            state = opt.init(params)
            step = qb.jit(qb.value_and_grad(lambda p, x: qb.sum(qb.tanh(x @ p.w + p.b) ** 2)))
            first = None
            p = params
            for _ in range(20):
                v, g = step(p, qb.array(x))
                first = v.item() if first is None else first
                p, state = opt.update(p, g, state)
            assert type(p) is type(params)
            assert v.item() < first
    with raises(ValueError, "different structures"):
        qb.optim.SGD().update(Params(qb.ones(1), qb.ones(1)), Point(qb.ones(1), qb.ones(1)), {"step": 0, "velocity": None})


# ---------------------------------------------------------------------------------------------
# Misuse


def test_tree_misuse():
    with raises(qb.tree.PyTreeError, "needs 2 leaves, got 3") as e:
        qb.tree.unflatten(qb.tree.structure([1, 2]), [1, 2, 3])
    assert isinstance(e.value, ValueError) and isinstance(e.value, qb.QuablaError)
    with raises(TypeError, "treedef must be a TreeDef"):
        qb.tree.unflatten([1, 2], [1, 2])
    with raises(qb.tree.PyTreeError, "tree.map: structures differ"):
        qb.tree.map(lambda a, b: a, [1, 2], [1, 2, 3])
    with raises(qb.tree.PyTreeError, "tree.map: structures differ"):
        qb.tree.map(lambda a, b: a, Point(1, 2), Other(1, 2))
    with raises(qb.tree.PyTreeError, "needs an initializer"):
        qb.tree.reduce(lambda a, b: a, [None])
    with raises(TypeError, "is_leaf must be a callable"):
        qb.tree.leaves([1], is_leaf=3)
    with raises(qb.tree.PyTreeError, "keys must be a tuple"):
        qb.tree.keystr("a")
    with raises(qb.tree.PyTreeError, "already registered"):
        qb.tree.register_pytree_node(Pair, _pair_flat, _pair_unflat)
    with raises(qb.tree.PyTreeError, "already registered"):
        qb.tree.register_pytree_node(dict, _pair_flat, _pair_unflat)
    with raises(TypeError, "nodetype must be a class"):
        qb.tree.register_pytree_node("Pair", _pair_flat, _pair_unflat)
    with raises(TypeError, "flatten_func must be callable"):
        qb.tree.register_pytree_node(type("T1", (), {}), None, _pair_unflat)
    with raises(TypeError, "flatten_with_keys and unflatten_func must be callable"):
        qb.tree.register_pytree_with_keys(type("T2", (), {}), 1, 2)

    @dataclasses.dataclass
    class D:
        a: object
        b: object

    with raises(TypeError, "must both be given"):
        qb.tree.register_dataclass(D, data_fields=["a"])
    with raises(TypeError, "must list exactly its init fields"):
        qb.tree.register_dataclass(D, data_fields=["a"], meta_fields=[])
    with raises(TypeError, "in both data_fields and meta_fields"):
        qb.tree.register_dataclass(D, data_fields=["a", "b"], meta_fields=["b"])
    with raises(TypeError, "must be a sequence of field names"):
        qb.tree.register_dataclass(D, data_fields="ab", meta_fields=[])
    with raises(TypeError, "not a dataclass"):
        qb.tree.register_dataclass(type("T3", (), {}))
    with raises(TypeError, "nodetype must be a class"):
        qb.tree.register_dataclass(3)


def test_unhashable_meta_field_in_jit():
    # As JAX's: unhashable static data hashes by its node type and compares with ==.
    @dataclasses.dataclass
    class M:
        a: object
        meta: object = dataclasses.field(default=None, metadata=dict(static=True))

    qb.tree.register_dataclass(M)
    calls = []

    def f(m):
        calls.append(1)
        return m.a * len(m.meta)

    g = qb.jit(f)
    assert g(M(qb.ones(2), meta=[1, 2])).tolist() == [2.0, 2.0]
    assert g(M(qb.ones(2), meta=[1, 2])).tolist() == [2.0, 2.0] and len(calls) == 1
    assert g(M(qb.ones(2), meta=[1, 2, 3])).tolist() == [3.0, 3.0] and len(calls) == 2
    assert hash(qb.tree.structure(M(1.0, meta={"k": 1}))) == hash(qb.tree.structure(M(2.0, meta={"k": 1})))
