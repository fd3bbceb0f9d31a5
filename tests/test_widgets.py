"""The widgets, headless: set trait values, read children, HTML values and outputs.

Every number a widget shows must be what the table functions return, and every piece of session
text must reach the HTML widgets escaped.
"""

from __future__ import annotations

import datetime as dt
import html
import re
from pathlib import Path

import pytest

W = pytest.importorskip("ipywidgets")
matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")

import pyarrow.compute as pc  # noqa: E402

import sessionlab as sl  # noqa: E402
from sessionlab.widgets import BranchExplorer, CompactionLab, UsageDashboard  # noqa: E402

DATA = Path(__file__).resolve().parent.parent / "data"
RUST_CLI = "b627ef1d-8e91-479a-a1c3-a39e50c19172"  # labels, a name, two branches
ML_PIPELINE = "d7e439fe-0715-4ab7-95f3-81835b6913cd"  # named "Refactor session loader", model switches
API_SERVER = "a28f5b37-6b04-44f2-b094-90b86b01a1c1"  # two compactions, small window

SCRIPT = "<script>alert(1)</script>"
IMG = "<img src=x onerror=alert(1)>"
NASTY = f"{SCRIPT} {IMG} **bold** _em_ [link](http://x) `code` $math$ & \"q\" 'a'"


@pytest.fixture(scope="module")
def data_table():
    return sl.entries_table(DATA)


def bare(html_value: str) -> str:
    """An HTML value without its inline styles (so cells read ``<td>x</td>``)."""
    return re.sub(r' style="[^"]*"', "", html_value)


def rows_of(html_value: str) -> int:
    """Body rows of the (first) table in an HTML value."""
    body = html_value.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    return body.count("<tr>")


def html_values(widget) -> list[str]:
    """The values of every HTML widget under ``widget``."""
    out = []
    if isinstance(widget, (W.HTML, W.HTMLMath)):
        out.append(widget.value)
    for child in getattr(widget, "children", ()):
        out.extend(html_values(child))
    return out


def has_png(out: W.Output) -> bool:
    return any("image/png" in o.get("data", {}) for o in out.outputs)


# -- a session whose every text is hostile ----------------------------------------------------------

def _usage(n: int) -> sl.Usage:
    return sl.Usage(input=n, output=50, cache_read=0, cache_write=0, total_tokens=n + 50,
                    cost=sl.Cost(input=n * 1e-6, output=50e-6, cache_read=0.0, cache_write=0.0,
                                 total=n * 1e-6 + 50e-6))


@pytest.fixture
def nasty(tmp_path):
    """A session file under a folder named with markup: name, labels, messages, tool calls and
    model all carry script/img tags, markdown and math; it has a fork and two leaves."""
    repo = sl.JsonlSessionRepo(tmp_path / "sessions")
    s = repo.create(cwd=f"/home/{IMG}")
    t = 1_767_225_600_000  # 2026-01-01T00:00:00Z
    u1 = s.append_message(sl.UserMessage(content=f"please {NASTY}", timestamp=t))
    a1 = s.append_message(sl.AssistantMessage(
        content=(sl.TextContent(text=f"reply {NASTY}"),
                 sl.ToolCall(id="c1", name="bash", arguments={"command": f"echo '{SCRIPT}'"})),
        provider="anthropic", model=f"model-{IMG}", usage=_usage(1000), stop_reason="toolUse", timestamp=t + 1))
    s.append_message(sl.ToolResultMessage(tool_call_id="c1", tool_name="bash",
                                          content=(sl.TextContent(text=f"out {NASTY}"),), timestamp=t + 2))
    a2 = s.append_message(sl.AssistantMessage(content=(sl.TextContent(text=f"done {NASTY}"),), provider="anthropic",
                                              model=f"model-{IMG}", usage=_usage(1200), stop_reason="stop",
                                              timestamp=t + 3))
    s.append_label(a2, f"label {SCRIPT} $x$")
    s.move_to(u1)  # a second branch from the first user message
    a3 = s.append_message(sl.AssistantMessage(content=(sl.TextContent(text=f"other {NASTY}"),),
                                              provider="anthropic", model="plain-model", usage=_usage(900),
                                              stop_reason="stop", timestamp=t + 4))
    s.append_label(u1, f"fork {IMG}")
    s.append_session_info(f"name {SCRIPT} {IMG} $y$")
    table = sl.entries_table(tmp_path / "sessions")
    sid = table["session_id"][0].as_py()
    return {"dir": tmp_path / "sessions", "table": table, "session_id": sid, "u1": u1, "a1": a1, "a2": a2,
            "a3": a3}


