"""Weekly usage and billing blocks, against the real ccusage 20.0.24 and a plain reference.

The expected JSON is ccusage's own output (``tools/ccusage_expected.sh``): ``claude weekly`` and
``claude blocks`` on the Claude Code fixtures, the all-agents ``ccusage weekly`` (weeks from
Monday) on the Codex and pi fixtures. No fixture has a call in the last 5 hours, so no block is
active there; the active block (burn rate, projection, token limit) is tested with ``now=``.
Every difference from ccusage is stated exactly here and in docs/ccusage-differences.md.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sessionlab import OptionError, billing_blocks, billing_blocks_df, load, usage_by
from sessionlab.analysis._blocks import block_starts
from sessionlab.cli import main
from sessionlab.errors import ArgumentTypeError, ArgumentValueError
from sessionlab.tables._schema import ENTRY_SCHEMA
from tests.test_ccusage import _replayed_sidechain_rows

ROOT = Path(__file__).parent.parent
DATA = Path(__file__).parent / "data"
CLAUDE = {"generated": DATA / "claude" / "generated", "real": DATA / "claude" / "real" / "apanloco-random-session.jsonl",
          "longctx": DATA / "claude" / "longctx", "codemie": DATA / "claude" / "real" / "codemie"}
_TOKENS = {"inputTokens": "input_tokens", "outputTokens": "output_tokens", "cacheReadTokens": "cache_read_tokens",
           "cacheCreationTokens": "cache_write_tokens", "totalTokens": "total_tokens"}
_BLOCK_TOKENS = {"inputTokens": "input_tokens", "outputTokens": "output_tokens",
                 "cacheReadInputTokens": "cache_read_tokens", "cacheCreationInputTokens": "cache_write_tokens"}
UTC = dt.UTC


def _json(path: Path) -> dict:
    return json.loads(path.read_text())


def _claude(name: str, report: str) -> dict:
    return _json(DATA / "claude" / "expected" / f"ccusage-{name}-{report}.json")


def _close(a: float, b: float, rel: float = 0.01) -> bool:
    return abs(a - b) <= rel * max(abs(b), 1e-9)


def _iso(t) -> str | None:
    return None if t is None else t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


@pytest.fixture(scope="module")
def corpora():
    return {k: load(v, cache=False, progress=False) for k, v in CLAUDE.items()}


# -- weekly ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["real", "codemie", "longctx"])
def test_claude_weekly_equals_ccusage(corpora, name):
    exp = _claude(name, "weekly")["weekly"]
    got = {str(r["week"]): r for r in usage_by(corpora[name], by="week").to_pylist()}
    assert list(got) == [e["week"] for e in exp]
    for e in exp:
        for k, col in _TOKENS.items():
            assert got[e["week"]][col] == e[k], (e["week"], k)
        if name != "longctx":  # (the long-context tier: difference 1)
            assert _close(got[e["week"]]["cost_usd"], e["totalCost"])
    models = usage_by(corpora[name], by=["week", "model"]).to_pylist()
    for e in exp:
        for m in e["modelBreakdowns"]:
            (g,) = [r for r in models if str(r["week"]) == e["week"] and r["model"] == m["modelName"]]
            assert (g["input_tokens"], g["output_tokens"]) == (m["inputTokens"], m["outputTokens"])


@pytest.mark.parametrize("start,report", [("sunday", "weekly"), ("monday", "weekly-monday")])
def test_claude_generated_weekly_differs_by_the_replayed_sidechain_copies(corpora, start, report):
    """As ccusage's monthly report (difference 2): its weekly report counts a subagent's replay of
    a parent response again; the gap is exactly those copies."""
    exp = _claude("generated", report)["weekly"]
    got = {str(r["week"]): r for r in usage_by(corpora["generated"], by="week", week_start=start).to_pylist()}
    assert list(got) == [e["week"] for e in exp] == (["2026-01-25", "2026-02-01"] if start == "sunday" else
                                                     ["2026-01-26", "2026-02-02"])
    replays = _replayed_sidechain_rows(None)
    seen = 0
    for e in exp:
        first = dt.date.fromisoformat(e["week"])
        inside = [r for r in replays if 0 <= (dt.date.fromisoformat(r["ts"][:10]) - first).days < 7]
        seen += len(inside)
        for k, field in (("inputTokens", "input_tokens"), ("outputTokens", "output_tokens"),
                         ("cacheReadTokens", "cache_read_input_tokens"),
                         ("cacheCreationTokens", "cache_creation_input_tokens")):
            assert got[e["week"]][_TOKENS[k]] + sum(r["u"][field] for r in inside) == e[k], (e["week"], k)
    assert seen == len(replays) == 2


@pytest.mark.parametrize("agent,path,name", [
    ("codex", DATA / "codex" / "generated", "generated"), ("codex", DATA / "codex" / "real" / "localpush", "localpush"),
    ("pi", [ROOT / "data" / "pi", ROOT / "data" / "sessions"], "data"),
    ("pi", DATA / "pi" / "generated-1.6", "generated-1.6")])
def test_all_agents_weekly_equals_ccusage_with_weeks_from_monday(agent, path, name):
    """ccusage's all-agents ``weekly`` starts weeks on Monday (``claude weekly``: Sunday). On pi
    1.6's files the message spend is equal; the rest ccusage leaves out (difference 4)."""
    folder = DATA / agent / ("expected" if agent == "codex" else "ccusage")
    exp = _json(folder / f"ccusage-{name}-weekly.json")["weekly"]
    rows = usage_by(load(path, cache=False, progress=False), by=["week", "usage_kind"], week_start="monday")
    got = {str(r["week"]): r for r in rows.to_pylist() if r["usage_kind"] in ("message", None)}
    assert list(got) == [e["period"] for e in exp]
    for e in exp:
        for k, col in _TOKENS.items():
            assert got[e["period"]][col] == e[k], (e["period"], k)
        assert _close(got[e["period"]]["cost_usd"], e["totalCost"])
    if name == "generated-1.6":
        assert rows.num_rows > len(got)


