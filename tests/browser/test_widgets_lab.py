"""The three widgets in a real JupyterLab: they fit a 1,000 px notebook, their tables scroll in a
bounded box, numbers are right-aligned with units, sessions are named, controls validate each
other, empty cases say why, figures are readable; driving the controls changes the view without
a console or kernel error.

Each test guards one of the problems the widgets had (see the test names); one notebook with all
three widgets is opened and run once for the module.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.browser._lab import kernel_errors, open_and_run
from tests.browser.conftest import doc_screenshot, new_page, screenshot_if_failed, write_notebook

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "data"
API_SERVER = "a28f5b37-6b04-44f2-b094-90b86b01a1c1"  # two compactions
PI_LARGE = "large-session"
UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")

CELLS = [
    "import sessionlab as sl\nfrom sessionlab.widgets import BranchExplorer, CompactionLab, UsageDashboard\n"
    f"t = sl.entries_table({str(DATA)!r})\n"
    "big = [s for s in sl.sessions_table(t['file'].unique().to_pylist()).to_pylist()\n"
    "       if s['file'].endswith('large-session.jsonl')][0]['session_id']",
    f"CompactionLab(t, session_id={API_SERVER!r})",
    "BranchExplorer(t, session_id=big)",
    "UsageDashboard(t)",
    "import tempfile\nquiet = sl.JsonlSessionRepo(tempfile.mkdtemp())\n"
    "quiet.create(cwd='/p/quiet').append_message(sl.UserMessage(content='hello?', timestamp=1_767_225_600_000))\n"
    "one_repo = sl.JsonlSessionRepo(tempfile.mkdtemp())\none = one_repo.create(cwd='/p/one')\n"
    "u = one.append_message(sl.UserMessage(content='hi', timestamp=1_767_225_600_000))\n"
    "one.append_message(sl.AssistantMessage(content=(sl.TextContent(text='ok'),), provider='p', model='m', "
    "usage=sl.Usage(input=900, output=40, cache_read=0, cache_write=0, total_tokens=940, cost=sl.Cost(input=0.0, "
    "output=0.0, cache_read=0.0, cache_write=0.0, total=0.01)), stop_reason='stop', timestamp=1_767_225_601_000))\n"
    "from ipywidgets import VBox\n"
    "VBox([CompactionLab(sl.entries_table(quiet.root)), CompactionLab(sl.entries_table(one_repo.root))])",
]


@pytest.fixture(scope="module")
def lab_page(browser, jupyterlab):
    write_notebook(jupyterlab.root / "widgets.ipynb", CELLS)
    pg = new_page(browser)
    open_and_run(pg, jupyterlab, "widgets.ipynb")
    for cls in ("compaction-lab", "branch-explorer", "usage-dashboard"):
        pg.wait_for_selector(f".sessionlab-{cls}", timeout=60_000)
    pg.wait_for_function("document.querySelectorAll('.sessionlab-compaction-lab').length === 3", timeout=60_000)
    pg.wait_for_timeout(500)
    yield pg
    pg.context.close()


@pytest.fixture
def lab(lab_page, request):
    yield lab_page
    screenshot_if_failed(request, lab_page)
    assert kernel_errors(lab_page) == []
    assert [e for e in lab_page.errors if "favicon" not in e] == []
    assert lab_page.remote == []  # nothing is loaded from the network


def rect(locator) -> dict:
    return locator.evaluate("e => { const r = e.getBoundingClientRect(); "
                            "return {left: r.left, right: r.right, top: r.top, bottom: r.bottom, "
                            "width: r.width, height: r.height}; }")


def wait_changed(page, locator, before: str, timeout: float = 30_000) -> str:
    page.wait_for_function("([e, b]) => e.innerText !== b", arg=[locator.element_handle(), before], timeout=timeout)
    return locator.inner_text()


def test_notebook_is_about_1000px(lab):
    nb = rect(lab.locator(".jp-NotebookPanel-notebook").first)
    assert 900 <= nb["width"] <= 1050
    for cls in ("compaction-lab", "branch-explorer", "usage-dashboard"):  # pictures for the docs
        doc_screenshot(lab.locator(f".sessionlab-{cls}").first, cls)


def fits(page, root) -> None:
    """Nothing inside ``root`` sticks out of the notebook's output area."""
    area = rect(root.locator("xpath=ancestor::div[contains(@class,'jp-OutputArea-output')]").first)
    assert rect(root)["right"] <= area["right"] + 1
    sticking = root.evaluate("""(r, right) => [...r.querySelectorAll('*')]
        .filter(e => e.offsetParent !== null && !e.closest('.sessionlab-scroll table'))
        .filter(e => e.getBoundingClientRect().right > right + 1)
        .map(e => e.className + ' ' + (e.getBoundingClientRect().right - right)).slice(0, 5)""",
                             area["right"])
    assert sticking == []