def assert_escaped(values: list[str]) -> None:
    for v in values:
        low = v.lower()
        assert "<script" not in low and "<img" not in low, v
        assert "$math$" not in v and "$x$" not in v and "$y$" not in v, v


def test_every_html_value_is_escaped(nasty):
    table, sid = nasty["table"], nasty["session_id"]
    ex = BranchExplorer(table)
    seen = []
    for eid in [v for _, v in ex.entry.options]:
        ex.entry.value = eid
        seen += html_values(ex)
    assert_escaped(seen)
    assert has_png(ex.tree)  # labels with $...$ draw as text, not mathtext
    text = "".join(seen)
    assert html.escape(SCRIPT) in text and html.escape(IMG) in text
    assert "&#36;math&#36;" in text  # $ as an entity: no math typesetting of session text
    assert html.escape(f"name {SCRIPT} {IMG}") in ex.header.value  # the session name
    assert html.escape(IMG) in ex.header.value  # the file path (folder named after the cwd)
    assert html.escape(f"label {SCRIPT}") in text  # labels in the branch table
    assert html.escape(f"model-{IMG}") in text  # model of the context
    # Dropdown labels are text nodes in the browser: they keep the raw text
    assert any(f"label {SCRIPT}" in label for label, _ in ex.entry.options)
    assert any(f"name {SCRIPT}" in label for label, _ in ex.session.options)

    dash = UsageDashboard(table)
    seen = []
    for group in ("day", "model", "session"):
        dash.group.value = group
        seen += html_values(dash)
    assert_escaped(seen)
    dash.group.value = "model"
    assert html.escape(f"model-{IMG}") in dash.table.value

    lab = CompactionLab(table, session_id=sid, context_window=4_000)
    seen = html_values(lab)
    lab.window.value = 1_000_000
    seen += html_values(lab)
    assert_escaped(seen)
    assert sid in lab.summary.value
    assert has_png(lab.plot) and has_png(dash.plot)


# -- BranchExplorer ---------------------------------------------------------------------------------

def test_explorer_lists_sessions_and_starts_at_pi_leaf(data_table):
    ex = BranchExplorer(data_table, session_id=RUST_CLI)
    assert {v for _, v in ex.session.options} == set(pc.unique(data_table["session_id"]).to_pylist())
    assert ex.session.value == RUST_CLI
    g = sl.session_tree(data_table, session_id=RUST_CLI)
    s = sl.open_session(data_table.filter(pc.equal(data_table["session_id"], RUST_CLI))["file"][0].as_py())
    labelled = [n for n in g.nodes if s.get_label(n)]
    assert [v for _, v in ex.entry.options] == list(dict.fromkeys(sl.leaves(g) + sl.fork_points(g) + labelled))
    assert ex.entry.value == g.graph["leaf_id"]
    assert "Release prep" in ex.header.value
    assert any("Release prep" in label for label, v in ex.session.options if v == RUST_CLI)
    assert has_png(ex.tree)


def test_explorer_entry_options_carry_labels(data_table):
    ex = BranchExplorer(data_table, session_id=RUST_CLI)
    file = data_table.filter(pc.equal(data_table["session_id"], RUST_CLI))["file"][0].as_py()
    s = sl.open_session(file)
    labelled = 0
    for text, eid in ex.entry.options:
        label = s.get_label(eid)
        if label:
            labelled += 1
            assert f"[{label}]" in text
        else:
            assert "[" not in text
    assert labelled >= 4  # the session's labelled entries are in the picker


@pytest.mark.parametrize("session_id", [RUST_CLI, API_SERVER, "ec99108d-db5b-4fab-8f4d-3e27dda1494c"])
def test_explorer_context_is_contexts_row(data_table, session_id):
    ex = BranchExplorer(data_table, session_id=session_id)
    rows = data_table.filter(pc.equal(data_table["session_id"], session_id))
    g = sl.session_tree(rows, session_id=session_id)
    for _, eid in ex.entry.options:
        ex.entry.value = eid
        want = sl.contexts(rows, at=[eid]).to_pylist()[0]
        assert ex.context_row == want
        assert rows_of(ex.context.value) == want["message_count"] == len(ex.messages)
        assert f"{want['context_tokens']:,} tokens" in ex.summary.value
        assert rows_of(ex.branch.value) == len(sl.current_branch(g, eid))
        assert f"<td>{eid}</td>" in bare(ex.branch.value)


