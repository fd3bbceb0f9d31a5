"""Tests of ``sessionlab summary``: totals checked against an independent json.loads computation."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from sessionlab.cli import format_summary, main, summarize_sessions, total_row
from sessionlab.tables import find_files

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "data"
PI_DATA = [DATA / "pi", DATA / "sessions"]  # the pi sessions (data/ also holds Claude Code and Codex ones)


def _reference(path: Path) -> dict:
    """The summary of one well-formed file, from plain json.loads (no sessionlab code)."""
    objs = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    header, entries = objs[0], objs[1:]
    roles: Counter[str] = Counter()
    tok = Counter()
    cost = 0.0
    for e in entries:
        if e.get("type") != "message":
            continue
        m = e["message"]
        roles[m["role"]] += 1
        if m["role"] == "assistant" and "usage" in m:
            u = m["usage"]
            parts = [u.get(k, 0) for k in ("input", "output", "cacheRead", "cacheWrite")]
            for k, v in zip(("input", "output", "cache_read", "cache_write"), parts):
                tok[k] += v
            tok["total_tokens"] += u.get("totalTokens") or sum(parts)
            cost += u["cost"]["total"]
    if "version" in header:  # a tree: leaves are entries nobody points at
        kids = Counter(e["parentId"] for e in entries if e.get("parentId") is not None)
        leaves = sum(1 for e in entries if kids[e["id"]] == 0)
        forks = sum(1 for n in kids.values() if n >= 2)
    else:  # v1: one chain in file order
        leaves, forks = 1, 0
    names = [e["name"] for e in entries if e.get("type") == "session_info" and e.get("name")]
    return {
        "session_id": header["id"], "cwd": header["cwd"], "name": names[-1] if names else None,
        "entries": len(entries), "messages": dict(roles), "leaves": leaves, "fork_points": forks,
        "compactions": sum(1 for e in entries if e.get("type") == "compaction"),
        "custom_messages": sum(1 for e in entries if e.get("type") == "custom_message"),
        **{k: tok[k] for k in ("input", "output", "cache_read", "cache_write", "total_tokens")},
        "cost": cost, "version": header.get("version", 1),
    }


@pytest.fixture(scope="module")
def rows() -> list[dict]:
    return summarize_sessions(PI_DATA)


def test_finds_every_data_file(rows: list[dict]) -> None:
    files = sorted(f for d in PI_DATA for f in d.rglob("*.jsonl"))
    assert len(files) == 7
    assert sorted(Path(r["file"]) for r in rows) == files


def test_summary_covers_every_agent_in_data() -> None:
    """data/ holds pi, Claude Code and Codex sessions: one row each, totals from the tables."""
    from sessionlab.tables import sessions_table

    rows = summarize_sessions([DATA])
    assert sorted(Path(r["file"]) for r in rows) == sorted(DATA.rglob("*.jsonl"))
    assert {r["agent"] for r in rows} == {"pi", "claude-code", "codex"}
    s = {r["file"]: r for r in sessions_table(DATA / "claude").to_pylist() + sessions_table(DATA / "codex").to_pylist()}
    others = [r for r in rows if r["agent"] != "pi"]
    assert len(others) == len(s) >= 7
    for r in others:
        t = s[r["file"]]
        assert (r["input"], r["output"], r["cache_read"], r["cache_write"]) == (
            t["input_tokens"], t["output_tokens"], t["cache_read_tokens"], t["cache_write_tokens"])
        assert r["cost"] == pytest.approx(t["cost_usd"]) and r["issues"] == 0


def test_rows_match_independent_computation(rows: list[dict]) -> None:
    for row in rows:
        ref = _reference(Path(row["file"]))
        for k, v in ref.items():
            if k == "cost":
                assert row[k] == pytest.approx(v, rel=1e-12), (row["file"], k)
            else:
                assert row[k] == v, (row["file"], k)
        assert row["issues"] == 0


def test_known_values_of_pi_fixtures(rows: list[dict]) -> None:
    by_name = {Path(r["file"]).name: r for r in rows}
    bc = by_name["before-compaction.jsonl"]
    assert bc["messages"] == {"user": 55, "assistant": 484, "toolResult": 448, "bashExecution": 3}
    assert bc["compactions"] == 2 and bc["version"] == 1
    ls = by_name["large-session.jsonl"]
    assert ls["messages"] == {"user": 88, "assistant": 453, "toolResult": 373} and ls["compactions"] == 0


def test_main_prints_table_and_grand_total(rows: list[dict], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["summary", *map(str, PI_DATA), "--no-usage", "--wide"]) == 0
    out = [ln.rstrip() for ln in capsys.readouterr().out.splitlines()]
    assert out[0].strip() == "7 session files"
    head = next(ln for ln in out if ln.startswith("Session")).split()
    assert head[:4] == ["Session", "Last", "used", "Project"] and "File" in head and "toolResult" in head
    body = [ln for ln in out if any(r["file"] in ln for r in rows)]
    assert len(body) == len(rows)
    for r in rows:
        assert any(r["session_id"] in line and r["file"] in line for line in body)
    total = next(ln for ln in out if ln.split()[:1] == ["Total"])
    tot = total_row(rows)
    ref = [_reference(Path(r["file"])) for r in rows]
    assert tot["output"] == sum(x["output"] for x in ref)
    assert tot["cache_read"] == sum(x["cache_read"] for x in ref)
    assert math.isclose(tot["cost"], sum(x["cost"] for x in ref), rel_tol=1e-12)
    assert f"{tot['cache_read']:,}" in total and f"{tot['cost']:.4f}" in total
    assert f"{tot['leaves']:,}" in total.split()
    # every column of the summary row is shown: 26 headers, 31 words
    assert len(head) == 31 and "custom_message" in head and "Ver" in head


def test_main_json_format(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["summary", "--format", "json", str(DATA / "pi")]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["total"]["sessions"] == 2
    assert {Path(r["file"]).name for r in data["sessions"]} == {"before-compaction.jsonl", "large-session.jsonl"}


def test_bad_lines_are_counted_not_warned(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = (DATA / "pi" / "large-session.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    bad = tmp_path / "bad.jsonl"
    bad.write_text("".join(src[:5]) + "{not json\n" + "".join(src[5:10]), encoding="utf-8")
    (row,) = summarize_sessions([bad])
    assert row["issues"] == 1 and row["entries"] == 9
    assert main(["summary", str(tmp_path)]) == 0
    assert "bad.jsonl" in capsys.readouterr().out


def test_session_name_and_tree_shape(rows: list[dict]) -> None:
    named = [r for r in rows if r["name"]]
    assert named and all(r["name"] == r["name"].strip() for r in named)
    assert any(r["fork_points"] >= 3 for r in rows)
    assert any(r["compactions"] == 2 and r["version"] == 3 for r in rows)


def test_missing_path(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["summary", "no/such/place"]) == 2
    assert "no such file" in capsys.readouterr().err
    with pytest.raises(FileNotFoundError):
        find_files(["no/such/place"])


def test_empty_table() -> None:
    text = format_summary([])
    assert text.splitlines()[-1].startswith("TOTAL (0 sessions)")


def test_python_dash_m(tmp_path: Path) -> None:
    r = subprocess.run([sys.executable, "-m", "sessionlab", "summary", str(DATA / "pi" / "large-session.jsonl")],
                       capture_output=True, text=True, check=True)
    assert "d703a1a9-1b7b-4fb1-b512-c9738b1fe617" in r.stdout and r.stderr == ""


def test_the_command_ends_at_once_with_all_its_output_and_its_code(capsys) -> None:
    """``python -m sessionlab`` (the ``sessionlab`` command's :func:`~sessionlab.cli.run`) ends the
    process without the interpreter's exit: its output (more than a buffer of it) must still be
    whole, and its exit code main's, as in the process itself."""
    import io

    from sessionlab.cli import main as _main

    args = ["summary", "data/"]  # (a table printed line by line)
    assert _main(args) == 0
    expected = capsys.readouterr().out
    assert len(expected) > io.DEFAULT_BUFFER_SIZE
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}  # (its output buffered, as usual)
    r = subprocess.run([sys.executable, "-m", "sessionlab", *args], capture_output=True, text=True, env=env)
    assert (r.returncode, r.stdout, r.stderr) == (0, expected, "")
    bad = subprocess.run([sys.executable, "-m", "sessionlab", "usage", "daily", "no/such/place"], capture_output=True,
                         text=True, env=env)
    assert bad.returncode == _main(["usage", "daily", "no/such/place"]) != 0
    assert bad.stderr == capsys.readouterr().err and "no/such/place" in bad.stderr


