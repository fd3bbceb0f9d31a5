"""Usage reports equal ccusage's on the same files.

The expected JSON was written by the real ccusage (``tools/ccusage_expected.sh``, version in
``expected/VERSION``) on the fixtures in ``tests/data/{claude,codex}``. Token totals must be equal;
costs within 1% (ccusage prices from LiteLLM's table, sessionlab from genai-prices). Where ccusage
is wrong on purpose-built input, the test states the difference exactly (docs/ccusage-differences.md).
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.compute as pc
import pytest

from sessionlab.analysis import usage_by
from sessionlab.tables import entries_table

DATA = Path(__file__).parent / "data"
CLAUDE = {"generated": DATA / "claude" / "generated", "real": DATA / "claude" / "real" / "apanloco-random-session.jsonl"}
CODEX = DATA / "codex" / "generated"

_CLAUDE_KEYS = {"inputTokens": "input_tokens", "outputTokens": "output_tokens",
                "cacheReadTokens": "cache_read_tokens", "cacheCreationTokens": "cache_write_tokens",
                "totalTokens": "total_tokens"}
_CODEX_KEYS = {"inputTokens": "input_tokens", "outputTokens": "output_tokens", "cacheReadTokens": "cache_read_tokens",
               "reasoningOutputTokens": "reasoning_tokens", "totalTokens": "total_tokens"}


def _expected(agent: str, name: str, report: str) -> dict:
    return json.loads((DATA / agent / "expected" / f"ccusage-{name}-{report}.json").read_text())


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= 0.01 * max(abs(b), 1e-9)


@pytest.fixture(scope="module")
def claude_tables():
    return {k: entries_table(v) for k, v in CLAUDE.items()}


@pytest.fixture(scope="module")
def codex_table():
    return entries_table(CODEX)


def _replayed_sidechain_rows(t):
    """Usage rows of sidechain copies that replay a parent response (same message id): ccusage's
    monthly and session reports count them again, its daily report does not."""
    lines = []
    for path in sorted(CLAUDE["generated"].rglob("agent-*.jsonl")):
        parent_ids = set()
        for p in path.parent.parent.parent.glob("*.jsonl"):
            for ln in p.read_text().splitlines():
                d = json.loads(ln)
                if d.get("type") == "assistant":
                    parent_ids.add(d["message"]["id"])
        best: dict[str, dict] = {}
        for ln in path.read_text().splitlines():
            d = json.loads(ln)
            if d.get("type") == "assistant" and d["message"]["id"] in parent_ids:
                u = d["message"]["usage"]
                tot = sum(u[k] for k in ("input_tokens", "output_tokens", "cache_read_input_tokens",
                                         "cache_creation_input_tokens"))
                key = d["message"]["id"]
                if key not in best or tot > best[key]["tot"]:
                    best[key] = {"tot": tot, "u": u, "ts": d["timestamp"], "sid": d["sessionId"]}
        lines.extend(best.values())
    return lines


@pytest.mark.parametrize("name", ["generated", "real"])
def test_claude_daily_equals_ccusage(claude_tables, name):
    exp = _expected("claude", name, "daily")
    got = {str(r["day"]): r for r in usage_by(claude_tables[name], by="day").to_pylist()}
    assert sorted(got) == [d["date"] for d in exp["daily"]]
    for d in exp["daily"]:
        g = got[d["date"]]
        for k, col in _CLAUDE_KEYS.items():
            assert g[col] == d[k], (d["date"], k)
        assert _close(g["cost_usd"], d["totalCost"]), (d["date"], g["cost_usd"], d["totalCost"])
    by_model = {(str(r["day"]), r["model"]): r for r in usage_by(claude_tables[name], by=["day", "model"]).to_pylist()}
    for d in exp["daily"]:
        for m in d["modelBreakdowns"]:
            g = by_model[(d["date"], m["modelName"])]
            for k, col in _CLAUDE_KEYS.items():
                if k != "totalTokens":
                    assert g[col] == m[k], (d["date"], m["modelName"], k)
            assert _close(g["cost_usd"], m["cost"])


def test_claude_real_monthly_and_session_equal_ccusage(claude_tables):
    t = claude_tables["real"]
    for report, by, key in (("monthly", "month", "month"), ("session", "session", "sessionId")):
        exp = _expected("claude", "real", report)[report if report == "monthly" else "sessions"]
        got = {r[by]: r for r in usage_by(t, by=by).to_pylist()}
        if report == "session":  # ccusage names it after the file (renamed here), sessionlab by its sessionId
            assert len(got) == len(exp) == 1
            got = {exp[0][key]: next(iter(got.values()))}
        assert sorted(got) == sorted(e[key] for e in exp)
        for e in exp:
            for k, col in _CLAUDE_KEYS.items():
                assert got[e[key]][col] == e[k]
            assert _close(got[e[key]]["cost_usd"], e["totalCost"])


def test_claude_generated_monthly_and_session_differ_by_the_replayed_sidechain_copies(claude_tables):
    """ccusage 20's monthly and session reports count a subagent's replay of a parent response
    (same message id, new request id) that its daily report drops; sessionlab drops it in all.
    The gap is exactly those replayed copies, and nothing else."""
    t = claude_tables["generated"]
    replays = _replayed_sidechain_rows(t)
    assert len(replays) == 2  # one per generated subagent

    def add(acc, u):
        acc["input_tokens"] += u["input_tokens"]
        acc["output_tokens"] += u["output_tokens"]
        acc["cache_read_tokens"] += u["cache_read_input_tokens"]
        acc["cache_write_tokens"] += u["cache_creation_input_tokens"]

    for report, by, key, of in (("monthly", "month", "month", lambda r: r["ts"][:7]),
                                ("session", "session", "sessionId", lambda r: r["sid"])):
        exp = _expected("claude", "generated", report)[report if report == "monthly" else "sessions"]
        got = {r[by]: r for r in usage_by(t, by=by).to_pylist()}
        assert sorted(got) == sorted(e[key] for e in exp)
        for e in exp:
            acc = {c: got[e[key]][c] for c in ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")}
            for r in replays:
                if of(r) == e[key]:
                    add(acc, r["u"])
            for k, col in _CLAUDE_KEYS.items():
                if k != "totalTokens":
                    assert acc[col] == e[k], (report, e[key], k)


def test_claude_dedup_counts_each_response_once(claude_tables):
    t = claude_tables["generated"]
    has = pc.is_valid(t["input_tokens"])
    counted = t.filter(has)
    keys = list(zip(counted["message_id"].to_pylist(), counted["request_id"].to_pylist()))
    assert len(keys) == len(set(keys))
    # every response with usage is counted once: as many counted rows as distinct message ids
    asst = t.filter(pc.equal(t["role"], "assistant"))
    assert counted.num_rows == len(set(asst["message_id"].to_pylist()))
    assert set(counted["cost_source"].to_pylist()) == {"priced"}


@pytest.mark.parametrize("report,by,key", [("daily", "day", "date"), ("monthly", "month", "month"),
                                           ("session", "file", "sessionId")])
def test_codex_reports_equal_ccusage(codex_table, report, by, key):
    exp = _expected("codex", "generated", report)
    rows = exp["daily" if report == "daily" else "monthly" if report == "monthly" else "sessions"]
    got = {}
    for r in usage_by(codex_table, by=by).to_pylist():
        k = str(r[by])
        if by == "file":  # ccusage names a Codex session by its rollout path under sessions/
            k = str(Path(r[by]).relative_to(CODEX / "sessions"))[:-len(".jsonl")]
        got[k] = r
    assert sorted(got) == sorted(e[key] for e in rows)
    for e in rows:
        for k, col in _CODEX_KEYS.items():
            assert got[e[key]][col] == e[k], (e[key], k)
        assert _close(got[e[key]]["cost_usd"], e["costUSD"])
    if report == "daily":
        by_model = {(str(r["day"]), r["model"]): r for r in usage_by(codex_table, by=["day", "model"]).to_pylist()}
        for e in rows:
            for model, m in e["models"].items():
                for k, col in _CODEX_KEYS.items():
                    assert by_model[(e["date"], model)][col] == m[k]


def test_codex_fork_replay_and_duplicates_are_not_counted(codex_table):
    """The fork replays its parent's token counts and some events are written twice: a naive sum
    of every last_token_usage is larger than what is counted."""
    naive = 0
    for path in CODEX.rglob("*.jsonl"):
        for ln in path.read_text().splitlines():
            d = json.loads(ln)
            p = d["payload"]
            if d["type"] == "event_msg" and p.get("type") == "token_count" and p.get("info"):
                naive += p["info"]["last_token_usage"]["output_tokens"]
    counted = pc.sum(codex_table["output_tokens"]).as_py()
    assert counted == _expected("codex", "generated", "daily")["totals"]["outputTokens"]
    assert naive > counted


def test_long_context_tier_differs_from_ccusage_on_purpose():
    """A claude-sonnet-4-5 request whose prompt (input + cache read + cache write) exceeds 200k is
    billed wholly at the long-context rates; ccusage 20 applies them only to the part of each
    usage field above 200k. Tokens agree; the costs differ exactly by that rule."""
    from sessionlab.pricing import model_rates

    t = entries_table(DATA / "claude" / "longctx")
    exp = _expected("claude", "longctx", "daily")
    (day,) = usage_by(t, by="day").to_pylist()
    for k, col in _CLAUDE_KEYS.items():
        assert day[col] == exp["totals"][k]
    base, tier = model_rates("claude-sonnet-4-5-20250929", 0), model_rates("claude-sonnet-4-5-20250929", 1)
    calls = t.filter(pc.is_valid(t["input_tokens"])).to_pylist()

    def cost(c, rates):
        return (c["input_tokens"] * rates[0] + c["output_tokens"] * rates[1] + c["cache_read_tokens"] * rates[2]
                + c["cache_write_tokens"] * rates[3])

    def ccusage_cost(c):  # each field: base rate up to 200k, tier rate above
        total = 0.0
        for col, i in (("input_tokens", 0), ("output_tokens", 1), ("cache_read_tokens", 2), ("cache_write_tokens", 3)):
            n = c[col]
            total += min(n, 200_000) * base[i] + max(n - 200_000, 0) * tier[i]
        return total

    small, big = calls
    assert small["input_tokens"] + small["cache_read_tokens"] + small["cache_write_tokens"] < 200_000
    assert big["input_tokens"] + big["cache_read_tokens"] + big["cache_write_tokens"] > 200_000
    assert small["cost_usd"] == pytest.approx(cost(small, base)) and big["cost_usd"] == pytest.approx(cost(big, tier))
    assert exp["totals"]["totalCost"] == pytest.approx(ccusage_cost(small) + ccusage_cost(big), rel=1e-9)
    assert day["cost_usd"] > exp["totals"]["totalCost"] * 1.4
