"""One error tree: no bare builtin raise in the package, every class in the drawn tree, and misuse of
the public functions raising the tree's class with the argument named."""

from __future__ import annotations

import ast
import builtins
import gc
import inspect
import pathlib
import re

import pytest

import sessionlab
from sessionlab import errors
from sessionlab.errors import (
    ArgumentTypeError,
    ArgumentValueError,
    OptionError,
    SessionLabError,
    SourceNotFoundError,
    TableFreedError,
    WriterClosedError,
)

PACKAGE = pathlib.Path(sessionlab.__file__).parent
DATA = pathlib.Path(__file__).parent / "data" / "pi" / "real"
BUILTIN_ERRORS = {n for n, v in vars(builtins).items() if isinstance(v, type) and issubclass(v, BaseException)}

# (module, enclosing function, builtin) -> why a builtin is required there
ALLOWED = {
    ("__init__.py", "__getattr__", "AttributeError"): "module __getattr__ protocol: hasattr/getattr need it",
    ("pi/io/__init__.py", "__getattr__", "AttributeError"): "module __getattr__ protocol",
    ("tables/__init__.py", "__getattr__", "AttributeError"): "module __getattr__ protocol",
    ("pi/io/dialects.py", "_convert", "AssertionError"): "unreachable: the field kinds are a closed set",
    ("pi/io/dialects.py", "_unconvert", "AssertionError"): "unreachable: the field kinds are a closed set",
    ("tables/_cache_files.py", "split_manifest", "ValueError"):
        "internal: the cache's reader catches it and reads the files afresh (a CacheWarning)",
    ("tables/_file.py", "_open_regular", "OSError"):
        "internal: the load catches it per file and reports a read_error issue",
    ("_arrow.py", "find_spec", "ModuleNotFoundError"):
        "import machinery protocol: a finder says a module cannot be imported (without_pandas, while pyarrow asks)",
    ("_scan_source.py", "rules_header", "ValueError"):
        "a build-time check: setup.py loads this file by path, before the package (and its tree) can be imported",
}


def builtin_raises(root: pathlib.Path = PACKAGE) -> set[tuple[str, str, str, int]]:
    """Every ``raise Builtin(...)`` / ``raise Builtin`` under ``root``: (module, innermost function, name, line)."""
    found = set()

    class Visitor(ast.NodeVisitor):
        def __init__(self, module: str) -> None:
            self.module, self.stack = module, ["<module>"]

        def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
            self.stack.append(node.name)
            self.generic_visit(node)
            self.stack.pop()

        visit_AsyncFunctionDef = visit_FunctionDef

        def visit_Raise(self, node: ast.Raise) -> None:
            exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            if isinstance(exc, ast.Name) and exc.id in BUILTIN_ERRORS:
                found.add((self.module, self.stack[-1], exc.id, node.lineno))

    for path in root.rglob("*.py"):
        Visitor(path.relative_to(root).as_posix()).visit(ast.parse(path.read_text(encoding="utf-8")))
    return found


def test_no_bare_builtin_raise_outside_the_allow_list():
    raises = builtin_raises()
    bad = sorted(f"{m}:{line} raises {e} in {f}()" for m, f, e, line in raises if (m, f, e) not in ALLOWED)
    assert bad == [], "raise a class of sessionlab.errors instead:\n" + "\n".join(bad)
    # the allow-list names only raises that exist (a stale entry would hide a new one)
    assert {(m, f, e) for m, f, e, _ in raises} == set(ALLOWED)


def test_the_scan_sees_a_bare_raise(tmp_path):
    (tmp_path / "mod.py").write_text("def f(x):\n    def g():\n        raise ValueError('no')\n"
                                     "    raise KeyError\nraise errors.OptionError('fine')\n")
    assert {(m, f, e) for m, f, e, _ in builtin_raises(tmp_path)} == {("mod.py", "g", "ValueError"),
                                                                      ("mod.py", "f", "KeyError")}


def error_classes() -> list[type]:
    return [v for v in vars(errors).values() if isinstance(v, type) and issubclass(v, BaseException)
            and v.__module__ == errors.__name__]


@pytest.mark.parametrize("cls", error_classes(), ids=lambda c: c.__name__)
def test_every_class_is_in_the_drawn_tree_and_exported(cls):
    assert re.search(rf"\b{cls.__name__}\b", errors.__doc__)
    assert cls.__name__ in errors.__all__ and cls.__name__ in sessionlab.__all__
    root = errors.SessionLabWarning if issubclass(cls, Warning) else SessionLabError
    assert issubclass(cls, root)
    # the builtin the tree names in parentheses is a base too
    drawn = re.search(rf"\b{cls.__name__} \((\w+)\)", errors.__doc__)
    if drawn and drawn.group(1) in BUILTIN_ERRORS:
        assert issubclass(cls, getattr(builtins, drawn.group(1)))


