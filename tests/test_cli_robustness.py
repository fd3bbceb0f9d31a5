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
        '{"type":"message","id":"a1","parentId":"u1","timestamp":"' + ts + '","message":{"role":"assistant",'
        '"content":[{"type":"text","text":"ok"}],"provider":"anthropic","model":"m","usage":{"input":' + inp +
        ',"output":' + out + ',"cacheRead":0,"cacheWrite":0,"totalTokens":' + total + ',"cost":{"total":' + cost +
        '}},"stopReason":"stop","timestamp":0}}',
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


# -- 10. values JSON or int64 cannot hold: a line issue on their entry, finite totals ----------------
@pytest.mark.parametrize("native", ["1", "0"])
def test_unusable_numbers_are_issues_and_totals_stay_right(tmp_path, capsys, monkeypatch, native):
    monkeypatch.setenv("SESSIONLAB_NATIVE", native)
    src = folder(tmp_path, n=3)
    odd = {"inf": dict(cost="1e400"), "big": dict(inp=str(2**63 - 10), out=str(2**63 - 10)),
           "frac": dict(inp="5.5"), "e308": dict(out="1e308"), "nan": dict(inp='"NaN"'),
           "negcost": dict(cost="-1e400")}
    for name, kw in odd.items():
        session(src / f"{name}.jsonl", name, **kw)
    corpus = sl.load(src, on_bad_lines="skip", cache=False)
    issues = corpus.issues.to_pylist()
    by_file = {Path(i["file"]).stem: i for i in issues}
    assert sorted(by_file) == sorted(odd) and all(i["kind"] == "bad_value" and i["line"] == 3 and
                                                   i["entry_id"] == "a1" for i in issues)
    assert "cost" in by_file["inf"]["message"] and "input" in by_file["frac"]["message"]
    s = {r["session_id"]: r for r in corpus.sessions.to_pylist()}
    assert s["inf"]["cost_usd"] == 0 and s["inf"]["input_tokens"] == 5 and s["inf"]["issue_count"] == 1
    assert s["big"]["input_tokens"] == 0 and s["big"]["cost_usd"] == 0.5
    assert s["frac"]["input_tokens"] == 0 and s["frac"]["output_tokens"] == 7
    got = run_json(capsys, "summary", str(src), "--format", "json")
    assert got["total"]["input"] == 5 * 3 + 5 * 3  # ok x3, inf, e308, negcost (big, frac, nan: none)
    assert got["total"]["output"] == 7 * 3 + 7 * 4  # ok x3, inf, frac, nan, negcost
    assert got["total"]["cost"] == pytest.approx(0.5 * 3 + 0.5 * 4) and got["total"]["issues"] == 6
    main(["usage", "daily", str(src), "--json"])
    text = capsys.readouterr().out
    assert "Infinity" not in text and "NaN" not in text
    assert json.loads(text)["totals"]["totalCost"] == pytest.approx(3.5)
    assert main(["report", str(src), "-o", str(tmp_path / "r.html")]) == 0


# -- 11. a line nested deeper than the limit: an explicit issue, never a recursion error ------------
@pytest.mark.parametrize("depth", [5_000, 100_000])
def test_deep_nesting_is_an_explicit_issue(tmp_path, depth):
    from sessionlab.pi.io.reader import MAX_DEPTH

    f = session(tmp_path / "s.jsonl", "deep")
    deep = '{"type":"custom","id":"d1","parentId":"a1","timestamp":"2026-01-01T10:00:00.000Z","data":' + \
        "[" * depth + "]" * depth + "}"
    ok = '{"type":"custom","id":"d2","parentId":"a1","timestamp":"2026-01-01T10:00:00.000Z","data":' + \
        "[" * (MAX_DEPTH - 2) + "]" * (MAX_DEPTH - 2) + "}"
    with open(f, "a") as fh:
        fh.write(deep + "\n" + ok + "\n")
    sf = sl.read_session(f, on_bad_lines="skip")
    assert [(i.line, i.kind) for i in sf.issues] == [(4, "invalid_json")]
    assert f"nested deeper than {MAX_DEPTH} levels" in sf.issues[0].message
    assert [e.id for e in sf.entries] == ["u1", "a1", "d2"]
    t = sl.load(f, on_bad_lines="skip", cache=False).issues
    assert t["message"].to_pylist() == [sf.issues[0].message]


# -- 12. the same file reached twice is counted once ---------------------------------------------------
@pytest.mark.parametrize("how", ["symlink", "hardlink", "relative_and_absolute"])
def test_a_file_reached_twice_counts_once(tmp_path, capsys, monkeypatch, how):
    src = folder(tmp_path, n=2)
    sources = [str(src)]
    if how == "symlink":
        (src / "also.jsonl").symlink_to(src / "s00.jsonl")
    elif how == "hardlink":
        os.link(src / "s00.jsonl", src / "also.jsonl")
    else:
        monkeypatch.chdir(tmp_path)
        sources = ["src", str(src)]
    got = run_json(capsys, "summary", *sources, "--format", "json")
    assert len(got["sessions"]) == 2 and got["total"]["cost"] == pytest.approx(1.0)
    from sessionlab.tables import find_files

    assert len(find_files(sources)) == 2


# -- 13. a project folder that is a symlink is followed, without loops ------------------------------
def test_symlinked_folders_are_followed_once(tmp_path, capsys):
    elsewhere = folder(tmp_path / "elsewhere", n=3)
    projects = tmp_path / "projects"
    projects.mkdir()
    (projects / "p").symlink_to(elsewhere, target_is_directory=True)
    (elsewhere / "loop").symlink_to(projects, target_is_directory=True)  # a loop back up
    got = run_json(capsys, "summary", str(projects), "--format", "json")
    assert len(got["sessions"]) == 3 and got["total"]["cost"] == pytest.approx(1.5)


