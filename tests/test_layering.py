"""The import structure of xamt/ and sandbox/: read with ``ast`` (every import statement, at
module level, in functions and under ``if TYPE_CHECKING`` alike), nothing is imported.

(a) ``sandbox`` imports nothing of ``xamt``; (b) no import circle among modules; (c) imports
point down the pipeline (:data:`LAYERS`), except in the orchestrators (:data:`ORCHESTRATORS`).

A module is a ``.py`` file (a package is its ``__init__.py``). ``import a.b`` imports the
module ``a.b``; ``from a import b`` imports ``a.b`` when that is a module, else ``a``.
"""
from __future__ import annotations

import ast
import fnmatch
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("sandbox", "xamt")

#: layers, bottom first. A module may import modules of its own entry and of entries in lower
#: layers; entries in one layer are independent of each other. An entry covers a module and,
#: for a package, its submodules (the root ``xamt`` covers only its own ``__init__``).
LAYERS: list[list[str]] = [
    ["sandbox"],            # the crash-safe executor: a package of its own, knows nothing of xamt
    ["xamt",                # the package itself (its __init__ imports nothing)
     "xamt.errors",         # the exception hierarchy
     "xamt.log",            # named loggers
     "xamt.standalone",     # source extraction for self-contained reproducers (imports nothing)
     "xamt.progress",       # the one progress display (build, campaigns)
     "xamt.replay_server"], # the import-only replay interpreter (standard library only)
    ["xamt.command",        # the shape of a subcommand and its option parsing (so a stage need not import xamt.cli)
     "xamt.datafiles",      # the reviewable data files under xamt/data/
     "xamt.store"],         # the SQLite store every stage writes to
    ["xamt.libraries"],     # one adapter per library, and their registry
    ["xamt.catalog"],       # mining each library's public API into the store
    ["xamt.matching",       # candidate groups of equivalent APIs from the catalog
     "xamt.inputs",         # input models, seeds, structures and mutation
     "xamt.compare",        # the comparator (tolerances, dtypes, backends)
     "xamt.oracle"],        # judging outcomes (error kinds, signals), for fuzz and triage
    ["xamt.exec"],          # the one way a member is called, and the group executor
    ["xamt.groups"],        # execution-validated groups (the registry) and their executor
    ["xamt.repro"],         # reproducer scripts and their replay (uses a group's normalisation)
    ["xamt.literal"],       # literal reproducers (the input written out; built on repro's call text)
    ["xamt.replay"],        # replays forked from an import-only interpreter (judged by repro)
    ["xamt.fuzz"],          # the fuzzing loop's parts: search, devices
    ["xamt.findings"],      # the findings model, its store and evidence encoding (see below)
    ["xamt.triage"],        # from a divergence to a verified finding
    ["xamt.report"],        # HTML report and exports of the findings
]
# The pipeline of the design reads "... fuzz -> triage -> findings -> report"; findings sits
# below triage here because triage builds Finding records and encodes their evidence through
# xamt.findings (the stage after triage is where findings are kept, not what triage imports).

#: modules that run the whole pipeline and may import anything (module-name patterns)
ORCHESTRATORS: tuple[str, ...] = (
    "xamt.cli",             # the ``xamt`` command line
    "xamt.*.cli",           # each stage's subcommands
    "xamt.fuzz.campaign",   # the CLI-facing campaign driver: runs fuzzing, triage and filing
)


class Import(NamedTuple):
    source: str   # importing module
    target: str   # imported module (of ours)
    where: str    # file:line

    def __str__(self) -> str:
        return f"{self.where}: {self.source} -> {self.target}"


def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


MODULES = _modules()
#: compiled extension modules (``xamt.compare._ccompare``): imported modules with no source
_EXTENSIONS = {".".join(p.relative_to(ROOT).parts[:-1] + (p.name.split(".")[0],))
               for package in PACKAGES for p in (ROOT / package).rglob("*.so")}


def _is_package(module: str) -> bool:
    return MODULES[module].name == "__init__.py"