def test_on_bad_lines_and_rules_fail_the_same_way():
    with pytest.raises(OptionError) as bad_lines:
        sessionlab.load(DATA, on_bad_lines="loud")
    with pytest.raises(OptionError) as bad_rules:
        sessionlab.load(DATA, rules="pi-9")
    assert type(bad_lines.value) is type(bad_rules.value) is OptionError
    assert str(bad_lines.value) == "on_bad_lines must be one of 'raise', 'warn', 'skip', not 'loud'"
    assert str(bad_rules.value) == "rules must be one of 'pi-1.6', 'pi-0.58', not 'pi-9'"
    assert (bad_lines.value.argument, bad_rules.value.argument) == ("on_bad_lines", "rules")
    # an option is an argument: except ArgumentValueError (or ValueError) catches both
    assert isinstance(bad_lines.value, ArgumentValueError) and isinstance(bad_lines.value, ValueError)


@pytest.fixture(scope="module")
def corpus():
    return sessionlab.load(DATA, on_bad_lines="skip")


def _writer_closed(tmp_path):
    w = sessionlab.SessionWriter(tmp_path / "s.jsonl")
    w.close()
    w.append(sessionlab.SessionInfoEntry(id="a", parent_id=None, timestamp="2026-01-01T00:00:00.000Z", name="x"))


def _freed_forest(tmp_path):
    from sessionlab.tables.forest import Forest

    table = sessionlab.entries_table(DATA, on_bad_lines="skip")
    forest = Forest(table)
    del table
    gc.collect()
    forest.table  # noqa: B018


MISUSE = [  # (name, call, class, argument the error names (None: no argument attribute), builtin)
    ("load on_bad_lines", lambda c, t: sessionlab.load(DATA, on_bad_lines=1), OptionError, "on_bad_lines", ValueError),
    ("read_session on_bad_lines", lambda c, t: sessionlab.read_session(next(DATA.glob("*.jsonl")), on_bad_lines="x"),
     OptionError, "on_bad_lines", ValueError),
    ("agents", lambda c, t: sessionlab.load(DATA, agents=["pi", "vim"]), OptionError, "agents", ValueError),
    ("contexts rules", lambda c, t: sessionlab.contexts(c, rules="pi-0"), OptionError, "rules", ValueError),
    ("contexts at", lambda c, t: sessionlab.contexts(c, at="roots"), OptionError, "at", ValueError),
    ("simulate branch", lambda c, t: sessionlab.simulate_compaction(c, [], branch="some"), OptionError, "branch",
     ValueError),
    ("simulate recorded", lambda c, t: sessionlab.simulate_compaction(c, [], recorded="drop"), OptionError,
     "recorded", ValueError),
    ("usage_by by", lambda c, t: sessionlab.usage_by(c, by="planet"), OptionError, "by", ValueError),
    ("usage_by since", lambda c, t: sessionlab.usage_by(c, since="yesterday"), ArgumentValueError, "since",
     ValueError),
    ("writer dialect", lambda c, t: sessionlab.SessionWriter(t / "w.jsonl", dialect="yaml"), OptionError, "dialect",
     ValueError),
    ("thinking_level", lambda c, t: sessionlab.Session(sessionlab.InMemorySessionStorage()).append_thinking_level_change(
        "huge"), OptionError, "thinking_level", ValueError),
    ("cache type", lambda c, t: sessionlab.load(DATA, cache=3), ArgumentTypeError, "cache", TypeError),
    ("entries type", lambda c, t: sessionlab.contexts(42), ArgumentTypeError, "entries", TypeError),
    ("session_id type", lambda c, t: sessionlab.contexts(c, session_id=[1, 2]), ArgumentTypeError, "session_id",
     TypeError),
    ("summary fraction", lambda c, t: sessionlab.compaction.policies.SummarySize(tokens=None, fraction=2.0),
     ArgumentValueError, "fraction", ValueError),
    ("no source", lambda c, t: sessionlab.load(t / "nothing-here"), SourceNotFoundError, None, FileNotFoundError),
    ("no parquet", lambda c, t: sessionlab.tables.read_parquet(t), SourceNotFoundError, None, FileNotFoundError),
    ("writer closed", lambda c, t: _writer_closed(t), WriterClosedError, None, ValueError),
    ("forest freed", lambda c, t: _freed_forest(t), TableFreedError, None, ReferenceError),
    ("not JSON", lambda c, t: sessionlab._jsjson.js_stringify({1, 2}), ArgumentTypeError, "obj", TypeError),
]


@pytest.mark.parametrize("name, call, cls, argument, builtin", MISUSE, ids=[m[0] for m in MISUSE])
def test_misuse_raises_the_trees_class_naming_the_argument(corpus, tmp_path, name, call, cls, argument, builtin):
    with pytest.raises(cls) as info:
        call(corpus, tmp_path)
    assert isinstance(info.value, SessionLabError) and isinstance(info.value, builtin)
    if argument is not None:
        assert info.value.argument == argument
        assert argument in str(info.value)
    if cls is OptionError:  # the shape every option shares: "<option> must be one of 'a', 'b', not <value>"
        assert re.match(rf"{argument} must be one of '[^']+'(, '[^']+')*, not ", str(info.value)), str(info.value)


def test_check_option_signature_is_the_one_every_option_uses():
    assert list(inspect.signature(errors.check_option).parameters) == ["argument", "value", "allowed"]
    with pytest.raises(OptionError, match=r"^x must be one of 'a', 'b', not \['a'\]$"):
        errors.check_option("x", ["a"], ("a", "b"))  # unhashable values are refused, not a TypeError
