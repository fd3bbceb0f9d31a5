"""The widgets' face at scale, headless: what each control shows is what the table functions return.

UsageDashboard: unknown time zones are reported on the field, days sit on a time axis, many
sessions become the top N and "other", the table sorts and has a totals row, agent and project
group and filter, the table and the figure download.
"""

from __future__ import annotations

import base64
import csv
import io
import re
from pathlib import Path

import pytest

W = pytest.importorskip("ipywidgets")
matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")

import sessionlab as sl  # noqa: E402
from sessionlab.errors import OptionError  # noqa: E402
from sessionlab.widgets import BranchExplorer, CompactionLab, UsageDashboard  # noqa: E402

DATA = Path(__file__).resolve().parent.parent / "data"
WEBAPP = "/home/user/webapp"


@pytest.fixture(scope="module")
def data_table():
    return sl.entries_table(DATA)


def body_rows(value: str) -> list[list[str]]:
    """The cell texts of the body rows of the table in an HTML value."""
    body = value.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    return [re.findall(r"<td[^>]*>(.*?)</td>", r) for r in body.split("</tr>") if "<td" in r]


def total_row(value: str) -> list[str]:
    foot = value.split("<tfoot>", 1)[1].split("</tfoot>", 1)[0]
    return re.findall(r"<td[^>]*>(.*?)</td>", foot)


# -- usage_by(by="project") -------------------------------------------------------------------------

def test_usage_by_project_sums_the_sessions_of_each_folder(data_table):
    from sessionlab.tables.labels import session_labels

    got = {r["project"]: r["calls"] for r in sl.usage_by(data_table, by="project").to_pylist()}
    by_session = {r["session_id"]: r["calls"] for r in sl.usage_by(data_table, by="session_id").to_pylist()}
    want: dict[str, int] = {}
    for sid, label in session_labels(data_table).items():
        if sid in by_session:
            want[label.cwd] = want.get(label.cwd, 0) + by_session[sid]
    assert got == want and got[WEBAPP] == 145


# -- the time zone --------------------------------------------------------------------------------

def test_unknown_time_zone_is_shown_on_the_field(data_table):
    dash = UsageDashboard(data_table, tz="Europe/Vienna")
    before = dash.usage
    dash.tz.value = "Mars/Base"
    assert "Unknown time zone “Mars/Base”: still showing Europe/Vienna" in dash.tz_error.value
    assert "sessionlab-invalid" in dash.tz._dom_classes and dash.usage.equals(before)
    dash.tz.value = "<b>x</b>"
    assert "&lt;b&gt;x&lt;/b&gt;" in dash.tz_error.value and "<b>" not in dash.tz_error.value
    dash.tz.value = "UTC"
    assert dash.tz_error.value == "" and "(UTC)" in dash.status.value


# -- grouping: top N and other, agent, project --------------------------------------------------

def test_session_plot_shows_top_n_and_other_the_table_every_session(data_table):
    dash = UsageDashboard(data_table, group="session")
    dash.top.value = 4
    u = sl.usage_by(data_table, by="session_id")
    assert body_rows(dash.table.value).__len__() == u.num_rows  # the table keeps every session
    from sessionlab.plotting import plot_usage

    ax = plot_usage(u, by="session", top=4)
    ticks = [t.get_text() for t in ax.get_xticklabels()]
    assert len(ticks) == 5 and ticks[-1] == f"other ({u.num_rows - 4})"
    heights = [r.get_height() for r in ax.containers[0]]
    costs = sorted(u["cost_usd"].to_pylist(), reverse=True)
    assert heights[:4] == pytest.approx(costs[:4]) and heights[4] == pytest.approx(sum(costs[4:]))
    with pytest.raises(ValueError):
        plot_usage(u, by="session", top=0)


@pytest.mark.parametrize("group", ["agent", "project"])
def test_agent_and_project_groupings_are_usage_by(data_table, group):
    dash = UsageDashboard(data_table, group=group)
    assert dash.usage.equals(sl.usage_by(data_table, by=group))
    assert dash.plot.outputs and "image/png" in dash.plot.outputs[0]["data"]


