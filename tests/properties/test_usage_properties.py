"""The usage tables equal plain Python loops on random trees.

The random trees of ``test_contexts_properties`` (parents anywhere, missing ids, self-parents and
cycles, duplicated ids, compactions, model changes): ``branch_costs``, ``cache_efficiency``,
``branch_calls`` and ``usage_by(by="branch")`` against the loops of ``tests/_usage_ref.py``.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sessionlab import SessionWriter, branch_calls, branch_costs, cache_efficiency, new_session_header, usage_by
from sessionlab.tables import entries_table
from tests import _usage_ref as ref
from tests.properties.test_contexts_properties import build, spec

COLS = ["at_id", "kind", "call_index", "prompt_tokens", "branch_switch", "tokens_before", "tokens_after"]


@settings(max_examples=150, deadline=None)
@given(st.lists(spec, min_size=1, max_size=40), st.integers(0, 39))
def test_usage_tables_equal_python_loops(specs, pick):
    entries = build(specs)
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "s.jsonl"
        with SessionWriter(path, header=new_session_header(session_id="p")) as w:
            w.append_many(entries)
        table = entries_table(path, on_bad_lines="skip")
    rows = table.to_pylist()
    assert len(rows) == len(entries)

    [costs] = branch_costs(table).to_pylist()
    want = ref.branch_sums(rows)
    for c in ("calls_current", "calls_abandoned", "tokens_current", "tokens_abandoned"):
        assert costs[c] == want[c], c
    by_branch = {r["branch"]: r for r in usage_by(table, by="branch").to_pylist()}
    for where in ("current", "abandoned"):
        assert by_branch.get(where, {}).get("calls", 0) == want[f"calls_{where}"]
        assert by_branch.get(where, {}).get("total_tokens", 0) == want[f"tokens_{where}"]

    got = {r["at_id"]: r for r in cache_efficiency(table).to_pylist()}
    causes = ref.cache_causes(rows)
    assert len(cache_efficiency(table)) == len(causes)
    last = {}
    for i in causes:
        last[rows[i]["entry_id"]] = i  # a duplicated id: the table's at_id is ambiguous, check the last
    for eid, i in last.items():
        prev, cause = causes[i]
        if sum(r["entry_id"] == eid for r in rows) == 1:
            assert (got[eid]["previous_call_id"], got[eid]["invalidated_by"]) == (
                None if prev is None else rows[prev]["entry_id"], cause)

    calls = branch_calls(table).select(COLS).to_pylist()
    assert calls == [{c: w[c] for c in COLS} for w in ref.branch_calls(rows, ref.current_leaf(rows))]
    leaf_id = rows[pick % len(rows)]["entry_id"]
    leaf = max(i for i, r in enumerate(rows) if r["entry_id"] == leaf_id)
    other = branch_calls(table, leaf_id=leaf_id).select(COLS).to_pylist()
    assert other == [{c: w[c] for c in COLS} for w in ref.branch_calls(rows, leaf)]


def test_an_unknown_leaf_id_is_an_error():
    from sessionlab import EntryNotFoundError

    with pytest.raises(EntryNotFoundError):
        branch_calls(entries_table(Path(__file__).parents[2] / "data" / "pi" / "before-compaction.jsonl"),
                     leaf_id="not-an-entry")
