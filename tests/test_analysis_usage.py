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


# --- vectorised vs plain Python references --------------------------------------------------------

SAMPLES = sorted(p for p in (Path(__file__).parent / "data" / "pi").rglob("*.jsonl")
                 if "v4" not in p.parts) + sorted((DATA / "sessions").rglob("*.jsonl"))


@pytest.fixture(scope="module")
def samples():
    return entries_table(SAMPLES, on_bad_lines="skip")


def _files(table):
    rows = defaultdict(list)
    for r in table.to_pylist():
        rows[r["file"]].append(r)
    return rows


@pytest.mark.parametrize("tz", ["Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "Asia/Kolkata",
                                "Pacific/Chatham", "America/St_Johns", "UTC"])
def test_local_days_and_months_equal_zoneinfo_across_dst(tz):
    from zoneinfo import ZoneInfo

    import numpy as np
    import pyarrow as pa

    from sessionlab.analysis.usage import _day, _month

    zone = ZoneInfo(tz)
    # every 7 minutes over two years, and each second around the turns of the day near DST changes
    start = int(dt.datetime(2025, 1, 1, tzinfo=dt.UTC).timestamp() * 1000)
    ms = np.r_[np.arange(start, start + 2 * 366 * 86_400_000, 7 * 60_000),
               start + np.arange(-3_600_000, 3_600_000, 997)]
    got_day = _day(pa.array(ms, pa.timestamp("ms", tz="UTC")), tz).to_pylist()
    got_month = _month(pa.array(ms, pa.timestamp("ms", tz="UTC")), tz).to_pylist()
    for m, d, mo in zip(ms.tolist(), got_day, got_month):
        local = dt.datetime.fromtimestamp(m / 1000, zone)
        assert (d, mo) == (local.date(), local.strftime("%Y-%m")), (m, tz)


def test_usage_by_branch_and_session_equal_a_python_loop(samples):
    from tests._usage_ref import current_leaf, is_call, path_to

    want = defaultdict(lambda: [0, 0, 0.0])
    for rows in _files(samples).values():
        on = set(path_to(rows, current_leaf(rows)))
        for i, r in enumerate(rows):
            if is_call(r) or r["usage_kind"] is not None:
                w = want[(r["session_id"], "current" if i in on else "abandoned")]
                w[0] += is_call(r)
                w[1] += r["context_tokens"] or 0
                w[2] += r["cost_usd"] or 0.0
    got = usage_by(samples, by=["session_id", "branch"]).to_pylist()
    assert {(r["session_id"], r["branch"]): [r["calls"], r["total_tokens"]] for r in got} == \
        {k: v[:2] for k, v in want.items()}
    for r in got:
        assert r["cost_usd"] == pytest.approx(want[(r["session_id"], r["branch"])][2], rel=1e-12, abs=1e-12)


def test_branch_costs_equal_a_python_loop(samples):
    from tests._usage_ref import branch_sums

    files = _files(samples)
    got = branch_costs(samples).to_pylist()
    assert len(got) == len(files) > 20
    for r in got:
        want = branch_sums(files[r["file"]])
        for c in ("calls_current", "calls_abandoned", "tokens_current", "tokens_abandoned"):
            assert r[c] == want[c], (r["file"], c)
        for c in ("cost_current", "cost_abandoned"):
            assert r[c] == pytest.approx(want[c], rel=1e-12, abs=1e-12)


def test_cache_efficiency_equals_a_python_loop(samples):
    from tests._usage_ref import cache_causes

    got = {(r["session_id"], r["at_id"]): r for r in cache_efficiency(samples).to_pylist()}
    seen = set()
    for rows in _files(samples).values():
        for i, (prev, cause) in cache_causes(rows).items():
            r = got[(rows[i]["session_id"], rows[i]["entry_id"])]
            assert (r["previous_call_id"], r["invalidated_by"]) == (
                None if prev is None else rows[prev]["entry_id"], cause), rows[i]["file"]
            seen.add(cause)
    assert {"first_call", None, "compaction", "branch_switch"} <= seen
    assert len(got) == sum(len(cache_causes(rows)) for rows in _files(samples).values())


def test_branch_calls_equal_a_python_loop(samples):
    from sessionlab import branch_calls
    from tests._usage_ref import branch_calls as ref
    from tests._usage_ref import current_leaf, path_to

    got = branch_calls(samples)
    cols = ["at_id", "kind", "call_index", "prompt_tokens", "branch_switch", "tokens_before", "tokens_after"]
    want = []
    for rows in _files(samples).values():
        want += ref(rows, current_leaf(rows))
    assert got.select(cols).to_pylist() == [{c: w[c] for c in cols} for w in want]
    assert sum(got["branch_switch"].to_pylist()) >= 2 and "compaction" in got["kind"].to_pylist()
    # another branch: the path to the first call of a branchy session's abandoned part
    sid = "b627ef1d-8e91-479a-a1c3-a39e50c19172"
    rows = next(r for r in _files(samples).values() if r[0]["session_id"] == sid)
    on = set(path_to(rows, current_leaf(rows)))
    leaf = next(i for i, r in enumerate(rows) if i not in on and r["role"] == "assistant")
    other = branch_calls(samples, session_id=sid, leaf_id=rows[leaf]["entry_id"])
    assert other.select(cols).to_pylist() == [{c: w[c] for c in cols} for w in ref(rows, leaf)]