def test_explorer_context_rows_follow_context_messages(data_table):
    ex = BranchExplorer(data_table, session_id=API_SERVER)  # pi's leaf is after a compaction
    msgs = sl.context_messages(data_table.filter(pc.equal(data_table["session_id"], API_SERVER)),
                               ex.entry.value, session_id=API_SERVER)
    cells = re.findall(r"<tr><td>(\d+)</td><td>([^<]*)</td><td>([\d,]+)</td>", bare(ex.context.value))
    assert [(int(i), role, int(tok.replace(",", ""))) for i, role, tok in cells] == [
        (i, sl.message_to_dict(m)["role"], sl.estimate_tokens(m)) for i, m in enumerate(msgs)]
    assert cells[0][1] == "compactionSummary"


def test_explorer_switches_session(data_table):
    ex = BranchExplorer(data_table, session_id=RUST_CLI)
    ex.session.value = ML_PIPELINE
    assert "Refactor session loader" in ex.header.value
    g = sl.session_tree(data_table, session_id=ML_PIPELINE)
    assert ex.entry.value == g.graph["leaf_id"]
    assert ex.context_row["at_id"] == g.graph["leaf_id"]
    assert ex.context_row["session_id"] == ML_PIPELINE


def test_explorer_accepts_pandas(data_table):
    ex = BranchExplorer(sl.entries_df(DATA / "sessions" / "--home-user-rust-cli--"))
    assert ex.session.value == RUST_CLI
    assert ex.context_row is not None


# -- UsageDashboard ---------------------------------------------------------------------------------

@pytest.mark.parametrize("group,key", [("day", "day"), ("model", "model"), ("session", "session_id")])
def test_dashboard_table_is_usage_by(data_table, group, key):
    dash = UsageDashboard(data_table, tz="Europe/Vienna")
    dash.group.value = group
    want = sl.usage_by(data_table, by=key, tz="Europe/Vienna")
    assert dash.usage.equals(want)
    assert rows_of(dash.table.value) == want.num_rows
    for k in want[key].to_pylist():
        assert f">{html.escape(str(k))}</td>" in bare(dash.table.value)  # (a long id is a wrapping text cell)
    assert has_png(dash.plot)


def test_dashboard_timezone_moves_days(data_table):
    dash = UsageDashboard(data_table)
    utc = dash.usage
    dash.tz.value = "Pacific/Auckland"
    assert dash.usage.equals(sl.usage_by(data_table, by="day", tz="Pacific/Auckland"))
    assert not dash.usage.equals(utc)
    days = dash.usage["day"].to_pylist()
    assert (dash.start.value, dash.end.value) == (min(days), max(days))  # still the whole range


def test_dashboard_date_range_filters_calls(data_table):
    dash = UsageDashboard(data_table, tz="UTC")
    dash.start.value = dt.date(2026, 1, 13)
    dash.end.value = dt.date(2026, 2, 2)
    days = dash.usage["day"].to_pylist()
    assert days == [d for d in sl.usage_by(data_table, by="day")["day"].to_pylist()
                    if dt.date(2026, 1, 13) <= d <= dt.date(2026, 2, 2)]
    dash.group.value = "session"
    by_day = sl.usage_by(data_table, by=["day", "session_id"]).to_pandas()
    inside = by_day[(by_day["day"] >= dt.date(2026, 1, 13)) & (by_day["day"] <= dt.date(2026, 2, 2))]
    assert dict(zip(dash.usage["session_id"].to_pylist(), dash.usage["calls"].to_pylist())) == \
        inside.groupby("session_id")["calls"].sum().to_dict()


def test_dashboard_metric_redraws(data_table):
    dash = UsageDashboard(data_table)
    before = dash.plot.outputs
    dash.metric.value = "tokens"
    assert has_png(dash.plot) and dash.plot.outputs != before


# -- CompactionLab ----------------------------------------------------------------------------------

def test_lab_summary_has_one_row_per_policy(data_table):
    lab = CompactionLab(data_table, session_id=API_SERVER)
    assert len(lab.policies) == 3
    assert lab.result.sessions.num_rows == 3
    assert rows_of(lab.summary.value) == 3
    for p in lab.policies:
        assert html.escape(p.name) in lab.summary.value
    assert has_png(lab.plot)
    # the same simulation as the whole table's with session_id= (prices fitted on every session)
    want = sl.simulate_compaction(data_table, lab.policies, session_id=API_SERVER)
    assert lab.result.sessions.equals(want.sessions)


