"""Layers point one way: no module imports (even lazily) a module that imports it back, and every module
imports on its own in a fresh interpreter."""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "continuousbench"
# A Space's entry point: importing it starts a web server.
NOT_IMPORTABLE = {"continuousbench.metrics_src.qa_match.app"}


def module_names() -> dict[str, Path]:
    """Dotted name -> file of every module in the package."""
    names = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        names[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return names


# A lazy import by string: "continuousbench.x.y:attr" (a command table's or a registry's entry-point form)
_STRING_IMPORT = re.compile(r"(continuousbench(?:\.\w+)*):\w+")


def string_import(node: ast.AST) -> str | None:
    """The module a node imports by string: a ``"pkg.module:attr"`` literal, or the literal argument of
    ``importlib.import_module(...)`` / ``__import__(...)``."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        found = _STRING_IMPORT.fullmatch(node.value)
        return found.group(1) if found else None
    if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
        called = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        if called in ("import_module", "__import__") and isinstance(node.args[0].value, str):
            return node.args[0].value
    return None


def imports_of(name: str, path: Path, modules: set[str]) -> set[str]:
    """Our modules that ``name`` imports anywhere in its file (module level, functions, TYPE_CHECKING),
    by statement or by string (:func:`string_import`).

    ``from pkg import x`` counts as importing ``pkg.x`` when that is a module, else ``pkg``. A module's
    own parent packages are left out: Python imports them first whatever the module says, and a
    package's ``__init__`` that picks an implementation for its callers is the intended shape.
    """
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if (by_string := string_import(node)) is not None:
            found.add(by_string)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{anchor}.{base}" if base else anchor
            for alias in node.names:
                found.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base)
    parents = {name.rsplit(".", k)[0] for k in range(1, name.count(".") + 1)}
    return {m for m in found if m in modules and m != name and m not in parents}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle as a path (first module repeated at the end), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: finished
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return path[path.index(nxt) :] + [nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


@pytest.mark.slow  # ~2 s: CI only, not the fast lane
def test_the_import_graph_has_no_cycle():
    modules = module_names()
    graph = {name: imports_of(name, path, set(modules)) for name, path in modules.items()}
    assert sum(map(len, graph.values())) > 50  # the walk sees the package's imports at all
    assert find_cycle(graph) is None, " -> ".join(find_cycle(graph))


def test_the_cycle_finder_finds_a_lazy_two_module_cycle(tmp_path):
    (tmp_path / "base.py").write_text("def make():\n    from pkg.impl import Impl\n    return Impl()\n")
    (tmp_path / "impl.py").write_text("from pkg.base import make\n")
    modules = {"pkg.base": tmp_path / "base.py", "pkg.impl": tmp_path / "impl.py"}
    graph = {name: imports_of(name, path, set(modules)) for name, path in modules.items()}
    assert find_cycle(graph) == ["pkg.base", "pkg.impl", "pkg.base"]


@pytest.mark.slow  # ~13 s: CI only, not the fast lane
def test_every_module_imports_first_in_a_fresh_interpreter():
    """Each module is imported with none of ours loaded before it (third-party libraries stay cached)."""
    names = [n for n in module_names() if n not in NOT_IMPORTABLE]
    script = """
import importlib, json, sys, traceback
failed = {}
for name in json.loads(sys.argv[1]):
    for loaded in [m for m in sys.modules if m == "continuousbench" or m.startswith("continuousbench.")]:
        del sys.modules[loaded]
    try:
        importlib.import_module(name)
    except Exception:
        failed[name] = traceback.format_exc(limit=3)
print(json.dumps(failed))
"""
    done = subprocess.run(
        [sys.executable, "-c", script, json.dumps(names)], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-3000:]
    failed = json.loads(done.stdout.strip().splitlines()[-1])
    assert not failed, "\n".join(failed.values())


# The layers of DESIGN.md, lowest first. A package may import its own layer or any layer below, never one
# above; within a layer imports must stay acyclic (checked at package level below). Why this order:
# - files, locks, staged_output and errors know nothing of ours; commands (the error path), parser (the one
#   parser), processes, stats and stages build on files; loader (the one model loader) on processes' device
#   rule, below llm's transformers: backend.
# - llm, scoring (matchers, the judge on llm, the metric on release), results (the record, report, compare,
#   submit: read by the leaderboard and the study, so neither imports the evaluator) and release are the
#   shared services of every stage.
# - training (configs, DP options, model loading, data, the SFT trainer) and embeddings (encoders, FID) are
#   what the generators and the evaluator both use; geminon and news build releases with the layers below.
# - dp (accounting, DP-SGD, Private Evolution, generator commands) trains generators with training/.
# - harness (the evaluator) may train a DP evaluator with dp's loop; diagnostics audit dp's generators.
# - study, demo, leaderboard and the cli compose whole workflows; ``continuousbench`` is the package's
#   ``__init__`` (its lazy ``load_release`` is the public face of release/).
LAYERS: tuple[set[str], ...] = (
    {"errors", "files", "locks", "staged_output", "credentials", "hub", "strict_yaml"},
    {"commands", "parser", "processes", "stats", "stages", "loader"},
    {"llm", "scoring", "results", "release", "metrics_src", "fake_endpoint", "testing"},
    {"training", "embeddings", "geminon", "news"},
    {"dp"},
    {"harness", "diagnostics", "classification"},
    {"study", "demo", "leaderboard", "cli", "continuousbench"},
)


def package_of(module: str) -> str:
    """``continuousbench.dp.loop`` -> ``dp``; a top-level module is its own package."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def package_graph() -> dict[str, dict[str, list[str]]]:
    """package -> {imported package: [the module-level edges that make it]} across packages."""
    modules = module_names()
    graph: dict[str, dict[str, list[str]]] = {package_of(name): {} for name in modules}
    for name, path in modules.items():
        for target in imports_of(name, path, set(modules)):
            if package_of(target) != package_of(name):
                graph[package_of(name)].setdefault(package_of(target), []).append(f"{name} -> {target}")
    return graph


@pytest.mark.slow  # ~2 s: CI only, not the fast lane
def test_every_package_has_a_layer():
    placed = set().union(*LAYERS)
    assert not set(package_graph()) - placed, f"add {sorted(set(package_graph()) - placed)} to LAYERS"
    gone = placed - set(package_graph()) - {"fake_endpoint", "testing"}  # test helpers: tests/, not here
    assert not gone, f"LAYERS names packages that do not exist: {sorted(gone)}"


def test_packages_import_only_their_own_layer_or_below():
    """Training and embeddings sit below dp/ and harness/, so neither imports the other's internals."""
    layer = {package: i for i, members in enumerate(LAYERS) for package in members}
    upward = [
        edge
        for package, targets in package_graph().items()
        for target, edges in targets.items()
        if layer[target] > layer[package]
        for edge in edges
    ]
    assert not upward, "imports from a lower layer to a higher one:\n" + "\n".join(upward)


def test_the_package_graph_has_no_cycle():
    graph = package_graph()
    assert {"dp", "training"} <= set(graph["harness"])  # the walk sees packages at all
    cycle = find_cycle({package: set(targets) for package, targets in graph.items()})
    assert cycle is None, " -> ".join(cycle or [])


def test_the_layer_check_sees_a_lazy_upward_import(tmp_path, monkeypatch):
    """A function-level import from dp into harness (the cycle this table was written against) is found."""
    package = tmp_path / "continuousbench"
    lazy = "def f():\n    from continuousbench.harness.config import X\n"
    for folder, text in {"dp": lazy, "harness": ""}.items():
        (package / folder).mkdir(parents=True)
        (package / folder / "__init__.py").write_text("")
        (package / folder / "loop.py").write_text(text)
    (package / "harness" / "config.py").write_text("X = 1\n")
    monkeypatch.setattr(sys.modules[__name__], "PACKAGE", package)
    assert package_graph()["dp"] == {"harness": ["continuousbench.dp.loop -> continuousbench.harness.config"]}


def test_the_layer_check_sees_an_upward_import_by_string(tmp_path, monkeypatch):
    """A registry in llm naming a news function by string (how offline:news was once found) is found."""
    package = tmp_path / "continuousbench"
    lazy = 'def f():\n    importlib.import_module("continuousbench.news.offline")\n'
    texts = {"llm": 'SHIPPED = {"news": "continuousbench.news.offline:answer"}\n', "news": "", "cli": lazy}
    for folder, text in texts.items():
        (package / folder).mkdir(parents=True)
        (package / folder / "__init__.py").write_text(text)
    (package / "news" / "offline.py").write_text("def answer(prompt):\n    return ''\n")
    monkeypatch.setattr(sys.modules[__name__], "PACKAGE", package)
    graph = package_graph()
    assert graph["llm"] == {"news": ["continuousbench.llm -> continuousbench.news.offline"]}
    assert graph["cli"] == {"news": ["continuousbench.cli -> continuousbench.news.offline"]}
