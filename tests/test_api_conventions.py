"""The public API's conventions, checked over ``sessionlab.__all__`` so later additions obey them too.

- options are keyword-only: at most two positional parameters (the data, and one required
  argument such as the policies);
- every function (or widget) that takes ``entries`` takes a :class:`~sessionlab.Corpus` as well,
  and ``session_id=`` by keyword, one id or a list, meaning "only these sessions";
- ``at=`` defaults to ``"calls"`` wherever it appears, ``branch=`` always means ``"current" | "all"``;
- a function returning an Arrow table declares its columns (``Column`` tuples, ``fn.columns``),
  lists them in its docstring, returns exactly them, and has a ``*_df`` twin with its signature.
"""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest

import sessionlab as sl
from sessionlab.tables._schema import Column, schema_of
from sessionlab.tables.corpus import SessionIds

DATA = Path(__file__).resolve().parent.parent / "data"
TWO = ["b627ef1d-8e91-479a-a1c3-a39e50c19172", "a28f5b37-6b04-44f2-b094-90b86b01a1c1"]  # rust-cli, api-server

# required arguments besides ``entries``, by name: a function added with another one must say here what to pass
REQUIRED = {"policies": [sl.NeverCompact(30_000), sl.PiThresholdPolicy(30_000)]}


def _public() -> dict[str, object]:
    return {n: getattr(sl, n) for n in sl.__all__}


def _signature(obj) -> inspect.Signature | None:
    if inspect.isclass(obj):
        if obj.__init__ is object.__init__:
            return None
        sig = inspect.signature(obj.__init__)
        return sig.replace(parameters=list(sig.parameters.values())[1:])  # without self
    return inspect.signature(obj) if callable(obj) else None


def _takes_entries(obj) -> bool:
    sig = _signature(obj)
    return sig is not None and next(iter(sig.parameters), None) == "entries"


ENTRY_FUNCTIONS = sorted(n for n, o in _public().items() if _takes_entries(o))
TABLE_FUNCTIONS = sorted(n for n, o in _public().items()
                         if inspect.isfunction(o) and not n.endswith("_df")
                         and inspect.signature(o).return_annotation in ("pa.Table", pa.Table))


def test_the_walk_finds_the_analysis_layer():
    assert {"contexts", "context_members", "context_messages", "find_cut_points", "usage_by", "branch_costs",
            "cache_efficiency", "simulate_compaction", "fit_prices", "session_tree", "tree_layout", "plot_tree",
            "plot_context_timeline", "BranchExplorer", "UsageDashboard", "CompactionLab"} <= set(ENTRY_FUNCTIONS)
    assert {"entries_table", "sessions_table", "contexts", "usage_by", "tree_layout"} <= set(TABLE_FUNCTIONS)