def test_lab_compacts_more_when_the_window_drops(data_table):
    lab = CompactionLab(data_table, session_id=API_SERVER, context_window=200_000)
    wide = lab.result.sessions["compactions"].to_pylist()
    assert wide[0] == 0  # never compact
    lab.window.value = 32_000
    narrow = lab.result.sessions["compactions"].to_pylist()
    assert narrow[0] == 0 and narrow[1] > wide[1] and narrow[2] > wide[2]
    assert lab.policies[1].context_window == 32_000
    assert f"<td>{narrow[1]:,}</td>" in bare(lab.summary.value)


@pytest.mark.parametrize("slider,value,field", [
    ("reserve", 4_096, "reserve_tokens"),
    ("keep_recent", 5_000, "keep_recent_tokens"),
    ("fraction", 0.5, "trigger_fraction"),
])
def test_lab_sliders_set_policies(data_table, slider, value, field):
    lab = CompactionLab(data_table, session_id=API_SERVER, context_window=32_000)
    getattr(lab, slider).value = value
    p = lab.policies[1] if field != "trigger_fraction" else lab.policies[2]
    assert getattr(p, field) == value
    lab.summary_tokens.value = 500
    assert all(p.summary.tokens == 500 for p in lab.policies)


def test_lab_switches_session(data_table):
    lab = CompactionLab(data_table, session_id=API_SERVER)
    lab.session.value = RUST_CLI
    assert lab.result.sessions["session_id"].to_pylist() == [RUST_CLI] * 3


def test_explorer_takes_names_and_labels_from_the_corpus(data_table, monkeypatch):
    corpus = sl.load(DATA)
    want = BranchExplorer(data_table, session_id=RUST_CLI)
    # nothing but the context's messages is read from the file: the session object is never opened
    monkeypatch.setattr("sessionlab.pi.session.open_session", None)
    monkeypatch.setattr("sessionlab.open_session", None)
    ex = BranchExplorer(corpus, session_id=RUST_CLI)
    assert ex.entry.options == want.entry.options
    assert ex.header.value == want.header.value and "Release prep" in ex.header.value
    assert ex.branch.value == want.branch.value
    labels = {r["target_id"]: r["label"] for r in corpus.labels.to_pylist() if r["session_id"] == RUST_CLI}
    assert [eid for text, eid in ex.entry.options if "[" in text] == [eid for _, eid in ex.entry.options
                                                                       if eid in labels]


# -- what a person sees: labels, units, bounds, empty cases, a picture when unrun ------------------

def test_sessions_are_picked_by_name_or_first_prompt_day_and_folder(data_table):
    from sessionlab.tables.labels import session_labels

    labels = session_labels(data_table)
    assert labels[RUST_CLI].text == "Release prep · 2026-02-02 · rust-cli · b627ef1d"
    assert labels[API_SERVER].first_prompt.startswith("Why does the build fail? Look at internal/api/")
    assert labels[API_SERVER].name is None and labels[API_SERVER].folder == "api-server"
    for widget in (BranchExplorer(data_table, session_id=RUST_CLI), CompactionLab(data_table, session_id=RUST_CLI)):
        shown = {v: k.split("↳ subagent (Explore) · ", 1)[-1] for k, v in widget.session.options}  # (lab marks them)
        assert shown == {sid: lab.text for sid, lab in labels.items()}


def test_labels_keep_hostile_text_as_text(nasty):
    from sessionlab.tables.labels import session_labels

    label = session_labels(nasty["table"])[nasty["session_id"]]
    assert label.name == "name <script>alert(1)</script> <img src=x onerror=alert(1)> $y$"
    assert label.folder == IMG  # the last part of the cwd, raw: escaped where shown
    dash = UsageDashboard(nasty["table"], group="session")
    assert html.escape(label.text) in dash.table.value.replace("&#36;", "$")


def test_numbers_right_aligned_costs_in_dollars(data_table):
    lab = CompactionLab(data_table, session_id=API_SERVER)
    cells = re.findall(r'<td style="([^"]*)">([^<]*)</td>', lab.summary.value)
    assert cells
    money = [text for style, text in cells if text.startswith("&#36;")]
    assert len(money) == 9 and all(re.fullmatch(r"&#36;[\d,]+\.\d\d", m) for m in money)  # 3 policies x 3
    assert all("text-align:right" in style for style, text in cells if re.fullmatch(r"[\d,]+|&#36;.*", text))
    assert "cost</th>" in lab.summary.value and "cost_usd" not in lab.summary.value


