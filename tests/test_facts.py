"""One owner of session and call facts: every face shows the same numbers.

The facts (is a call, leaves, the current leaf, fork points, the name, call counts) come from
``sessionlab.tables._facts`` as the sessions table's columns; the report, the CLI summary,
``usage_by``, ``contexts(at="leaves")``, the cache and CompactionLab read them. The first tests are
divergences found between those faces; the properties hold them to a plain reference on random
trees written in each agent's format.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sessionlab as sl
from sessionlab.cli import summarize_corpus
from sessionlab.report._data import collect
from sessionlab.tables import call_mask, leaf_mask

DATA = Path(__file__).resolve().parent.parent / "data"
PI_FILE = next((DATA / "sessions" / "--home-user-api-server--").glob("*.jsonl"))  # a pi v3 file


@pytest.fixture(scope="module")
def corpus():
    return sl.load(DATA, cache=False, progress=False)


# -- the divergences ----------------------------------------------------------------------------


def test_report_counts_are_the_sessions_table_and_usage_by(corpus):
    """The report decided "is a call" and "is a leaf" without the agent (72 calls and 12 leaves for
    a Claude Code session where usage_by and the sessions table said 37 and 2)."""
    report = {s.file: s for s in collect(DATA).sessions}
    usage = {r["file"]: r["calls"] for r in sl.usage_by(corpus, by="file").to_pylist()}
    checked = 0
    for row in corpus.sessions.to_pylist():
        s = report[row["file"]]
        assert s.calls == usage.get(row["file"], 0), row["file"]
        assert s.leaves == row["leaf_count"], row["file"]
        assert s.forks == row["fork_count"], row["file"]
        assert s.calls == row["call_count"], row["file"]
        checked += row["agent"] != "pi"
    assert checked >= 9  # the Claude Code and Codex sessions of data/


def test_cli_summary_reads_the_sessions_table(corpus):
    rows = {r["file"]: r for r in summarize_corpus(corpus)}
    for s in corpus.sessions.to_pylist():
        assert rows[s["file"]]["leaves"] == s["leaf_count"]
        assert rows[s["file"]]["fork_points"] == s["fork_count"]
        assert rows[s["file"]]["name"] == s["name"]


def _append(path: Path, *objs: dict) -> None:
    last = [json.loads(x) for x in path.read_text().splitlines() if x.strip()][-1]
    with open(path, "a") as fh:
        parent = last["id"]
        for i, o in enumerate(objs):
            d = {"id": f"app{i:05d}", "parentId": parent, "timestamp": "2026-02-01T10:00:00.000Z", **o}
            fh.write(json.dumps(d, separators=(",", ":")) + "\n")  # (as pi writes its lines)
            parent = d["id"]


def test_cached_reload_after_appends_equals_a_fresh_load(tmp_path):
    """A cached reload named a session '  second  ' where a fresh load says 'second', and lost an
    appended line's bad_timestamp issue."""
    path = tmp_path / "s.jsonl"
    shutil.copy(PI_FILE, path)
    os.utime(path, (1_700_000_000, 1_700_000_000))  # (not just written: the cache takes its appends)
    cache = tmp_path / "cache"
    assert sl.load(path, cache=cache, progress=False).sessions.num_rows == 1  # fills the cache
    _append(path, {"type": "session_info", "name": "  second  "})
    cached = sl.load(path, cache=cache, progress=False)
    fresh = sl.load(path, cache=False, progress=False)
    assert cached.changes.appended == [str(path)], cached.changes
    assert cached.sessions["name"].to_pylist() == fresh.sessions["name"].to_pylist() == ["second"]
    _append(path, {"type": "session_info", "name": "   "}, {"type": "label", "targetId": "app00000", "label": "x",
                                                             "timestamp": "yesterday"})
    with pytest.warns(sl.BadLinesWarning):
        cached = sl.load(path, cache=cache, progress=False)
    with pytest.warns(sl.BadLinesWarning):
        fresh = sl.load(path, cache=False, progress=False)
    for name in ("entries", "sessions", "issues"):
        a, b = getattr(cached, name), getattr(fresh, name)
        assert a.drop_columns([c for c in ("loader",) if c in a.column_names]).equals(
            b.drop_columns([c for c in ("loader",) if c in b.column_names])), name
    assert "bad_timestamp" in cached.issues["kind"].to_pylist()
    assert cached.sessions["name"].to_pylist() == [None]


