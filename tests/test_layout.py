"""The package's layout shows its layers: imports point down only, no package reaches into another's
private modules or names, no import circles, and a small package root.

The layers, bottom to top (``docs/architecture.md``):

    base      errors, _arrow, _rowsof, _jsjson, _time, pricing, the C scanner
    pi        sessionlab.pi: the seed's session system (model, io, context, tokens, storage...)
    agents    sessionlab.agents: one module per agent, the registry
    tables    sessionlab.tables: loading, the cache, the facts, the forest
    analysis  sessionlab.analysis, sessionlab.compaction, sessionlab.tree, sessionlab.redaction
    face      plotting, widgets, report, cli, dask, synth, the package's __init__
"""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parent.parent / "sessionlab"

LAYERS = {
    "base": 0, "pi": 1, "agents": 2, "tables": 3, "analysis": 4, "face": 5,
}
_TOP = {  # the first name below sessionlab -> its layer
    "errors": "base", "_arrow": "base", "_jsjson": "base", "_time": "base", "pricing": "base", "_scan": "base",
    "_scan_source": "base", "_rowsof": "base",
    "pi": "pi", "agents": "agents", "tables": "tables",
    "analysis": "analysis", "compaction": "analysis", "tree": "analysis", "redaction": "analysis",
    "plotting": "face", "widgets": "face", "report": "face", "cli": "face", "dask": "face", "synth": "face",
    "__init__": "face", "__main__": "face",
}


def _module(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _package(path: Path) -> str:
    m = _module(path)
    return m if path.name == "__init__.py" else m.rsplit(".", 1)[0]


def _layer(module: str) -> str:
    parts = module.split(".")
    return _TOP[parts[1] if len(parts) > 1 else "__init__"]


def _imports(path: Path, *, top_level_only: bool = False):
    """(line, imported module, imported names) of every ``from sessionlab... import`` in a file."""
    tree = ast.parse(path.read_text())
    nodes = tree.body if top_level_only else ast.walk(tree)
    for node in nodes:
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = _package(path).split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target == "sessionlab" or target.startswith("sessionlab."):
                yield node.lineno, target, [a.name for a in node.names]
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("sessionlab."):
                    yield node.lineno, a.name, []


FILES = sorted(ROOT.rglob("*.py"))


def _is_module(name: str) -> bool:
    p = ROOT.parent.joinpath(*name.split("."))
    extension = any(p.parent.glob(f"{p.name}.*.so")) or any(p.parent.glob(f"{p.name}.*.pyd"))
    return p.with_suffix(".py").is_file() or (p / "__init__.py").is_file() or extension


def test_the_package_root_holds_the_public_face_and_little_else():
    modules = sorted(p.name for p in ROOT.glob("*.py")) + sorted(p.name for p in ROOT.glob("_scan*.so"))[:1]
    assert len(modules) <= 14, modules
    for wing in ("pi", "agents", "tables", "analysis", "compaction", "cli", "synth", "plotting", "widgets", "report"):
        assert (ROOT / wing / "__init__.py").is_file(), wing


def _targets(target: str, names: list[str]) -> list[str]:
    """The modules an import statement reaches: the names that are modules, else the module named."""
    return [f"{target}.{n}" for n in names if _is_module(f"{target}.{n}")] or [target]


def test_imports_point_down_only():
    up = []
    for path in FILES:
        me = _module(path)
        for line, target, names in _imports(path):
            for t in _targets(target, names):
                if LAYERS[_layer(t)] > LAYERS[_layer(me)]:
                    up.append(f"{path.relative_to(ROOT.parent)}:{line}: {me} ({_layer(me)}) imports {t}")
    assert not up, "\n".join(up)


def test_no_package_imports_another_package_s_private_names():
    """A module may use the private modules and names of its own package and of the modules of the
    packages above it (``sessionlab._arrow`` from anywhere); another package's are reached through
    that package's ``__init__``."""
    bad = []
    for path in FILES:
        mine = _package(path).split(".")
        for line, target, names in _imports(path):
            for name in names or [""]:
                full = target.split(".") + ([name] if name else [])
                i = 0
                while i < len(mine) and i < len(full) and mine[i] == full[i]:
                    i += 1
                chain = full[i:]
                other_package = bool(chain) and (ROOT.parent.joinpath(*full[: i + 1]) / "__init__.py").is_file()
                if other_package and any(p.startswith("_") and not p.startswith("__") for p in chain[1:]):
                    bad.append(f"{path.relative_to(ROOT.parent)}:{line}: {'.'.join(full)}")
    assert not bad, "\n".join(bad)


def test_no_import_circles():
    """Imports between modules (lazy ones and ``TYPE_CHECKING`` ones too) form no circle (a
    package's ``__init__`` re-exporting its own modules is not one)."""
    g = nx.DiGraph()
    for path in FILES:
        me = _module(path)
        for _, target, names in _imports(path):
            for t in _targets(target, names):
                if path.name != "__init__.py" and me.startswith(t + "."):
                    continue  # a module importing its own package's __init__
                g.add_edge(me, t)
    circles = [sorted(c) for c in nx.strongly_connected_components(g) if len(c) > 1]
    assert not circles, circles


@pytest.mark.parametrize("old, new", [
    ("sessionlab.context", "sessionlab.pi.context"),
    ("sessionlab.io.reader", "sessionlab.pi.io.reader"),
    ("sessionlab.io.claude", "sessionlab.agents._claude_reader"),
    ("sessionlab.forest", "sessionlab.tables.forest"),
    ("sessionlab.model.entries", "sessionlab.pi.model.entries"),
])
def test_old_deep_import_paths_still_work_for_one_release(old, new):
    import importlib

    assert importlib.import_module(old) is importlib.import_module(new)
