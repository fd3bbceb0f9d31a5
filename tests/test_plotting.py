"""Plots: the tree layout against a plain recursive reference, and the artists each plot draws."""

from __future__ import annotations

import json
import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from matplotlib.collections import LineCollection  # noqa: E402

from sessionlab import (  # noqa: E402
    FractionPolicy,
    NeverCompact,
    PiThresholdPolicy,
    current_branch,
    entries_table,
    generate_session,
    session_tree,
    usage_by,
)
from sessionlab.plotting import plot_context_timeline, plot_tree, plot_usage, tree_layout_df  # noqa: E402

DATA = Path(__file__).resolve().parent.parent / "data"
DATA_FILES = sorted(DATA.rglob("*.jsonl"))
BEFORE_COMPACTION = DATA / "pi" / "before-compaction.jsonl"
BRANCHY = "ec99108d-db5b-4fab-8f4d-3e27dda1494c"  # 5 leaves, 4 branch summaries, labels


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def everything():
    return entries_table(DATA)


# --- a hand-built session --------------------------------------------------------------------

def _write(path: Path, rows: list[dict]) -> Path:
    header = {"type": "session", "version": 3, "id": "s1", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/p"}
    lines = [header] + [{"timestamp": f"2026-01-01T00:00:{i:02d}.000Z", **r} for i, r in enumerate(rows)]
    path.write_text("\n".join(json.dumps(r) for r in lines) + "\n", encoding="utf-8")
    return path


def _user(eid, pid, text="hi"):
    return {"type": "message", "id": eid, "parentId": pid, "message": {"role": "user", "content": text}}


def _assistant(eid, pid):
    return {"type": "message", "id": eid, "parentId": pid, "message": {
        "role": "assistant", "content": [{"type": "text", "text": "ok"}], "provider": "anthropic",
        "model": "m", "api": "anthropic-messages", "stopReason": "stop",
        "usage": {"input": 10, "output": 5, "cacheRead": 100, "cacheWrite": 20, "totalTokens": 135,
                  "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0.01}}}}


@pytest.fixture()
def small(tmp_path):
    r"""      a
             / \
            b   e
           / \   \
          c   d   f      (then a label on d, the leaf is f)"""
    rows = [_user("a", None), _assistant("b", "a"), _user("c", "b"), _user("d", "b"), _assistant("e", "a"),
            _user("f", "e")]
    return entries_table(_write(tmp_path / "s.jsonl", rows))


def test_tree_layout_of_a_small_tree(small):
    lay = tree_layout_df(small, session_id="s1").set_index("entry_id")
    assert list(lay.columns) == ["parent_id", "x", "y", "type", "role", "on_current_branch"]
    expected = {"a": (1.25, 0), "b": (0.5, 1), "c": (0, 2), "d": (1, 2), "e": (2, 1), "f": (2, 2)}
    assert {k: (lay.at[k, "x"], lay.at[k, "y"]) for k in expected} == expected
    assert lay["parent_id"].fillna("-").to_dict() == {"a": "-", "b": "a", "c": "b", "d": "b", "e": "a", "f": "e"}
    assert lay["on_current_branch"].to_dict() == {"a": True, "b": False, "c": False, "d": False, "e": True, "f": True}
    assert not lay.duplicated(["x", "y"]).any()


def test_sibling_order_is_pi_s_timestamp_order(tmp_path):
    rows = [_user("a", None), _user("late", "a"), _user("early", "a")]
    rows[1]["timestamp"] = "2026-01-01T00:00:30.000Z"  # written first, but later in time
    lay = tree_layout_df(entries_table(_write(tmp_path / "s.jsonl", rows)), session_id="s1").set_index("entry_id")
    assert lay.at["early", "x"] < lay.at["late", "x"]


def test_orphans_and_duplicates(tmp_path):
    rows = [_user("a", None), _user("b", "a"), _user("b", "a", "again"), _user("c", "missing"), _user("d", "c")]
    table = entries_table(_write(tmp_path / "s.jsonl", rows), on_bad_lines="skip")  # both are line issues
    lay = tree_layout_df(table, session_id="s1")
    assert lay["entry_id"].tolist() == ["a", "b", "c", "d"]  # the duplicated id keeps its last row
    assert lay.set_index("entry_id").loc[["c", "d"], "y"].tolist() == [0, 1]  # an orphan is a root
    assert not lay.duplicated(["x", "y"]).any()


# --- the layout against a plain recursive reference -------------------------------------------

def _reference_layout(table, session_id) -> dict[str, tuple[float, float]]:
    """Depth-first leaf ranks, parents midway between first and last child (networkx tree, recursion)."""
    g = session_tree(table, session_id=session_id)
    roots = [n for n in g.nodes if g.in_degree(n) == 0]
    pos: dict[str, tuple[float, float]] = {}
    next_leaf = [0]

    def place(node, depth):
        kids = list(g.successors(node))  # pi's order
        if not kids:
            pos[node] = (float(next_leaf[0]), float(depth))
            next_leaf[0] += 1
            return
        for k in kids:
            place(k, depth + 1)
        pos[node] = ((pos[kids[0]][0] + pos[kids[-1]][0]) / 2, float(depth))

    import sys
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, 10 * g.number_of_nodes() + 100))
    try:
        for r in roots:
            place(r, 0)
    finally:
        sys.setrecursionlimit(old)
    return pos


def _check_tidy(lay: pd.DataFrame) -> None:
    assert not lay.duplicated(["x", "y"]).any(), "two nodes at the same position"
    assert lay["x"].notna().all()
    kids = lay[lay["parent_id"].notna()]
    par = lay.set_index("entry_id").loc[kids["parent_id"]]
    assert (par["y"].to_numpy() == kids["y"].to_numpy() - 1).all(), "a parent is not right above its children"
    span = kids.groupby("parent_id")["x"].agg(["min", "max"])
    px = lay.set_index("entry_id").loc[span.index, "x"]
    np.testing.assert_allclose(px.to_numpy(), ((span["min"] + span["max"]) / 2).to_numpy())


@pytest.mark.parametrize("path", DATA_FILES, ids=lambda p: p.stem[:24])
def test_tree_layout_on_the_data_files(path):
    table = entries_table(path)
    sid = table["session_id"][0].as_py()
    lay = tree_layout_df(table, session_id=sid)
    _check_tidy(lay)
    ref = _reference_layout(table, sid)
    got = dict(zip(lay["entry_id"], zip(lay["x"], lay["y"])))
    assert got == ref
    branch = current_branch(session_tree(table, session_id=sid))
    assert set(lay.loc[lay["on_current_branch"], "entry_id"]) == set(branch)


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_tree_layout_matches_the_reference_on_generated_sessions(tmp_path, seed):
    p = generate_session(tmp_path, seed=seed, turns=30, branch_prob=0.3, label_prob=0.2)
    table = entries_table(p)
    sid = table["session_id"][0].as_py()
    lay = tree_layout_df(table, session_id=sid)
    _check_tidy(lay)
    assert dict(zip(lay["entry_id"], zip(lay["x"], lay["y"]))) == _reference_layout(table, sid)


def test_tree_layout_needs_a_session(everything):
    with pytest.raises(ValueError, match="sessions"):
        tree_layout_df(everything, session_id=None)
    with pytest.raises(KeyError):
        tree_layout_df(everything, session_id="no-such-session")


# --- plot_tree ---------------------------------------------------------------------------------

def _collection(ax, gid) -> LineCollection:
    found = [c for c in ax.collections if c.get_gid() == gid]
    assert len(found) == 1
    return found[0]


def test_plot_tree_draws_collections_and_highlights_the_current_branch(everything):
    ax = plot_tree(everything, session_id=BRANCHY)
    assert isinstance(ax, matplotlib.axes.Axes)
    lay = tree_layout_df(everything, session_id=BRANCHY)
    branch = current_branch(session_tree(everything, session_id=BRANCHY))
    assert len(_collection(ax, "current_branch").get_segments()) == len(branch) - 1
    assert len(_collection(ax, "edges").get_segments()) == lay["parent_id"].notna().sum() - (len(branch) - 1)
    scatters = [c for c in ax.collections if str(c.get_gid()).startswith("nodes:")]
    assert sum(len(c.get_offsets()) for c in scatters) == len(lay)
    assert len(scatters) == len({c.get_gid() for c in scatters})  # one scatter per kind
    assert {c.get_gid() for c in scatters} >= {"nodes:user", "nodes:assistant", "nodes:branch_summary", "nodes:label"}
    notes = sorted(t.get_text() for t in ax.texts if t.get_gid() == "label")
    assert notes == ["bug-repro", "tests-green"]


def test_plot_tree_marks_compactions(tmp_path):
    ax = plot_tree(entries_table(BEFORE_COMPACTION), session_id=None)
    notes = [t.get_text() for t in ax.texts if t.get_gid() == "compaction"]
    assert notes == ["compaction: 175,004 tokens before", "compaction: 185,014 tokens before"]
    assert len(_collection(ax, "current_branch").get_segments()) == 1002 - 1


def test_session_text_is_drawn_literally(tmp_path):
    rows = [_user("a", None), _assistant("b", "a"),
            {"type": "label", "id": "l1", "parentId": "b", "targetId": "a", "label": "$x^2$ <b>bold</b>"},
            {"type": "label", "id": "l2", "parentId": "l1", "targetId": "b", "label": "a very long label " * 5}]
    table = entries_table(_write(tmp_path / "s.jsonl", rows))
    ax = plot_tree(table, session_id="s1", max_label=20)
    texts = {t.get_text(): t for t in ax.texts if t.get_gid() == "label"}
    assert len(texts) == 2
    first = next(t for s, t in texts.items() if "x^2" in s)
    shown, is_math = first._preprocess_math(first.get_text())
    assert (shown, is_math) == ("$x^2$ <b>bold</b>", False)
    long = next(s for s in texts if "long" in s)
    assert len(long) == 20 and long.endswith("…")
    ax.figure.canvas.draw()  # renders without a mathtext error


# --- plot_usage ----------------------------------------------------------------------------------

def test_plot_usage_tokens_stacks_one_container_per_bucket(everything):
    u = usage_by(everything, by="model")
    ax = plot_usage(u, by="model", metric="tokens")
    assert [c.get_label() for c in ax.containers] == ["cache read", "cache write", "fresh input", "output"]
    assert all(len(c) == u.num_rows for c in ax.containers)
    tops = np.array([r.get_y() + r.get_height() for r in ax.containers[-1]])
    df = u.to_pandas()
    total = (df["cache_read_tokens"] + df["cache_write_tokens"] + df["input_tokens"] + df["output_tokens"])
    np.testing.assert_allclose(tops, total.to_numpy(float))
    assert [t.get_text() for t in ax.get_xticklabels()] == df["model"].tolist()
    assert "," in ax.yaxis.get_major_formatter()(1_234_567, 0)


def test_plot_usage_cost_is_stacked_by_model_when_the_table_has_models(everything):
    u = usage_by(everything, by=["day", "model"])
    ax = plot_usage(u, by="day", metric="cost_usd")
    df = u.to_pandas()
    days = df["day"].nunique()
    assert len(ax.containers) == df["model"].nunique()
    assert all(len(c) == days for c in ax.containers)
    tops = np.max([[r.get_y() + r.get_height() for r in c] for c in ax.containers], axis=0)
    np.testing.assert_allclose(tops, df.groupby("day")["cost_usd"].sum().to_numpy())
    # a time axis: each bar stands at its date, so a gap of weeks without calls is a gap on the axis
    import matplotlib.dates as mdates

    lefts = np.array([r.get_x() + r.get_width() / 2 for r in ax.containers[0]])
    want = mdates.date2num(pd.to_datetime(sorted(df["day"].unique())))
    np.testing.assert_allclose(lefts, want)
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\d", x) for x in labels) and 3 <= len(labels) <= 10
    assert all(t.get_rotation() > 0 for t in ax.get_xticklabels())


def test_plot_usage_cost_without_models_is_plain_bars(everything):
    u = usage_by(everything, by="session_id")
    ax = plot_usage(u, by="session", metric="cost_usd")
    assert len(ax.containers) == 1 and len(ax.containers[0]) == u.num_rows
    assert [t.get_text() for t in ax.get_xticklabels()] == [s[:8] for s in u["session_id"].to_pylist()]
    with pytest.raises(ValueError):
        plot_usage(u, by="day")
    with pytest.raises(ValueError):
        plot_usage(u, by="session", metric="dollars")


# --- plot_context_timeline -------------------------------------------------------------------------

def test_context_timeline_with_policies():
    table = entries_table(BEFORE_COMPACTION)
    policies = [PiThresholdPolicy(200_000), FractionPolicy(200_000, 0.5, 20_000), NeverCompact(150_000)]
    ax = plot_context_timeline(table, session_id=None, policies=policies)
    lines = [ln for ln in ax.lines if str(ln.get_gid()).startswith("policy:")]
    assert len(lines) == len(policies)
    assert [ln.get_label() for ln in lines] == [p.name for p in policies]
    window = [ln for ln in ax.lines if ln.get_gid() == "context_window"]
    assert len(window) == 1 and set(window[0].get_ydata()) == {200_000}
    # the stacked buckets: one polygon per bucket, covering the 484 calls of the branch
    assert [c.get_label() for c in ax.collections[:4]] == ["cache read", "cache write", "fresh input", "output"]
    assert ax.get_title(loc="left").endswith("(484 calls)")
    # NeverCompact's line is the uncompacted context: it never drops
    never = lines[2].get_ydata()
    assert (np.diff(never) >= 0).sum() > 0.9 * len(never) and len(never) == 484
    # the recorded compactions, from tokensBefore down to the next call's prompt
    notes = [t.get_text() for t in ax.texts]
    assert notes[0].startswith("175,004 → ") and notes[1].startswith("185,014 → ")


def test_context_timeline_without_policies_has_no_window(everything):
    ax = plot_context_timeline(everything, session_id=BRANCHY)
    assert not [ln for ln in ax.lines if ln.get_gid() == "context_window"]
    assert [c for c in ax.collections if c.get_gid() == "branch_switches"]  # this session came back from branches


def test_context_timeline_of_another_branch(everything):
    lay = tree_layout_df(everything, session_id=BRANCHY)
    leaves = set(lay["entry_id"]) - set(lay["parent_id"].dropna())
    other = sorted(leaves - set(lay.loc[lay["on_current_branch"], "entry_id"]))[0]
    ax = plot_context_timeline(everything, session_id=BRANCHY, leaf_id=other, policies=[PiThresholdPolicy(30_000)], x="time")
    g = session_tree(everything, session_id=BRANCHY)
    calls = [e for e in current_branch(g, other) if g.nodes[e]["role"] == "assistant"]
    assert ax.get_title(loc="left").endswith(f"({len(calls)} calls)")
    line = next(ln for ln in ax.lines if ln.get_gid() == "policy:0")
    assert len(line.get_xdata()) >= len(calls)
    with pytest.raises(KeyError):
        plot_context_timeline(everything, session_id=BRANCHY, leaf_id="not-an-entry")


def test_context_timeline_draws_the_branch_calls_table(everything):
    """The plot draws branch_calls: one point per call (in a Claude Code file, one per response,
    as usage_by counts them), the simulation's calls at their call_index."""
    from sessionlab import branch_calls, usage_by

    sid = "45ee8ea6-ace2-46ff-b33e-451ca18a2166"  # Claude Code: a response spans several lines
    calls = branch_calls(everything, session_id=sid).to_pandas()
    ax = plot_context_timeline(everything, session_id=sid, policies=[NeverCompact(200_000)])
    k = int((calls["kind"] == "call").sum())
    assert ax.get_title(loc="left").endswith(f"({k} calls)")
    assert k == usage_by(everything, session_id=sid, by="branch").to_pandas().set_index("branch").loc["current", "calls"]
    line = next(ln for ln in ax.lines if ln.get_gid() == "policy:0")
    assert list(line.get_xdata()) == list(range(k))  # every call of the branch, at its position
    stack = ax.collections[0].get_paths()[0].vertices  # the cache read layer, a step per call
    assert stack[:, 1].max() == calls["cache_read_tokens"].max()


def test_plots_draw_on_a_given_axes(everything):
    fig, axes = plt.subplots(1, 3)
    assert plot_tree(everything, session_id=BRANCHY, ax=axes[0]) is axes[0]
    assert plot_usage(usage_by(everything, by="day"), ax=axes[1]) is axes[1]
    assert plot_context_timeline(everything, session_id=BRANCHY, ax=axes[2]) is axes[2]
    fig.canvas.draw()


# --- readability: sizes, margins, one call, no call -------------------------------------------

def _texts(ax):
    fig = ax.figure
    return [t for t in fig.findobj(matplotlib.text.Text) if t.get_text() and t.get_visible()]


@pytest.mark.parametrize("session_id", [BRANCHY, "a28f5b37-6b04-44f2-b094-90b86b01a1c1"])
def test_plot_text_is_at_least_9_points(everything, session_id):
    for ax in (plot_tree(everything, session_id=session_id), plot_context_timeline(everything, session_id=session_id,
                                                                          policies=[PiThresholdPolicy(200_000)]),
               plot_usage(usage_by(everything, by=["day", "model"]), by="day")):
        sizes = {t.get_text(): t.get_fontsize() for t in _texts(ax)}
        assert min(sizes.values()) >= 9, sizes


@pytest.mark.parametrize("session_id", [BRANCHY, "a28f5b37-6b04-44f2-b094-90b86b01a1c1"])
def test_tree_nodes_keep_clear_of_the_edges(everything, session_id):
    """The deepest node (and the root) sit at least a marker's size inside the axes."""
    ax = plot_tree(everything, session_id=session_id)
    ax.figure.canvas.draw()
    bottom, top = ax.get_ylim()  # y grows downwards
    lay = tree_layout_df(everything, session_id=session_id)
    to_px = ax.transData.transform
    deepest = to_px((0, lay["y"].max()))[1]
    low = to_px((0, bottom))[1]
    root = to_px((0, lay["y"].min()))[1]
    high = to_px((0, top))[1]
    assert deepest - low >= 8 and high - root >= 8  # pixels at 100 dpi


def test_timeline_of_one_call_draws_bars_not_an_empty_strip(tmp_path):
    t = entries_table(_write(tmp_path / "one.jsonl", [_user("a", None), _assistant("b", "a")]))
    ax = plot_context_timeline(t)
    heights = sorted(p.get_height() for p in ax.patches)
    assert heights == [5, 10, 20, 100]  # output, input, cache write, cache read of the one call
    lo, hi = ax.get_xlim()
    assert hi - lo >= 2  # not a strip from -0.4 to 0.4
    assert "(1 call)" in ax.get_title(loc="left")


def test_timeline_without_calls_says_so(tmp_path):
    t = entries_table(_write(tmp_path / "none.jsonl", [_user("a", None)]))
    ax = plot_context_timeline(t)
    assert [x.get_text() for x in ax.texts] == ["no assistant call on this branch"]


def test_plot_titles_and_session_labels(everything):
    ax = plot_tree(everything, session_id=BRANCHY, title="Fix $x$ bug · 2026-01-12")
    assert ax.get_title(loc="left").startswith(r"Fix \$x\$ bug · 2026-01-12: ")
    u = usage_by(everything, by="session_id")
    ax = plot_usage(u, by="session", labels={BRANCHY: "Why does the build fail? · webapp"})
    ticks = [x.get_text() for x in ax.get_xticklabels()]
    assert "Why does the build fail? · webapp" in ticks
    assert BRANCHY[:8] not in ticks and len(ticks) == u.num_rows
