"""What the tests of the agents read through the agent seam share: each fixture home
(``tests/data/agents/<agent>/home``), ccusage's committed reports beside it, sessionlab's report with
that HOME, and the comparison of the two (tokens equal, costs within 1% unless an exact cost is
given)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from sessionlab import agents
from sessionlab.cli import main

DATA = Path(__file__).parent / "data" / "agents"
ROWS = {"daily": ("daily", "date"), "monthly": ("monthly", "month"), "session": ("sessions", "sessionId")}
TOKENS = ("inputTokens", "cacheCreationTokens", "cacheReadTokens", "totalTokens")


def use_home(monkeypatch: pytest.MonkeyPatch, agent: str) -> Path:
    """HOME set to the agent's fixture home; every registered agent's folder variables unset."""
    for var in {v for spec in agents.specs() for v in spec.env}:
        monkeypatch.delenv(var, raising=False)
    home = DATA / agent / "home"
    monkeypatch.setenv("HOME", str(home))
    return home


def ours(capsys: pytest.CaptureFixture, agent: str, report: str) -> dict:
    """``sessionlab usage <report> --agent <agent> --json``, parsed."""
    assert main(["usage", report, "--agent", agent, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def theirs(agent: str, report: str) -> dict:
    """ccusage's committed report on the agent's fixture home."""
    return json.loads((DATA / agent / f"ccusage-{report}.json").read_text())


def close(a: float, b: float) -> bool:
    """Within 1% of ``b``."""
    return abs(a - b) <= 0.01 * max(abs(b), 1e-9)


def folded(rows: list[dict], key: str, fold: dict[str, str]) -> dict[str, dict]:
    """ccusage's rows with each child session's added into its root's (sessionlab counts a
    subagent's calls in the session that spawned it)."""
    out: dict[str, dict] = {}
    for r in rows:
        k = fold.get(r[key], r[key])
        if k not in out:
            out[k] = {**r, key: k, "modelBreakdowns": [dict(m) for m in r["modelBreakdowns"]]}
            continue
        o = out[k]
        for f in (*TOKENS, "outputTokens", "totalCost"):
            o[f] += r[f]
        for m in r["modelBreakdowns"]:
            same = [x for x in o["modelBreakdowns"] if x["modelName"] == m["modelName"]]
            if same:
                for f in ("inputTokens", "outputTokens", "cacheCreationTokens", "cacheReadTokens", "cost"):
                    same[0][f] += m[f]
            else:
                o["modelBreakdowns"].append(dict(m))
    return out


def compare(agent: str, report: str, capsys: pytest.CaptureFixture, *,
            output_extra: Callable[[dict], int] = lambda r: 0, cost_of: Callable | None = None,
            fold: dict[str, str] | None = None, model: Callable[[str], str] = lambda name: name) -> tuple[dict, dict]:
    """Rows keyed alike, tokens equal (our outputTokens less ``output_extra(row)``), costs within 1%
    unless ``cost_of(key, model)`` gives the exact expected cost of a model's breakdown; ``fold``:
    child session -> root session; ``model``: ccusage's model name -> sessionlab's."""
    rows, key = ROWS[report]
    got = {r[key]: r for r in ours(capsys, agent, report)[rows]}
    want = folded(theirs(agent, report)[rows], key, fold or {})
    assert sorted(got) == sorted(want)
    for k, t in want.items():
        o = got[k]
        for f in TOKENS:
            assert o[f] == t[f], (report, k, f)
        assert o["outputTokens"] - output_extra(o) == t["outputTokens"], (report, k)
        mo = {m["modelName"]: m for m in o["modelBreakdowns"]}
        assert sorted(mo) == sorted(model(m["modelName"]) for m in t["modelBreakdowns"]), (report, k)
        for m in t["modelBreakdowns"]:
            exact = cost_of(k, m) if cost_of is not None else None
            cost = mo[model(m["modelName"])]["totalCost"]
            if exact is None:
                assert close(cost, m["cost"]), (report, k, m["modelName"])
            else:
                assert cost == pytest.approx(exact, rel=1e-9), (report, k, m["modelName"])
    return got, want