def _ours(name: str) -> str | None:
    """The module of ours that importing ``name`` runs (its closest enclosing module)."""
    while name:
        if name in MODULES or name in _EXTENSIONS:
            return name
        name = name.rpartition(".")[0]
    return None


def _imports() -> list[Import]:
    out: list[Import] = []
    for module, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        rel = path.relative_to(ROOT)
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = module.split(".") if _is_package(module) else module.split(".")[:-1]
                    base = base[:len(base) - node.level + 1]
                    base_name = ".".join(base + ([node.module] if node.module else []))
                else:
                    base_name = node.module or ""
                for alias in node.names:
                    sub = f"{base_name}.{alias.name}"
                    names.append(sub if sub in MODULES or sub in _EXTENSIONS else base_name)
            for name in names:
                target = _ours(name)
                found = Import(module, target or "", f"{rel}:{node.lineno}")
                if target is not None and target != module and found not in out:
                    out.append(found)
    return out


IMPORTS = _imports()


def _entry(module: str) -> str | None:
    entries = [e for layer in LAYERS for e in layer
               if module == e or (e != "xamt" and module.startswith(e + "."))]
    return max(entries, key=len) if entries else None


_LAYER_OF = {e: i for i, layer in enumerate(LAYERS) for e in layer}


def _orchestrator(module: str) -> bool:
    return any(fnmatch.fnmatchcase(module, pattern) for pattern in ORCHESTRATORS)


def test_sandbox_imports_nothing_of_xamt():
    bad = [str(i) for i in IMPORTS if i.source.split(".")[0] == "sandbox" and i.target.split(".")[0] == "xamt"]
    assert not bad, "sandbox imports xamt:\n" + "\n".join(bad)


def test_no_import_circle():
    # A package's __init__ importing its own submodules is left out: a submodule importing its
    # package (xamt.libraries.registry walks xamt.libraries) would otherwise be a circle, yet
    # the package is always imported before its submodules anyway.
    edges: dict[str, list[Import]] = {}
    for i in IMPORTS:
        if _is_package(i.source) and i.target.startswith(i.source + "."):
            continue
        edges.setdefault(i.source, []).append(i)
    # Tarjan's strongly connected components, iteratively
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []
    for start in MODULES:
        if start in index:
            continue
        work = [(start, iter(edges.get(start, ())))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            for imp in children:
                child = imp.target
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(edges.get(child, ()))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        circles.append(sorted(component))
    report = []
    for component in circles:
        inside = set(component)
        report.append("circle among " + ", ".join(component) + ":\n  " + "\n  ".join(
            str(i) for m in component for i in edges.get(m, ()) if i.target in inside))
    assert not circles, "\n".join(report)


def test_every_module_has_a_layer():
    unplaced = [m for m in MODULES if not _orchestrator(m) and _entry(m) is None]
    assert not unplaced, f"modules missing from LAYERS (or ORCHESTRATORS): {unplaced}"


def test_imports_point_down_the_pipeline():
    bad = []
    for i in IMPORTS:
        if _orchestrator(i.source) or _is_package(i.source) and i.target.startswith(i.source + "."):
            continue  # a package's __init__ may gather its own submodules (xamt.report: its cli)
        if _orchestrator(i.target):
            bad.append(f"{i}  (imports an orchestrator, which sits above every layer)")
            continue
        source, target = _entry(i.source), _entry(i.target)
        if source is None or target is None or source == target:
            continue
        if _LAYER_OF[target] >= _LAYER_OF[source]:
            bad.append(f"{i}  ({source} is in layer {_LAYER_OF[source]}, {target} in layer {_LAYER_OF[target]})")
    assert not bad, "imports that do not point down the pipeline:\n" + "\n".join(bad)


def test_the_reader_sees_the_imports_it_should():
    # guards the test itself: a function-level import and a relative one are both found
    assert Import("xamt.catalog.cli", "xamt.command", "") in [i._replace(where="") for i in IMPORTS]
    assert ("sandbox.pool", "sandbox.zygote_client") in [(i.source, i.target) for i in IMPORTS]