def test_agent_and_project_filters_keep_their_sessions(data_table):
    dash = UsageDashboard(data_table, group="session")
    assert [v for _, v in dash.agent.options] == ["", "claude-code", "codex", "pi"]
    dash.agent.value = "codex"
    codex = sorted({s for s, a in zip(data_table["session_id"].to_pylist(), data_table["agent"].to_pylist())
                    if a == "codex"})
    assert dash.usage.equals(sl.usage_by(data_table, by="session_id", session_id=codex))
    assert "agent codex" in dash.status.value
    dash.agent.value = ""
    dash.project.value = WEBAPP
    assert sum(dash.usage["calls"].to_pylist()) == 145
    dash.agent.value = "codex"  # no codex session in that folder
    assert "widen the range or the filters" in dash.status.value and dash.table.value == ""


# -- the table: order and totals ----------------------------------------------------------------

def test_table_sorts_and_has_a_totals_row(data_table):
    dash = UsageDashboard(data_table)
    u = sl.usage_by(data_table, by="day")
    rows = body_rows(dash.table.value)
    assert [r[0] for r in rows] == [str(d) for d in u["day"].to_pylist()]  # days in date order
    total = total_row(dash.table.value)
    assert total[0] == "total" and total[1] == f"{sum(u['calls'].to_pylist()):,}"
    assert total[-2] == f"&#36;{sum(u['cost_usd'].to_pylist()):,.2f}"
    dash.sort.value = "calls"
    dash.descending.value = True
    calls = [int(r[1].replace(",", "")) for r in body_rows(dash.table.value)]
    assert calls == sorted(u["calls"].to_pylist(), reverse=True)
    dash.descending.value = False
    assert [int(r[1].replace(",", "")) for r in body_rows(dash.table.value)] == sorted(calls)
    assert dash.usage.equals(u)  # the order is the view's; the table is usage_by's


def test_grouping_by_session_starts_biggest_cost_first(data_table):
    dash = UsageDashboard(data_table)
    dash.group.value = "session"
    assert (dash.sort.value, dash.descending.value) == ("cost_usd", True)
    shown = dash.shown_table()
    assert shown["cost_usd"].to_pylist() == sorted(shown["cost_usd"].to_pylist(), reverse=True)
    assert shown.column_names[0] == "session" and " · " in shown["session"][0].as_py()


# -- downloads ------------------------------------------------------------------------------------

