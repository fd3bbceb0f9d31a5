"""One odd file never decides a whole run: extreme timestamps, values JSON or int64 cannot hold,
deep nesting, files reached twice, symlinked folders, unreadable files, FIFOs; and the small
command-line cases (a glob matching nothing, an empty ``--tz``, Ctrl-C)."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import pytest

import sessionlab as sl
from sessionlab.cli import main


def session(path: Path, sid: str, *, ts: str = "2026-01-01T10:00:00.000Z", cost="0.5", inp="5", out="7",
            total="12") -> Path:
    """A pi v3 session of one user message and one assistant reply (usage values as raw JSON text)."""
    lines = [
        json.dumps({"type": "session", "version": 3, "id": sid, "timestamp": ts, "cwd": "/p"}),
        json.dumps({"type": "message", "id": "u1", "parentId": None, "timestamp": ts,
                    "message": {"role": "user", "content": "hi", "timestamp": 0}}),
        '{"type":"message","id":"a1","parentId":"u1","timestamp":"%s","message":{"role":"assistant",'
        '"content":[{"type":"text","text":"ok"}],"provider":"anthropic","model":"m","usage":{"input":%s,'
        '"output":%s,"cacheRead":0,"cacheWrite":0,"totalTokens":%s,"cost":{"total":%s}},"stopReason":"stop",'
        '"timestamp":0}}' % (ts, inp, out, total, cost),
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def folder(tmp_path: Path, n: int = 20) -> Path:
    src = tmp_path / "src"
    for i in range(n):
        session(src / f"s{i:02d}.jsonl", f"s{i:02d}")
    return src


def run_json(capsys, *argv) -> dict:
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


# -- 9. a timestamp in year 9999 or 0001 with a non-UTC time zone ---------------------------------
@pytest.mark.parametrize("tz", ["Europe/Vienna", "America/New_York"])
def test_extreme_years_do_not_stop_a_run(tmp_path, capsys, tz):
    src = folder(tmp_path)
    session(src / "late.jsonl", "late", ts="9999-12-31T23:30:00.000Z")
    session(src / "early.jsonl", "early", ts="0001-01-01T00:10:00.000Z")
    got = run_json(capsys, "summary", str(src), "--format", "json", "--tz", tz)
    assert len(got["sessions"]) == 22 and math.isclose(got["total"]["cost"], 11.0)
    days = {r["day"]: r["calls"] for r in got["usage"]["day"]}
    assert days["2026-01-01"] == 20 and sum(days.values()) == 22
    daily = run_json(capsys, "usage", "daily", str(src), "--json", "--tz", tz)
    assert sum(d["totalCost"] for d in daily["daily"]) + 0 == pytest.approx(
        daily["totals"]["totalCost"]) and daily["totals"]["totalCost"] == pytest.approx(11.0)
    assert main(["report", str(src), "--tz", tz, "-o", str(tmp_path / "r.html")]) == 0