def test_week_start_and_time_zone():
    t = _table([dt.datetime(2026, 3, 1, 23, 30, tzinfo=UTC)])  # a Sunday, late evening in UTC
    week = lambda **kw: str(usage_by(t, by="week", **kw)["week"][0])  # noqa: E731
    assert week() == "2026-03-01"
    assert week(week_start="monday") == "2026-02-23"
    assert week(week_start="saturday") == "2026-02-28"
    assert week(tz="Asia/Tokyo") == "2026-03-01" and week(tz="Asia/Tokyo", week_start="monday") == "2026-03-02"
    with pytest.raises(OptionError, match="week_start"):
        usage_by(t, by="week", week_start="Monday")


# -- blocks against ccusage -----------------------------------------------------------------------
def _compare_blocks(got: list[dict], exp: list[dict], *, cost: bool = True, times: bool = True) -> None:
    assert [g["block_id"] for g in got] == [e["id"] for e in exp]
    for g, e in zip(got, exp):
        assert (_iso(g["start_time"]), _iso(g["end_time"])) == (e["startTime"], e["endTime"])
        if times:
            assert _iso(g["actual_end_time"]) == e["actualEndTime"]
        assert (g["is_gap"], g["is_active"], g["calls"], g["models"]) == (e["isGap"], e["isActive"], e["entries"],
                                                                          e["models"])
        for k, col in _BLOCK_TOKENS.items():
            assert g[col] == e["tokenCounts"][k], (e["id"], k)
        assert g["total_tokens"] == e["totalTokens"]
        assert not cost or _close(g["cost_usd"], e["costUSD"])
        assert g["tokens_per_minute"] is None and g["projected_total_tokens"] is None


@pytest.mark.parametrize("name", ["real", "longctx"])
def test_blocks_equal_ccusage(corpora, name):
    _compare_blocks(billing_blocks(corpora[name]).to_pylist(), _claude(name, "blocks")["blocks"],
                    cost=name != "longctx")


def _winner_times(folder: Path) -> dict[str, str]:
    """Per message id, the time of the line ccusage keeps: not a sidechain copy if there is
    another, then the largest token total, then the first."""
    best: dict[str, tuple] = {}
    for path in sorted(folder.rglob("*.jsonl")):
        for ln in path.read_text().splitlines():
            d = json.loads(ln)
            m = d.get("message")
            if d.get("type") != "assistant" or not isinstance(m, dict) or not m.get("usage") or not m.get("id"):
                continue
            u = m["usage"]
            key = (not d.get("isSidechain"), sum(u.get(k) or 0 for k in ("input_tokens", "output_tokens",
                                                                          "cache_read_input_tokens",
                                                                          "cache_creation_input_tokens")))
            if m["id"] not in best or key > best[m["id"]][0]:
                best[m["id"]] = (key, d["timestamp"])
    return {k: v[1] for k, v in best.items()}