def test_compaction_lab_costs_are_simulate_compaction_with_session_id(corpus):
    """CompactionLab simulated one session alone, so its prices were fitted on it alone."""
    pytest.importorskip("ipywidgets")
    pytest.importorskip("matplotlib")
    from sessionlab.widgets import CompactionLab

    pi = [r["session_id"] for r in corpus.sessions.to_pylist() if r["agent"] == "pi" and r["call_count"]]
    lab = CompactionLab(corpus)
    differ = 0
    for sid in pi:
        lab.session.value = sid
        want = sl.simulate_compaction(corpus, lab.make_policies(), session_id=sid, branch="current")
        got = lab.result.sessions
        assert got["cost_usd"].to_pylist() == want.sessions["cost_usd"].to_pylist(), sid
        alone = sl.simulate_compaction(corpus.entries.filter(
            pc.equal(corpus.entries["session_id"], sid)), lab.make_policies(), branch="current")
        differ += alone.sessions["cost_usd"].to_pylist() != want.sessions["cost_usd"].to_pylist()
    assert differ  # (fitting on one session alone does give other costs: the test can tell)


def test_plot_context_timeline_draws_the_simulation_it_is_given(corpus):
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    from sessionlab.plotting import plot_context_timeline

    sid = next(r["session_id"] for r in corpus.sessions.to_pylist() if r["compaction_count"] and r["agent"] == "pi")
    res = sl.simulate_compaction(corpus, [sl.PiThresholdPolicy(60_000), sl.NeverCompact(60_000)], session_id=sid)
    ax = plot_context_timeline(corpus, session_id=sid, simulation=res)
    lines = {a.get_gid(): a for a in ax.get_lines() if a.get_gid()}
    assert set(lines) >= {"policy:0", "policy:1", "context_window"}
    calls = res.calls.filter(pc.equal(res.calls["policy_index"], 1))
    assert list(lines["policy:1"].get_ydata()) == calls["context_before"].to_pylist()
    with pytest.raises(sl.ArgumentValueError):
        plot_context_timeline(corpus, session_id=sid, simulation=res, policies=res.policies)


def test_leaves_of_contexts_are_the_facts_leaves(corpus):
    """contexts(at="leaves") returned Claude Code side nodes (system, progress lines) as leaves."""
    t = corpus.entries
    got = sl.contexts(corpus, at="leaves")
    leaf_rows = np.nonzero(leaf_mask(t))[0]
    assert sorted(got["at_id"].to_pylist()) == sorted(t["entry_id"].take(leaf_rows).to_pylist())
    side = set(t.filter(pc.fill_null(t["side_node"], False))["entry_id"].to_pylist())
    assert side and not side & set(got["at_id"].to_pylist())
    by_session: dict[str, set] = {}
    for sid, at in zip(got["session_id"].to_pylist(), got["at_id"].to_pylist()):
        by_session.setdefault(sid, set()).add(at)
    for s in corpus.sessions.to_pylist():
        if s["leaf_id"] is not None:
            assert s["leaf_id"] in by_session[s["session_id"]], s["file"]
        assert len(by_session.get(s["session_id"], ())) == s["leaf_count"], s["file"]


# -- properties: random trees of every agent ----------------------------------------------------

KINDS = ("user", "assistant", "side")
node = st.tuples(st.sampled_from(KINDS), st.integers(0, 1000), st.booleans())


def _parents(specs: list[tuple]) -> list[int | None]:
    return [None if i == 0 or (p % 7 == 0 and i > 1) else p % i for i, (_, p, _) in enumerate(specs)]


def _reference(specs: list[tuple], agent: str) -> dict:
    """Leaves, fork points, current leaf and calls by plain loops over the tree."""
    parents = _parents(specs)
    side = [k == "side" and agent != "pi" for k, _, _ in specs]
    ids = [f"e{i}" for i in range(len(specs))]

    def conv_parent(i: int) -> int | None:
        p = parents[i]
        while p is not None and side[p]:
            p = parents[p]
        return p

    kids: dict[int, int] = {}
    for i in range(len(specs)):
        if not side[i] and conv_parent(i) is not None:
            kids[conv_parent(i)] = kids.get(conv_parent(i), 0) + 1
    conv = [i for i in range(len(specs)) if not side[i]]
    return {
        "leaf_count": sum(1 for i in conv if i not in kids),
        "fork_count": sum(1 for i in conv if kids.get(i, 0) >= 2),
        "leaf_id": ids[conv[-1]] if conv else None,
        "call_count": sum(1 for k, _, usage in specs if k == "assistant" and (usage or agent == "pi")),
    }


def _ts(i: int) -> str:
    return f"2026-01-05T10:{i // 60:02d}:{i % 60:02d}.000Z"


