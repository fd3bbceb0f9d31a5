"""Claude Code and Codex files in the tables: detection, mapping, bad lines, huge lines, dedup."""

from __future__ import annotations

import io
import json
import shutil
import tracemalloc
from pathlib import Path

import pyarrow.compute as pc
import pytest

from sessionlab.agents import detect as detect_agent
from sessionlab.pi.io import formats
from sessionlab.pi.io.formats import iter_lines
from sessionlab.tables import blocks_table, entries_table, find_files, issues_table, sessions_table
from sessionlab.tables._load import default_roots

DATA = Path(__file__).parent / "data"
REAL = DATA / "claude" / "real" / "apanloco-random-session.jsonl"
CLAUDE = DATA / "claude" / "generated"
CODEX = DATA / "codex" / "generated"


def _lines(path):
    return [json.loads(ln) for ln in Path(path).read_text(encoding="utf-8").splitlines() if ln.strip()]


@pytest.mark.parametrize("head,agent", [
    (b'{"type":"session","version":3,"id":"s","timestamp":"t","cwd":"/"}\n', "pi"),
    (b'{"type":"session","version":1,"session_id":"s"}\n', "pi"),
    (b'{"timestamp":"t","type":"session_meta","payload":{"id":"x"}}\n', "codex"),
    (b'{"type":"summary","summary":"s","leafUuid":"u"}\n{"type":"user"', "claude-code"),
    (b'{"parentUuid":null,"type":"user","uuid":"u","sessionId":"s","message":{}}\n', "claude-code"),
    (b'{"type":"file-history-snapshot","messageId":"m","snapshot":{"trackedFileBackups":{"a":"' + b"x" * 200, "claude-code"),
    (b"not json at all\n", "pi"),
    (b"", "pi"),
])
def test_detect_agent(head, agent):
    assert detect_agent(head) == agent


def test_iter_lines_keeps_line_numbers_and_skips_long_lines():
    data = b"a\n\n" + b"x" * 5000 + b"\nlast"
    got = list(iter_lines(io.BytesIO(data), max_line=1000))
    assert [(n, ln) for n, ln, _ in got] == [(1, b"a"), (2, b""), (3, None), (4, b"last")]
    assert got[2][2] == b"x" * 200


def test_real_claude_session_in_the_tables():
    """The real session: every uuid line an entry, the tree from parentUuid, usage equal to a
    plain count of its responses (one per message id, the largest usage)."""
    raw = _lines(REAL)
    t = entries_table(REAL)
    nodes = [d for d in raw if "uuid" in d]
    assert t.num_rows == len(nodes) == 85
    assert t["entry_id"].to_pylist() == [d["uuid"] for d in nodes]
    assert t["parent_id"].to_pylist() == [d["parentUuid"] for d in nodes]
    assert set(t["agent"].to_pylist()) == {"claude-code"}
    kinds = {(d["type"]): (d["type"] in ("user", "assistant")) for d in nodes}
    assert t.filter(pc.equal(t["type"], "message")).num_rows == sum(kinds[d["type"]] for d in nodes)
    assert set(t.filter(t["side_node"])["type"].to_pylist()) == {"progress", "system"}
    best: dict = {}
    for d in raw:
        if d.get("type") == "assistant":
            u = d["message"]["usage"]
            tot = u["input_tokens"] + u["output_tokens"] + u["cache_read_input_tokens"] + u["cache_creation_input_tokens"]
            k = (d["message"]["id"], d["requestId"])
            if k not in best or tot > best[k][0]:
                best[k] = (tot, u)
    for col, key in (("input_tokens", "input_tokens"), ("output_tokens", "output_tokens"),
                     ("cache_read_tokens", "cache_read_input_tokens"),
                     ("cache_write_tokens", "cache_creation_input_tokens")):
        assert pc.sum(t[col]).as_py() == sum(u[key] for _, u in best.values())
    tool_results = t.filter(pc.equal(t["role"], "toolResult"))
    assert tool_results.num_rows > 0 and all(tool_results["tool_name"].to_pylist())
    s = sessions_table(REAL).to_pylist()[0]
    assert s["agent"] == "claude-code" and s["agent_version"] == "2.1.77" and s["cwd"] == "/home/da/akerud/random"
    assert s["leaf_count"] == 1 and s["issue_count"] == 0
    b = blocks_table(REAL)
    calls = b.filter(pc.equal(b["block_type"], "toolCall"))
    assert calls.num_rows == pc.sum(t["tool_call_count"]).as_py() > 0
    assert set(calls["tool_name"].to_pylist()) <= {"Bash", "Read", "Write", "Edit", "Glob", "Grep", "TodoWrite", "Agent",
                                                   "Task", "Skill", "ToolSearch", "WebFetch", "WebSearch"}


