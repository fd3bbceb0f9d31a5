"""Vectorised cut points equal the object model's prepare_compaction on random trees."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from sessionlab import CycleError, InMemorySessionStorage, SessionWriter, new_session_header
from sessionlab.compaction import prepare_compaction
from sessionlab.compaction.cut_points import find_cut_points
from sessionlab.tables import entries_table
from tests.properties.test_contexts_properties import build, spec


@settings(max_examples=150, deadline=None)
@given(st.lists(spec, min_size=1, max_size=40), st.integers(0, 400), st.sampled_from(["pi-1.6", "pi-0.58"]))
def test_find_cut_points_equals_prepare_compaction(specs, keep, rules):
    entries = build(specs)
    storage = InMemorySessionStorage(new_session_header(session_id="p"), entries)
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "s.jsonl"
        with SessionWriter(path, header=storage.metadata) as w:
            w.append_many(entries)
        table = entries_table(path, on_bad_lines="skip", rules=rules)
        _check(storage, table, keep, rules)  # (inside: a rare case reads the file again)


def _check(storage, table, keep, rules):
    last = {r["at_id"]: r for r in find_cut_points(table, at="entries", keep_recent_tokens=keep).to_pylist()}
    for r in last.values():  # an id names its last entry, as in pi
        try:
            branch = storage.get_branch(r["at_id"])
        except CycleError:
            assert r["first_kept_entry_id"] is None
            continue
        p = prepare_compaction(branch, keep_recent_tokens=keep, rules=rules)
        if p is None:
            assert r["first_kept_entry_id"] is None
            continue
        turn_start = branch[p.turn_start_index].id if p.is_split_turn else None
        assert (r["first_kept_entry_id"], r["is_split_turn"], r["turn_start_id"], r["tokens_before"],
                r["messages_to_summarize"], r["turn_prefix_messages"]) == (
            p.first_kept_entry_id, p.is_split_turn, turn_start, p.tokens_before,
            len(p.messages_to_summarize), len(p.turn_prefix_messages))