def test_table_and_figure_download(data_table, tmp_path):
    dash = UsageDashboard(data_table, group="model")
    text = dash.to_csv(tmp_path / "u.csv")
    rows = list(csv.DictReader(io.StringIO(text)))
    u = sl.usage_by(data_table, by="model")
    assert {r["model"]: int(r["calls"]) for r in rows} == dict(zip(u["model"].to_pylist(), u["calls"].to_pylist()))
    assert (tmp_path / "u.csv").read_text() == text
    href = re.search(r'download="usage-by-model.csv" href="data:text/csv;charset=utf-8;base64,([^"]+)"',
                     dash.downloads.value)
    assert base64.b64decode(href.group(1)).decode() == text
    png = dash.save_figure(tmp_path / "u.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and base64.b64encode(png).decode() in dash.downloads.value
    assert "data:text/csv" not in dash._repr_mimebundle_()["text/html"]  # links only in the live widget


def test_no_figure_to_save_in_an_empty_range(data_table, tmp_path):
    import datetime as dt

    dash = UsageDashboard(data_table)
    dash.start.value = dt.date(2030, 1, 1)
    assert dash.downloads.value == ""
    with pytest.raises(OptionError):
        dash.save_figure(tmp_path / "none.png")


# -- BranchExplorer ---------------------------------------------------------------------------------

RUST_CLI = "b627ef1d-8e91-479a-a1c3-a39e50c19172"  # labels, a name, two branches, three leaves
SCRIPT = "<script>alert(1)</script>"


def branch_segments(ax) -> int:
    from matplotlib.collections import LineCollection

    return sum(len(c.get_segments()) for c in ax.findobj(LineCollection) if c.get_gid() == "current_branch")


def test_plot_tree_highlights_the_branch_to_the_picked_entry(data_table):
    from sessionlab.plotting import plot_tree

    g = sl.session_tree(data_table, session_id=RUST_CLI)
    other = [x for x in sl.leaves(g) if x != g.graph["leaf_id"]][0]
    assert branch_segments(plot_tree(data_table, session_id=RUST_CLI)) == len(sl.current_branch(g)) - 1
    ax = plot_tree(data_table, session_id=RUST_CLI, leaf_id=other)
    assert branch_segments(ax) == len(sl.current_branch(g, other)) - 1
    assert any(t.get_text().startswith("branch to the picked entry") for t in ax.get_legend().get_texts())


def test_picking_another_leaf_moves_the_trees_highlight(data_table):
    ex = BranchExplorer(data_table, session_id=RUST_CLI)
    first = ex.tree.outputs
    other = [v for t, v in ex.entry.options if t.startswith("leaf") and v != ex.entry.value][0]
    ex.entry.value = other
    assert ex.tree.outputs != first and "image/png" in ex.tree.outputs[0]["data"]
    from sessionlab.widgets import SessionTree

    tree = SessionTree()
    ex = BranchExplorer(data_table, session_id=RUST_CLI, session_tree=tree)
    ex.entry.value = other
    assert tree.selected_id == other  # the canvas rings the picked entry


def test_entry_options_show_role_first_words_and_time(data_table):
    ex = BranchExplorer(data_table, session_id=RUST_CLI)
    text = dict((v, t) for t, v in ex.entry.options)
    assert text["55036d3d"] == "leaf 55036d3d · assistant · 2026-02-02 12:33 · “The slow part was the repeated parse " \
                               "inside…” (current)"
    assert text["d9adef0e"].endswith("· user · 2026-02-02 10:30 · “wait, that's wrong: eventSchema must keep the "
                                     "original…” [start]")


@pytest.fixture
def long_session(tmp_path):
    repo = sl.JsonlSessionRepo(tmp_path / "s")
    s = repo.create(cwd="/p/long")
    t = 1_767_225_600_000
    long = "word " * 100 + SCRIPT + " the end"
    u = s.append_message(sl.UserMessage(content=long, timestamp=t))
    s.append_message(sl.AssistantMessage(
        content=(sl.TextContent(text="short answer"),), provider="p", model="m", stop_reason="stop", timestamp=t + 1,
        usage=sl.Usage(input=900, output=40, cache_read=0, cache_write=0, total_tokens=940,
                       cost=sl.Cost(input=0.0, output=0.0, cache_read=0.0, cache_write=0.0, total=0.01))))
    return sl.entries_table(tmp_path / "s"), u, long


def test_long_message_text_opens_whole_and_escaped(long_session):
    table, _, long = long_session
    ex = BranchExplorer(table)
    value = ex.context.value
    assert value.count("<details") == 1 and "short answer" in value
    whole = re.search(r"<details[^>]*><summary[^>]*>(.*?)</summary><div[^>]*>(.*?)</div></details>", value)
    assert whole.group(1).endswith("…") and len(whole.group(1)) < 200
    assert whole.group(2).endswith("&lt;script&gt;alert(1)&lt;/script&gt; the end")
    assert "<script" not in value


def test_branch_tab_has_token_counts(long_session):
    table, _, _ = long_session
    ex = BranchExplorer(table)
    rows = body_rows(ex.branch.value)
    est = dict(zip(table["entry_id"].to_pylist(), table["est_tokens"].to_pylist()))
    ctx = dict(zip(table["entry_id"].to_pylist(), table["context_tokens"].to_pylist()))
    assert [r[1] for r in rows] == sl.current_branch(ex.graph, ex.entry.value)
    for r in rows:
        assert r[4] == f"{est[r[1]]:,}"
        assert r[5] == ("" if ctx[r[1]] is None else f"{ctx[r[1]]:,}")
    assert rows[-1][5] == "940"  # the call's context tokens
    assert "context tokens (calls)" in ex.branch.value


# -- CompactionLab ----------------------------------------------------------------------------------

def test_lab_sessions_newest_first_subagents_under_their_parent(data_table):
    from sessionlab.tables.labels import session_labels

    lab = CompactionLab(data_table)
    opts = list(lab.session.options)
    labels = session_labels(data_table)
    assert len(opts) == len(labels)
    tops = [sid for _, sid in opts if "/agent-" not in sid]
    days = [labels[s].day for s in tops]
    assert days == sorted(days, reverse=True)
    for i, (text, sid) in enumerate(opts):
        if "/agent-" in sid:
            assert text.startswith("↳ subagent (Explore) · ")
            assert opts[i - 1][1] == sid.split("/")[0] or opts[i - 1][1].split("/")[0] == sid.split("/")[0]
        else:
            assert not text.startswith("↳")


def test_lab_search_narrows_without_switching(data_table):
    lab = CompactionLab(data_table)
    first = lab.session.value
    before = lab.result
    lab.search.value = "refactor LOADER"  # every word, any case
    assert [sid for _, sid in lab.session.options] == [first, "d7e439fe-0715-4ab7-95f3-81835b6913cd"]
    assert lab.session.value == first and lab.result is before  # typing does not rerun anything
    lab.session.value = "d7e439fe-0715-4ab7-95f3-81835b6913cd"
    picked = lab.result
    lab.search.value = ""  # every session again: the picked one stays picked, nothing reruns
    assert len(lab.session.options) == len(lab.search.all_options)
    assert lab.session.value == "d7e439fe-0715-4ab7-95f3-81835b6913cd" and lab.result is picked


def test_lab_says_why_simulated_and_recorded_cost_differ(data_table):
    quiet = CompactionLab(data_table, session_id="a263b894-c8c2-44af-8845-663362b5a201")  # never compacted
    row = quiet.result.sessions.to_pylist()[0]
    assert row["recorded_compactions"] == 0
    assert f"&#36;{row['cost_usd']:,.2f} never compacting" in quiet.costs.value
    assert f"(&#36;{row['recorded_cost_usd']:,.2f})" in quiet.costs.value
    assert "the difference is the prices alone (fitted vs recorded)" in quiet.costs.value
    assert "summary calls" in quiet.summary.value  # the policies' summary calls have their own column
    api = CompactionLab(data_table, session_id="a28f5b37-6b04-44f2-b094-90b86b01a1c1")
    assert "The session compacted 2 times itself" in api.costs.value


# -- SessionTree --------------------------------------------------------------------------------

def test_explorer_tells_the_tree_which_entry_it_shows(data_table):
    from sessionlab.widgets import SessionTree

    tree = SessionTree()
    ex = BranchExplorer(data_table, session_id=RUST_CLI, session_tree=tree)
    assert tree.shown_id == tree.selected_id == ex.entry.value  # no "loading" left at the start
    inner = [e for e in tree.tree["ids"] if e not in [v for _, v in ex.entry.options]][0]
    seen = []
    tree.observe(lambda c: seen.append((c["new"], ex.context_row["at_id"])), names="shown_id")
    tree.selected_id = inner  # a click
    assert seen == [(inner, inner)]  # reported shown once its context is the one shown, and only then
    assert ex.entry.value == inner


def test_tree_payload_counts_every_kind_the_legend_may_list(data_table):
    from sessionlab.widgets import SessionTree

    tree = SessionTree(data_table, session_id=RUST_CLI)
    counts = dict(zip((k for k, _ in tree.tree["kinds"]), tree.tree["kindCounts"]))
    assert sum(counts.values()) == tree.tree["n"] and 0 in counts.values()  # the browser leaves the zeros out
