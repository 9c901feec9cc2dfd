"""Where a BigCodeBench task's library objects go: into the answer's call, or out of it.

Some libraries are tools a task's function uses inside itself (a database connection, an archive,
a parser, a thread) and whose results are data (rows, paths, text, numbers). Such a task needs the
answer's objects in the tests' process only when a library object crosses the call: the tests pass
one in (a cursor, a socket) or the reference returns one. `library_objects_crossing` finds both by
reading the task's sources (never the answer): a name is bound to a library object when the value
it is bound to comes from the library (the base of its attribute, call and subscript chain is an
imported name of the library, another such name, or a function of the source that returns one).
Over-approximate by design: a value derived from a library object (`cursor.fetchall()`) counts as
one, so a doubtful task stays in the shared mode. `io`'s in-memory buffers cross as data
(scorers/bcb_values.py), so `StringIO`/`BytesIO` values do not count.
"""

from __future__ import annotations

import ast

DATA_CONSTRUCTORS = ("StringIO", "BytesIO")  # library objects that cross as data


def name_chain(node: ast.AST) -> list[str]:
    """The names along an expression's attribute/call/subscript chain, from its base (`self.x` counts as `x`)."""
    parts: list[str] = []
    while True:
        if isinstance(node, ast.Call | ast.Subscript | ast.Await | ast.Starred):
            node = node.func if isinstance(node, ast.Call) else node.value
        elif isinstance(node, ast.Attribute):
            if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
                return [node.attr, *parts]
            parts.insert(0, node.attr)
            node = node.value
        elif isinstance(node, ast.Name):
            return [node.id, *parts]
        else:
            return []


def _aliases(tree: ast.AST, libraries: set[str]) -> set[str]:
    """The names a source's imports of `libraries` bind (not their data constructors)."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names if a.name.split(".")[0] in libraries}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in libraries and not node.level:
            names |= {a.asname or a.name for a in node.names if a.name not in DATA_CONSTRUCTORS}
    return names


class _Flow:
    """The names of one source bound to a library's objects (a fixpoint over its bindings)."""

    def __init__(self, tree: ast.AST, roots: set[str]) -> None:
        self.roots = roots
        self.bound: set[str] = set()
        nodes = list(ast.walk(tree))
        while True:
            before = len(self.bound)
            for node in nodes:
                self._bind(node)
            if len(self.bound) == before:
                return

    def carries(self, node: ast.AST | None) -> bool:
        """Whether an expression's value is (or holds) a library object."""
        if node is None:
            return False
        if isinstance(node, ast.Tuple | ast.List | ast.Set):
            return any(self.carries(e) for e in node.elts)
        if isinstance(node, ast.Dict):
            return any(self.carries(e) for e in node.values)
        if isinstance(node, ast.IfExp | ast.BoolOp | ast.NamedExpr):
            values = [node.body, node.orelse] if isinstance(node, ast.IfExp) else getattr(node, "values", [node.value])
            return any(self.carries(v) for v in values)
        chain = name_chain(node)
        if not chain:
            return False
        constructed = len(chain) > 1 and chain[1] in DATA_CONSTRUCTORS
        return chain[0] in self.bound or (chain[0] in self.roots and not constructed)

    def _bind(self, node: ast.AST) -> None:
        if isinstance(node, ast.Assign | ast.AnnAssign | ast.NamedExpr) and self.carries(node.value):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            self._names(targets)
        elif isinstance(node, ast.With | ast.AsyncWith):
            self._names([i.optional_vars for i in node.items if i.optional_vars and self.carries(i.context_expr)])
        elif isinstance(node, ast.For | ast.AsyncFor | ast.comprehension) and self.carries(node.iter):
            self._names([node.target])
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and any(
            isinstance(n, ast.Return) and self.carries(n.value) for n in ast.walk(node)
        ):
            self.bound.add(node.name)

    def _names(self, targets: list[ast.AST]) -> None:
        for target in targets:
            if isinstance(target, ast.Tuple | ast.List):
                self._names(list(target.elts))
            elif isinstance(target, ast.Name | ast.Attribute | ast.Starred):
                chain = name_chain(target)
                self.bound.update(chain[-1:])


def library_objects_crossing(test: str, reference: str, entry_point: str, libraries: set[str]) -> str | None:
    """Why a library object of `libraries` crosses the entry point's call (None: none does, as far as
    the task's sources show); both sources parse."""
    tests, program = ast.parse(test), ast.parse(reference)
    imported = _aliases(program, libraries)
    answer = _Flow(program, imported)  # the official module runs the tests after the program: its names reach them
    flow = _Flow(tests, imported | answer.bound | _aliases(tests, libraries))
    for node in ast.walk(tests):
        if isinstance(node, ast.Call) and name_chain(node.func)[-1:] == [entry_point]:
            if any(flow.carries(a) for a in [*node.args, *(k.value for k in node.keywords)]):
                return "the tests pass the library's objects"
    for node in ast.walk(program):
        if isinstance(node, ast.FunctionDef) and node.name == entry_point:
            if any(isinstance(n, ast.Return) and answer.carries(n.value) for n in ast.walk(node)):
                return "the reference returns the library's objects"
    return None