def test_window_slider_stops_and_bounds(data_table):
    lab = CompactionLab(data_table, session_id=API_SERVER, context_window=272_000)
    assert lab.window.value == 272_000 and (f"{272_000:,}", 272_000) in lab.window.options
    assert [v for _, v in lab.window.options][:3] == [8_000, 16_000, 32_000]
    assert lab.reserve.readout_format == ",d"
    lab.window.value = 8_000
    assert lab.reserve.max == 3_072 and lab.reserve.value == 3_072
    assert lab.keep_recent.value == 4_000 and lab.summary_tokens.value == 2_000
    assert "reserve 16,384 → 3,072" in lab.notes.value
    assert lab.policies[1].reserve_tokens == 3_072
    lab.reserve.value = 100_000  # above the bound: held at the bound
    assert lab.reserve.value == 3_072
    lab.window.value = 200_000  # room again: the values asked for come back
    assert lab.reserve.max == 99_328 and lab.notes.value == ""
    assert (lab.reserve.value, lab.keep_recent.value) == (16_384, 20_000)
    lab.window.value = 16_000
    lab.reserve.value = 2_048  # asked for while bounded: that is the new wish
    lab.window.value = 400_000
    assert lab.reserve.value == 2_048 and lab.policies[1].reserve_tokens == 2_048


def test_lab_of_a_branch_without_calls_says_why(tmp_path):
    repo = sl.JsonlSessionRepo(tmp_path / "s")
    s = repo.create(cwd="/p/quiet")
    s.append_message(sl.UserMessage(content="hello?", timestamp=1_767_225_600_000))
    lab = CompactionLab(sl.entries_table(tmp_path / "s"))
    assert not has_png(lab.plot)
    assert "has no assistant call" in lab.plot.outputs[0]["data"]["text/plain"]
    assert "0 calls on the current branch" in lab.summary.value


def test_dashboard_empty_cases_say_why(data_table):
    dash = UsageDashboard(data_table)
    dash.start.value = dt.date(2030, 1, 1)
    assert "starts (2030-01-01) after it ends" in dash.status.value and dash.table.value == ""
    assert dash.plot.outputs == ()
    dash.end.value = dt.date(2030, 2, 1)
    assert "No assistant calls from 2030-01-01 to 2030-02-01" in dash.status.value


def test_timezone_box_takes_only_listed_zones(data_table):
    dash = UsageDashboard(data_table)
    assert isinstance(dash.tz, W.Combobox) and not dash.tz.continuous_update
    before = dash.usage
    dash.tz.value = "Europe/Vien"  # half-typed
    assert dash.usage.equals(before) and "(UTC)" in dash.status.value
    assert "Unknown time zone “Europe/Vien”: still showing UTC" in dash.tz_error.value
    assert "sessionlab-invalid" in dash.tz._dom_classes
    dash.tz.value = "Europe/Vienna"
    assert "(Europe/Vienna)" in dash.status.value
    assert dash.tz_error.value == "" and "sessionlab-invalid" not in dash.tz._dom_classes


def test_figures_are_sharp_and_full_width(data_table):
    ex = BranchExplorer(data_table, session_id=RUST_CLI)
    out = ex.tree.outputs[0]
    import base64
    import struct

    png = base64.b64decode(out["data"]["image/png"])
    width = struct.unpack(">I", png[16:20])[0]
    shown = out["metadata"]["image/png"]["width"]
    assert shown >= 900 and width >= 1.4 * shown


@pytest.mark.parametrize("make", [lambda t: BranchExplorer(t, session_id=RUST_CLI), lambda t: CompactionLab(t, session_id=API_SERVER),
                                  lambda t: UsageDashboard(t)])
def test_mimebundle_carries_a_static_picture(data_table, make):
    w = make(data_table)
    bundle = w._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    static = bundle["text/html"]
    assert static.count("data:image/png;base64,") == 1 and "<table" in static
    assert "children=" not in static


# -- SessionTree --------------------------------------------------------------------------------

