"""The widgets' live mode in a real JupyterLab: with a widget's live toggle on, lines an agent
appends to a session file show in the widget within a second (the follower's thread sets the
traits; the comm carries them to the page); with it off, they do not.

The sessions are written here, by the session system, while the notebook's kernel follows them.
"""

from __future__ import annotations

import time

import pytest

import sessionlab as sl
from tests.browser._lab import cell_output, kernel_errors, open_and_run
from tests.browser.conftest import new_page, screenshot_if_failed, write_notebook

LATENCY = 1.0  # seconds from the append to the page (about 0.2 s here)


def _usage(cost: float) -> sl.Usage:
    return sl.Usage(input=1000, output=200, cache_read=0, cache_write=0, total_tokens=1200,
                    cost=sl.Cost(input=cost / 2, output=cost / 2, cache_read=0.0, cache_write=0.0, total=cost))


def _reply(session: sl.Session, n: int) -> str:
    return session.append_message(sl.AssistantMessage(
        content=(sl.TextContent(text=f"reply {n} " + "x" * 1500),), provider="anthropic", model="claude-sonnet-4",
        usage=_usage(0.25), stop_reason="stop", timestamp=int(time.time() * 1000)))


@pytest.fixture(scope="module")
def live_lab(browser, jupyterlab):
    repo = sl.JsonlSessionRepo(jupyterlab.root / "live")
    sessions = []
    for i in range(2):
        s = repo.create(cwd=f"/work/live{i}")
        s.append_message(sl.UserMessage(content=f"task {i}", timestamp=int(time.time() * 1000)))
        _reply(s, 0)
        sessions.append(s)
    sid = sessions[0].storage.get_metadata().id
    cells = [
        "import sessionlab as sl\nfrom sessionlab.widgets import BranchExplorer, SessionTree, UsageDashboard\n"
        "c = sl.load('live', cache='live-cache')",
        "UsageDashboard(c)",
        f"SessionTree(c, session_id={sid!r}, height=260)",
        f"BranchExplorer(c, session_id={sid!r})",
    ]
    write_notebook(jupyterlab.root / "live.ipynb", cells)
    pg = new_page(browser)
    open_and_run(pg, jupyterlab, "live.ipynb")
    pg.wait_for_selector(".sessionlab-usage-dashboard", timeout=60_000)
    pg.wait_for_selector(".sessionlab-branch-explorer", timeout=60_000)
    pg.wait_for_function("document.querySelectorAll('.sessionlab-session-tree[data-draw-ms]').length === 1",
                         timeout=60_000)
    yield pg, sessions
    pg.context.close()


@pytest.fixture
def lab(live_lab, request):
    pg, sessions = live_lab
    yield pg, sessions
    screenshot_if_failed(request, pg)
    assert kernel_errors(pg) == []
    assert [e for e in pg.errors if "favicon" not in e] == []
    assert pg.remote == []


def _appended_shows(pg, session, text, expected: str) -> float:
    """Append a call, then wait until ``text`` (evaluated in the page) contains ``expected``; the
    seconds that took."""
    t0 = time.monotonic()
    _reply(session, 1)
    pg.wait_for_function(f"() => ({text}).includes({expected!r})", timeout=15_000)
    return time.monotonic() - t0


DASH = "document.querySelector('.sessionlab-usage-dashboard .sessionlab-status').innerText"
TREE = "document.querySelector('.sessionlab-session-tree').dataset.nodes"
HEADER = "document.querySelector('.sessionlab-branch-explorer .sessionlab-header').innerText"


def test_every_widget_follows_appended_lines_while_live(lab):
    pg, sessions = lab
    assert "2 calls" in pg.evaluate(DASH)
    assert pg.evaluate(TREE) == "2"  # the prompt and the call
    assert "2 entries" in pg.evaluate(HEADER)
    # switch each widget live the way a person does: click its toggle
    cell_output(pg, 1).locator(".sessionlab-live").click()
    cell_output(pg, 2).locator(".sessionlab-tree-live input").check()
    cell_output(pg, 3).locator(".sessionlab-live").click()
    pg.wait_for_timeout(1200)  # (each follower's watch is set up)
    t0 = time.monotonic()
    _reply(sessions[0], 1)
    pg.wait_for_function(f"() => {DASH}.includes('3 calls') && {TREE} === '3' && {HEADER}.includes('3 entries')",
                         timeout=15_000)
    took = time.monotonic() - t0
    assert took < LATENCY, f"the widgets showed the new call after {took:.2f} s"
    pg.wait_for_function(f"() => {DASH}.includes('1 grown')", timeout=5_000)  # (after the figure)
    # the other session's file grows too: the dashboard counts it; the tree and the explorer show session 0
    took = _appended_shows(pg, sessions[1], DASH, "4 calls")
    assert took < LATENCY, f"the dashboard showed the new call after {took:.2f} s"
    pg.wait_for_timeout(500)
    assert pg.evaluate(TREE) == "3" and "3 entries" in pg.evaluate(HEADER)


def test_nothing_changes_once_live_is_off(lab):
    pg, sessions = lab
    cell_output(pg, 1).locator(".sessionlab-live").click()
    cell_output(pg, 2).locator(".sessionlab-tree-live input").uncheck()
    cell_output(pg, 3).locator(".sessionlab-live").click()
    pg.wait_for_timeout(300)
    before = (pg.evaluate(DASH), pg.evaluate(TREE), pg.evaluate(HEADER))
    _reply(sessions[0], 9)
    pg.wait_for_timeout(2_000)
    assert (pg.evaluate(DASH), pg.evaluate(TREE), pg.evaluate(HEADER)) == before