def test_generated_claude_tree_subagent_compaction_rewind():
    t = entries_table(CLAUDE)
    s = sessions_table(CLAUDE).to_pylist()
    subs = [r for r in s if r["parent_session_id"]]
    assert len(subs) == 2 and all("/agent-" in r["session_id"] for r in subs)
    comp = t.filter(pc.equal(t["type"], "compaction"))
    assert comp.num_rows == 1
    c = comp.to_pylist()[0]
    raw = {d.get("uuid"): d for p in CLAUDE.rglob("*.jsonl") for d in _lines(p)}
    boundary = raw[c["entry_id"]]
    assert boundary["parentUuid"] is None and c["parent_id"] == boundary["logicalParentUuid"]
    assert c["tokens_before"] == boundary["compactMetadata"]["preTokens"]
    assert c["tokens_after"] == boundary["compactMetadata"]["postTokens"]
    assert sum(r["leaf_count"] for r in s if not r["parent_session_id"]) == 6  # one rewind per session
    # subagent calls count in their spawning session
    root = dict(zip(t["session_id"].to_pylist(), t["root_session_id"].to_pylist()))
    assert {root[r["session_id"]] for r in subs} == {r["parent_session_id"] for r in subs}
    b = blocks_table(CLAUDE)
    task = {(sid, c) for sid, c, n in zip(b["session_id"].to_pylist(), b["tool_call_id"].to_pylist(),
                                          b["tool_name"].to_pylist()) if n == "Task"}
    assert {(r["parent_session_id"], r["parent_tool_call_id"]) for r in subs} == task


