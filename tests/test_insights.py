"""The insight tables on hand-computed examples and on the real sessions of ``data/``.

The hand-made session (``_session``), its numbers worked out below:

    u1   user "hello"                       2 tokens (ceil(5 / 4)), t=0
    a1   assistant "hi!!" (1 token)         input 10, cache write 1000            t=10   first call
    r1   read result, 40 chars (10 tokens)                                        t=12
    a2   assistant                          input 2, cache read 1000, write 50    t=20   hit (read 1000 = a1's 1000)
    r2   bash result, error, 80 chars (20)                                        t=30
    a3   assistant                          cache read 1050, write 30             t=40   hit (1050 = 1000 + 50)
    r3   bash result, 8 chars (2): a retry, after a 400 s command                 t=440
    a4   assistant                          cache read 0, write 1100              t=445  miss: 400 s since a3 > 300 s
                                                                                         rewrote a3's 1050 + 30
    c1   compaction, first kept r3, summary 16 chars (4 tokens), tokensBefore 1200
    u2   user "again" (2)                                                          t=455
    a5   assistant                          cache read 0, write 300               t=460  miss: the compaction
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest

import sessionlab as sl
from sessionlab import (
    ArgumentValueError,
    NeverCompact,
    PiThresholdPolicy,
    UnrecordedDataWarning,
    cache_misses,
    cache_ttl_whatif,
    calibrate_estimate,
    compaction_diff,
    estimate_accuracy,
    simulate_compaction,
    subagent_costs,
    tool_stats,
    usage_by,
)
from sessionlab.tables import entries_table

DATA = Path(__file__).resolve().parent / "data"
SONNET = "claude-sonnet-4-5"
WRITE_OVER_READ = (3.75 - 0.30) / 1e6  # the sessions pay cache writes $3.75/M, cache reads $0.30/M


def _ts(sec: float) -> str:
    return f"2026-01-10T10:{int(sec) // 60:02d}:{int(sec) % 60:02d}.000Z"


def _asst(eid, pid, t, text, *, inp=0, cr=0, cw=0, stop="toolUse"):
    return {"type": "message", "id": eid, "parentId": pid, "timestamp": _ts(t), "message": {
        "role": "assistant", "content": [{"type": "text", "text": text}], "provider": "anthropic", "model": SONNET,
        "api": "anthropic-messages", "stopReason": stop, "timestamp": 0,
        "usage": {"input": inp, "output": 5, "cacheRead": cr, "cacheWrite": cw, "totalTokens": inp + cr + cw + 5,
                  "cost": {"total": (inp * 3 + 5 * 15 + cr * 0.3 + cw * 3.75) / 1e6}}}}  # sonnet's prices


def _result(eid, pid, t, tool, text, error=False):
    return {"type": "message", "id": eid, "parentId": pid, "timestamp": _ts(t), "message": {
        "role": "toolResult", "toolCallId": "c" + eid, "toolName": tool, "content": [{"type": "text", "text": text}],
        "isError": error, "timestamp": 0}}


def _user(eid, pid, t, text):
    return {"type": "message", "id": eid, "parentId": pid, "timestamp": _ts(t),
            "message": {"role": "user", "content": text, "timestamp": 0}}


@pytest.fixture(scope="module")
def session(tmp_path_factory) -> pa.Table:
    lines = [
        {"type": "session", "version": 3, "id": "s1", "timestamp": _ts(0), "cwd": "/p"},
        _user("u1", None, 0, "hello"),
        _asst("a1", "u1", 10, "hi!!", inp=10, cw=1000),
        _result("r1", "a1", 12, "read", "x" * 40),
        _asst("a2", "r1", 20, "ok..", inp=2, cr=1000, cw=50),
        _result("r2", "a2", 30, "bash", "y" * 80, error=True),
        _asst("a3", "r2", 40, "again", cr=1050, cw=30),
        _result("r3", "a3", 440, "bash", "z" * 8),
        _asst("a4", "r3", 445, "done", cw=1100, stop="stop"),
        {"type": "compaction", "id": "c1", "parentId": "a4", "timestamp": _ts(450), "summary": "S" * 16,
         "firstKeptEntryId": "r3", "tokensBefore": 1200},
        _user("u2", "c1", 455, "again"),
        _asst("a5", "u2", 460, "fine", cw=300, stop="stop"),
    ]
    path = tmp_path_factory.mktemp("hand") / "s1.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return entries_table(path)


def test_compaction_diff_by_hand(session):
    d = compaction_diff(session).to_pylist()
    assert {r["compaction_id"] for r in d} == {"c1"}
    assert [(r["entry_id"], r["status"]) for r in d] == [
        ("u1", "dropped"), ("a1", "dropped"), ("r1", "dropped"), ("a2", "dropped"), ("r2", "dropped"),
        ("a3", "dropped"), ("r3", "kept"), ("a4", "kept")]
    assert [r["position"] for r in d] == list(range(8))
    assert d[2]["tool_name"] == "read" and d[2]["est_tokens"] == 10 and d[2]["role"] == "toolResult"
    first = d[0]
    assert (first["summary_tokens"], first["tokens_before"], first["tokens_after"]) == (4, 1200, None)
    assert first["at_id"] == "a4" and first["source"] == "recorded" and first["compaction_kind"] == "compaction"
    est = {r["entry_id"]: r["est_tokens"] for r in d}
    assert first["est_tokens_before"] == sum(est.values())
    assert first["est_tokens_after"] == 4 + est["r3"] + est["a4"]


def test_cache_misses_by_hand(session):
    m = cache_misses(session).to_pylist()
    assert [(r["at_id"], r["cause"], r["rewritten_tokens"], r["previous_call_id"]) for r in m] == [
        ("a1", "first_call", 1000, None), ("a4", "idle_gap", 1080, "a3"), ("a5", "compaction", 300, "a4")]
    assert m[1]["gap_seconds"] == 400.0 and m[1]["ttl_seconds"] == 300.0
    assert [r["cost_usd"] for r in m] == pytest.approx([1000 * WRITE_OVER_READ, 1080 * WRITE_OVER_READ,
                                                        300 * WRITE_OVER_READ])


def test_one_hour_writes_what_if_by_hand(session):
    [w] = cache_ttl_whatif(session).to_pylist()
    assert (w["calls"], w["cache_write_tokens"], w["misses"], w["misses_saved"], w["saved_tokens"]) == \
        (5, 1000 + 50 + 30 + 1100 + 300, 3, 1, 1080)
    assert w["saved_usd"] == pytest.approx(1080 * WRITE_OVER_READ)
    surplus = (6.0 - 3.75) / 1e6  # genai-prices: a 1-hour write of claude-sonnet-4-5 costs $6/M
    assert w["extra_write_usd"] == pytest.approx((2480 - 1080) * surplus)
    assert w["net_saving_usd"] == pytest.approx(w["saved_usd"] - w["extra_write_usd"])


def test_tool_stats_by_hand(session):
    t = {r["tool_name"]: r for r in tool_stats(session).to_pylist()}
    assert (t["read"]["calls"], t["read"]["failures"], t["read"]["retries"], t["read"]["result_tokens"]) == (1, 0, 0, 10)
    assert (t["bash"]["calls"], t["bash"]["failures"], t["bash"]["retries"], t["bash"]["result_tokens"]) == (2, 1, 1, 22)
    assert t["bash"]["failure_rate"] == 0.5
    # r1 sits in the prompts of a2, a3, a4 (the compaction drops it); r2 in a3's and a4's; r3 in a4's and a5's
    assert t["read"]["context_tokens"] == 3 * 10
    assert t["bash"]["context_tokens"] == 2 * 20 + 2 * 2
    assert (t["read"]["total_seconds"], t["bash"]["total_seconds"]) == (2.0, 410.0)
    assert (t["bash"]["mean_seconds"], t["bash"]["max_seconds"]) == (205.0, 400.0)
    assert (t["bash"]["largest_result_id"], t["bash"]["largest_result_tokens"]) == ("r2", 20)


def test_estimate_accuracy_by_hand(session):
    a = {r["at_id"]: r for r in estimate_accuracy(session).to_pylist()}
    assert (a["a1"]["recorded_tokens"], a["a1"]["estimated_tokens"], a["a1"]["error"]) == (1010, 2, -1008)
    a2 = a["a2"]
    assert (a2["recorded_tokens"], a2["estimated_tokens"], a2["error"]) == (1052, 13, -1039)
    assert (a2["text_tokens"], a2["tool_output_tokens"], a2["images_tokens"], a2["summary_tokens"]) == (3, 10, 0, 0)
    assert a2["thinking_tokens"] is None  # no blocks given
    # a5 was sent the summary (4), r3 (2), a4 (1) and u2 (2)
    assert (a["a5"]["summary_tokens"], a["a5"]["estimated_tokens"]) == (4, 9)
    for r in a.values():
        kinds = sum(r[f"{k}_error"] for k in ("text", "tool_output", "images", "system", "summary"))
        assert r["error"] - r["calibrated_error"] == pytest.approx(kinds + r["overhead_error"], abs=3)


def _linear_session(path: Path, *, overhead: int, text_w: float, tool_w: float, calls: int, seed: int) -> None:
    """A session whose recorded prompts are exactly overhead + text_w * text + tool_w * tool output."""
    import random

    rng = random.Random(seed)
    lines = [{"type": "session", "version": 3, "id": f"lin{seed}", "timestamp": _ts(0), "cwd": "/p"}]
    text = tool = 0
    pid = None
    for i in range(calls):
        u, r = rng.randrange(1, 200) * 4, rng.randrange(1, 400) * 4  # whole tokens: no rounding
        lines.append(_user(f"u{i}", pid, i, "u" * u))
        text += u // 4
        prompt = overhead + round(text_w * text + tool_w * tool)
        lines.append(_asst(f"a{i}", f"u{i}", i, "", inp=prompt))
        lines.append(_result(f"r{i}", f"a{i}", i, "read", "r" * r))
        tool += r // 4
        pid = f"r{i}"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")


def test_the_calibration_recovers_known_ratios(tmp_path):
    for seed in range(5):
        _linear_session(tmp_path / f"s{seed}.jsonl", overhead=3000, text_w=1.5, tool_w=0.75, calls=30, seed=seed)
    table = entries_table(tmp_path)
    cal = calibrate_estimate(table)
    ratios = {(r["model"], r["kind"]): r for r in cal.ratios.to_pylist()}
    assert ratios[(SONNET, "text")]["weight"] == pytest.approx(1.5, abs=1e-3)
    assert ratios[(SONNET, "tool_output")]["weight"] == pytest.approx(0.75, abs=1e-3)
    assert ratios[(SONNET, "tool_output")]["chars_per_token"] == pytest.approx(4 / 0.75, abs=1e-2)
    assert ratios[(SONNET, "overhead")]["weight"] == pytest.approx(3000, abs=2)
    acc = estimate_accuracy(table, calibration=cal).to_pandas()
    assert acc.calibrated_error.abs().max() <= 2
    assert acc.error.abs().mean() > 1000 * max(acc.calibrated_error.abs().mean(), 1)  # pi's rule: the overhead
    held = estimate_accuracy(table).to_pandas()
    assert held.held_out.any() and not held.held_out.all()
    assert held[held.held_out].calibrated_error.abs().max() <= 2


def test_the_calibrated_estimator_changes_the_what_if(tmp_path):
    for seed in range(3):
        _linear_session(tmp_path / f"s{seed}.jsonl", overhead=100, text_w=2.0, tool_w=2.0, calls=20, seed=seed)
    table = entries_table(tmp_path)
    policies = [PiThresholdPolicy(60_000, reserve_tokens=20_000, keep_recent_tokens=5_000), NeverCompact()]
    pi = simulate_compaction(table, policies).sessions.to_pylist()
    cal = simulate_compaction(table, policies, estimator="calibrated").sessions.to_pylist()
    # the tool results' estimates double: the replayed prompts grow by what follows the last usage
    assert sum(r["prompt_tokens"] for r in cal) > sum(r["prompt_tokens"] for r in pi)
    fitted = calibrate_estimate(table, holdout=0.0)
    again = simulate_compaction(table, policies, estimator=fitted).sessions.to_pylist()
    assert again == cal
    with pytest.raises(ArgumentValueError):
        simulate_compaction(table, policies, estimator="tiktoken")


def test_subagent_costs_roll_up_to_the_spawning_session():
    corpus = sl.load(DATA / "claude" / "generated")
    runs = subagent_costs(corpus, by="run").to_pylist()  # (the Task calls name their subagent_type)
    assert [r["subagent_type"] for r in runs] == ["Explore", "Explore"]
    assert [r["session_id"] for r in runs] == ["45ee8ea6-ace2-46ff-b33e-451ca18a2166",
                                               "b2408561-2b87-4189-a596-4a70b1d2fe8b"]
    usage = {r["session_id"]: r for r in usage_by(corpus, by="session_id").to_pylist()}
    top = {r["session"]: r for r in usage_by(corpus, by="session").to_pylist()}
    sessions = {r["session_id"]: r for r in subagent_costs(corpus).to_pylist()}
    for run in runs:
        own = usage[run["run_session_id"]]
        assert (run["calls"], run["cost_usd"]) == (own["calls"], pytest.approx(own["cost_usd"]))
        s = sessions[run["session_id"]]
        assert s["runs"] == 1 and s["subagent_calls"] == run["calls"]
        assert s["cost_usd"] == pytest.approx(top[run["session_id"]]["cost_usd"])
        assert s["subagent_cost_usd"] == pytest.approx(run["cost_usd"])
        assert s["subagent_share"] == pytest.approx(run["cost_usd"] / s["cost_usd"])
    assert sessions["7f87ba1e-cc5f-4aa4-9efd-91d63c02f319"]["runs"] == 0
    [t] = subagent_costs(corpus, by="type").to_pylist()
    assert (t["subagent_type"], t["runs"]) == ("Explore", 2)
    assert t["cost_usd"] == pytest.approx(sum(r["cost_usd"] for r in runs))
    assert subagent_costs(corpus, session_id="45ee8ea6-ace2-46ff-b33e-451ca18a2166").num_rows == 1
    with pytest.raises(ArgumentValueError):
        subagent_costs(corpus, by="tool")


def test_agents_without_the_data_get_nulls_and_one_warning():
    corpus = sl.load(DATA / "codex")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        misses = cache_misses(corpus)
        stats = tool_stats(corpus, by=["tool_name", "agent"])
    assert [str(w.message) for w in caught] == [
        "cache_misses: codex sessions do not record cache writes; their calls are left out",
        "tool_stats: codex sessions do not record failed tool results; those values are null"]
    assert all(issubclass(w.category, UnrecordedDataWarning) for w in caught)
    assert misses.num_rows == 0
    assert stats.num_rows > 0 and stats["failures"].null_count == stats.num_rows
    assert pc.sum(stats["calls"]).as_py() > 0


def test_real_files_compaction_diff_matches_the_recorded_figures():
    corpus = sl.load(DATA / "pi" / "real" / "before-compaction.jsonl")
    d = compaction_diff(corpus).to_pandas()
    per = d.groupby("compaction_id").agg(tokens_before=("tokens_before", "first"),
                                        dropped=("status", lambda s: (s == "dropped").sum()))
    entries = corpus.entries_df()
    recorded = entries[entries.type == "compaction"].set_index("entry_id").tokens_before
    assert per.tokens_before.to_dict() == recorded.to_dict()
    assert (per.dropped > 0).all()
    ctx = sl.contexts(corpus, at=list(d.at_id.unique())).to_pandas().set_index("at_id")
    est = d.groupby("at_id").est_tokens_before.first()
    assert (est == ctx.estimated_tokens.loc[est.index]).all()


def test_simulated_compactions_join_the_diff():
    corpus = sl.load(DATA / "pi" / "generated" / "sessions", on_bad_lines="skip")
    sim = simulate_compaction(corpus, [PiThresholdPolicy(30_000, reserve_tokens=10_000, keep_recent_tokens=4_000)])
    assert sim.compactions.num_rows == pc.sum(sim.calls["compacted"]).as_py() > 0
    d = compaction_diff(corpus, simulation=sim)
    simulated = d.filter(pc.equal(d["source"], "simulated"))
    assert set(simulated["compaction_id"].to_pylist()) == {
        f"sim0@{a}" for a in sim.compactions["at_id"].to_pylist()}
    assert set(simulated["policy"].to_pylist()) == {sim.policies[0].name}
    with pytest.raises(sl.ArgumentTypeError):
        compaction_diff(corpus, simulation="not a simulation")


def test_tool_stats_groups_add_up_to_the_tools():
    corpus = sl.load(DATA.parent.parent / "data" / "sessions")  # the repository's sessions: several models
    whole = {r["tool_name"]: r for r in tool_stats(corpus).to_pylist()}
    fine = tool_stats(corpus, by=["model", "session_id", "agent", "project"]).to_pandas()
    assert fine.session_id.nunique() > 1 and fine.model.nunique() > 1
    sums = fine.groupby("tool_name")[["calls", "failures", "retries", "result_tokens", "context_tokens",
                                      "cost_usd"]].sum()
    for name, r in whole.items():
        for c in ("calls", "failures", "retries", "result_tokens", "context_tokens"):
            assert sums.loc[name, c] == r[c], (name, c)
        assert sums.loc[name, "cost_usd"] == pytest.approx(r["cost_usd"])
    assert set(fine.project) == {"/home/user/webapp", "/home/user/api-server", "/home/user/ml-pipeline",
                                 "/home/user/rust-cli"}  # a Corpus: the sessions' cwd
    folders = tool_stats(corpus.entries, by="project").to_pandas()
    assert set(folders.project) == {"--home-user-webapp--", "--home-user-api-server--", "--home-user-ml-pipeline--",
                                    "--home-user-rust-cli--"}  # a bare table: the files' folders


def test_tool_stats_rejects_unknown_keys(session):
    with pytest.raises(ArgumentValueError):
        tool_stats(session, by="colour")
    assert tool_stats(session, by="session_id").column_names[:2] == ["tool_name", "session_id"]


# -- the report's sections, the plots, the widget ----------------------------------------------------

HOSTILE = "<img src=x onerror=alert(1)>$x$"


@pytest.fixture(scope="module")
def hostile(tmp_path_factory) -> Path:
    """The hand-made session again, with a tool whose name is markup."""
    d = tmp_path_factory.mktemp("hostile")
    lines = [
        {"type": "session", "version": 3, "id": "s2", "timestamp": _ts(0), "cwd": "/p"},
        _user("u1", None, 0, "hello"),
        _asst("a1", "u1", 10, "hi!!", inp=10, cw=1000),
        _result("r1", "a1", 12, HOSTILE, "x" * 40, error=True),
        _asst("a2", "r1", 20, "ok..", inp=2, cr=0, cw=1050, stop="stop"),
    ]
    (d / "s2.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return d


def test_the_report_has_a_section_per_insight_and_escapes_tool_names(hostile):
    from sessionlab.report import build_report
    from sessionlab.report._insights import SECTIONS

    page = build_report(hostile)
    for sid, title in SECTIONS:
        assert f"id='{sid}'" in page and title in page
    assert HOSTILE not in page and "&lt;img src=x onerror=alert(1)&gt;" in page
    assert "style=" not in page.split("<section id=\"insights\">")[1].split("</section>\n")[0]  # (the CSP: none)
    assert "unexplained" in page  # a2 read nothing of a1's 1,000 cached tokens, 8 s later


def test_the_report_s_insight_numbers_are_the_tables():
    from sessionlab.report import build_report

    page = build_report(DATA / "claude" / "generated")
    runs = subagent_costs(sl.load(DATA / "claude" / "generated"), by="session")
    for r in runs.filter(pc.greater(runs["runs"], 0)).to_pylist():
        assert f"${r['subagent_cost_usd']:,.2f}" in page
    assert "do not record the subagent&#x27;s type" in page or "subagent" in page


def test_plots_draw_every_insight_table(session):
    pytest.importorskip("matplotlib").use("Agg")
    import matplotlib.pyplot as plt

    from sessionlab.plotting import (
        plot_cache_misses,
        plot_compaction_diff,
        plot_estimate_accuracy,
        plot_subagent_costs,
        plot_tool_stats,
    )

    ax = plot_compaction_diff(compaction_diff(session))
    assert [t.get_text() for t in ax.get_yticklabels()] == ["c1"]
    widths = [p.get_width() for p in ax.patches]
    dropped = sum(r["est_tokens"] for r in compaction_diff(session).to_pylist() if r["status"] == "dropped")
    assert sum(widths[:4]) == dropped and widths[-1] == 4  # the dropped bars by role, then kept, then summary
    ax = plot_cache_misses(cache_misses(session))
    assert sorted(t.get_text() for t in ax.get_yticklabels()) == ["compaction", "first_call", "idle_gap"]
    ax = plot_tool_stats(tool_stats(session), metric="calls")
    assert [p.get_width() for p in ax.patches] == [1.0, 2.0]  # read, then bash at the top
    ax = plot_estimate_accuracy(estimate_accuracy(session))
    assert len(ax.collections) >= 2
    corpus = sl.load(DATA / "claude" / "generated")
    assert subagent_costs(corpus, by="run").num_rows == 2
    ax = plot_subagent_costs(subagent_costs(corpus))
    assert len(ax.get_yticklabels()) == 2
    with pytest.raises(ValueError):
        plot_tool_stats(tool_stats(session), metric="colour")
    plt.close("all")


def test_the_compaction_diff_view_shows_dropped_beside_kept(hostile, session):
    pytest.importorskip("ipywidgets")
    pytest.importorskip("matplotlib").use("Agg")
    from sessionlab.widgets import CompactionDiffView

    view = CompactionDiffView(session)
    assert view.session.value == "s1"
    assert [v for _, v in view.compaction.options] == ["c1"]
    assert "dropped: 6 messages" in view.dropped.value and "kept: 2 messages" in view.kept.value
    assert "r2" in view.dropped.value and "r3" in view.kept.value and "r3" not in view.dropped.value
    assert "summary <b>4</b>" in view.summary.value and "tokens before <b>1,200</b>" in view.summary.value
    corpus = sl.load(DATA / "pi" / "generated" / "sessions", on_bad_lines="skip")
    sim = simulate_compaction(corpus, [PiThresholdPolicy(30_000, reserve_tokens=10_000, keep_recent_tokens=4_000)])
    sid = sim.compactions["session_id"][0].as_py()
    view = CompactionDiffView(corpus, session_id=sid, simulation=sim)
    ids = [v for _, v in view.compaction.options]
    mine = pc.equal(sim.compactions["session_id"], sid)
    assert ids[-pc.sum(mine).as_py():] == [f"sim0@{a}" for a in sim.compactions.filter(mine)["at_id"].to_pylist()]
    view.compaction.value = ids[-1]
    assert "simulated" in view.summary.value and "(policy pi(window=30000" in view.summary.value
    empty = CompactionDiffView(sl.load(hostile))
    assert empty.compaction.value is None and "no compaction" in empty.summary.value
    assert "&lt;img" not in empty.dropped.value  # (nothing shown)


def test_a_claude_code_compact_boundary_s_summary_is_the_message_under_it():
    corpus = sl.load(DATA / "claude" / "generated")
    d = compaction_diff(corpus).to_pandas()
    [cid] = d.compaction_id.unique()
    first = d.iloc[0]
    entries = corpus.entries_df()
    summary = entries[(entries.parent_id == cid) & (entries.role == "user")]
    assert len(summary) == 1 and summary.est_tokens.iloc[0] > 0
    assert (first.summary_tokens, first.tokens_before, first.tokens_after) == (summary.est_tokens.iloc[0], 47476, 2076)
    assert first.est_tokens_after == first.summary_tokens  # nothing kept: the boundary starts a new context
    assert (d.status == "dropped").all() and len(d) == 87


def _claude_line(uuid, parent, side, sec, text=None, usage=None):
    d = {"parentUuid": parent, "isSidechain": side, "userType": "external", "cwd": "/p", "sessionId": "sc1",
         "version": "1.0.30", "type": "user" if usage is None else "assistant", "uuid": uuid,
         "timestamp": f"2026-01-10T10:00:{sec:02d}.000Z"}
    if usage is None:
        d["message"] = {"role": "user", "content": text}
    else:
        d["requestId"] = "req_" + uuid
        d["message"] = {"id": "msg_" + uuid, "type": "message", "role": "assistant", "content": [
            {"type": "text", "text": "ok"}], "model": "claude-sonnet-4-5-20250929", "stop_reason": "end_turn",
            "usage": dict(zip(("input_tokens", "output_tokens", "cache_read_input_tokens",
                               "cache_creation_input_tokens"), usage))}
    return json.dumps(d) + "\n"


def test_a_sidechain_in_the_session_s_own_file_is_a_subagent_run(tmp_path):
    folder = tmp_path / "projects" / "-p"
    folder.mkdir(parents=True)
    (folder / "sc1.jsonl").write_text("".join([  # older Claude Code: the Task transcript in the main file
        _claude_line("m1", None, False, 0, "hello"), _claude_line("m2", "m1", False, 1, usage=(10, 5, 0, 100)),
        _claude_line("s1", None, True, 2, "sub task"), _claude_line("s2", "s1", True, 3, usage=(20, 7, 0, 50)),
        _claude_line("s3", "s2", True, 4, "more"), _claude_line("s4", "s3", True, 9, usage=(3, 2, 50, 10)),
        _claude_line("m3", "m2", False, 10, "thanks"), _claude_line("m4", "m3", False, 11, usage=(4, 1, 100, 20)),
    ]), encoding="utf-8")
    corpus = sl.load(tmp_path / "projects")
    cost = {r["entry_id"]: r["cost_usd"] for r in corpus.entries.to_pylist() if r["cost_usd"] is not None}
    with pytest.warns(UnrecordedDataWarning):
        [run] = subagent_costs(corpus, by="run").to_pylist()
    assert (run["session_id"], run["run_id"], run["calls"], run["duration_seconds"]) == ("sc1", "sc1/s1", 2, 7.0)
    assert (run["input_tokens"], run["output_tokens"], run["cache_read_tokens"], run["cache_write_tokens"]) == \
        (23, 9, 50, 60)
    assert run["cost_usd"] == pytest.approx(cost["s2"] + cost["s4"])
    [s] = subagent_costs(corpus).to_pylist()
    assert (s["runs"], s["calls"], s["subagent_calls"], s["subagent_tokens"]) == (1, 2, 2, 142)
    assert s["own_cost_usd"] == pytest.approx(cost["m2"] + cost["m4"])
