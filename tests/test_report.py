"""The HTML report, without a browser: its numbers are the tables', its CSP hashes its own script
and style, and session text is escaped (the browser half is tests/browser/test_report.py)."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
from pathlib import Path

import pytest

import sessionlab as sl
from sessionlab.cli import main
from sessionlab.report import build_report, write_report

DATA = Path(__file__).resolve().parent.parent / "data"
SCRIPT = "</script><script>window.__xss=1</script>"


@pytest.fixture(scope="module")
def page():
    return build_report(DATA)


def _sha(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def test_csp_allows_exactly_the_page_s_own_script_and_style(page):
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page).group(1).replace("&#x27;", "'")
    scripts = re.findall(r"<script>(.*?)</script>", page, re.S)
    styles = re.findall(r"<style>(.*?)</style>", page, re.S)
    assert len(scripts) == 1 and len(styles) == 1
    assert f"script-src {_sha(scripts[0])};" in csp and f"style-src {_sha(styles[0])};" in csp
    assert "default-src 'none'" in csp and "unsafe" not in csp
    assert not re.search(r"\son[a-z]+=", page)  # no inline event handler anywhere
    assert "http://" not in page.replace("http://www.w3.org/2000/svg", "") and "https://" not in page


def test_numbers_are_the_tables(page):
    t = sl.entries_table(DATA)
    sessions = sl.sessions_table(DATA)
    assert page.count("<section class='session'") == sessions.num_rows
    total = sum(sessions["cost_usd"].to_pylist())
    assert f"${total:,.2f}" in page
    calls = sum(sessions["call_count"].to_pylist())  # the facts module's calls, as usage_by counts them
    assert calls == sum(sl.usage_by(t, by="session")["calls"].to_pylist())
    assert f"{calls:,} calls" in page
    data = json.loads(re.search(r'<script type="application/json" id="sessionlab-data">(.*?)</script>', page,
                                re.S).group(1))
    usage = sl.usage_by(t, by=["day", "model"])
    assert [round(r[2], 9) for r in data["usage"]] == [round(c, 9) for c in usage["cost_usd"].to_pylist()]
    rust = [i for i, s in enumerate(sessions.to_pylist()) if s["name"] == "Release prep"]
    assert rust


def test_session_text_is_escaped_and_the_json_cannot_close_its_block(tmp_path):
    repo = sl.JsonlSessionRepo(tmp_path / "s")
    s = repo.create(cwd="/p")
    u = s.append_message(sl.UserMessage(content=SCRIPT, timestamp=1_767_225_600_000))
    s.append_label(u, SCRIPT)
    s.append_session_info(f"name {SCRIPT}")
    page = build_report(tmp_path / "s")
    assert SCRIPT not in page and "window.__xss" in page
    assert page.count("</script>") == 2  # the data block and the script
    block = re.search(r'id="sessionlab-data">(.*?)</script>', page, re.S).group(1)
    assert "<" not in block and json.loads(block)["sessions"][0]["tree"]["labels"][0][1] == SCRIPT


def test_cli_writes_the_report(tmp_path, capsys):
    out = tmp_path / "r.html"
    assert main(["report", str(DATA), "-o", str(out)]) == 0
    assert out.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert main(["report", str(tmp_path / "missing"), "-o", str(out)]) == 2
    assert "sessionlab report:" in capsys.readouterr().err
    assert main(["report", str(DATA), "-o", str(out), "--tz", "Mars/Base"]) == 2


def test_write_report_returns_the_path(tmp_path):
    p = write_report(DATA / "pi" / "before-compaction.jsonl", tmp_path / "one.html", tz="Europe/Vienna")
    assert p.exists() and "days in Europe/Vienna" in p.read_text(encoding="utf-8")


def test_a_symlink_planted_at_the_temporary_name_is_not_followed(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    out = tmp_path / "report.html"
    (tmp_path / "report.html.tmp").symlink_to(victim)
    write_report(DATA / "pi" / "before-compaction.jsonl", out)
    assert victim.read_text() == "keep me"
    assert out.read_text(encoding="utf-8").startswith("<!DOCTYPE html>") and not out.is_symlink()


@pytest.mark.parametrize("failure", ["dir", "write", "interrupt"])
def test_a_failed_report_leaves_no_temporary_file(tmp_path, monkeypatch, failure, capsys):
    out = tmp_path / "out"
    if failure == "dir":
        out.mkdir()  # -o DIR
        assert main(["report", str(DATA / "pi"), "-o", str(out)]) != 0
    else:
        exc = OSError(27, "File too large") if failure == "write" else KeyboardInterrupt()

        def fail(fd):
            raise exc

        monkeypatch.setattr(os, "fsync", fail)
        with pytest.raises(type(exc)):
            write_report(DATA / "pi" / "before-compaction.jsonl", out)
        monkeypatch.undo()
    assert sorted(p.name for p in tmp_path.iterdir()) == (["out"] if failure == "dir" else [])


def test_lone_surrogates_in_session_text_do_not_stop_the_report(tmp_path):
    f = tmp_path / "s.jsonl"
    f.write_text(
        '{"type":"session","version":3,"id":"sur","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p\\ud83d"}\n'
        '{"type":"session_info","id":"n1","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","name":"half \\ud83d"}\n'
        '{"type":"message","id":"u1","parentId":"n1","timestamp":"2026-01-01T00:00:01.000Z",'
        '"message":{"role":"user","content":"emoji \\ud83d cut","timestamp":0}}\n', encoding="utf-8")
    out = write_report(tmp_path, tmp_path / "r.html")
    page = out.read_text(encoding="utf-8")
    assert "emoji \ufffd cut" in page or "emoji \\ufffd cut" in page