def test_codemie_blocks_differ_only_by_the_time_of_a_response(corpora):
    """A response streamed over several lines (one per content block) is one call: sessionlab
    times it by its first line, ccusage by the line whose usage it keeps (the largest: mostly the
    last, seconds later). Tokens, calls, models and block starts are equal; retimed as ccusage
    times them, the blocks are equal in every field (difference 6)."""
    exp = _claude("codemie", "blocks")["blocks"]
    got = billing_blocks(corpora["codemie"]).to_pylist()
    _compare_blocks([g for g in got if not g["is_gap"]], [e for e in exp if not e["isGap"]], times=False)
    moved = [(g["actual_end_time"], e["actualEndTime"]) for g, e in zip(got, exp)
             if _iso(g["actual_end_time"]) != e["actualEndTime"]]
    assert len(moved) == 5 and all(0 < (dt.datetime.fromisoformat(e) - g).total_seconds() < 80 for g, e in moved)
    _compare_blocks(billing_blocks(_retimed(corpora["codemie"], CLAUDE["codemie"])).to_pylist(), exp)


def _retimed(corpus, folder: Path) -> pa.Table:
    """The entries table with each counted response at the time ccusage gives it."""
    t = corpus.entries
    when = _winner_times(folder)
    counted = np.asarray(pc.is_valid(t["input_tokens"]).to_numpy(zero_copy_only=False))
    ts = [dt.datetime.fromisoformat(when[m]) if c and m in when else old
          for c, m, old in zip(counted, t["message_id"].to_pylist(), t["timestamp"].to_pylist())]
    return t.set_column(t.schema.get_field_index("timestamp"), "timestamp",
                        pa.array(ts, t.schema.field("timestamp").type))


@pytest.mark.parametrize("report,hours", [("blocks", 5), ("blocks-2h", 2)])
def test_generated_blocks_differ_by_the_replayed_sidechain_copies(corpora, report, hours):
    """ccusage's blocks count a subagent's replay of a parent response again (difference 2): each
    block's gap to ccusage is exactly the copies in its window (its times: difference 6)."""
    exp = _claude("generated", report)["blocks"]
    plain = billing_blocks(corpora["generated"], hours=hours).to_pylist()
    assert [g["block_id"] for g in plain if not g["is_gap"]] == [e["id"] for e in exp if not e["isGap"]]
    got = billing_blocks(_retimed(corpora["generated"], CLAUDE["generated"]), hours=hours).to_pylist()
    assert [g["block_id"] for g in got] == [e["id"] for e in exp]
    replays = _replayed_sidechain_rows(None)
    seen = 0
    for g, e in zip(got, exp):
        inside = [r for r in replays if not g["is_gap"] and
                  g["start_time"] <= dt.datetime.fromisoformat(r["ts"]) <= g["actual_end_time"]]
        seen += len(inside)
        assert g["calls"] + len(inside) == e["entries"]
        for k, field in (("inputTokens", "input_tokens"), ("outputTokens", "output_tokens"),
                         ("cacheReadInputTokens", "cache_read_input_tokens"),
                         ("cacheCreationInputTokens", "cache_creation_input_tokens")):
            assert g[_BLOCK_TOKENS[k]] + sum(r["u"][field] for r in inside) == e["tokenCounts"][k]
        assert (_iso(g["start_time"]), _iso(g["end_time"]), _iso(g["actual_end_time"])) == (
            e["startTime"], e["endTime"], e["actualEndTime"])
    assert seen == 2


def test_blocks_of_every_agent():
    """ccusage's blocks count Claude Code's calls only; sessionlab's every agent's: the blocks of
    the Codex and pi fixtures hold all their tokens."""
    for path in (DATA / "codex" / "generated", ROOT / "data" / "pi"):
        c = load(path, cache=False, progress=False)
        b = billing_blocks(c)
        day = usage_by(c, by="day")
        tokens = sum(pc.sum(day[k]).as_py() for k in ("input_tokens", "output_tokens", "cache_read_tokens",
                                                       "cache_write_tokens"))
        assert pc.sum(b["total_tokens"]).as_py() == tokens > 0
        assert pc.sum(b["calls"]).as_py() == pc.sum(day["calls"]).as_py()