def _write_pi(path: Path, specs: list[tuple]) -> None:
    lines = [{"type": "session", "version": 3, "id": "sess-pi", "timestamp": _ts(0), "cwd": "/w/p"}]
    for i, ((kind, _, _), p) in enumerate(zip(specs, _parents(specs))):
        d = {"id": f"e{i}", "parentId": None if p is None else f"e{p}", "timestamp": _ts(i)}
        if kind == "side":  # pi has no side nodes: a model change is an ordinary node
            d.update(type="model_change", provider="anthropic", modelId="claude-sonnet-4-5")
        elif kind == "user":
            d.update(type="message", message={"role": "user", "content": "hi", "timestamp": 1})
        else:
            d.update(type="message", message={
                "role": "assistant", "content": [{"type": "text", "text": "ok"}], "provider": "anthropic",
                "model": "claude-sonnet-4-5", "api": "anthropic-messages", "stopReason": "stop", "timestamp": 1,
                "usage": {"input": 10, "output": 5, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 15,
                          "cost": {"input": 0.1, "output": 0.1, "cacheRead": 0, "cacheWrite": 0, "total": 0.2}}})
        lines.append(d)
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))


def _write_claude(path: Path, specs: list[tuple]) -> None:
    lines = []
    for i, ((kind, _, usage), p) in enumerate(zip(specs, _parents(specs))):
        d = {"parentUuid": None if p is None else f"e{p}", "isSidechain": False, "cwd": "/w/c",
             "sessionId": "sess-claude", "version": "2.1.7", "uuid": f"e{i}", "timestamp": _ts(i)}
        if kind == "side":
            d.update(type="progress", data={"type": "hook_progress"})
        elif kind == "user":
            d.update(type="user", message={"role": "user", "content": "hi"})
        else:
            msg = {"model": "claude-sonnet-4-5", "id": f"msg_{i}", "type": "message", "role": "assistant",
                   "content": [{"type": "text", "text": "ok"}], "stop_reason": "end_turn"}
            if usage:
                msg["usage"] = {"input_tokens": 3, "output_tokens": 5, "cache_creation_input_tokens": 7,
                                "cache_read_input_tokens": 11}
            d.update(type="assistant", message=msg, requestId=f"req_{i}")
        lines.append(d)
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))


@settings(max_examples=60, deadline=None)
@given(st.lists(node, min_size=1, max_size=30), st.sampled_from(["pi", "claude-code"]))
def test_every_face_agrees_with_the_reference_on_random_trees(specs, agent):
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / ("s.jsonl" if agent == "pi" else "proj/s.jsonl")
        path.parent.mkdir(exist_ok=True)
        (_write_pi if agent == "pi" else _write_claude)(path, specs)
        corpus = sl.load(path, cache=False, progress=False, on_bad_lines="raise")
        [row] = corpus.sessions.to_pylist()
        want = _reference(specs, agent)
        assert row["agent"] == agent
        for k, v in want.items():
            assert row[k] == v, k
        [report] = collect(path).sessions
        assert (report.calls, report.leaves, report.forks) == (want["call_count"], want["leaf_count"],
                                                                want["fork_count"])
        [cli] = summarize_corpus(corpus)
        assert (cli["leaves"], cli["fork_points"]) == (want["leaf_count"], want["fork_count"])
        usage = sl.usage_by(corpus, by="session").to_pylist()
        assert sum(r["calls"] for r in usage) == want["call_count"] == int(call_mask(corpus.entries).sum())
        leaves = sl.contexts(corpus, at="leaves")["at_id"].to_pylist()
        assert len(leaves) == want["leaf_count"]


def test_a_cached_reload_equals_a_fresh_load_for_every_agent(tmp_path):
    """Every table, every column, after a first cached load and appends, for each agent's files."""
    src = tmp_path / "src"
    shutil.copytree(DATA, src, ignore=shutil.ignore_patterns("*.py", "*.md", "LICENSE*"))
    cache = tmp_path / "cache"
    assert sl.load(src, cache=cache, progress=False).sessions.num_rows == 16
    pi_file = next((src / "sessions" / "--home-user-api-server--").glob("*.jsonl"))
    _append(pi_file, {"type": "session_info", "name": " \t "}, {"type": "session_info", "name": "  x  "})
    cached = sl.load(src, cache=cache, progress=False)
    fresh = sl.load(src, cache=False, progress=False)
    for name in ("entries", "sessions", "issues"):
        a, b = getattr(cached, name), getattr(fresh, name)
        a = a.drop_columns([c for c in ("loader",) if c in a.column_names])
        b = b.drop_columns([c for c in ("loader",) if c in b.column_names])
        assert a.equals(b), name
    assert "x" in cached.sessions["name"].to_pylist()


