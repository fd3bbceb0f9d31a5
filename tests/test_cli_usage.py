"""``sessionlab usage daily|monthly|session``: ccusage's numbers, a rich table, JSON and CSV."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from sessionlab.cli import main

DATA = Path(__file__).parent / "data"
CLAUDE = DATA / "claude" / "generated"
CODEX = DATA / "codex" / "generated"


def _run(capsys, *args) -> str:
    assert main(["usage", *map(str, args)]) == 0
    return capsys.readouterr().out


def _ccusage(agent: str, report: str) -> dict:
    return json.loads((DATA / agent / "expected" / f"ccusage-generated-{report}.json").read_text())


@pytest.mark.parametrize("agent,folder", [("claude", CLAUDE), ("codex", CODEX)])
def test_json_daily_equals_ccusage(capsys, agent, folder):
    got = json.loads(_run(capsys, "daily", folder, "--json"))
    exp = _ccusage(agent, "daily")
    assert [d["date"] for d in got["daily"]] == [d["date"] for d in exp["daily"]]
    for g, e in zip(got["daily"], exp["daily"]):
        for k in ("inputTokens", "outputTokens", "cacheReadTokens", "totalTokens"):
            assert g[k] == e[k], (g["date"], k)
        cost = e.get("totalCost", e.get("costUSD"))
        assert g["totalCost"] == pytest.approx(cost, rel=0.01)
    assert got["totals"]["totalTokens"] == exp["totals"]["totalTokens"]
    assert got["unpricedModels"] == []


def test_since_until_agent_and_tz(capsys):
    both = json.loads(_run(capsys, "daily", CLAUDE, CODEX, "--json"))
    days = [d["date"] for d in both["daily"]]
    assert {a for d in both["daily"] for a in d["agents"]} == {"claude-code", "codex"}
    cut = json.loads(_run(capsys, "daily", CLAUDE, CODEX, "--json", "--since", days[1], "--until",
                          days[-2].replace("-", "")))
    assert [d["date"] for d in cut["daily"]] == days[1:-1]
    only = json.loads(_run(capsys, "daily", CLAUDE, CODEX, "--json", "--agent", "codex"))
    assert only["totals"]["totalTokens"] == _ccusage("codex", "daily")["totals"]["totalTokens"]
    tokyo = json.loads(_run(capsys, "monthly", CLAUDE, "--json", "--tz", "Asia/Tokyo"))
    utc = json.loads(_run(capsys, "monthly", CLAUDE, "--json"))
    assert tokyo["totals"]["totalTokens"] == utc["totals"]["totalTokens"]
    assert [m["month"] for m in tokyo["monthly"]] == ["2026-01", "2026-02"]
    assert tokyo["monthly"][0]["totalTokens"] < utc["monthly"][0]["totalTokens"]  # Jan 31 evening UTC is Feb in Tokyo


def test_session_report_groups_subagents_into_their_session(capsys):
    got = json.loads(_run(capsys, "session", CLAUDE, "--json"))
    ids = sorted(s["sessionId"] for s in got["sessions"])
    assert ids == sorted(p.stem for p in CLAUDE.rglob("*.jsonl") if "subagents" not in p.parts)
    assert all(s["lastActivity"].endswith("Z") and s["cwd"] for s in got["sessions"])


def test_plain_table_when_not_a_terminal(capsys):
    out = _run(capsys, "daily", CLAUDE)
    assert "\x1b[" not in out and "…" not in out  # no colours, nothing shortened
    exp = _ccusage("claude", "daily")
    assert f"{exp['totals']['totalTokens']:,}" in out
    for d in exp["daily"]:
        assert d["date"] in out


def test_table_fits_a_narrow_terminal(monkeypatch):
    import re

    from rich.console import Console

    from sessionlab.cli._usage import render_table, usage_report

    data = usage_report("session", [str(CLAUDE)])
    monkeypatch.setattr(Console, "is_terminal", property(lambda self: True))
    for width in (120, 90):
        monkeypatch.setenv("COLUMNS", str(width))
        buf = io.StringIO()
        render_table("session", data, file=buf)
        plain = [re.sub(r"\x1b\[[0-9;]*m", "", ln) for ln in buf.getvalue().splitlines() if ln.strip()]
        assert max(len(ln) for ln in plain) <= width
        assert any("Total" in ln for ln in plain)
        assert f"{data['totals']['totalTokens']:,}" in "".join(plain)


def test_csv(capsys):
    rows = list(csv.DictReader(io.StringIO(_run(capsys, "monthly", CODEX, "--csv"))))
    exp = _ccusage("codex", "monthly")
    assert [r["month"] for r in rows] == [m["month"] for m in exp["monthly"]]
    assert [int(r["totalTokens"]) for r in rows] == [m["totalTokens"] for m in exp["monthly"]]


def test_bad_arguments(capsys):
    assert main(["usage", "daily", str(CLAUDE), "--since", "last week"]) == 2
    assert "since" in capsys.readouterr().err
    assert main(["usage", "daily", "no/such/place"]) == 2
    with pytest.raises(SystemExit):
        main(["usage", "yearly"])
