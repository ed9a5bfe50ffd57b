"""The modules of the quabla package import each other without circles (at module level or
lazily inside functions), so each can be read, and loaded, after the ones it uses."""

import ast
import os

PKG = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "python", "quabla")


def _graph():
    """{module: {modules of the package it imports}} over python/quabla/*.py, __init__ aside."""
    mods = {f[:-3] for f in os.listdir(PKG) if f.endswith(".py") and f != "__init__.py"}
    graph = {}
    for m in mods:
        deps = set()
        for node in ast.walk(ast.parse(open(os.path.join(PKG, m + ".py")).read())):
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                names = [node.module.split(".")[0]] if node.module else [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("quabla."):
                names = [node.module.split(".")[1]]
            elif isinstance(node, ast.Import):
                names = [a.name.split(".")[1] for a in node.names if a.name.startswith("quabla.")]
            else:
                continue
            deps |= {n for n in names if n in mods and n != m}
        graph[m] = deps
    return graph


def _cycle(graph):
    """One import circle as a list of modules, or None."""
    state, stack = {}, []

    def visit(m):
        state[m] = 1
        stack.append(m)
        for d in sorted(graph[m]):
            if state.get(d) == 1:
                return stack[stack.index(d):] + [d]
            if d not in state:
                c = visit(d)
                if c:
                    return c
        stack.pop()
        state[m] = 2
        return None

    for m in sorted(graph):
        if m not in state:
            c = visit(m)
            if c:
                return c
    return None


def test_the_graph_sees_imports():
    g = _graph()
    assert "_staging" in g["jit"] and "jit" in g["_transforms"] and "_staging" in g["_transforms"]


def test_no_import_circle():
    c = _cycle(_graph())
    assert c is None, "import circle: " + " -> ".join(c)


def test_cycle_finder_finds_a_circle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None