def test_summary_prints_usage_by_model_and_day(capsys):
    import json as _json

    from sessionlab.cli import main as _main

    assert _main(["summary", "data/pi", "data/sessions", "--format", "json", "--tz", "Asia/Tokyo"]) == 0
    out = _json.loads(capsys.readouterr().out)
    by_model, by_day = out["usage"]["model"], out["usage"]["day"]
    total = out["total"]
    assert sum(r["calls"] for r in by_model) == sum(r["calls"] for r in by_day) == total["messages"]["assistant"]
    assert sum(r["cost_usd"] for r in by_model) == pytest.approx(total["cost"])
    assert sum(r["cache_read_tokens"] for r in by_day) == total["cache_read"]
    assert {r["model"] for r in by_model} == {"claude-opus-4-5", "claude-sonnet-4-5", "gemini-2.5-pro", "gpt-5.1-codex"}
    assert _main(["summary", "data/", "--tz", "Asia/Tokyo"]) == 0
    text = capsys.readouterr().out
    assert "Usage by model (all branches)" in text and "Usage by day (Asia/Tokyo)" in text
    assert _main(["summary", "data/", "--tz", "No/Where"]) == 2


def test_summary_reads_the_files_once(monkeypatch, capsys):
    from sessionlab.tables import _load

    calls = []
    real = _load.load_files

    def counting(*args, **kwargs):
        calls.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr("sessionlab.tables.corpus.load_files", counting)
    assert main(["summary", str(DATA)]) == 0  # the table and both usage views
    assert len(calls) == 1
    assert "Usage by day (UTC)" in capsys.readouterr().out


def test_a_usage_report_leaves_the_collector_off_only_in_a_process_that_ends(capsys, monkeypatch) -> None:
    """The command (``ending``) leaves the cyclic collector off for the report and the exit; a
    caller of :func:`main` in its own process finds it as it was, and the same report."""
    import gc

    from sessionlab.cli import main as _main

    monkeypatch.setenv("SESSIONLAB_CACHE_DIR", "")
    args = ["usage", "daily", "tests/data/agents/qwen/home/.qwen", "--json"]
    assert gc.isenabled() and _main(args) == 0 and gc.isenabled()
    expected = capsys.readouterr().out
    code = ("import gc, sys\nfrom sessionlab.cli import main\n"
            f"code = main({args!r}, ending=True)\nprint(code, gc.isenabled(), file=sys.stderr)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert (r.stdout, r.stderr) == (expected, "0 False\n")
