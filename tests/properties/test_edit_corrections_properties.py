"""pi 1.6 contexts and cut points corrected for context edits in array passes equal the exact walk
of each edited target (the plain reference the corrections replace), on pi-generated files and on
random trees with many edits (removals and replacements of any entry, before or after it)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sessionlab import InMemorySessionStorage, SessionWriter, new_session_header
from sessionlab.analysis import _edits
from sessionlab.analysis.contexts import context_arrays, contexts, target_rows
from sessionlab.compaction import _cut16_edits
from sessionlab.compaction.cut_points import find_cut_points
from sessionlab.tables import entries_table
from sessionlab.tables.forest import clear_caches
from tests.conftest import PI_DATA
from tests.properties.test_contexts_properties import KINDS, build

GENERATED_16 = sorted((PI_DATA / "generated-1.6").rglob("*.jsonl"))
KEEPS = (0, 1, 40, 300, 2000, 20000)


def _walk_everything(monkeypatch) -> None:
    """Every target with an edit in its window takes the exact walk."""
    monkeypatch.setattr(_edits, "_by_edits", lambda prep, b, idx, out: np.zeros(len(idx), bool))
    init = _cut16_edits.Corrections.__init__

    def slow_init(self, a, t, edited, c, start_depth):
        init(self, a, t, edited, c, start_depth)
        self.slow |= edited

    monkeypatch.setattr(_cut16_edits.Corrections, "__init__", slow_init)


def _outputs(table: pa.Table) -> list[pa.Table]:
    clear_caches()
    out = [contexts(table, at="entries"), contexts(table, at="calls")]
    return out + [find_cut_points(table, at="entries", keep_recent_tokens=k) for k in KEEPS]


def _edited_targets(table: pa.Table) -> int:
    prep = context_arrays(table, "pi-1.6")
    return int(prep.compute(target_rows(prep, "entries")[1])["edited"].sum())


def _check(table: pa.Table) -> None:
    fast = _outputs(table)
    with pytest.MonkeyPatch.context() as mp:
        _walk_everything(mp)
        slow = _outputs(table)
    for f, s in zip(fast, slow):
        assert f.equals(s)


def test_corrections_equal_the_walk_on_generated_files():
    table = entries_table(GENERATED_16, on_bad_lines="skip")
    assert _edited_targets(table) > 50  # the corrections are exercised
    _check(table)


EDITS = KINDS + ["edit", "edit", "edit", "assistant", "assistant", "tool", "user"]
spec = st.tuples(
    st.sampled_from(EDITS),
    st.one_of(st.just("prev"), st.just("prev"), st.just("prev"), st.integers(0, 60), st.just("root")),
    st.text(st.characters(blacklist_categories=("Cs",)), max_size=30),
    st.sampled_from(["stop", "toolUse", "aborted", "error"]),
    st.integers(0, 200_000),
    st.integers(0, 60),
)


@settings(max_examples=150, deadline=None)
@given(st.lists(spec, min_size=1, max_size=50))
def test_corrections_equal_the_walk_on_random_trees(specs):
    entries = build(specs)
    storage = InMemorySessionStorage(new_session_header(session_id="p"), entries)
    with tempfile.TemporaryDirectory() as d:  # (kept while checking: a rare case reads the file again)
        path = Path(d) / "s.jsonl"
        with SessionWriter(path, header=storage.metadata) as w:
            w.append_many(entries)
        _check(entries_table(path, on_bad_lines="skip", rules="pi-1.6"))


def _check_keeps_at_once(table: pa.Table) -> None:
    """Every budget's cut points from one pass of what does not depend on the budget equal those
    found one budget at a time (:func:`find_cut_points`' path, itself checked against pi's rules)."""
    from sessionlab.compaction._cut16 import cut_point_rows_16, cut_point_rows_16_keeps
    from sessionlab.compaction.cut_points import _arrays16
    from sessionlab.tables.forest import per_table

    clear_caches()
    prep = context_arrays(table, "pi-1.6")
    t = target_rows(prep, "entries")[0]
    a = per_table(_arrays16, table)
    together = cut_point_rows_16_keeps(a, t, list(KEEPS), prep.compute(t))
    for keep, got in zip(KEEPS, together):
        want = cut_point_rows_16(a, t, keep, prep.compute(t))
        assert got.keys() == want.keys()
        for name in want:
            assert got[name].tolist() == want[name].tolist(), (keep, name)


def test_every_budget_at_once_equals_one_at_a_time_on_generated_files():
    _check_keeps_at_once(entries_table(GENERATED_16, on_bad_lines="skip"))


@settings(max_examples=100, deadline=None)
@given(st.lists(spec, min_size=1, max_size=50))
def test_every_budget_at_once_equals_one_at_a_time_on_random_trees(specs):
    entries = build(specs)
    storage = InMemorySessionStorage(new_session_header(session_id="p"), entries)
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "s.jsonl"
        with SessionWriter(path, header=storage.metadata) as w:
            w.append_many(entries)
        _check_keeps_at_once(entries_table(path, on_bad_lines="skip", rules="pi-1.6"))
