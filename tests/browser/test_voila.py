"""SessionTree and BranchExplorer in Voila (the dashboard server): they render from the package's
own JavaScript, a click in the tree shows that entry's context in the explorer, and a generated
20,000-entry session draws in under a second."""

from __future__ import annotations

from pathlib import Path

import sessionlab as sl
from sessionlab.synth import generate_session
from tests.browser.conftest import write_notebook

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "data"
RUST_CLI = "b627ef1d-8e91-479a-a1c3-a39e50c19172"


def test_session_tree_in_voila(voila, page):
    big = generate_session(voila.root / "big", seed=7, turns=2150, branch_prob=0.05)
    write_notebook(voila.root / "tree.ipynb", [
        "import sessionlab as sl\nfrom sessionlab.widgets import BranchExplorer, SessionTree\n"
        f"t = sl.entries_table({str(DATA)!r})\ntree = SessionTree(height=360)\n"
        f"BranchExplorer(t, session_id={RUST_CLI!r}, session_tree=tree)",
        f"SessionTree(sl.entries_table({str(big)!r}))",
    ])
    page.goto(f"{voila.url}/voila/render/tree.ipynb")
    page.wait_for_function("document.querySelectorAll('.sessionlab-session-tree[data-draw-ms]').length === 2",
                           timeout=180_000)
    trees = page.locator(".sessionlab-session-tree")
    assert int(trees.nth(1).get_attribute("data-nodes")) >= 20_000
    assert float(trees.nth(1).get_attribute("data-first-draw-ms")) < 1000
    g = sl.session_tree(sl.entries_table(DATA), session_id=RUST_CLI)
    target = sl.current_branch(g, g.graph["leaf_id"])[5]
    canvas = trees.nth(0).locator("canvas")
    canvas.scroll_into_view_if_needed()
    box = canvas.bounding_box()
    x, y = trees.nth(0).evaluate("(e, id) => e.sessionlabPositionOf(id)", target)
    page.mouse.click(box["x"] + x, box["y"] + y)
    summary = page.locator(".sessionlab-branch-explorer .sessionlab-summary")
    page.wait_for_function("([e, id]) => e.innerText.includes('Context at ' + id)",
                           arg=[summary.element_handle(), target], timeout=30_000)
    # Voila's own page template asks a CDN for its icon font (unreachable offline); nothing else may leave
    voila_template = [u for u in page.remote if "fontawesome" in u]
    assert [u for u in page.remote if u not in voila_template] == []
    assert [e for e in page.errors if "ERR_NAME_NOT_RESOLVED" not in e] == []
    assert len(page.errors) <= len(voila_template)
