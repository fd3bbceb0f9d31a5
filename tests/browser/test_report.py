"""The HTML report in Chromium: content, links, charts drawn by its own script under its CSP, and
session text that tries to run script (names, messages, labels, model names, folders, bad lines)
stays text: ``window.__xss`` is never set and no element is injected.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import sessionlab as sl
from sessionlab.report import write_report
from tests.browser.conftest import doc_screenshot

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "data"
PAYLOADS = ['<img src=x onerror="window.__xss=1">', "</script><script>window.__xss=2</script>",
            "\"'><svg onload=window.__xss=3>", "<iframe src=javascript:window.__xss=4>"]
XSS = " ".join(PAYLOADS)


def hostile_corpus(folder: Path, *, day: str = "2026-02-10") -> Path:
    """Two sessions whose text is script payloads (and a bad line quoting them), on ``day`` (their
    entries' times are moved there, so that the usage chart's days do not depend on today's date)."""
    repo = sl.JsonlSessionRepo(folder)
    s = repo.create(cwd=f"/home/{PAYLOADS[0]}")
    t = 1_767_225_600_000
    usage = sl.Usage(input=1000, output=50, cache_read=0, cache_write=0, total_tokens=1050,
                     cost=sl.Cost(input=0.001, output=0.0005, cache_read=0.0, cache_write=0.0, total=0.0015))
    u = s.append_message(sl.UserMessage(content=f"please {XSS}", timestamp=t))
    a = s.append_message(sl.AssistantMessage(content=(sl.TextContent(text=XSS),), provider="p", model=f"model {XSS}",
                                             usage=usage, stop_reason="stop", timestamp=t + 1000))
    s.append_label(a, f"label {XSS}")
    s.move_to(u)
    s.append_message(sl.AssistantMessage(content=(sl.TextContent(text="b"),), provider="p", model="m",
                                         usage=usage, stop_reason="stop", timestamp=t + 2000))
    unnamed = repo.create(cwd="/home/plain")
    unnamed.append_message(sl.UserMessage(content=f"first prompt {PAYLOADS[1]}", timestamp=t + 5000))
    s.append_session_info(f"name {XSS}")
    files = sorted(folder.rglob("*.jsonl"))
    for f in files:
        f.write_text(re.sub(r'"timestamp": ?"\d{4}-\d\d-\d\d', f'"timestamp":"{day}', f.read_text("utf-8")),
                     encoding="utf-8")
    with open(files[0], "a", encoding="utf-8") as fh:  # a bad line quoting the payloads
        fh.write(json.dumps({"type": "message", "id": 5})[:-1] + f" {XSS}\n")
    return folder


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("report")
    hostile = hostile_corpus(tmp / "hostile")
    return write_report([str(DATA), str(hostile)], tmp / "report.html")


@pytest.fixture
def opened(page, report):
    page.goto(report.as_uri())
    page.wait_for_function("document.body.dataset.readyMs !== undefined", timeout=10_000)
    yield page
    assert page.evaluate("() => window.__xss") is None
    assert page.errors == []  # a CSP violation or a script error would show here
    assert page.remote == []


def test_report_content(opened, report):
    n = len(list(DATA.rglob("*.jsonl"))) + 2
    rows = opened.locator("#sessions-table tbody tr")
    assert rows.count() == n
    shown = opened.eval_on_selector_all("#details-list section.session", "ss => ss.map(s => s.dataset.i)")
    assert shown == rows.evaluate_all("rs => rs.map(r => r.dataset.i)")[:20]  # the first page, in table order
    names = rows.locator("td:first-child").all_text_contents()  # (rows out of view are not rendered)
    assert "Release prep" in names and f"name {XSS}"[:47] + "…" in names  # long titles are cut
    assert f"first prompt {PAYLOADS[1]}"[:47] in "".join(names)
    assert opened.locator("#usage-chart svg rect").count() > 0  # drawn by the page's own (hashed) script
    legend = opened.locator("#usage-chart .legend").inner_text()
    assert f"model {XSS}" in legend
    costs = rows.locator("td:nth-child(8)").all_text_contents()
    assert all(re.fullmatch(r"\$[\d,]+\.\d\d|<\$0\.01", c) for c in costs), costs
    assert opened.locator("#issues tbody tr").count() >= 1
    assert "window.__xss=1" in opened.locator("#issues").text_content()  # the bad line's excerpt, as text
    opened.set_viewport_size({"width": 1300, "height": 1100})  # the whole section below the page's header
    doc_screenshot(opened.locator("#usage"), "report-usage")


def test_report_links_resolve_and_open_sections(opened):
    hrefs = opened.eval_on_selector_all("a[href]", "as => as.map(a => a.getAttribute('href'))")
    assert hrefs and all(h.startswith("#") for h in hrefs)  # nothing leaves the page
    n = opened.locator("#sessions-table tbody tr").count()
    sessions = {h for h in hrefs if re.fullmatch(r"#(s|issues)-\d+", h)}  # sections are built when opened
    assert sessions and all(int(h.rsplit("-", 1)[1]) < n for h in sessions)
    missing = [h for h in set(hrefs) - sessions if opened.locator(f"[id='{h[1:]}']").count() != 1]
    assert missing == []
    issue_link = opened.locator("#sessions-table a[href^='#issues-']").first
    issue_link.click()
    target = opened.evaluate("() => location.hash")
    opened.locator(f"[id='{target[1:]}'] li").first.wait_for(timeout=5_000)
    link = opened.locator("#sessions-table a", has_text="Release prep")
    link.click()
    target = opened.evaluate("() => location.hash")
    section = opened.locator(f"section{target}")
    assert section.locator("h3").inner_text() == "Release prep"
    section.locator(".timeline svg path").first.wait_for(timeout=5_000)
    assert section.locator(".tree svg path").count() >= 3
    doc_screenshot(section, "report-session")
    section.locator("a", has_text="back to the sessions").click()
    assert opened.evaluate("() => location.hash") == "#sessions"


def test_report_sorts_sessions(opened):
    header = opened.locator("#sessions-table th", has_text="cost")
    header.click()
    header.click()  # descending
    vals = [float(v) for v in opened.eval_on_selector_all(
        "#sessions-table tbody td:nth-child(8)", "cs => cs.map(c => c.dataset.v)")]
    assert vals == sorted(vals, reverse=True)


def test_hostile_text_stays_inert(opened):
    for s in opened.locator("section.session").all():  # draw every section
        s.scroll_into_view_if_needed()
    opened.wait_for_timeout(300)
    assert opened.locator("main img, main iframe, main script, main svg svg").count() == 0
    assert opened.locator("[onerror], [onload]").count() == 0
    html = opened.content()
    assert "window.__xss" in html  # the payloads are there, as text
    labels = opened.eval_on_selector_all("section.session .tree svg text", "ts => ts.map(t => t.textContent)")
    assert any(t.startswith("label <img src=x") for t in labels)
    csp = opened.locator("meta[http-equiv='Content-Security-Policy']").get_attribute("content")
    assert "default-src 'none'" in csp and "unsafe-inline" not in csp and "http" not in csp
