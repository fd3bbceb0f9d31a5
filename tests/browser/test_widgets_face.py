"""The widgets' face in a real JupyterLab, where each problem was seen: an unknown time zone is
shown on its field, the usage table sorts, keeps a totals row in view and downloads as CSV;
BranchExplorer's entries read as role, time and first words, picking a leaf redraws the tree and
a long message opens whole on a click; CompactionLab's session search narrows its picker, the
cost note is shown, and in a 468 px cell its plot keeps a readable size (it scrolls sideways).

One notebook, opened and run once for the module.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.browser._lab import kernel_errors, open_and_run
from tests.browser.conftest import doc_screenshot, new_page, screenshot_if_failed, write_notebook

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "data"
RUST_CLI = "b627ef1d-8e91-479a-a1c3-a39e50c19172"
API_SERVER = "a28f5b37-6b04-44f2-b094-90b86b01a1c1"

CELLS = [
    "import sessionlab as sl\nfrom sessionlab.widgets import BranchExplorer, CompactionLab, UsageDashboard\n"
    "from ipywidgets import Box, Layout\n"
    f"t = sl.entries_table({str(DATA)!r})",
    "dash = UsageDashboard(t)\ndash",
    f"ex = BranchExplorer(t, session_id={RUST_CLI!r})\nex",
    f"lab = CompactionLab(t, session_id={API_SERVER!r})\nBox([lab], layout=Layout(width='468px'))",
]


@pytest.fixture(scope="module")
def face_page(browser, jupyterlab):
    write_notebook(jupyterlab.root / "face.ipynb", CELLS)
    pg = new_page(browser)
    open_and_run(pg, jupyterlab, "face.ipynb")
    for cls in ("usage-dashboard", "branch-explorer", "compaction-lab"):
        pg.wait_for_selector(f".sessionlab-{cls} .sessionlab-plot img, .sessionlab-{cls} .sessionlab-tree img",
                             timeout=60_000)
    pg.wait_for_timeout(500)
    yield pg
    pg.context.close()


@pytest.fixture
def lab(face_page, request):
    yield face_page
    screenshot_if_failed(request, face_page)
    assert kernel_errors(face_page) == []
    assert [e for e in face_page.errors if "favicon" not in e] == []
    assert face_page.remote == []


def rect(locator) -> dict:
    return locator.evaluate("e => { const r = e.getBoundingClientRect(); "
                            "return {left: r.left, right: r.right, top: r.top, bottom: r.bottom, width: r.width}; }")


def wait_text(page, locator, predicate_js: str, timeout: float = 30_000) -> str:
    page.wait_for_function(f"e => {{ const t = e.innerText; return {predicate_js}; }}",
                           arg=locator.element_handle(), timeout=timeout)
    return locator.inner_text()


# -- UsageDashboard ---------------------------------------------------------------------------------

def test_unknown_time_zone_is_shown_on_the_field(lab):
    dash = lab.locator(".sessionlab-usage-dashboard")
    status = dash.locator(".sessionlab-status")
    before = status.inner_text()
    tz = dash.locator(".sessionlab-tz input")
    tz.fill("Mars/Base")
    tz.press("Enter")
    error = dash.locator(".sessionlab-tz_error")
    text = wait_text(lab, error, "t.includes('Unknown time zone')")
    assert "“Mars/Base”" in text and "still showing UTC" in text
    border = tz.evaluate("e => getComputedStyle(e).borderTopColor")
    assert border == "rgb(176, 0, 32)"
    assert status.inner_text() == before
    tz.fill("Europe/Vienna")
    tz.press("Enter")
    wait_text(lab, status, "t.includes('(Europe/Vienna)')")
    assert error.inner_text().strip() == ""


def test_table_sorts_and_keeps_a_totals_row_in_view(lab):
    dash = lab.locator(".sessionlab-usage-dashboard")
    table = dash.locator("div.sessionlab-table")
    before = table.inner_text()
    dash.locator(".sessionlab-group select").select_option("session")
    wait_text(lab, table, f"t !== {before!r}")
    dash.locator(".sessionlab-sort select").select_option("calls")

    def calls() -> list[int]:
        col = table.locator("thead th").all_inner_texts().index("calls")
        return [int(r.locator("td").nth(col).inner_text().replace(",", ""))
                for r in table.locator("tbody tr").all()]

    before: list[int] = []
    for _ in range(100):  # (sorted, and the same twice in a row: no earlier change still being drawn)
        got = calls()
        if got == sorted(got, reverse=True) and got == before:
            break
        before = got
        lab.wait_for_timeout(200)
    assert got == sorted(got, reverse=True) and len(got) > 10
    dash.locator(".sessionlab-descending button, button.sessionlab-descending").first.click()
    for _ in range(100):  # the kernel answers the toggle
        if calls() == sorted(got):
            break
        lab.wait_for_timeout(200)
    assert calls() == sorted(got)
    total = table.locator("tfoot tr.sessionlab-total")
    assert total.inner_text().startswith("total")
    box = rect(table.locator(".sessionlab-scroll"))
    assert rect(total.locator("td").first)["bottom"] <= box["bottom"] + 1  # sticky: in view while the body scrolls
    assert f"{sum(got):,}" in total.inner_text()
    doc_screenshot(dash, "usage-dashboard-sessions")


def test_table_downloads_as_csv(lab):
    dash = lab.locator(".sessionlab-usage-dashboard")
    group = dash.locator(".sessionlab-group select")
    if group.input_value() != "session":  # (the grouping is set here too: the test runs alone as well)
        table = dash.locator("div.sessionlab-table")
        before = table.inner_text()
        group.select_option("session")
        wait_text(lab, table, f"t !== {before!r}")
    link = dash.locator(".sessionlab-downloads a.sessionlab-csv")
    with lab.expect_download() as info:
        link.click()
    download = info.value
    assert re.fullmatch(r"usage-by-\w+\.csv", download.suggested_filename)
    text = Path(download.path()).read_text(encoding="utf-8")
    assert text.splitlines()[0].startswith('"session","session_id","calls"')
    assert dash.locator(".sessionlab-downloads a.sessionlab-png").get_attribute("href").startswith(
        "data:image/png;base64,")


# -- BranchExplorer ---------------------------------------------------------------------------------

def test_entries_read_as_role_time_and_first_words(lab):
    ex = lab.locator(".sessionlab-branch-explorer")
    options = [x.replace("\xa0", " ") for x in ex.locator(".sessionlab-entry select option").all_inner_texts()]
    assert any(re.fullmatch(r"leaf \w{8} · assistant · \d{4}-\d\d-\d\d \d\d:\d\d · “.+…” \(current\)", x)
               for x in options), options
    assert any(x.endswith("[start]") and " · user · " in x for x in options)


def test_picking_a_leaf_moves_the_trees_highlight(lab):
    ex = lab.locator(".sessionlab-branch-explorer")
    img = ex.locator(".sessionlab-tree img")
    before = img.get_attribute("src")
    options = ex.locator(".sessionlab-entry select option").all_inner_texts()
    other = next(x for x in options if x.startswith("leaf") and "(current)" not in x)
    ex.locator(".sessionlab-entry select").select_option(label=other)
    lab.wait_for_function("([s, b]) => { const e = document.querySelector(s); return e && e.src !== b; }",
                          arg=[".sessionlab-branch-explorer .sessionlab-tree img", before], timeout=30_000)
    summary = ex.locator(".sessionlab-summary")
    wait_text(lab, summary, f"t.includes('Context at {other.split()[1]}')")


def test_long_message_opens_whole_on_click(lab):
    ex = lab.locator(".sessionlab-branch-explorer")
    details = ex.locator(".sessionlab-context details.sessionlab-more").first
    details.scroll_into_view_if_needed()
    full = details.locator("div")
    assert not full.is_visible()
    short = details.locator("summary").inner_text()
    details.locator("summary").click()
    full.wait_for(state="visible", timeout=5_000)
    assert len(full.inner_text()) > len(short) and short.rstrip("…").strip() in full.inner_text()
    doc_screenshot(ex, "branch-explorer-expanded")


def test_branch_tab_has_token_counts(lab):
    ex = lab.locator(".sessionlab-branch-explorer")
    ex.locator(".lm-TabBar-tab, .p-TabBar-tab", has_text="Branch").first.click()
    heads = ex.locator(".sessionlab-branch thead th").all_inner_texts()
    assert "est. tokens" in heads and "context tokens (calls)" in heads
    col = heads.index("context tokens (calls)")
    cells = [r.locator("td").nth(col).inner_text() for r in ex.locator(".sessionlab-branch tbody tr").all()]
    assert any(re.fullmatch(r"\d{1,3}(,\d{3})+", c) for c in cells)


# -- CompactionLab ----------------------------------------------------------------------------------

def test_search_narrows_the_session_picker(lab):
    root = lab.locator(".sessionlab-compaction-lab")
    select = root.locator(".sessionlab-session select")
    total = select.locator("option").count()
    assert total >= 16
    texts = [x.replace("\xa0", " ") for x in select.locator("option").all_inner_texts()]
    subagents = [x for x in texts if x.startswith("↳ subagent")]
    assert len(subagents) == 2
    search = root.locator(".sessionlab-search input")
    search.fill("refactor loader")
    lab.wait_for_function("([e, n]) => e.querySelectorAll('option').length < n", arg=[select.element_handle(), total],
                          timeout=30_000)
    labels = [x.replace("\xa0", " ") for x in select.locator("option").all_inner_texts()]
    assert len(labels) == 2 and any(x.startswith("Refactor session loader") for x in labels)
    summary = root.locator(".sessionlab-summary")
    before = summary.inner_text()
    search.fill("")  # every session again, the picked one still picked: nothing reruns
    lab.wait_for_function("([e, n]) => e.querySelectorAll('option').length === n", arg=[select.element_handle(), total],
                          timeout=30_000)
    lab.wait_for_timeout(1000)
    assert summary.inner_text() == before and "a28f5b37" in before
    assert root.locator(".sessionlab-search label").inner_text().strip() == "Find"


def test_cost_note_and_a_readable_plot_in_a_narrow_cell(lab):
    root = lab.locator(".sessionlab-compaction-lab")
    note = root.locator(".sessionlab-costs")
    assert "fitted" in note.inner_text() and "compacted 2 times" in note.inner_text()
    assert rect(root)["width"] <= 470
    img = root.locator(".sessionlab-plot img")
    assert rect(img)["width"] >= 599  # 10-point text stays at least ~6.5 px high, not shrunk to half
    scrolls = root.locator(".sessionlab-plot").evaluate("""e => [e, ...e.querySelectorAll('*')].some(x =>
        x.scrollWidth > x.clientWidth + 1 && ['auto', 'scroll'].includes(getComputedStyle(x).overflowX))""")
    assert scrolls  # the rest is a sideways scroll away
    doc_screenshot(root, "compaction-lab-narrow")
