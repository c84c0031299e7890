"""No import cycle among the modules of htb_jax/, benchmarks/ and experiments/, read from their source.

Each file is parsed (``ast``), nothing imported, so the check costs a fraction of a second.  Every
``import`` counts, at any depth: at the top, inside a function, under ``if TYPE_CHECKING:``.  An
import names one module: ``from a.b import c`` the module ``a.b.c`` if there is one, else ``a.b``
(the parent packages it also runs are not edges: every package imports its own modules).  The
scripts of benchmarks/ and experiments/ import each other by bare name after a ``sys.path`` insert,
so a bare name is the script of that name in either folder (no name is in both).

What it catches: a module that imports another that imports it back, directly or through others;
for example the function-level ``from htb_jax._src.frontier.runs import family_scale`` that
``families.py`` once held while ``runs.py`` imported ``families``, or ``gpu_checks.py`` importing
``Size`` from ``gpu_suite.py`` (which imports ``gpu_checks``) under ``if TYPE_CHECKING:``.  The
message prints the cycle, module by module.
"""

import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent
SCRIPT_FOLDERS = ("benchmarks", "experiments")


def _modules() -> dict[str, pathlib.Path]:
    """Module name -> file: dotted names under htb_jax/, bare names for the scripts."""
    modules = {}
    for path in sorted((ROOT / "htb_jax").rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    for folder in SCRIPT_FOLDERS:
        for path in sorted((ROOT / folder).glob("*.py")):
            assert path.stem not in modules, (
                f"{path.stem} is in both {SCRIPT_FOLDERS}: a bare import is ambiguous"
            )
            modules[path.stem] = path
    return modules


def _statements(nodes):
    """Every statement of ``nodes`` and of the blocks they hold (imports are statements; expressions are skipped)."""
    for node in nodes:
        yield node
        for block in ("body", "orelse", "finalbody", "handlers", "cases"):
            yield from _statements(getattr(node, block, ()))


def _imported(name: str, path: pathlib.Path, modules: dict[str, pathlib.Path]) -> set[str]:
    """The project's modules that ``name`` (the file ``path``) imports anywhere in its source."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in _statements(ast.parse(path.read_text(), str(path)).body):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            targets = [
                f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base for alias in node.names
            ]
        else:
            continue
        for target in targets:
            while target and target not in modules:  # `import a.b.c` where only `a.b` is ours
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph`` as ``[m0, m1, ..., m0]``, or None (depth-first search, iterative)."""
    state = {}  # 1: on the current path, 2: done
    for start in sorted(graph):
        if start in state:
            continue
        path, stack = [start], [iter(sorted(graph[start]))]
        state[start] = 1
        while stack:
            child = next(stack[-1], None)
            if child is None:
                state[path.pop()] = 2
                stack.pop()
            elif state.get(child) == 1:
                return path[path.index(child) :] + [child]
            elif child not in state:
                state[child] = 1
                path.append(child)
                stack.append(iter(sorted(graph[child])))
    return None


def test_no_import_cycle():
    modules = _modules()
    graph = {name: _imported(name, path, modules) for name, path in modules.items()}
    # The graph is read at all: the scripts' bare-name imports and the library's dotted ones resolve.
    assert (
        "gpu_checks" in graph["gpu_suite"]
        and "htb_jax._src.frontier.families" in graph["htb_jax._src.frontier.runs"]
    )
    cycle = _cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle)