def test_codex_rollout_chain_and_usage():
    t = entries_table(CODEX)
    for f in sorted(set(t["file"].to_pylist())):
        sub = t.filter(pc.equal(t["file"], f))
        ids, parents = sub["entry_id"].to_pylist(), sub["parent_id"].to_pylist()
        assert parents == [None] + ids[:-1]  # one linear chain
        assert all(i == f"L{n}" for i, n in zip(ids, sub["line_no"].to_pylist()))
    assert entries_table(CODEX)["entry_id"].equals(t["entry_id"])  # stable across loads
    calls = t.filter(pc.is_valid(t["input_tokens"]))
    assert set(calls["role"].to_pylist()) == {"assistant"} and set(calls["usage_kind"].to_pylist()) == {"message"}
    assert pc.all(pc.less_equal(calls["reasoning_tokens"], calls["output_tokens"])).as_py()
    assert set(calls["model"].to_pylist()) == {"gpt-5.3-codex", "gpt-5.2-codex"}
    comps = t.filter(pc.equal(t["type"], "compaction")).to_pylist()
    assert len(comps) >= 1
    for c in comps:  # estimated as the replacement history that became the context
        line = _lines(c["file"])[c["line_no"] - 1]
        chars = sum(len(x["text"]) for it in line["payload"]["replacement_history"] for x in it["content"])
        assert c["est_tokens"] == -(-chars // 4) and c["tokens_before"] > 0
    s = {r["session_id"]: r for r in sessions_table(CODEX).to_pylist()}
    fork = [r for r in s.values() if r["parent_session_id"]]
    assert len(fork) == 1 and fork[0]["parent_session_id"] in s and fork[0]["agent_version"] == "0.120.0"


def test_bad_lines_become_issues_and_valid_entries_stay(tmp_path):
    lines = REAL.read_text(encoding="utf-8").splitlines()
    bad = lines[:10] + ["{not json", '{"type":"user","uuid":5,"message":"x"}', '{"type":"assistant"}'] + lines[10:]
    p = tmp_path / "projects" / "p" / "s.jsonl"
    p.parent.mkdir(parents=True)
    p.write_text("\n".join(bad) + "\n", encoding="utf-8")
    with pytest.warns(UserWarning, match="invalid_json"):
        t = entries_table(p)
    assert t.num_rows == 85
    iss = issues_table(p).to_pylist()
    assert [(i["line"], i["kind"]) for i in iss] == [(11, "invalid_json"), (12, "bad_field"), (13, "missing_id")]
    cx = _lines(next(CODEX.rglob("*.jsonl")))
    q = tmp_path / "rollout.jsonl"
    q.write_text("\n".join([json.dumps(cx[0]), '{"timestamp":"t","type":"event_msg"}', "[1,2]"]
                           + [json.dumps(d) for d in cx[1:]]) + "\n")
    iss = issues_table(q).to_pylist()
    assert [(i["line"], i["kind"]) for i in iss] == [(2, "missing_payload"), (3, "bad_field")]


def test_a_huge_line_is_streamed_past(tmp_path, monkeypatch):
    """A file-history-snapshot line longer than the limit is skipped without being held; the
    entries around it load. (The limit is lowered here so the file stays small.)"""
    monkeypatch.setattr(formats, "MAX_LINE", 2 << 20)
    lines = REAL.read_text(encoding="utf-8").splitlines()
    snap = json.dumps({"type": "file-history-snapshot", "messageId": "m", "snapshot": {
        "messageId": "m", "trackedFileBackups": {"big.bin": "x" * (20 << 20)}, "timestamp": "t"}})
    other = json.dumps({"type": "user", "uuid": "zz", "message": {"role": "user", "content": "y" * (3 << 20)}})
    p = tmp_path / "s.jsonl"
    p.write_text("\n".join([snap] + lines[:40] + [other] + lines[40:]) + "\n", encoding="utf-8")
    tracemalloc.start()
    try:
        t = entries_table(p, on_bad_lines="skip")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert t.num_rows == 85
    assert peak < 12 << 20  # far below the 20 MB line
    assert [(i["line"], i["kind"]) for i in issues_table(p).to_pylist()] == [(42, "line_too_long")]


def test_unknown_models_are_reported_once_not_priced_at_zero(tmp_path):
    src = (CLAUDE / "projects").rglob("*.jsonl")
    for f in src:
        rel = f.relative_to(CLAUDE)
        out = tmp_path / rel
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(f.read_text().replace("claude-opus-4-6", "claude-nonesuch-9"))
    t = entries_table(tmp_path, on_bad_lines="skip")
    unknown = t.filter(pc.equal(t["model"], "claude-nonesuch-9"))
    counted = unknown.filter(pc.is_valid(unknown["input_tokens"]))
    assert counted.num_rows > 0
    assert set(counted["cost_source"].to_pylist()) == {"unknown"} and counted["cost_usd"].null_count == counted.num_rows
    iss = [i for i in issues_table(tmp_path).to_pylist() if i["kind"] == "unknown_model"]
    assert len(iss) == 1 and "claude-nonesuch-9" in iss[0]["message"]


def test_default_roots_and_agents_filter(tmp_path, monkeypatch):
    pi_home, claude_a, codex_home = tmp_path / "pi", tmp_path / "c1", tmp_path / "cx"
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(pi_home))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", f"{claude_a}, {tmp_path / 'c2' / 'projects'}")
    monkeypatch.setenv("CODEX_HOME", str(codex_home))
    roots = default_roots()
    assert roots["pi"] == [pi_home / "sessions"]
    assert roots["claude-code"] == [claude_a / "projects", tmp_path / "c2" / "projects"]
    assert roots["codex"] == [codex_home / "sessions", codex_home / "archived_sessions"]
    shutil.copytree(DATA / "pi" / "generated" / "sessions", pi_home / "sessions")
    shutil.copytree(CLAUDE / "projects", claude_a / "projects")
    shutil.copytree(CODEX / "sessions", codex_home / "sessions")
    one = next((codex_home / "sessions").rglob("*.jsonl"))
    dup = codex_home / "archived_sessions" / one.relative_to(codex_home / "sessions")
    dup.parent.mkdir(parents=True)
    shutil.copy(one, dup)  # the active copy wins
    files = find_files()
    assert str(dup) not in files
    s = sessions_table(on_bad_lines="skip")
    assert set(s["agent"].to_pylist()) == {"pi", "claude-code", "codex"}
    only = find_files(agents=["codex"])
    assert only and all(str(codex_home) in f for f in only)
    mixed = find_files([str(pi_home), str(claude_a)], agents="claude-code")
    assert mixed and all(str(claude_a) in f for f in mixed)
    with pytest.raises(ValueError, match="agents"):
        find_files(agents=["cursor"])