# 1. CompactionLab's table was cut off (cost columns hidden) with the file browser open
def test_compaction_lab_table_fits_with_costs_visible(lab):
    root = lab.locator(".sessionlab-compaction-lab").first
    fits(lab, root)
    box = root.locator(".sessionlab-summary .sessionlab-scroll")
    b = rect(box)
    for header in ("cost", "recorded cost"):
        th = box.locator("th", has_text=re.compile(f"^{header}$"))
        assert rect(th)["right"] <= b["right"] + 1, f"{header} column is outside the visible box"


# 5. numbers right-aligned, costs in dollars
def test_numbers_are_right_aligned_and_costs_in_dollars(lab):
    box = lab.locator(".sessionlab-compaction-lab .sessionlab-summary table").first
    cells = box.locator("tbody tr").first.locator("td")
    texts = cells.all_inner_texts()
    aligns = [c.evaluate("e => getComputedStyle(e).textAlign") for c in cells.all()]
    assert aligns[0] == "left"  # the policy name
    assert all(a == "right" for a in aligns[1:])
    assert re.fullmatch(r"\$[\d,]+\.\d\d", texts[-2]) and re.fullmatch(r"\$[\d,]+\.\d\d", texts[-1])
    assert re.fullmatch(r"\d{1,3}(,\d{3})*", texts[3])  # peak context tokens with separators


# 5. coarse controls: window stops, thousands separators, reserve bounded by the window
def test_window_slider_steps_and_validation(lab):
    root = lab.locator(".sessionlab-compaction-lab").first
    readout = root.locator(".sessionlab-window .widget-readout")
    assert readout.inner_text() == "200,000"
    summary = root.locator(".sessionlab-summary")
    before = summary.inner_text()
    handle = root.locator(".sessionlab-window .noUi-handle")
    handle.focus()
    handle.press("ArrowLeft")  # one stop down: the next common window, not 1,000 tokens
    lab.wait_for_function("e => e.innerText === '160,000'", arg=readout.element_handle(), timeout=30_000)
    assert wait_changed(lab, summary, before) != before
    for _ in range(6):  # down to the smallest window, one stop at a time
        handle.press("ArrowLeft")
    lab.wait_for_function("e => e.innerText === '8,000'", arg=readout.element_handle(), timeout=30_000)
    notes = root.locator(".sessionlab-notes")
    lab.wait_for_function("e => e.innerText.includes('reserve 16,384 → 3,072')", arg=notes.element_handle(),
                          timeout=30_000)
    assert root.locator(".sessionlab-reserve .widget-readout").inner_text() == "3,072"
    for _ in range(10):
        handle.press("ArrowRight")
    lab.wait_for_function("e => e.innerText === '1,000,000'", arg=readout.element_handle(), timeout=30_000)
    reserve = root.locator(".sessionlab-reserve .widget-readout")
    lab.wait_for_function("e => e.innerText === '16,384'", arg=reserve.element_handle(), timeout=30_000)


# 2. BranchExplorer was 3,800-4,600 px tall: tables now scroll in a bounded box
def test_branch_explorer_is_bounded(lab):
    root = lab.locator(".sessionlab-branch-explorer")
    fits(lab, root)
    height = rect(root)["height"]
    assert height < 1500, f"BranchExplorer is {height:.0f} px tall"
    box = root.locator(".sessionlab-context .sessionlab-scroll")
    dims = box.evaluate("e => [e.clientHeight, e.scrollHeight]")
    assert dims[0] <= 320 and dims[1] > dims[0]  # a long context scrolls inside its box


# 3. plots were small (72 dpi, 560-720 px): now full width and crisp
@pytest.mark.parametrize("widget,out", [("branch-explorer", "tree"), ("compaction-lab", "plot"),
                                        ("usage-dashboard", "plot")])
