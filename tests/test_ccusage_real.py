"""Usage reports against the real ccusage 20.0.24 on real files, and on pi's.

The expected JSON is ccusage's own output (``tools/ccusage_expected.sh``) on the real Claude Code
transcripts (tests/data/claude/real/codemie: Bedrock, no ``requestId``), the real Codex Desktop
rollouts (tests/data/codex/real/localpush), the Codex shapes no real file shows, and the
repository's pi files. Every difference is stated exactly here and in docs/ccusage-differences.md.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from pathlib import Path

import pyarrow.compute as pc
import pytest

from sessionlab import load, usage_by
from sessionlab.pricing import price_calls

ROOT = Path(__file__).parent.parent
DATA = Path(__file__).parent / "data"
CLAUDE = DATA / "claude" / "real" / "codemie"
CODEX = DATA / "codex" / "real" / "localpush"
SHAPES = DATA / "codex" / "shapes"
BEDROCK = "converse/jp.anthropic.claude-haiku-4-5-20251001-v1:0"

_TOKENS = {"inputTokens": "input_tokens", "outputTokens": "output_tokens", "cacheReadTokens": "cache_read_tokens",
           "cacheCreationTokens": "cache_write_tokens", "totalTokens": "total_tokens"}
_CODEX = {"inputTokens": "input_tokens", "outputTokens": "output_tokens", "cacheReadTokens": "cache_read_tokens",
          "reasoningOutputTokens": "reasoning_tokens", "totalTokens": "total_tokens"}


def _expected(path: Path) -> dict:
    return json.loads(path.read_text())


def _close(a: float, b: float, rel: float = 0.01) -> bool:
    return abs(a - b) <= rel * max(abs(b), 1e-9)


@pytest.fixture(scope="module")
def claude():
    return load(CLAUDE, cache=False)


@pytest.fixture(scope="module")
def codex():
    return load(CODEX, cache=False)


# -- Codex: equal ---------------------------------------------------------------------------------
@pytest.mark.parametrize("report,by,key", [("daily", "day", "date"), ("monthly", "month", "month"),
                                           ("session", "file", "sessionId")])
def test_codex_real_reports_equal_ccusage(codex, report, by, key):
    exp = _expected(DATA / "codex" / "expected" / f"ccusage-localpush-{report}.json")
    rows = exp["daily" if report == "daily" else "monthly" if report == "monthly" else "sessions"]
    got = {}
    for r in usage_by(codex, by=by).to_pylist():
        k = str(r[by]) if by != "file" else str(Path(r[by]).relative_to(CODEX / "sessions"))[:-len(".jsonl")]
        got[k] = r
    assert sorted(got) == sorted(e[key] for e in rows) and len(rows) == (2 if report == "daily" else
                                                                         1 if report == "monthly" else 6)
    for e in rows:
        for k, col in _CODEX.items():
            assert got[e[key]][col] == e[k], (e[key], k)
        assert _close(got[e[key]]["cost_usd"], e["costUSD"])
    assert exp["totals"]["totalTokens"] == 50_062_931


@pytest.mark.parametrize("shape", ["no-model", "tool-search"])
def test_codex_shapes_equal_ccusage(shape):
    c = load(SHAPES / shape, cache=False)
    (e,) = _expected(DATA / "codex" / "expected" / f"ccusage-{shape}-daily.json")["daily"]
    (g,) = usage_by(c, by="day").to_pylist()
    for k, col in _CODEX.items():
        assert g[col] == e[k], k
    assert _close(g["cost_usd"], e["costUSD"])
    (model, m), = e["models"].items()
    src = set(c.entries.filter(pc.is_valid(c.entries["input_tokens"]))["cost_source"].to_pylist())
    # ccusage's fallback model is sessionlab's, flagged the same way
    assert (model, m.get("isFallback", False), src) == (("gpt-5", True, {"fallback"}) if shape == "no-model"
                                                        else ("gpt-5.4", False, {"priced"}))


# -- Claude Code without requestId: ccusage's daily report adds up every streamed line ----------------
def _assistant_lines():
    for p in sorted(CLAUDE.rglob("*.jsonl")):
        for ln in p.read_text(encoding="utf-8").splitlines():
            d = json.loads(ln)
            if d.get("type") == "assistant" and (d.get("message") or {}).get("usage"):
                yield d


def _tokens(u: dict) -> tuple[int, int, int, int]:
    return (u["input_tokens"], u["output_tokens"], u.get("cache_read_input_tokens", 0),
            u.get("cache_creation_input_tokens", 0))


def _add(acc: Counter, t: tuple) -> None:
    for k, v in zip(("inputTokens", "outputTokens", "cacheReadTokens", "cacheCreationTokens"), t):
        acc[k] += v


def _ccusage_daily_rule() -> tuple[dict[str, Counter], dict[str, dict[str, tuple]]]:
    """Per day: (the lines ccusage's daily report counts, summed; each response's largest usage).
    ccusage counts every line of a main file and one line (the largest) per message id of the
    sidechain lines."""
    ccusage: dict[str, Counter] = defaultdict(Counter)
    once: dict[str, dict[str, tuple]] = defaultdict(dict)
    side: dict[str, dict[str, tuple]] = defaultdict(dict)
    for d in _assistant_lines():
        day, mid, t = d["timestamp"][:10], d["message"]["id"], _tokens(d["message"]["usage"])
        if not d.get("isSidechain"):
            _add(ccusage[day], t)
        elif mid not in side[day] or sum(t) > sum(side[day][mid]):
            side[day][mid] = t
        if mid not in once[day] or sum(t) > sum(once[day][mid]):
            once[day][mid] = t
    for day, by_mid in side.items():
        for t in by_mid.values():
            _add(ccusage[day], t)
    return ccusage, once


def test_claude_real_files_have_no_request_id():
    lines = list(_assistant_lines())
    assert len(lines) == 356 and not any(d.get("requestId") for d in lines)
    assert sum(d["message"]["id"].startswith("msg_bdrk_") for d in lines) == 355  # written through Bedrock


def test_claude_daily_without_request_id_adds_up_every_streamed_line(claude):
    """ccusage 20.0.24's ``claude daily`` dedupes on (message id, requestId): with no requestId a
    response's streamed lines (one per content block, each repeating the usage) all count, except
    sidechain copies, which it dedupes on the message id. sessionlab counts each response once
    (its largest usage, as ccusage does when a requestId is there)."""
    ccusage, once = _ccusage_daily_rule()
    exp = {e["date"]: e for e in _expected(DATA / "claude" / "expected" / "ccusage-codemie-daily.json")["daily"]}
    got = {str(r["day"]): r for r in usage_by(claude, by="day").to_pylist()}
    assert sorted(exp) == sorted(got) == sorted(ccusage)
    ratios = {}
    for day, e in exp.items():
        assert {k: e[k] for k in ccusage[day]} == dict(ccusage[day]), day  # the rule reproduces ccusage
        mine: Counter = Counter()
        for t in once[day].values():
            _add(mine, t)
        for k, col in _TOKENS.items():
            if k != "totalTokens":
                assert got[day][col] == mine[k], (day, k)  # sessionlab: once per response
        ratios[day] = e["totalTokens"] / got[day]["total_tokens"]
    assert {d: round(r, 2) for d, r in ratios.items()} == {
        "2025-12-10": 1.37, "2026-01-07": 2.32, "2026-01-08": 2.72, "2026-01-11": 2.34, "2026-01-14": 2.08,
        "2026-01-15": 2.27}
    total = sum(e["totalTokens"] for e in exp.values()) / sum(r["total_tokens"] for r in got.values())
    assert round(total, 2) == 2.43
    monthly = _expected(DATA / "claude" / "expected" / "ccusage-codemie-monthly.json")["totals"]["totalCost"]
    daily = _expected(DATA / "claude" / "expected" / "ccusage-codemie-daily.json")["totals"]["totalCost"]
    mine = sum(r["cost_usd"] for r in got.values())
    assert (round(daily, 2), round(mine, 2), round(monthly, 2)) == (44.06, 18.63, 18.63)


@pytest.mark.parametrize("report,by,key", [("monthly", "month", "month"), ("session", "session", "sessionId")])
def test_claude_monthly_and_session_count_each_response_once_as_sessionlab(claude, report, by, key):
    """ccusage's monthly and session reports count each response once on the same files: they equal
    sessionlab's, except that the session report names the old-layout subagent files
    (``agent-<id>.jsonl`` beside the session, Claude Code < 2.1.2) as sessions of their own."""
    exp = _expected(DATA / "claude" / "expected" / f"ccusage-codemie-{report}.json")
    rows = exp["monthly" if report == "monthly" else "sessions"]
    if report == "monthly":
        got = {str(r["month"]): r for r in usage_by(claude, by="month").to_pylist()}
    else:  # ccusage names a session after its file; a new-layout subagent file after its session folder
        got = defaultdict(Counter)
        for r in usage_by(claude, by="file").to_pylist():
            f = Path(r["file"])
            name = f.parent.parent.name if f.parent.name == "subagents" else f.stem
            for c in _TOKENS.values():
                got[name][c] += r[c]
        assert {"agent-36541525", "agent-50243ee8"} <= set(got)  # the old layout's subagent files
    assert sorted(got) == sorted(e[key] for e in rows)
    for e in rows:
        for k, col in _TOKENS.items():
            assert got[e[key]][col] == e[k], (e[key], k)


def test_claude_costs_equal_ccusage_on_its_lines_except_bedrock_regional_rates():
    """Priced with sessionlab's table line by line (the long-context tier is per request), the
    lines ccusage's daily report counts cost what ccusage says (within 1%), but for the Bedrock id
    of a Japan regional endpoint: ccusage's LiteLLM table charges its 10% regional premium,
    sessionlab prices the model at its base rate."""
    cost: dict[tuple[str, str], float] = defaultdict(float)
    side: dict[tuple[str, str], tuple] = {}
    for d in _assistant_lines():
        key, t = (d["timestamp"][:10], d["message"]["model"]), _tokens(d["message"]["usage"])
        if d.get("isSidechain"):  # (one line per message id: the largest)
            k = key + (d["message"]["id"],)
            if k not in side or sum(t) > sum(side[k]):
                side[k] = t
            continue
        (c,), _ = price_calls([key[1]], [t[0]], [t[1]], [t[2]], [t[3]], [0])
        cost[key] += c
    for (day, model, _), t in side.items():
        (c,), _ = price_calls([model], [t[0]], [t[1]], [t[2]], [t[3]], [0])
        cost[(day, model)] += c
    exp = _expected(DATA / "claude" / "expected" / "ccusage-codemie-daily.json")
    seen = 0
    for e in exp["daily"]:
        for m in e["modelBreakdowns"]:
            mine = cost[(e["date"], m["modelName"])]
            if m["modelName"] == BEDROCK:
                assert m["cost"] == pytest.approx(1.1 * mine, rel=1e-9)
                seen += 1
            else:
                assert _close(mine, m["cost"]), (e["date"], m["modelName"], mine, m["cost"])
    assert seen == 1


# -- pi -----------------------------------------------------------------------------------------
def test_pi_daily_equals_ccusage_on_the_repository_sessions():
    c = load([ROOT / "data" / "pi", ROOT / "data" / "sessions"], cache=False)
    exp = _expected(DATA / "pi" / "ccusage" / "ccusage-data-daily.json")["daily"]
    got = {str(r["day"]): r for r in usage_by(c, by="day").to_pylist()}
    assert sorted(got) == [e["date"] for e in exp] and len(exp) == 9
    for e in exp:
        for k, col in _TOKENS.items():
            assert got[e["date"]][col] == e[k], (e["date"], k)
        assert got[e["date"]]["cost_usd"] == pytest.approx(e["totalCost"], rel=1e-9)  # pi's recorded costs


def test_pi16_message_spend_equals_ccusage_and_the_rest_is_left_out_by_ccusage():
    """pi 1.6 also records spend that is no message: ``usage`` entries (titles, summaries, cache
    warming) and the summary calls of compactions and branch summaries. ccusage reads assistant
    messages only; sessionlab counts both, told apart by ``usage_kind``."""
    c = load(DATA / "pi" / "generated-1.6", cache=False)
    exp = _expected(DATA / "pi" / "ccusage" / "ccusage-generated-1.6-daily.json")
    kinds = usage_by(c, by=["day", "usage_kind"]).to_pylist()
    for e in exp["daily"]:
        (m,) = [k for k in kinds if str(k["day"]) == e["date"] and k["usage_kind"] == "message"]
        for k, col in _TOKENS.items():
            assert m[col] == e[k], (e["date"], k)
        assert m["cost_usd"] == pytest.approx(e["totalCost"], rel=1e-9)
    other = [k for k in usage_by(c, by="usage_kind").to_pylist() if k["usage_kind"] != "message"]
    assert sorted(k["usage_kind"] for k in other) == ["branch_summary", "cache_warm", "compaction", "summary", "title"]
    tokens, cost = sum(k["total_tokens"] for k in other), sum(k["cost_usd"] for k in other)
    assert (tokens, round(cost, 4)) == (1_149_503, 1.5406)
    assert round(cost / exp["totals"]["totalCost"], 3) == 0.070  # 7.0% more than ccusage reports
