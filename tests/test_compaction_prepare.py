"""pi's prepareCompaction reproduced on every sample leaf and every recorded compaction."""

from __future__ import annotations

import json

import pytest

from sessionlab import open_session
from sessionlab.compaction import prepare_compaction
from tests._pi_expected import PI, leaf_cases

CUT_CASES = json.loads((PI / "expected" / "compaction-cut-points.json").read_text())["cases"]
_OPEN: dict = {}


def _branch(file, branch_ids):
    if file not in _OPEN:
        _OPEN[file] = open_session(PI / file, on_bad_lines="skip")
    branch = _OPEN[file].get_branch(branch_ids[-1])
    assert [e.id for e in branch] == branch_ids
    return branch


def as_pi(p):
    if p is None:
        return None
    out = {
        "firstKeptEntryId": p.first_kept_entry_id,
        "firstKeptBranchIndex": p.first_kept_branch_index,
        "isSplitTurn": p.is_split_turn,
        "tokensBefore": p.tokens_before,
        "messagesToSummarizeCount": len(p.messages_to_summarize),
        "messagesToSummarizeRoleCounts": p.role_counts("summarize"),
        "turnPrefixMessagesCount": len(p.turn_prefix_messages),
        "turnPrefixMessagesRoleCounts": p.role_counts("prefix"),
        "fileLists": p.file_lists,
    }
    if p.previous_summary is not None:
        out["previousSummary"] = p.previous_summary
    return out


LEAVES = leaf_cases()


@pytest.mark.parametrize("case,exp,leaf", LEAVES, ids=[c for c, _, _ in LEAVES])
def test_prepare_compaction_matches_pi_at_every_leaf(case, exp, leaf):
    branch = _branch(exp["file"], leaf["branchIds"])
    keep = leaf["compaction"]["settings"]["keepRecentTokens"]
    assert as_pi(prepare_compaction(branch, keep_recent_tokens=keep, rules="pi-0.58")) == leaf["compaction"]["prepareCompaction"]


@pytest.mark.parametrize("case", CUT_CASES, ids=[c["compactionEntryId"] for c in CUT_CASES])
def test_prepare_compaction_matches_the_compactions_pi_recorded(case):
    branch = _branch(case["file"], case["branchIds"])
    keep = case["compaction"]["settings"]["keepRecentTokens"]
    got = prepare_compaction(branch, keep_recent_tokens=keep, rules="pi-0.58")
    assert as_pi(got) == case["compaction"]["prepareCompaction"]
    stored = _OPEN[case["file"]].get_entry(case["compactionEntryId"])
    assert (got.first_kept_entry_id, got.tokens_before) == (stored.first_kept_entry_id, stored.tokens_before)
    assert {"readFiles": stored.details["readFiles"], "modifiedFiles": stored.details["modifiedFiles"]} == got.file_lists


def test_model_change_quirk_is_reproduced():
    """Sample F: the cut lands on the model_change before a user message, and pi calls it a split turn."""
    case = next(c for c in CUT_CASES if c["compactionEntryId"] == "00000079")
    got = prepare_compaction(_branch(case["file"], case["branchIds"]), keep_recent_tokens=1500, rules="pi-0.58")
    first = _OPEN[case["file"]].get_entry(got.first_kept_entry_id)
    assert first.type == "model_change" and got.is_split_turn
    assert [m.role for m in got.turn_prefix_messages][:1] == ["user"]