def test_all_loader_paths_agree_on_a_mixed_corpus(monkeypatch):
    """pi files by the native, msgspec and object paths next to other agents' files: the same tables."""
    srcs = [DATA / "pi" / "generated" / "sessions", CLAUDE, CODEX]
    a = entries_table(srcs, on_bad_lines="skip")
    monkeypatch.setenv("SESSIONLAB_NATIVE", "0")
    b = entries_table(srcs, on_bad_lines="skip", max_workers=1)
    assert a.equals(b)
    assert set(a["agent"].to_pylist()) == {"pi", "claude-code", "codex"}


@pytest.mark.parametrize("source", [REAL, CLAUDE, CODEX])
def test_contexts_at_calls_against_a_parent_walk(source):
    """Each call's context: the messages on the path above the first line of its response (since
    the last compaction, which stands for its summary), counted by walking parent ids; the recorded
    prompt sits beside it."""
    from sessionlab.analysis import contexts

    t = entries_table(source)
    c = {(r["file"], r["at_id"]): r for r in contexts(t, at="calls").to_pylist()}
    rows = t.to_pylist()
    calls = [r for r in rows if r["role"] == "assistant" and r["input_tokens"] is not None]
    assert len(c) == len(calls) > 0
    for f in {r["file"] for r in rows}:
        mine = [r for r in rows if r["file"] == f]
        by_id = {r["entry_id"]: r for r in mine}
        first = {}
        for r in mine:  # (a plain loop: the reference)
            if r["message_id"] is not None:
                first.setdefault(r["message_id"], r)
        for call in (r for r in calls if r["file"] == f):
            start = first.get(call["message_id"], call) if call["message_id"] else call
            count, node = 0, by_id.get(start["parent_id"])
            while node is not None:
                if node["type"] == "compaction":
                    count += 1
                    break
                count += node["type"] == "message"
                node = by_id.get(node["parent_id"])
            got = c[(f, call["entry_id"])]
            assert got["message_count"] == count, (f, call["entry_id"])
            assert got["context_id"] == start["parent_id"]
            assert got["prompt_tokens"] == call["input_tokens"] + call["cache_read_tokens"] + call["cache_write_tokens"]
            assert 0 <= got["estimated_tokens"]