# -- properties: every agent's generated sessions against plain loops over the rows ----------------


def _plain_facts(rows: list[dict]) -> dict:
    """Leaves, fork points, current leaf and calls of one file's rows by plain loops (the rules of
    the facts module's doc, written out one row at a time)."""
    nodes = [r for r in rows if r["entry_id"] is not None and r["type"] != "leaf"]
    by_id = {r["entry_id"]: r for r in nodes}  # (the later row of a repeated id, as pi's index)
    side = {r["entry_id"] for r in nodes if r["side_node"]}

    def conv_parent(r):
        p, seen = r["parent_id"], set()
        while p in side and p not in seen:
            seen.add(p)
            p = by_id[p]["parent_id"]
        return None if p in side else p

    conv = [r for r in nodes if not r["side_node"]]
    kids: dict = {}
    for r in conv:
        p = conv_parent(r)
        if p is not None:
            kids[p] = kids.get(p, 0) + 1
    calls = 0
    for r in rows:
        if r["type"] == "message" and r["role"] == "assistant":
            calls += (r["agent"] in (None, "pi")) or r["input_tokens"] is not None
    return {"leaf_count": sum(1 for r in conv if r["entry_id"] not in kids),
            "fork_count": len({r["entry_id"] for r in conv if kids.get(r["entry_id"], 0) >= 2}),
            "leaf_id": conv[-1]["entry_id"] if conv else None, "call_count": calls}


@settings(max_examples=8, deadline=None)
@given(st.integers(0, 10_000))
def test_generated_sessions_of_every_agent_equal_plain_loops(seed):
    from sessionlab.synth import generate_claude_session, generate_codex_session, generate_session

    with tempfile.TemporaryDirectory() as d:
        generate_session(Path(d) / "pi", seed=seed, turns=8, branch_prob=0.3, compaction_window=20_000)
        generate_claude_session(Path(d) / "claude", seed=seed, turns=5)
        codex = generate_codex_session(Path(d) / "codex", seed=seed, turns=4)
        generate_codex_session(Path(d) / "codex", seed=seed + 1, turns=3, fork_of=codex)
        corpus = sl.load(d, cache=False, progress=False)
        agents = set()
        rows_of: dict = {}
        for r in corpus.entries.to_pylist():
            rows_of.setdefault(r["file"], []).append(r)
        for s in corpus.sessions.to_pylist():
            want = _plain_facts(rows_of.get(s["file"], []))
            assert {k: s[k] for k in want} == want, s["file"]
            agents.add(s["agent"])
        assert agents == {"pi", "claude-code", "codex"}
        report = {i.file: i for i in collect(d).sessions}
        usage = {r["file"]: r["calls"] for r in sl.usage_by(corpus, by="file").to_pylist()}
        for s in corpus.sessions.to_pylist():
            assert (report[s["file"]].calls, report[s["file"]].leaves, report[s["file"]].forks) == (
                s["call_count"], s["leaf_count"], s["fork_count"])
            assert usage.get(s["file"], 0) == s["call_count"]


def test_the_tree_and_the_current_branch_follow_the_facts(corpus):
    """session_tree, leaves(), fork_points() and the current branch: the sessions table's leaves,
    fork points and leaf, Claude Code's side nodes included (they were leaves of the tree and its
    current branch ran on to a trailing progress line)."""
    from sessionlab.analysis import current_branch_mask

    on_branch = current_branch_mask(corpus)
    t = corpus.entries
    checked = 0
    for s in corpus.sessions.to_pylist():
        g = sl.session_tree(corpus, session_id=s["session_id"]) if s["agent"] == "pi" else None
        if g is None:  # (Claude Code subagent files share their session's id: pick the file's rows)
            rows = t.filter(pc.equal(t["file"], s["file"]))
            g = sl.session_tree(rows)
        assert g.graph["leaf_id"] == s["leaf_id"], s["file"]
        assert len(sl.leaves(g)) == s["leaf_count"] and len(sl.fork_points(g)) == s["fork_count"], s["file"]
        branch = set(sl.current_branch(g)) if s["leaf_id"] else set()
        mine = pc.equal(t["file"], s["file"]).to_numpy(zero_copy_only=False)
        assert set(t["entry_id"].filter(pa.array(mine & on_branch)).to_pylist()) == branch, s["file"]
        checked += s["agent"] != "pi"
    assert checked >= 9