@pytest.mark.parametrize("name", sorted(sl.__all__))
def test_options_are_keyword_only(name):
    obj = getattr(sl, name)
    if inspect.isclass(obj) and not _takes_entries(obj):
        return  # records and dataclasses (entries, messages, policies) are built from their fields
    sig = _signature(obj)
    if sig is None:
        return
    positional = [p for p in sig.parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    assert len(positional) <= 2, f"{name}{sig}: options after the first two arguments must be keyword-only"
    if _takes_entries(obj):
        assert all(p.default is p.empty for p in positional[1:]), \
            f"{name}{sig}: an option with a default after entries must be keyword-only"


@pytest.mark.parametrize("name", ENTRY_FUNCTIONS)
def test_entries_takers_accept_session_id(name):
    sig = _signature(getattr(sl, name))
    p = sig.parameters.get("session_id")
    assert p is not None, f"{name}{sig} takes entries but no session_id"
    assert p.kind is p.KEYWORD_ONLY and p.default is None, f"{name}: session_id= must be keyword-only, default None"
    assert p.annotation in ("SessionIds", SessionIds), \
        f"{name}: annotate session_id as tables.corpus.SessionIds (one id or a list), not {p.annotation}"


@pytest.mark.parametrize("name", sorted(sl.__all__))
def test_one_meaning_per_option_name(name):
    obj = getattr(sl, name)
    sig = _signature(obj)
    if sig is None or (inspect.isclass(obj) and not _takes_entries(obj)):
        return
    at = sig.parameters.get("at")
    if at is not None:
        assert at.kind is at.KEYWORD_ONLY and at.default == "calls", f"{name}: at= defaults to 'calls' everywhere"
    branch = sig.parameters.get("branch")
    if branch is not None and branch.kind is branch.KEYWORD_ONLY:
        assert set(re.findall(r"['\"](\w+)['\"]", str(branch.annotation))) == {"current", "all"}, \
            f"{name}: branch= means 'current' | 'all' ({branch.annotation})"
    for option in ("on_bad_lines", "progress", "max_workers", "tz", "keep_recent_tokens"):
        p = sig.parameters.get(option)
        assert p is None or p.kind is p.KEYWORD_ONLY, f"{name}: {option}= must be keyword-only"


def _columns_of(fn) -> tuple[Column, ...]:
    cols = getattr(fn, "columns", None)
    assert isinstance(cols, tuple) and cols and all(isinstance(c, Column) for c in cols), \
        f"{fn.__name__} returns a table: declare its columns with tables._conventions.returns"
    return cols


@pytest.mark.parametrize("name", TABLE_FUNCTIONS)
def test_tables_declare_their_columns_and_have_a_df_twin(name):
    fn = getattr(sl, name)
    cols = _columns_of(fn)
    for c in cols + getattr(fn, "key_columns", ()):
        assert c.name in fn.__doc__, f"{name}'s docstring does not list {c.name}"
    twin = name[: -len("_table")] + "_df" if name.endswith("_table") else name + "_df"
    assert twin in sl.__all__, f"{name} returns Arrow: add its pandas twin {twin}"
    assert inspect.signature(getattr(sl, twin)).parameters.keys() == inspect.signature(fn).parameters.keys()


def test_simulation_result_declares_its_tables():
    cols = sl.SimulationResult.columns
    assert set(cols) == {"sessions", "calls"}
    for c in cols["sessions"] + cols["calls"]:
        assert c.name in sl.SimulationResult.__doc__


# ---------------------------------------------------------------------------- running them on data/


@pytest.fixture(scope="module")
def corpus() -> sl.Corpus:
    return sl.load(DATA)


def _call(name: str, entries, **kwargs):
    fn = getattr(sl, name)
    sig = _signature(fn)
    args = []
    for p in list(sig.parameters.values())[1:]:
        if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            if p.name == "at_id":
                args.append(_leaf(entries, kwargs.get("session_id")))
                continue
            assert p.name in REQUIRED, f"{name}: say in REQUIRED what to pass as {p.name}"
            args.append(REQUIRED[p.name])
    return fn(entries, *args, **kwargs)


def _leaf(entries, session_id) -> str:
    sid = session_id if isinstance(session_id, str) else (session_id or TWO)[0]
    return sl.session_tree(entries, session_id=sid).graph["leaf_id"]


def _rows_of(table: pa.Table, ids: list[str]) -> pa.Table:
    return table.filter(pc.fill_null(pc.is_in(table["session_id"], value_set=pa.array(ids)), False))


def _table_of(result):
    return result.sessions if isinstance(result, sl.SimulationResult) else result


# data/ holds Codex sessions, which record no cache writes or failed tool results: the insight
# tables say so with one UnrecordedDataWarning per call (tests/test_insights.py checks it)
@pytest.mark.filterwarnings("ignore::sessionlab.errors.UnrecordedDataWarning")
@pytest.mark.parametrize("name", [n for n in ENTRY_FUNCTIONS if n in TABLE_FUNCTIONS or n == "simulate_compaction"])
def test_table_outputs_are_the_declared_columns_and_session_id_selects(corpus, name):
    fn = getattr(sl, name)
    one = _table_of(_call(name, corpus, session_id=TWO[0]))
    if name == "simulate_compaction":
        declared = sl.SimulationResult.columns["sessions"]
        assert _call(name, corpus, session_id=TWO[0]).calls.schema == schema_of(sl.SimulationResult.columns["calls"])
    else:
        declared = _columns_of(fn)
    keys = [c for c in getattr(fn, "key_columns", ()) if c.name in one.column_names]
    assert one.schema == schema_of(tuple(keys) + declared)
    assert one.num_rows > 0
    if "session_id" not in one.column_names:  # one session per call: the same as passing its rows alone
        alone = corpus.entries.filter(pc.equal(corpus.entries["session_id"], TWO[0]))
        assert one.equals(_table_of(_call(name, alone)))
        assert one.equals(_table_of(_call(name, corpus, session_id=[TWO[0]])))
        return
    assert set(one["session_id"].to_pylist()) == {TWO[0]}
    everything = _table_of(_call(name, corpus))
    both = _table_of(_call(name, corpus, session_id=TWO))
    assert both.equals(_rows_of(everything, TWO))  # selecting sessions = keeping their rows
    assert one.equals(_rows_of(everything, TWO[:1]))
    assert both.equals(_table_of(_call(name, corpus.entries, session_id=TWO)))  # a corpus or its table
    assert both.equals(_table_of(_call(name, corpus.entries_df(), session_id=TWO)))  # or pandas


@pytest.mark.filterwarnings("ignore::sessionlab.errors.UnrecordedDataWarning")
@pytest.mark.parametrize("name", [n for n in ENTRY_FUNCTIONS if n not in TABLE_FUNCTIONS
                                  and n != "simulate_compaction"])
def test_every_other_entries_taker_runs_on_a_corpus_with_session_ids(corpus, name):
    if name.startswith("plot_") or name in ("BranchExplorer", "UsageDashboard", "CompactionLab"):
        pytest.importorskip("matplotlib").use("Agg")
    if name in ("BranchExplorer", "UsageDashboard", "CompactionLab"):
        pytest.importorskip("ipywidgets")
    for ids in (TWO[0], [TWO[0]]):
        out = _call(name, corpus, session_id=ids)
        if name == "session_tree":
            assert out.graph["session_id"] == TWO[0]
        elif name == "context_messages":
            assert out == _call(name, corpus.entries, session_id=TWO[0])
        elif hasattr(out, "session"):  # a widget starts at the session named
            assert out.session.value == TWO[0]
        elif name == "UsageDashboard":
            assert set(out.entries["session_id"].to_pylist()) == {TWO[0]}
        elif name == "fit_prices":
            assert out == sl.fit_prices(_rows_of(corpus.entries, [TWO[0]]))
    if name.startswith("plot_"):
        import matplotlib.pyplot as plt

        plt.close("all")