def test_a_branched_claude_session_is_linked_not_double_counted(tmp_path):
    """/branch copies a session's entries into a new file (new sessionId, forkedFrom): the copy is
    linked to its source and the copied responses are not counted twice."""
    src = REAL
    lines = _lines(src)
    sid = lines[2]["sessionId"]
    fork = []
    for d in lines[:60]:
        if "sessionId" in d:
            d = {**d, "sessionId": "f0f0f0f0-0000-4000-8000-000000000000",
                 "forkedFrom": {"sessionId": sid, "messageUuid": d.get("uuid")}}
        fork.append(json.dumps(d))
    folder = tmp_path / "projects" / "p"
    folder.mkdir(parents=True)
    shutil.copy(src, folder / f"{sid}.jsonl")
    (folder / "f0f0f0f0-0000-4000-8000-000000000000.jsonl").write_text("\n".join(fork) + "\n")
    both = sessions_table(tmp_path).to_pylist()
    alone = sessions_table(src).to_pylist()[0]
    linked = [r for r in both if r["parent_session_id"]]
    assert len(linked) == 1 and linked[0]["parent_session_id"] == sid
    for col in ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens"):
        assert sum(r[col] for r in both) == alone[col]


def test_a_codex_subagent_thread_is_linked_and_its_replay_not_counted(tmp_path):
    """A spawned sub-agent thread (source.subagent.thread_spawn) that replays its parent's history:
    linked to the parent thread, grouped under it, the replayed token counts not counted again."""
    files = sorted(CODEX.rglob("*.jsonl"))
    fork = next(p for p in files if '"forked_from_id"' in p.read_text())
    lines = _lines(fork)
    meta = lines[0]["payload"]
    parent_id = meta.pop("forked_from_id")
    meta["source"] = {"subagent": {"thread_spawn": {"parent_thread_id": parent_id, "depth": 1}}}
    for p in files:
        if p != fork:
            shutil.copy(p, tmp_path / p.name)
    (tmp_path / fork.name).write_text("\n".join(json.dumps(d) for d in lines) + "\n")
    spawned = {r["session_id"]: r for r in sessions_table(tmp_path).to_pylist()}
    forked = {r["session_id"]: r for r in sessions_table(CODEX).to_pylist()}
    child = spawned[meta["id"]]
    assert child["parent_session_id"] == parent_id
    for col in ("input_tokens", "output_tokens", "cache_read_tokens"):
        assert child[col] == forked[meta["id"]][col]  # the same calls counted as for the fork
    t = entries_table(tmp_path)
    roots = set(t.filter(pc.equal(t["session_id"], meta["id"]))["root_session_id"].to_pylist())
    assert roots == {parent_id}


def test_load_takes_agents_and_usage_rows_are_counted_once():
    """``agents=`` reaches :func:`sessionlab.load` and its Corpus; every Claude Code / Codex row
    that carries a call's usage is a 'message' spend, so usage_by's calls are those rows exactly."""
    from sessionlab import load, usage_by

    corpus = load([CLAUDE, CODEX, DATA / "pi" / "generated" / "sessions"], agents=["claude-code", "codex"])
    assert corpus.agents == ["claude-code", "codex"]
    assert set(corpus.sessions["agent"].to_pylist()) == {"claude-code", "codex"}
    assert set(corpus.sessions["loader"].to_pylist()) == {"agent"}
    assert corpus.entries.equals(entries_table([CLAUDE, CODEX], agents=["claude-code", "codex"]))
    t = corpus.entries
    has_usage = pc.is_valid(t["input_tokens"])
    assert t.filter(has_usage)["usage_kind"].to_pylist() == ["message"] * pc.sum(has_usage).as_py()
    assert pc.all(pc.is_null(t.filter(pc.invert(has_usage))["usage_kind"])).as_py()
    by = usage_by(corpus, by="agent").to_pylist()
    for row in by:
        mine = t.filter(pc.and_(pc.equal(t["agent"], row["agent"]), has_usage))
        assert row["calls"] == mine.num_rows
        assert row["input_tokens"] == pc.sum(mine["input_tokens"]).as_py()
    pi_only = load([CLAUDE, DATA / "pi" / "generated" / "sessions"], agents="pi", on_bad_lines="skip")
    assert pi_only.agents == ["pi"] and set(pi_only.sessions["agent"].to_pylist()) == {"pi"}