def test_session_tree_payload_is_the_layout(data_table):
    from sessionlab.widgets import SessionTree

    tree = SessionTree(data_table, session_id=RUST_CLI)
    p = tree.tree
    lay = sl.tree_layout_df(data_table, session_id=RUST_CLI)
    assert p["n"] == len(lay) and p["ids"] == lay["entry_id"].tolist()
    assert p["x"] == lay["x"].round(3).tolist() and p["y"] == lay["y"].round(3).tolist()
    assert p["branch"] == lay["on_current_branch"].astype(int).tolist()
    ids = lay["entry_id"].tolist()
    assert [ids[i] if i >= 0 else None for i in p["parent"]] == [
        v if isinstance(v, str) else None for v in lay["parent_id"]]
    s = sl.open_session(data_table.filter(pc.equal(data_table["session_id"], RUST_CLI))["file"][0].as_py())
    assert {ids[r]: text for r, text in p["labels"]} == {e: s.get_label(e) for e in ids if s.get_label(e)}
    kinds = [k for k, _ in p["kinds"]]
    rows = data_table.filter(pc.equal(data_table["session_id"], RUST_CLI)).to_pylist()
    by_id = {r["entry_id"]: r for r in rows}
    for i, eid in enumerate(ids):
        r = by_id[eid]
        if r["type"] == "message" and r["role"] == "assistant":
            assert kinds[p["kind"][i]] == "assistant" and p["tokens"][i] == r["context_tokens"]
        elif r["type"] == "compaction":
            assert kinds[p["kind"][i]] == "compaction" and p["compaction"][i] == 1
    assert tree.title.startswith("Release prep · 2026-02-02 · rust-cli")


def test_session_tree_click_shows_the_context_in_the_explorer(data_table):
    from sessionlab.widgets import SessionTree

    tree = SessionTree()
    ex = BranchExplorer(data_table, session_id=RUST_CLI, session_tree=tree)
    assert ex.children[5] is tree and tree.session_id == RUST_CLI
    inner = [e for e in tree.tree["ids"] if e not in [v for _, v in ex.entry.options]][0]
    tree.selected_id = inner  # what a click does
    assert ex.entry.value == inner and ex.context_row["at_id"] == inner
    ex.session.value = ML_PIPELINE  # the tree marks the entry the explorer starts at: pi's leaf
    assert tree.session_id == ML_PIPELINE and tree.selected_id == ex.entry.value == ex.graph.graph["leaf_id"]


def test_session_tree_text_is_data_not_markup(nasty):
    from sessionlab.widgets import SessionTree

    tree = SessionTree(nasty["table"], session_id=nasty["session_id"])
    labels = dict((tree.tree["ids"][r], t) for r, t in tree.tree["labels"])
    assert labels[nasty["a2"]] == f"label {SCRIPT} $x$"  # raw: the browser draws it as canvas text
    assert f"model-{IMG}" in tree.tree["model"]
    js = (Path(sl.__file__).parent / "widgets" / "_static" / "session_tree.js").read_text()
    assert "innerHTML" not in js and "insertAdjacentHTML" not in js and "http" not in js


def test_session_tree_saves_a_picture_for_unrun_notebooks(data_table):
    from sessionlab.widgets import SessionTree

    tree = SessionTree(data_table, session_id=RUST_CLI)
    data, _meta = tree._repr_mimebundle_()
    assert data["text/html"].count("data:image/png;base64,") == 1
    ex = BranchExplorer(data_table, session_id=RUST_CLI, session_tree=SessionTree())
    assert ex._repr_mimebundle_()["text/html"].count("data:image/png;base64,") == 1  # the tree, via the explorer
    assert SessionTree()._repr_mimebundle_()[0].get("text/html") is None  # nothing drawn yet: no picture


def test_dashboard_refresh_shows_a_session_added_since(tmp_path, monkeypatch):
    import shutil

    monkeypatch.setenv("SESSIONLAB_CACHE_DIR", str(tmp_path / "cache"))
    src = DATA / "sessions"
    shutil.copytree(src / "--home-user-rust-cli--", tmp_path / "s" / "--home-user-rust-cli--")
    dash = UsageDashboard(sl.load(tmp_path / "s"), group="session")
    assert dash.usage.num_rows == 1 and not dash.refresh_button.disabled
    shutil.copytree(src / "--home-user-ml-pipeline--", tmp_path / "s" / "--home-user-ml-pipeline--")
    before = sum(dash.usage["calls"].to_pylist())
    dash.refresh_button.click()
    assert dash.usage.num_rows == 2 and sum(dash.usage["calls"].to_pylist()) > before
    assert "1 new" in dash.status.value and "1 unchanged" in dash.status.value
    assert UsageDashboard(sl.entries_table(tmp_path / "s")).refresh_button.disabled  # a table cannot reload