# -- the active block ----------------------------------------------------------------------------
def _table(times, tokens=None, costs=None, models=None) -> pa.Table:
    """An entries table of assistant calls at ``times`` (the columns usage_by and billing_blocks read)."""
    n = len(times)
    tokens = tokens or [100] * n
    cols = {f.name: pa.nulls(n, f.type) for f in ENTRY_SCHEMA}
    cols.update(session_id=pa.array(["s"] * n), file=pa.array(["f.jsonl"] * n), type=pa.array(["message"] * n),
                role=pa.array(["assistant"] * n), timestamp=pa.array(times, ENTRY_SCHEMA.field("timestamp").type),
                model=pa.array(models or ["m"] * n), input_tokens=pa.array(tokens, pa.int64()),
                output_tokens=pa.array([0] * n, pa.int64()), cache_read_tokens=pa.array([0] * n, pa.int64()),
                cache_write_tokens=pa.array([0] * n, pa.int64()), context_tokens=pa.array(tokens, pa.int64()),
                cost_usd=pa.array(costs or [0.001 * x for x in tokens], pa.float64()))
    return pa.table(cols, schema=ENTRY_SCHEMA)


def _at(h: int, m: int = 0, s: int = 0, day: int = 1) -> dt.datetime:
    return dt.datetime(2026, 3, day, h, m, s, tzinfo=UTC)


def test_active_block_burn_rate_projection_and_limit():
    # a finished block of 1000 tokens, a 6h pause, then calls at 10:10 and 10:40: 300 tokens in 30 minutes
    t = _table([_at(2, 5), _at(10, 10), _at(10, 40)], tokens=[1000, 100, 200], costs=[1.0, 0.1, 0.2])
    rows = billing_blocks(t, now=_at(11), token_limit=3000).to_pylist()
    assert [r["block_id"] for r in rows] == ["2026-03-01T02:00:00.000Z", "gap-2026-03-01T07:05:00.000Z",
                                             "2026-03-01T10:00:00.000Z"]
    assert [r["is_active"] for r in rows] == [False, False, True]
    a = rows[2]
    assert a["tokens_per_minute"] == 10.0 and a["tokens_per_minute_for_indicator"] == 10.0
    assert a["cost_per_hour"] == pytest.approx(0.6)
    assert a["remaining_minutes"] == 240  # 11:00 to 15:00
    assert a["projected_total_tokens"] == 300 + 10 * 240
    assert a["projected_cost_usd"] == 2.7
    assert (a["token_limit"], a["projected_percent"], a["limit_status"]) == (3000, 90.0, "warning")
    assert a["limit_percent"] == 10.0
    assert rows[0]["limit_status"] is None and rows[0]["tokens_per_minute"] is None
    assert rows[1]["token_limit"] is None  # a gap has no limit
    status = lambda limit: billing_blocks(t, now=_at(11), token_limit=limit)["limit_status"][2].as_py()  # noqa: E731
    assert (status(2000), status(4000), status("max")) == ("exceeds", "ok", "exceeds")  # max: 1000


def test_token_limit_max_is_the_largest_finished_block():
    t = _table([_at(2, 5), _at(10, 10), _at(10, 40)], tokens=[1000, 100, 200])
    b = billing_blocks(t, now=_at(11), token_limit="max")
    assert b["token_limit"].to_pylist() == [1000, None, 1000]
    assert b["projected_percent"][2].as_py() == pytest.approx(2700 / 1000 * 100)
    assert b["limit_status"][2].as_py() == "exceeds"
    only = billing_blocks(t, now=_at(11), token_limit="max", keep="active")  # no finished block kept: no limit
    assert only.num_rows == 1 and only["token_limit"][0].as_py() is None


def test_when_a_block_is_active():
    t = _table([_at(10, 10), _at(10, 40)])
    active = lambda now: billing_blocks(t, now=now)["is_active"].to_pylist()  # noqa: E731
    assert active(_at(14, 59)) == [True]
    assert active(_at(15)) == [False]  # the window is over
    assert active(_at(10, 40)) == [True]
    one = _table([_at(10, 10)])  # a single call: active, but no rate (no time between calls)
    r = billing_blocks(one, now=_at(11)).to_pylist()[0]
    assert r["is_active"] and r["tokens_per_minute"] is None and r["projected_total_tokens"] is None
    assert billing_blocks(t, now=dt.datetime(2026, 3, 1, 11)).to_pylist()[0]["is_active"]  # naive: UTC


