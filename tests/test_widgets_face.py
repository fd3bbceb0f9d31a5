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
from sessionlab.widgets import UsageDashboard  # noqa: E402

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
