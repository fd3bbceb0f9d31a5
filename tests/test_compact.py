"""compact(): pi's cut point, the user's summarizer, and the context afterwards, in both storages."""

from __future__ import annotations

import json

import pytest

from sessionlab import (
    InMemorySessionStorage,
    JsonlSessionStorage,
    Session,
    SessionError,
    new_session_header,
    open_session,
)
from sessionlab.compaction import compact
from sessionlab.pi.compaction.compact import SPLIT_TURN_SEPARATOR
from tests._pi_expected import PI

CUT_CASES = json.loads((PI / "expected" / "compaction-cut-points.json").read_text())["cases"]


def summarize(messages, previous_summary):
    return f"{len(messages)} messages; previous: {previous_summary is not None}"


def storages(tmp_path):
    return {"memory": InMemorySessionStorage(new_session_header(session_id="c")),
            "jsonl": JsonlSessionStorage(tmp_path / "c.jsonl", header=new_session_header(session_id="c"))}


@pytest.mark.parametrize("kind", ["memory", "jsonl"])
@pytest.mark.parametrize("case", CUT_CASES, ids=[c["compactionEntryId"] for c in CUT_CASES])
def test_compact_reproduces_the_compactions_pi_made(tmp_path, kind, case):
    src = open_session(PI / case["file"], on_bad_lines="skip")
    session = Session(storages(tmp_path)[kind])
    for e in src.get_branch(case["leafId"]):
        session.storage.append_entry(e)
    keep = case["compaction"]["settings"]["keepRecentTokens"]
    cid = compact(session, keep_recent_tokens=keep, summarize=summarize, rules="pi-0.58")
    mine, pis = session.get_entry(cid), src.get_entry(case["compactionEntryId"])
    assert (mine.first_kept_entry_id, mine.tokens_before, mine.details) == (
        pis.first_kept_entry_id, pis.tokens_before, pis.details)
    prep = case["compaction"]["prepareCompaction"]
    assert mine.summary.startswith(f"{prep['messagesToSummarizeCount']} messages")
    assert (SPLIT_TURN_SEPARATOR in mine.summary) == prep["isSplitTurn"]
    assert "<read-files>" in mine.summary or not pis.details["readFiles"]
    ctx = session.build_context()
    kept = session.get_branch()[prep["firstKeptBranchIndex"]:-1]
    from sessionlab.pi.context import build_session_context
    assert ctx.messages[0].role == "compactionSummary" and ctx.messages[0].summary == mine.summary
    assert ctx.messages[1:] == build_session_context(kept).messages
    if kind == "jsonl":
        assert open_session(session.storage.file_path).build_context() == ctx
    with pytest.raises(SessionError) as err:
        compact(session, summarize=summarize)
    assert err.value.code == "already_compacted"


@pytest.mark.parametrize("kind", ["memory", "jsonl"])
def test_compact_with_retained_tail(tmp_path, kind):
    src = open_session(PI / "real" / "large-session.jsonl")
    session = Session(storages(tmp_path)[kind])
    for e in src.get_branch():
        session.storage.append_entry(e)
    before = session.build_context().messages
    cid = compact(session, summarize=summarize, retain_tail=True)
    entry = session.get_entry(cid)
    assert entry.retained_tail is not None
    ctx = session.build_context()
    assert ctx.messages[0].role == "compactionSummary"
    assert ctx.messages[1:] == list(entry.retained_tail)
    assert list(entry.retained_tail) == before[len(before) - len(entry.retained_tail):]
    assert 0 < len(entry.retained_tail) < len(before)
    if kind == "jsonl":
        assert open_session(session.storage.file_path).build_context() == ctx


def test_compact_on_empty_session_is_an_error():
    with pytest.raises(SessionError) as err:
        compact(Session(InMemorySessionStorage()), summarize=summarize)
    assert err.value.code == "nothing_to_compact"
