"""The widgets on a Claude Code and a Codex session in a real JupyterLab, as on pi's: BranchExplorer
with a SessionTree (a click on an entry shows its context, read back from the agent's file),
CompactionLab and UsageDashboard open without a console or kernel error, name the session by its
title or prompt, and show its numbers."""

from __future__ import annotations

from pathlib import Path

import pytest

import sessionlab as sl
from tests.browser._lab import kernel_errors, open_and_run
from tests.browser.conftest import new_page, screenshot_if_failed, write_notebook

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "data"
CLAUDE = "45ee8ea6-ace2-46ff-b33e-451ca18a2166"  # generated Claude Code session with a subagent
CODEX = "e4df2fbd-9a03-408c-a951-8f99f061bb93"  # generated Codex session with a compaction
SESSIONS = {"claude": CLAUDE, "codex": CODEX}


@pytest.fixture(scope="module")
def agents_page(browser, jupyterlab):
    cells = ["import sessionlab as sl\nfrom sessionlab.widgets import BranchExplorer, CompactionLab, SessionTree, "
             f"UsageDashboard\ncorpus = sl.load({str(DATA)!r})"]
    for name, sid in SESSIONS.items():
        cells += [f"tree_{name} = SessionTree(height=300)\n"
                  f"BranchExplorer(corpus, session_id={sid!r}, session_tree=tree_{name})",
                  f"CompactionLab(corpus, session_id={sid!r}, context_window=30_000)",
                  f"UsageDashboard(corpus, session_id={sid!r})"]
    write_notebook(jupyterlab.root / "agents.ipynb", cells)
    pg = new_page(browser)
    open_and_run(pg, jupyterlab, "agents.ipynb", timeout=180_000)
    for cls, n in (("branch-explorer", 2), ("compaction-lab", 2), ("usage-dashboard", 2), ("session-tree", 2)):
        pg.wait_for_function(f"document.querySelectorAll('.sessionlab-{cls}').length === {n}", timeout=60_000)
    pg.wait_for_function("document.querySelectorAll('.sessionlab-session-tree[data-draw-ms]').length === 2",
                         timeout=60_000)
    yield pg
    pg.context.close()


@pytest.fixture
def lab(agents_page, request):
    yield agents_page
    screenshot_if_failed(request, agents_page)
    assert kernel_errors(agents_page) == []
    assert [e for e in agents_page.errors if "favicon" not in e] == []
    assert agents_page.remote == []


@pytest.mark.parametrize("i,name", [(0, "claude"), (1, "codex")])
def test_branch_explorer_shows_the_context_of_an_agent_session(lab, i, name):
    ex = lab.locator(".sessionlab-branch-explorer").nth(i)
    label = ex.locator(".sessionlab-session select option").first.inner_text().replace("\xa0", " ")
    assert not label.startswith("(no prompt)") and " · shop · " in label
    summary = ex.locator(".sessionlab-summary").inner_text()
    shown = summary.split("Context at ", 1)[1].split(":", 1)[0]  # the entry the explorer opened at
    corpus = sl.load(DATA, cache=False)
    n = sl.contexts(corpus, at=[shown], session_id=SESSIONS[name]).to_pylist()[0]["message_count"]
    assert n > 0 and f"{n:,} messages" in summary
    assert ex.locator(".sessionlab-context table tbody tr").count() == n  # one row per message read back


@pytest.mark.parametrize("i,name", [(0, "claude"), (1, "codex")])
def test_a_click_in_the_session_tree_shows_that_entry_s_context(lab, i, name):
    tree = lab.locator(".sessionlab-session-tree").nth(i)
    corpus = sl.load(DATA, cache=False)
    g = sl.session_tree(corpus, session_id=SESSIONS[name])
    user = next(n for n in sl.current_branch(g, g.graph["leaf_id"])[3:] if g.nodes[n].get("role") == "user")
    tree.locator("canvas").scroll_into_view_if_needed()
    box = tree.locator("canvas").bounding_box()
    pos = tree.evaluate("(e, id) => e.sessionlabPositionOf(id)", user)
    summary = lab.locator(".sessionlab-branch-explorer").nth(i).locator(".sessionlab-summary")
    lab.mouse.click(box["x"] + pos[0], box["y"] + pos[1])
    lab.wait_for_function("([e, id]) => e.innerText.includes('Context at ' + id)",
                          arg=[summary.element_handle(), user], timeout=30_000)


@pytest.mark.parametrize("i", [0, 1])
def test_compaction_lab_and_usage_dashboard_show_the_session(lab, i):
    lab_root = lab.locator(".sessionlab-compaction-lab").nth(i)
    text = lab_root.inner_text()
    assert "$" in text and "(no prompt)" not in text
    dash = lab.locator(".sessionlab-usage-dashboard").nth(i)
    rows = dash.locator(".sessionlab-table table tbody tr")
    assert rows.count() >= 1 and "$" in dash.locator(".sessionlab-table table").inner_text()