# -- 14. unreadable files and folders are reported ---------------------------------------------------
def test_unreadable_files_and_folders_are_reported(tmp_path, capsys, monkeypatch):
    src = folder(tmp_path, n=2)
    locked = src / "locked"
    session(locked / "x.jsonl", "x")
    unreadable = session(src / "unreadable.jsonl", "u")
    real_scandir = os.scandir

    def scandir(path="."):  # what a folder without read permission answers (root ignores modes)
        if os.fspath(path) == str(locked):
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real_scandir(path)

    def os_open(path, flags, *a, **k):
        if os.fspath(path) == str(unreadable):
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real_os_open(path, flags, *a, **k)

    real_os_open = os.open
    monkeypatch.setattr(os, "scandir", scandir)
    monkeypatch.setattr(os, "open", os_open)
    corpus = sl.load(src, on_bad_lines="skip", cache=False)
    issues = {(Path(i["file"]).name, i["kind"]) for i in corpus.issues.to_pylist()}
    assert issues == {("locked", "read_error"), ("unreadable.jsonl", "read_error")}
    assert main(["summary", str(src)]) == 0
    out = capsys.readouterr().out
    assert "2 files or folders could not be read" in out and "unreadable.jsonl" in out
    assert main(["usage", "daily", str(src)]) == 0
    assert "2 files or folders could not be read" in capsys.readouterr().out


# -- 15. a FIFO where a file was: skipped, never waited on -------------------------------------------
def test_a_fifo_in_place_of_a_file_does_not_hang_the_load(tmp_path):
    import subprocess
    import sys

    src = folder(tmp_path, n=1)
    fifo = src / "s01.jsonl"
    os.mkfifo(fifo)
    code = ("import sys; from sessionlab.tables._file import load_chunk;"
            f"r = load_chunk([{str(src / 's00.jsonl')!r}, {str(fifo)!r}]);"
            "print(r[0].session is not None, [i.kind for i in r[1].issues], r[1].issues[0].message)")
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).parent.parent))
    for native in ("1", "0"):
        out = subprocess.run([sys.executable, "-c", code], env={**env, "SESSIONLAB_NATIVE": native},
                             capture_output=True, text=True, timeout=60)
        assert out.stdout.startswith("True ['read_error'] ") and "not a regular file" in out.stdout, out


# -- small command-line cases ---------------------------------------------------------------------------
@pytest.mark.parametrize("command", ["summary", "usage", "report"])
def test_a_glob_matching_nothing_says_so(tmp_path, capsys, command):
    pattern = str(tmp_path / "none-*.jsonl")
    argv = {"summary": ["summary", pattern], "usage": ["usage", "daily", pattern],
            "report": ["report", pattern, "-o", str(tmp_path / "r.html")]}[command]
    assert main(argv) == 2
    assert "no file matches" in capsys.readouterr().err
    assert not (tmp_path / "r.html").exists()


@pytest.mark.parametrize("command", ["summary", "usage", "report"])
@pytest.mark.parametrize("tz", ["", " ", "Mars/Base"])
def test_a_time_zone_that_is_none_is_refused(tmp_path, capsys, command, tz):
    src = folder(tmp_path, n=1)
    argv = {"summary": ["summary", str(src)], "usage": ["usage", "daily", str(src)],
            "report": ["report", str(src), "-o", str(tmp_path / "r.html")]}[command]
    assert main([*argv, "--tz", tz]) == 2
    assert "is not a time zone" in capsys.readouterr().err
    assert not (tmp_path / "r.html").exists()


@pytest.mark.parametrize("command", ["summary", "usage", "report", "cache"])
def test_ctrl_c_is_one_line_and_exit_130(tmp_path, capsys, monkeypatch, command):
    src = folder(tmp_path, n=1)

    def interrupted(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr("sessionlab.tables.load_files", interrupted)
    monkeypatch.setattr("sessionlab.tables._load.load_files", interrupted)
    monkeypatch.setattr("sessionlab.tables.corpus.load_files", interrupted, raising=False)
    monkeypatch.setattr("sessionlab.tables.clear_cache", interrupted)
    monkeypatch.setattr("sessionlab.report.collect", interrupted)
    argv = {"summary": ["summary", str(src)], "usage": ["usage", "daily", str(src)],
            "report": ["report", str(src), "-o", str(tmp_path / "r.html")], "cache": ["cache", "clear"]}[command]
    assert main(argv) == 130
    err = capsys.readouterr().err
    assert err.strip().splitlines() == [f"sessionlab {command}: interrupted"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["src"]  # no partial report


def test_odd_entries_in_a_folder_are_skipped_without_waiting(tmp_path, capsys):
    # what held, and stays held: FIFOs, folders named x.jsonl, /dev/zero, dangling and looping links
    src = folder(tmp_path, n=2)
    os.mkfifo(src / "fifo.jsonl")
    (src / "folder.jsonl").mkdir()
    (src / "zero.jsonl").symlink_to("/dev/zero")
    (src / "dangling.jsonl").symlink_to(src / "missing.jsonl")
    (src / "loop.jsonl").symlink_to(src / "loop.jsonl")
    got = run_json(capsys, "summary", str(src), "--format", "json")
    assert [r["session_id"] for r in got["sessions"]] == ["s00", "s01"]
    assert "unreadable" not in got
