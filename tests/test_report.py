"""The HTML report, without a browser: its numbers are the tables', its CSP hashes its own script
and style, and session text is escaped (the browser half is tests/browser/test_report.py)."""

from __future__ import annotations

import base64
import hashlib
import html
import json
import os
import re
from pathlib import Path

import pyarrow.compute as pc
import pytest

import sessionlab as sl
from sessionlab.cli import main
from sessionlab.report import build_report, write_report
from sessionlab.report._data import spend_label
from sessionlab.report._html import usage_series

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


def _payload(page: str) -> dict:
    return json.loads(re.search(r'<script type="application/json" id="sessionlab-data">(.*?)</script>', page,
                                re.S).group(1))


def test_numbers_are_the_tables(page):
    t = sl.entries_table(DATA)
    sessions = sl.sessions_table(DATA)
    data = _payload(page)
    assert len(data["cards"]) == len(data["find"]) == page.count("<tr data-i=") == sessions.num_rows
    total = sum(sessions["cost_usd"].to_pylist())
    assert f"${total:,.2f}" in page
    calls = sum(sessions["call_count"].to_pylist())  # the facts module's calls, as usage_by counts them
    assert calls == sum(sl.usage_by(t, by="session")["calls"].to_pylist())
    assert f"{calls:,} calls" in page
    usage = sl.usage_by(t, by=["day", "model", "usage_kind"])
    assert [round(r[2], 9) for r in data["usage"]] == [round(c, 9) for c in usage["cost_usd"].to_pylist()]
    cards = [c for c in data["cards"] if c["h"] == "Release prep"]
    release = sessions.filter(pc.equal(sessions["name"], "Release prep")).to_pylist()
    assert len(cards) == len(release) == 1
    assert cards[0]["facts"][4] == f"{release[0]['call_count']:,} calls"  # the sessions table's count
    assert cards[0]["facts"][5] == f"${release[0]['cost_usd']:,.2f}"


def test_cards_say_what_each_session_is(page):
    sessions = sl.sessions_table(DATA).to_pylist()
    data = _payload(page)
    for i, (s, find) in enumerate(zip(sessions, data["find"])):  # the table's order, one owner of each number
        assert find[0] == s["session_id"] and find[3] == (s["cwd"] or "") and find[4] == s["agent"]
        card = data["cards"][i]
        assert ["id ", s["session_id"]] in card["small"] and ["file ", s["file"]] in card["small"]
        assert card["facts"][1] == ["project ", s["cwd"] or ""]
        assert f"{s['entry_count']:,} entries" in card["facts"]
    assert {f[4] for f in data["find"]} >= {"pi", "claude-code", "codex"}


def test_spend_outside_calls_is_named_by_what_it_paid_for(tmp_path):
    out = tmp_path / "c"
    sl.generate_corpus(out, n_sessions=12, target_bytes=600_000, seed=3)
    t = sl.entries_table(out)
    usage = sl.usage_by(t, by=["day", "model", "usage_kind"]).to_pylist()
    outside = [u for u in usage if u["calls"] == 0]
    assert outside and {u["usage_kind"] for u in outside} <= {"title", "branch_summary", "compaction", "summary",
                                                                 "usage"}
    page = build_report(out)
    body = re.search(r"id='usage-table'>.*?<tbody>(.*?)</tbody>", page, re.S).group(1)
    rows = re.findall(r"<tr>(.*?)</tr>", body)
    assert len(rows) == len(usage)
    for u, row in zip(usage, rows):  # the table's rows are usage_by's, in its order
        cells = re.findall(r"<td[^>]*>(.*?)</td>", row)
        if u["calls"]:
            assert cells[2] == "calls" and cells[3] == f"{u['calls']:,}"
        else:  # no '0 calls' and no bare '(none)' model: the row says what the spend was
            assert cells[3] == "–" and "(outside calls)" in cells[2]
            assert spend_label(u["usage_kind"]) in cells[2] and spend_label(u["usage_kind"]) != "calls"
            assert cells[1] == (u["model"] or "(not recorded)")
    series = {r[1] for r in _payload(page)["usage"]}
    assert "titles (gemini-2.5-pro)" in series  # the chart's legend says it too
    assert "(none)" not in series


def test_spend_labels():
    assert [spend_label(k) for k in ("message", None, "title", "branch_summary", "compaction", "usage", "odd")] == [
        "calls", "calls", "titles", "branch summaries", "compaction summaries", "usage entries", "odd entries"]
    assert usage_series("m", "message") == "m" and usage_series(None, "message") == "(none)"
    assert usage_series("m", "title") == "titles (m)" and usage_series(None, "branch_summary") == "branch summaries"


def test_filters_offer_each_project_and_agent_once(page):
    sessions = sl.sessions_table(DATA).to_pylist()
    projects = re.search(r"<select id='f-project'[^>]*>(.*?)</select>", page, re.S).group(1)
    values = re.findall(r"<option value='([^']*)'", projects)
    assert values[0] == "" and values[1:] == sorted({html.escape(s["cwd"], quote=True) for s in sessions if s["cwd"]})
    agents = re.findall(r"<option value='([^']*)'", re.search(r"<select id='f-agent'[^>]*>(.*?)</select>",
                                                               page, re.S).group(1))
    assert agents[1:] == sorted({s["agent"] for s in sessions})
    n_pi = sum(s["agent"] == "pi" for s in sessions)
    assert f"<option value='pi'>pi ({n_pi:,})</option>" in page


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
    data = json.loads(block)
    assert "<" not in block and data["sessions"][0]["tree"]["labels"][0][1] == SCRIPT
    assert data["cards"][0]["h"] == f"name {SCRIPT}" and data["find"][0][1] == f"name {SCRIPT}"


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