def test_keep_since_until_and_hours():
    t = _table([_at(2, 5), _at(10, 10), _at(10, 40, day=5)])
    assert billing_blocks(t, now=_at(11, day=5), keep="recent")["block_id"].to_pylist() == [
        "2026-03-05T10:00:00.000Z"]
    assert billing_blocks(t, now=_at(11, day=5), keep="active").num_rows == 1
    assert billing_blocks(t, now=_at(20, day=5), keep="active").num_rows == 0
    # the gap after 10:10 starts at 15:10 on the 1st: it goes with that day
    assert billing_blocks(t, since="2026-03-02")["block_id"].to_pylist() == ["2026-03-05T10:00:00.000Z"]
    assert billing_blocks(t, until="20260301").num_rows == 4
    ten = billing_blocks(t, hours=10)  # 10:10 is within 10 hours of 02:00: one block
    assert ten["block_id"].to_pylist()[:2] == ["2026-03-01T02:00:00.000Z", "gap-2026-03-01T20:10:00.000Z"]
    assert ten["calls"][0].as_py() == 2
    df = billing_blocks_df(t)
    assert list(df.columns) == [c.name for c in billing_blocks.columns] and len(df) == 5


def test_bad_arguments():
    t = _table([_at(10)])
    with pytest.raises(OptionError):
        billing_blocks(t, keep="some")
    for bad in (0, -5, "10", 1.5, True):
        with pytest.raises(ArgumentValueError, match="token_limit"):
            billing_blocks(t, token_limit=bad)
    with pytest.raises(ArgumentValueError, match="hours"):
        billing_blocks(t, hours=0)
    with pytest.raises(ArgumentTypeError, match="now"):
        billing_blocks(t, now="2026-03-01")
    empty = billing_blocks(t.slice(0, 0))
    assert empty.num_rows == 0 and empty.schema == billing_blocks(t).schema


# -- a plain reference ----------------------------------------------------------------------------
H = 3_600_000


def _reference(times: list[int], tokens: list[int], now: int, length: int) -> list[tuple]:
    """ccusage's identify_session_blocks, line by line: (id-ish start, end, last call, calls,
    tokens, active, gap) per block, sorted by start as ccusage sorts them."""
    entries = sorted(zip(times, tokens), key=lambda e: e[0])
    blocks: list[list] = []
    start = None
    cur: list = []

    def close(start, cur):
        last = cur[-1][0]
        end = start + length
        return [start, end, last, len(cur), sum(x for _, x in cur), now - last < length and now < end, False]

    for t, x in entries:
        if start is not None:
            last = cur[-1][0] if cur else start
            if t - start > length or t - last > length:
                blocks.append(close(start, cur))
                if t - last > length:
                    blocks.append([last + length, t, None, 0, 0, False, True])
                start, cur = t // H * H, []
        else:
            start = t // H * H
        cur.append((t, x))
    if start is not None and cur:
        blocks.append(close(start, cur))
    return [tuple(b) for b in sorted(blocks, key=lambda b: b[0])]


_times = st.lists(st.integers(0, 40 * H), min_size=0, max_size=40)


@settings(max_examples=200, deadline=None)
@given(_times, st.sampled_from([0.5, 1, 2, 5, 7.5]), st.integers(0, 45 * H))
def test_blocks_equal_the_plain_reference(offsets, hours, now_offset):
    base = int(dt.datetime(2026, 3, 1, tzinfo=UTC).timestamp() * 1000)
    times = [base + o for o in offsets]
    tokens = [1 + i for i in range(len(times))]
    length = int(hours * H)
    t = _table([dt.datetime.fromtimestamp(x / 1000, UTC) for x in times], tokens=tokens)
    got = billing_blocks(t, hours=hours, now=dt.datetime.fromtimestamp((base + now_offset) / 1000, UTC))
    ms = lambda col: [None if v is None else int(v.timestamp() * 1000) for v in got[col].to_pylist()]  # noqa: E731
    rows = list(zip(ms("start_time"), ms("end_time"), ms("actual_end_time"), got["calls"].to_pylist(),
                    got["total_tokens"].to_pylist(), got["is_active"].to_pylist(), got["is_gap"].to_pylist()))
    assert rows == _reference(times, tokens, base + now_offset, length)


