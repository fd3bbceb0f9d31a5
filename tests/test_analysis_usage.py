"""Token accounting tables: totals against an independent per-line count, time zones, branches, cache."""

from __future__ import annotations

import datetime as dt
import json
from collections import defaultdict
from pathlib import Path

import pytest

from sessionlab import (
    AssistantMessage,
    Cost,
    JsonlSessionStorage,
    Session,
    TextContent,
    Usage,
    UserMessage,
    new_session_header,
    open_session,
)
from sessionlab.analysis import branch_costs, cache_efficiency, usage_by
from sessionlab.tables import entries_table

DATA = Path(__file__).parent.parent / "data"


@pytest.fixture(scope="module")
def table():
    return entries_table(DATA, agents=["pi"])


def independent_totals():
    """Per session: calls, the four buckets and cost, read with json.loads line by line."""
    out = defaultdict(lambda: [0, 0, 0, 0, 0, 0.0])
    for path in DATA.rglob("*.jsonl"):
        if "claude" in path.parts or "codex" in path.parts:
            continue  # (pi files only: the other agents are compared with ccusage)
        lines = path.read_text(encoding="utf-8").splitlines()
        sid = json.loads(lines[0])["id"]
        for line in lines[1:]:
            obj = json.loads(line)
            msg = obj.get("message") or {}
            if obj.get("type") == "message" and msg.get("role") == "assistant":
                u = msg.get("usage") or {}
                t = out[sid]
                t[0] += 1
                t[1] += u.get("input", 0)
                t[2] += u.get("output", 0)
                t[3] += u.get("cacheRead", 0)
                t[4] += u.get("cacheWrite", 0)
                t[5] += (u.get("cost") or {}).get("total", 0)
    return out


def test_usage_by_session_equals_an_independent_count(table):
    want = independent_totals()
    got = usage_by(table, by="session_id").to_pylist()
    assert len(got) == len(want) == 7
    for r in got:
        w = want[r["session_id"]]
        assert [r["calls"], r["input_tokens"], r["output_tokens"], r["cache_read_tokens"], r["cache_write_tokens"]] == w[:5]
        assert r["cost_usd"] == pytest.approx(w[5], rel=1e-12)


def test_groupings_add_up(table):
    total = usage_by(table, by="session_id")
    for by in (["model"], ["provider", "model"], ["day"], ["branch"], ["day", "model"], ["stop_reason"]):
        t = usage_by(table, by=by)
        assert sum(t["calls"].to_pylist()) == sum(total["calls"].to_pylist())
        assert sum(t["total_tokens"].to_pylist()) == sum(total["total_tokens"].to_pylist())
    models = {r["model"]: r["calls"] for r in usage_by(table, by="model").to_pylist()}
    assert set(models) == {"claude-opus-4-5", "claude-sonnet-4-5", "gemini-2.5-pro", "gpt-5.1-codex"}
    with pytest.raises(ValueError):
        usage_by(table, by="colour")


def _call(session, when: dt.datetime, cost=1.0):
    ts = when.isoformat(timespec="milliseconds").replace("+00:00", "Z")
    msg = AssistantMessage(content=(TextContent(text="x"),), provider="p", model="m", stop_reason="stop",
                           usage=Usage(input=10, output=1, cache_read=0, cache_write=0, total_tokens=11,
                                       cost=Cost(total=cost)), timestamp=0)
    from sessionlab import MessageEntry
    return session.append_typed_entry(MessageEntry(id=session.storage.create_entry_id(),
                                                   parent_id=session.get_leaf_id(), timestamp=ts, message=msg))


@pytest.mark.parametrize("tz,days", [
    ("UTC", {"2026-03-07": 1, "2026-03-08": 2}),
    ("Asia/Tokyo", {"2026-03-08": 3}),
    ("America/Los_Angeles", {"2026-03-07": 3}),
    ("America/New_York", {"2026-03-07": 2, "2026-03-08": 1}),
])
def test_days_are_cut_in_the_time_zone_asked_for(tmp_path, tz, days):
    s = Session(JsonlSessionStorage(tmp_path / "d.jsonl", header=new_session_header(session_id="d")))
    utc = dt.UTC
    for when in (dt.datetime(2026, 3, 7, 23, 59, 59, 999000, tzinfo=utc),   # NY: Mar 7, 18:59
                 dt.datetime(2026, 3, 8, 0, 0, 0, tzinfo=utc),              # NY: Mar 7, 19:00
                 dt.datetime(2026, 3, 8, 7, 30, tzinfo=utc)):               # NY: Mar 8 (after DST)
        _call(s, when)
    got = {str(r["day"]): r["calls"] for r in usage_by(entries_table(tmp_path), by="day", tz=tz).to_pylist()}
    assert got == days


def test_branch_costs_match_the_object_model(table):
    rows = branch_costs(table).to_pylist()
    assert len(rows) == 7
    some_abandoned = 0
    for r in rows:
        s = open_session(r["file"])
        tree, branch = s.get_session_stats("tree"), s.get_session_stats("branch")
        assert r["cost_current"] == pytest.approx(branch.cost_total)
        assert r["cost_current"] + r["cost_abandoned"] == pytest.approx(tree.cost_total)
        assert r["tokens_current"] == branch.total_tokens
        assert r["calls_current"] == branch.messages_by_role.get("assistant", 0)
        some_abandoned += r["cost_abandoned"] > 0
    assert some_abandoned >= 2


def test_cache_efficiency_names_what_broke_the_cache(tmp_path):
    s = Session(JsonlSessionStorage(tmp_path / "c.jsonl", header=new_session_header(session_id="c")))

    def call(model="m1", read=0, write=100, inp=10):
        return s.append_message(AssistantMessage(
            content=(TextContent(text="x"),), provider="p", model=model, stop_reason="stop", timestamp=0,
            usage=Usage(input=inp, output=1, cache_read=read, cache_write=write, total_tokens=inp + read + write + 1)))

    s.append_message(UserMessage(content="a", timestamp=0))
    c1 = call()
    s.append_message(UserMessage(content="b", timestamp=0))
    c2 = call(read=100, write=20)
    s.append_model_change("p", "m2")
    c3 = call(model="m2", write=130)
    s.append_compaction("S", None, 200)
    c4 = call(model="m2", write=50)
    s.move_to(c2)
    c5 = call(read=60, write=10, inp=30)
    rows = {r["at_id"]: r for r in cache_efficiency(entries_table(tmp_path)).to_pylist()}
    assert [rows[c]["invalidated_by"] for c in (c1, c2, c3, c4, c5)] == [
        "first_call", None, "model_change", "compaction", "branch_switch"]
    assert rows[c2]["hit_ratio"] == pytest.approx(100 / 130)
    assert rows[c5]["previous_call_id"] == c2 and rows[c5]["prompt_tokens"] == 100
    assert rows[c1]["hit_ratio"] == 0.0
