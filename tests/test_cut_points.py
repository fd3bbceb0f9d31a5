"""find_cut_points on the entries table equals pi's prepareCompaction on every sample."""

from __future__ import annotations

import json

import pytest

from sessionlab.compaction.cut_points import find_cut_points
from sessionlab.tables import entries_table
from tests._pi_expected import PI, leaf_cases

CUT_CASES = json.loads((PI / "expected" / "compaction-cut-points.json").read_text())["cases"]


@pytest.fixture(scope="module")
def table():
    return entries_table(PI, on_bad_lines="skip", rules="pi-0.58")  # pi 0.58.3's results


def as_tuple(r):
    if r["first_kept_entry_id"] is None:
        return None
    return (r["first_kept_entry_id"], r["is_split_turn"], r["tokens_before"], r["messages_to_summarize"],
            r["turn_prefix_messages"])


def want(p):
    if p is None:
        return None
    return (p["firstKeptEntryId"], p["isSplitTurn"], p["tokensBefore"], p["messagesToSummarizeCount"],
            p["turnPrefixMessagesCount"])


def test_every_leaf_matches_pi(table):
    got = {(r["file"].split("/data/pi/")[-1], r["at_id"]): as_tuple(r) for r in find_cut_points(table, at="leaves").to_pylist()}
    cases = leaf_cases()
    assert len(cases) == 21
    for _, exp, leaf in cases:
        assert got[(exp["file"], leaf["leafId"])] == want(leaf["compaction"]["prepareCompaction"])
    # the two real files cut deep inside, as split turns
    assert got[("real/before-compaction.jsonl", "000003ea")][:2] == ("000003b3", True)


@pytest.mark.parametrize("case", CUT_CASES, ids=[c["compactionEntryId"] for c in CUT_CASES])
def test_recorded_compactions_match_pi(table, case):
    keep = case["compaction"]["settings"]["keepRecentTokens"]
    rows = [r for r in find_cut_points(table, at=[case["leafId"]], keep_recent_tokens=keep).to_pylist()
            if r["file"].endswith(case["file"])]
    assert len(rows) == 1
    assert as_tuple(rows[0]) == want(case["compaction"]["prepareCompaction"])


def test_calls_use_the_branch_through_the_call(table):
    rows = find_cut_points(table, at="calls").to_pylist()
    assert rows and all(r["first_kept_entry_id"] is not None for r in rows)