def test_figures_are_wide_and_sharp(lab, widget, out):
    selector = f".sessionlab-{widget} .sessionlab-{out} img"
    # the widget draws its figure after the kernel answers and may replace it: measure the image
    # shown once it has arrived and is laid out, in the same step (a replaced one has no size)
    sizes = lab.wait_for_function("s => { const e = document.querySelector(s);"
                                  " return e && e.complete && e.naturalWidth > 0 && e.getBoundingClientRect().width > 0"
                                  " ? [e.naturalWidth, e.getBoundingClientRect().width] : null }",
                                  arg=selector, timeout=30_000)
    natural, shown = sizes.json_value()
    area = rect(lab.locator(f".sessionlab-{widget}").first)
    assert shown >= 0.85 * area["width"], (shown, area["width"])
    assert natural >= 1.3 * shown  # more than one image pixel per screen pixel


# 4. sessions were bare UUIDs: labelled by name or first prompt, day and folder
def test_sessions_are_labelled(lab):
    for widget in ("branch-explorer", "compaction-lab"):
        labels = [x.replace("\xa0", " ") for x in
                  lab.locator(f".sessionlab-{widget} .sessionlab-session select option").all_inner_texts()]
        assert labels and not any(UUID.match(x) for x in labels)
        assert all(re.search(r" · \d{4}-\d\d-\d\d · ", x) for x in labels), labels
    assert any(x.startswith("Release prep · ") and "rust-cli" in x for x in labels)
    dash = lab.locator(".sessionlab-usage-dashboard")
    table = dash.locator(".sessionlab-table table")
    before = table.inner_text()
    dash.locator(".sessionlab-group select").select_option("session")
    wait_changed(lab, table, before)
    first_col = [x.replace("\xa0", " ") for x in
                 dash.locator(".sessionlab-table table tbody tr td:first-child").all_inner_texts()]
    assert first_col and all(" · " in x and not UUID.match(x) for x in first_col)
    assert "Refactor session loader · 2026-01-20 · ml-pipeline · d7e439fe" in first_col


def test_usage_dashboard_fits(lab):
    fits(lab, lab.locator(".sessionlab-usage-dashboard"))


# 4. the time-zone picker was a 599-entry list: now a searchable box
def test_timezone_is_searchable(lab):
    dash = lab.locator(".sessionlab-usage-dashboard")
    tz = dash.locator(".sessionlab-tz input")
    assert tz.get_attribute("list")  # a datalist: the browser filters it as you type
    assert dash.locator(".sessionlab-tz select").count() == 0
    status = dash.locator(".sessionlab-status")
    before = status.inner_text()
    tz.fill("Europe/Vien")  # half-typed: nothing changes
    tz.press("Enter")
    lab.wait_for_timeout(500)
    assert status.inner_text() == before
    tz.fill("Europe/Vienna")
    tz.press("Enter")
    assert "(Europe/Vienna)" in wait_changed(lab, status, before)


# 5. empty cases said nothing (an empty plot): now they say why
def test_empty_range_says_why(lab):
    dash = lab.locator(".sessionlab-usage-dashboard")
    status = dash.locator(".sessionlab-status")
    before = status.inner_text()
    start = dash.locator(".sessionlab-start input")
    start.fill("2030-01-01")
    start.press("Tab")
    text = wait_changed(lab, status, before)
    assert "starts" in text and "after it ends" in text
    doc_screenshot(lab.locator(".sessionlab-usage-dashboard"), "usage-dashboard-empty")


@pytest.mark.xfail(reason="known bug: after a full run of this notebook a figure drawn before can reappear "
                          "next to the empty-range message about a second later", strict=False)
def test_empty_range_shows_no_figure(lab):
    dash = lab.locator(".sessionlab-usage-dashboard")
    assert "after it ends" in dash.locator(".sessionlab-status").inner_text()  # (the test above set it)
    assert dash.locator(".sessionlab-plot img").count() == 0


# 5. a branch without calls drew an empty plot, a one-call branch a strip from -0.4 to 0.4
def test_small_branches_say_why_or_draw(lab):
    quiet, one = lab.locator(".sessionlab-compaction-lab").nth(1), lab.locator(".sessionlab-compaction-lab").nth(2)
    assert quiet.locator(".sessionlab-plot img").count() == 0
    assert "has no assistant call" in quiet.locator(".sessionlab-plot").inner_text()
    assert "0 calls on the current branch" in quiet.locator(".sessionlab-summary").inner_text()
    assert one.locator(".sessionlab-plot img").count() == 1  # bars (see test_plotting for what they show)
    assert "1 call on the current branch" in one.locator(".sessionlab-summary").inner_text()