@settings(max_examples=200, deadline=None)
@given(_times, st.sampled_from([0.25, 1, 5]))
def test_block_starts_equal_the_reference(offsets, hours):
    t = np.sort(np.asarray(offsets, np.int64) + 1_770_000_000_000)
    length = int(hours * H)
    firsts, start = [], None
    for i, x in enumerate(t.tolist()):  # the plain scan
        if start is None or x - start > length or x - t[i - 1] > length:
            firsts.append(i)
            start = x // H * H
    assert block_starts(t, length).tolist() == firsts


# -- the command line -----------------------------------------------------------------------------
def _run(capsys, *args) -> str:
    assert main(["usage", *map(str, args)]) == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("name", ["real", "longctx"])
def test_cli_blocks_json_is_ccusages(capsys, name):
    got = json.loads(_run(capsys, "blocks", CLAUDE[name], "--json"))
    exp = _claude(name, "blocks")
    if name == "real":
        assert got == exp
    else:  # the long-context tier (difference 1): equal but the cost
        for g, e in zip(got["blocks"], exp["blocks"]):
            g.pop("costUSD"), e.pop("costUSD")
        assert got == exp


def test_cli_weekly_json(capsys):
    got = json.loads(_run(capsys, "weekly", CLAUDE["codemie"], "--json"))
    exp = _claude("codemie", "weekly")
    assert [w["week"] for w in got["weekly"]] == [w["week"] for w in exp["weekly"]]
    for g, e in zip(got["weekly"], exp["weekly"]):
        for k in _TOKENS:
            assert g[k] == e[k]
        assert g["totalCost"] == pytest.approx(e["totalCost"], rel=0.01)
        assert sorted(g["modelsUsed"]) == sorted(e["modelsUsed"])
    monday = json.loads(_run(capsys, "weekly", CLAUDE["generated"], "--json", "--start-of-week", "monday"))
    assert [w["week"] for w in monday["weekly"]] == ["2026-01-26", "2026-02-02"]
    csv = _run(capsys, "weekly", CLAUDE["generated"], "--csv")
    assert csv.splitlines()[0].startswith("week,") and csv.splitlines()[1].startswith("2026-01-25,")
    assert "Token usage and cost by week" in _run(capsys, "weekly", CLAUDE["generated"])


def test_cli_blocks_options_and_table(capsys):
    assert json.loads(_run(capsys, "blocks", CLAUDE["generated"], "--json", "--active")) == {"blocks": []}
    assert json.loads(_run(capsys, "blocks", CLAUDE["generated"], "--json", "--recent")) == {"blocks": []}
    two = json.loads(_run(capsys, "blocks", CLAUDE["generated"], "--json", "--session-length", "2"))
    assert len(two["blocks"]) == len(_claude("generated", "blocks-2h")["blocks"])
    out = _run(capsys, "blocks", CLAUDE["generated"])
    assert "Token usage and cost by billing block" in out and "16h gap" in out and "% of limit" in out
    assert "100.0%" in out  # without --token-limit the largest finished block is the limit, as in ccusage
    assert main(["usage", "blocks", str(CLAUDE["generated"]), "--token-limit", "lots"]) == 2
    assert "token-limit" in capsys.readouterr().err
    assert main(["usage", "blocks", str(CLAUDE["generated"]), "--csv"]) == 2
    assert "--json" in capsys.readouterr().err


def test_cli_blocks_active_table(capsys, monkeypatch):
    from sessionlab.cli import _blocks

    rows = billing_blocks(_table([_at(10, 10), _at(10, 40)], tokens=[100, 200]), now=_at(11),
                          token_limit=1000).to_pylist()
    _blocks.render_blocks(rows, tz="Europe/Vienna")
    out = capsys.readouterr().out
    assert "2026-03-01 11:00" in out and "ACTIVE" in out and "REMAINING" in out and "700" in out
    assert "PROJECTED" in out and "2,700" in out and "270.0%" in out
    j = _blocks._block_json(rows[0])
    assert j["burnRate"] == {"tokensPerMinute": 10.0, "tokensPerMinuteForIndicator": 10.0,
                             "costPerHour": pytest.approx(0.6)}
    assert j["projection"] == {"totalTokens": 2700, "totalCost": 2.7, "remainingMinutes": 240}
    assert j["tokenLimitStatus"] == {"limit": 1000, "projectedUsage": 2700, "percentUsed": 270.0,
                                     "status": "exceeds"}
