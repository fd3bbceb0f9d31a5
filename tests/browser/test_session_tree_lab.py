"""SessionTree in JupyterLab: a generated 20,000-entry session draws in under a second; hover
shows the entry (role, tokens, time); a click selects it and BranchExplorer shows its context;
pan and zoom redraw; hostile session text stays text (``window.__xss`` never set).

The draw time asserted here is a functional bound (the tree must be usable); the figures
themselves are measured by benchmarks/bench_browser.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import sessionlab as sl
from sessionlab.synth import generate_session
from tests.browser._lab import kernel_errors, open_and_run
from tests.browser.conftest import doc_screenshot, new_page, screenshot_if_failed, write_notebook

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "data"
RUST_CLI = "b627ef1d-8e91-479a-a1c3-a39e50c19172"
XSS = '<img src=x onerror="window.__xss=1"><script>window.__xss=2</script>'


def hostile_session(folder: Path) -> Path:
    repo = sl.JsonlSessionRepo(folder)
    s = repo.create(cwd=f"/home/{XSS}")
    t = 1_767_225_600_000
    u = s.append_message(sl.UserMessage(content=f"hi {XSS}", timestamp=t))
    usage = sl.Usage(input=10, output=5, cache_read=0, cache_write=0, total_tokens=15,
                     cost=sl.Cost(input=0.0, output=0.0, cache_read=0.0, cache_write=0.0, total=0.0))
    a = s.append_message(sl.AssistantMessage(content=(sl.TextContent(text=XSS),), provider="p", model=f"m {XSS}",
                                             usage=usage, stop_reason="stop", timestamp=t + 1))
    s.append_label(a, f"label {XSS}")
    s.move_to(u)
    s.append_message(sl.AssistantMessage(content=(sl.TextContent(text="b"),), provider="p", model="m",
                                         usage=usage, stop_reason="stop", timestamp=t + 2))
    s.append_session_info(f"name {XSS}")
    return folder


@pytest.fixture(scope="module")
def tree_page(browser, jupyterlab):
    big = generate_session(jupyterlab.root / "big", seed=7, turns=2150, branch_prob=0.05, label_prob=0.05)
    hostile_session(jupyterlab.root / "hostile")
    cells = [
        "import sessionlab as sl\nfrom sessionlab.widgets import BranchExplorer, SessionTree\n"
        f"t = sl.entries_table({str(DATA)!r})\nbig = sl.entries_table({str(big)!r})\n"
        "bad = sl.entries_table('hostile')",
        "tree = SessionTree(height=380)\nex = BranchExplorer(t, session_id=" + repr(RUST_CLI) + ", session_tree=tree)\nex",
        "SessionTree(big, height=420)",
        "SessionTree(bad, height=260)",
    ]
    write_notebook(jupyterlab.root / "tree.ipynb", cells)
    pg = new_page(browser)
    open_and_run(pg, jupyterlab, "tree.ipynb", timeout=180_000)
    pg.wait_for_function("document.querySelectorAll('.sessionlab-session-tree[data-draw-ms]').length === 3",
                         timeout=60_000)
    yield pg
    pg.context.close()


@pytest.fixture
def lab(tree_page, request):
    yield tree_page
    screenshot_if_failed(request, tree_page)
    assert kernel_errors(tree_page) == []
    assert [e for e in tree_page.errors if "favicon" not in e] == []
    assert tree_page.remote == []  # nothing is loaded from the network
    assert tree_page.evaluate("() => window.__xss") is None


def trees(page):
    return page.locator(".sessionlab-session-tree")


def test_draws_20000_entries_in_under_a_second(lab):
    big = trees(lab).nth(1)
    assert int(big.get_attribute("data-nodes")) >= 20_000
    first = float(big.get_attribute("data-first-draw-ms"))
    assert 0 < first < 1000, f"first draw took {first:.0f} ms"
    big.locator(".sessionlab-tree-fit").click()
    assert float(big.get_attribute("data-draw-ms")) < 1000
    doc_screenshot(big, "session-tree-20k")
    canvas = big.locator("canvas")
    canvas.scroll_into_view_if_needed()
    box = canvas.bounding_box()
    lab.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    lab.keyboard.down("Control")  # (a pinch on a touchpad is a Ctrl+wheel)
    lab.mouse.wheel(0, -600)  # zoom in
    lab.keyboard.up("Control")
    lab.wait_for_timeout(200)
    zoomed = float(big.get_attribute("data-draw-ms"))
    assert zoomed < 250, f"a zoomed frame took {zoomed:.0f} ms"


def node_xy(page, tree, entry_id):
    tree.locator("canvas").scroll_into_view_if_needed()
    box = tree.locator("canvas").bounding_box()
    pos = tree.evaluate("(e, id) => e.sessionlabPositionOf(id)", entry_id)
    assert pos is not None
    return box["x"] + pos[0], box["y"] + pos[1]


def test_hover_shows_the_entry_and_click_selects_it(lab):
    tree = trees(lab).nth(0)
    g = sl.session_tree(sl.entries_table(DATA), session_id=RUST_CLI)
    user = next(n for n in sl.current_branch(g, g.graph["leaf_id"])[3:] if g.nodes[n].get("role") == "user")
    x, y = node_xy(lab, tree, user)
    lab.mouse.move(x, y)
    tip = tree.locator(".sessionlab-tree-tooltip")
    tip.wait_for(state="visible", timeout=5_000)
    text = tip.inner_text()
    assert text.startswith("user") and f"entry {user}" in text and "tokens" in text and "UTC" in text
    summary = lab.locator(".sessionlab-branch-explorer .sessionlab-summary")
    lab.mouse.click(x, y)
    lab.wait_for_function("([e, id]) => e.innerText.includes('Context at ' + id)",
                          arg=[summary.element_handle(), user], timeout=30_000)
    doc_screenshot(lab.locator(".sessionlab-branch-explorer"), "branch-explorer-session-tree")


def test_drag_pans(lab):
    tree = trees(lab).nth(0)
    eid = sl.session_tree(sl.entries_table(DATA), session_id=RUST_CLI).graph["leaf_id"]
    before = node_xy(lab, tree, eid)
    box = tree.locator("canvas").bounding_box()  # in view: node_xy scrolled it there
    lab.mouse.move(box["x"] + 50, box["y"] + 50)
    lab.mouse.down()
    lab.mouse.move(box["x"] + 130, box["y"] + 90, steps=5)
    lab.mouse.up()
    after = node_xy(lab, tree, eid)
    assert round(after[0] - before[0]) == 80 and round(after[1] - before[1]) == 40


def test_hostile_text_stays_text(lab, jupyterlab):
    tree = trees(lab).nth(2)
    assert tree.locator("img, script").count() == 0
    assert "name <img" in tree.locator("b").first.inner_text()  # the title: the session name, as text
    rows = sl.entries_table(jupyterlab.root / "hostile").to_pylist()
    labelled = next(r["target_id"] for r in rows if r["type"] == "label")
    x, y = node_xy(lab, tree, labelled)
    lab.mouse.move(x, y)
    tip = tree.locator(".sessionlab-tree-tooltip")
    tip.wait_for(state="visible", timeout=5_000)
    assert f"label: label {XSS}" in tip.inner_text() and f"model: m {XSS}" in tip.inner_text()
    assert tip.locator("*").count() == 0  # text only, no elements
    assert lab.evaluate("() => window.__xss") is None


# -- readable at scale: legend, node size, level of detail, the wheel, loading state ---------------

def test_legend_lists_only_kinds_the_session_has(lab):
    for i in range(3):
        legend = trees(lab).nth(i).locator("span > span").all_inner_texts()
        assert legend and not any(t.endswith("(0)") for t in legend), legend


def test_nodes_have_a_minimum_size(lab):
    tree = trees(lab).nth(0)  # 169 entries: nodes were ~3 px across
    tree.locator(".sessionlab-tree-fit").click()
    assert float(tree.get_attribute("data-radius")) >= 3


def test_labels_at_fit_do_not_overlap_and_zoom_shows_more(lab):
    big = trees(lab).nth(1)
    big.locator(".sessionlab-tree-fit").click()
    shown, hidden = int(big.get_attribute("data-texts-shown")), int(big.get_attribute("data-texts-hidden"))
    assert shown > 0 and hidden > shown  # most of ~1,000 labels would overlap at fit: they wait for a zoom
    canvas = big.locator("canvas")
    canvas.scroll_into_view_if_needed()
    box = canvas.bounding_box()
    lab.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    lab.keyboard.down("Control")
    lab.mouse.wheel(0, -1500)
    lab.keyboard.up("Control")
    lab.wait_for_timeout(300)
    assert int(big.get_attribute("data-texts-hidden")) < hidden


def test_wheel_scrolls_the_notebook_until_a_click(lab):
    tree = trees(lab).nth(0)
    eid = sl.session_tree(sl.entries_table(DATA), session_id=RUST_CLI).graph["leaf_id"]
    tree.locator(".sessionlab-tree-fit").click()
    before = node_xy(lab, tree, eid)
    box = tree.locator("canvas").bounding_box()
    lab.mouse.move(box["x"] + 20, box["y"] + 20)
    lab.mouse.wheel(0, 120)
    lab.wait_for_timeout(300)
    assert tree.locator("canvas").bounding_box()["y"] < box["y"] - 50  # the notebook scrolled
    after = node_xy(lab, tree, eid)  # (scrolls it back into view: same zoom, so same place in the canvas)
    box2 = tree.locator("canvas").bounding_box()
    assert round(after[0] - box2["x"]) == round(before[0] - box["x"])
    assert round(after[1] - box2["y"]) == round(before[1] - box["y"])


def test_a_click_shows_loading_never_the_previous_context(lab):
    tree = trees(lab).nth(0)
    ex = lab.locator(".sessionlab-branch-explorer")
    g = sl.session_tree(sl.entries_table(DATA), session_id=RUST_CLI)
    target = [n for n in g.nodes if g.nodes[n].get("role") == "assistant"][2]
    x, y = node_xy(lab, tree, target)
    ex.evaluate("""e => { window.__seen = []; const s = e.querySelector('.sessionlab-summary');
      new MutationObserver(() => window.__seen.push([e.classList.contains('sessionlab-loading'), s.innerText]))
        .observe(e, {attributes: true, subtree: true, childList: true, characterData: true}); }""")
    lab.mouse.click(x, y)
    summary = ex.locator(".sessionlab-summary")
    lab.wait_for_function("([e, id]) => e.innerText.includes('Context at ' + id)", arg=[summary.element_handle(),
                          target], timeout=30_000)
    lab.wait_for_function("e => !e.classList.contains('sessionlab-loading')", arg=ex.element_handle(),
                          timeout=30_000)
    seen = lab.evaluate("() => window.__seen")
    first = next(i for i, (loading, _) in enumerate(seen) if loading)  # (before it: hover redraws)
    assert all(f"Context at {target}" not in text for _, text in seen[:first])
    seen = seen[first:]
    assert all(f"Context at {target}" in text for loading, text in seen if not loading)
