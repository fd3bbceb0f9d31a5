"""The faces on Claude Code and Codex sessions as on pi's: context_messages, BranchExplorer, the report,
and contexts at every call of the real files (what was sent, its estimate, the recorded prompt)."""

from __future__ import annotations

from pathlib import Path

import pyarrow.compute as pc
import pytest

from sessionlab import contexts, load
from sessionlab.analysis import context_messages
from sessionlab.pi.model import messages as M
from sessionlab.pi.tokens import estimate_tokens

ROOT = Path(__file__).parent.parent
DATA = Path(__file__).parent / "data"
CLAUDE_REAL = DATA / "claude" / "real" / "codemie"
CODEX_REAL = DATA / "codex" / "real" / "localpush"
COMPACTED = CLAUDE_REAL / "projects" / "-Users-user-repo" / "624a4a58-b34c-462d-a70d-13421c8125a8.jsonl"


@pytest.fixture(scope="module")
def corpus():
    return load(ROOT / "data", cache=False)


def _agent_sessions(corpus):
    s = corpus.sessions.to_pylist()
    return [r for r in s if r["agent"] in ("claude-code", "codex")]


def test_context_messages_on_every_claude_and_codex_session(corpus):
    sessions = _agent_sessions(corpus)
    assert len(sessions) == 9
    for s in sessions:
        msgs = context_messages(corpus, s["leaf_id"], session_id=s["session_id"])
        row = contexts(corpus, at=[s["leaf_id"]], session_id=s["session_id"]).to_pylist()[0]
        assert len(msgs) == row["message_count"] > 0, s["session_id"]
        if s["agent"] == "claude-code":  # the same blocks as the tables counted: the same estimate
            assert sum(estimate_tokens(m) for m in msgs) == row["estimated_tokens"], s["session_id"]


def test_context_messages_read_the_text_back(corpus):
    s = next(r for r in _agent_sessions(corpus) if r["agent"] == "codex")
    msgs = context_messages(corpus, s["leaf_id"], session_id=s["session_id"])
    assert isinstance(msgs[0], (M.CompactionSummaryMessage, M.SystemMessage, M.UserMessage))
    calls = [b for m in msgs if isinstance(m, M.AssistantMessage) for b in m.content if b.type == "toolCall"]
    results = [m for m in msgs if isinstance(m, M.ToolResultMessage)]
    assert calls and results and {r.tool_call_id for r in results} <= {c.id for c in calls}
    assert all(isinstance(c.arguments, dict) for c in calls)


def test_branch_explorer_opens_every_session(corpus):
    pytest.importorskip("ipywidgets")
    from sessionlab.widgets import BranchExplorer

    ex = BranchExplorer(corpus)
    agents = dict(zip(corpus.sessions["session_id"].to_pylist(), corpus.sessions["agent"].to_pylist()))
    seen = set()
    for label, sid in ex.session.options:
        ex.session.value = sid
        assert ex.messages and "Context at" in ex.summary.value, label
        seen.add(agents[sid])
        if agents[sid] == "codex":
            assert not label.startswith("(no prompt)")
    assert seen == {"pi", "claude-code", "codex"}


def test_report_titles_folders_and_context_lines():
    from sessionlab.report._data import collect

    d = collect([str(ROOT / "data")])
    c = load(ROOT / "data", cache=False)
    names = dict(zip(c.sessions["file"].to_pylist(), c.sessions["name"].to_pylist()))
    agent = dict(zip(c.sessions["file"].to_pylist(), c.sessions["agent"].to_pylist()))
    for s in d.sessions:
        assert s.folder, s.file  # every agent's sessions have their folder
        if agent[s.file] == "codex":
            assert s.title != "(no prompt)" and s.prompt and not s.prompt.startswith("<")
        if agent[s.file] == "claude-code" and names[s.file]:  # Claude Code's own title names it
            assert s.name == names[s.file] and s.title.startswith(names[s.file][:40])
        if agent[s.file] != "pi":  # one point per call, its recorded context: never a drop to 0
            want = contexts(c, at="calls").filter(pc.equal(contexts(c, at="calls")["file"], s.file))
            assert 0 not in s.detail["calls"]
            assert len(s.detail["calls"]) <= want.num_rows


@pytest.mark.parametrize("source", [CLAUDE_REAL, CODEX_REAL])
def test_contexts_at_every_call_of_the_real_files(source):
    """At every call: what the agent sent (members read back), their estimate beside the prompt
    total the provider recorded; subagents (sidechains) are their own sessions."""
    c = load(source, cache=False)
    x = contexts(c, at="calls")
    t = c.entries
    calls = t.filter(pc.is_valid(t["input_tokens"]))
    prompt = {(s, e): i + r + w for s, e, i, r, w in zip(calls["session_id"].to_pylist(), calls["entry_id"].to_pylist(),
                                                                calls["input_tokens"].to_pylist(),
                                                   calls["cache_read_tokens"].to_pylist(),
                                                   calls["cache_write_tokens"].to_pylist())}
    rows = x.to_pylist()
    assert len(rows) == len(prompt)
    assert all(r["prompt_tokens"] == prompt[(r["session_id"], r["at_id"])] and r["estimated_tokens"] > 0 for r in rows)
    for r in rows[:: max(1, len(rows) // 25)]:  # every 25th call: each reads its file
        msgs = context_messages(c, r["context_id"], session_id=r["session_id"])  # what was sent
        assert len(msgs) == r["message_count"] > 0
        assert r["estimated_tokens"] > 0 and r["prompt_tokens"] > r["estimated_tokens"]
    subs = [r for r in rows if "/agent-" in r["session_id"]]
    if source == CLAUDE_REAL:
        assert subs and all("/agent-" in r["file"] or "subagents" in r["file"] for r in subs)


def test_claude_context_starts_again_after_a_compact_boundary():
    c = load(COMPACTED, cache=False)
    x = contexts(c, at="calls").to_pylist()
    after = [r for r in x if r["compaction_id"] is not None]
    before = [r for r in x if r["compaction_id"] is None]
    assert before and after and before[-1]["message_count"] == 140 and after[0]["message_count"] == 2
    msgs = context_messages(c, after[0]["context_id"], session_id=after[0]["session_id"])
    assert isinstance(msgs[0], M.CompactionSummaryMessage) and msgs[0].tokens_before > 0
    assert isinstance(msgs[1], M.UserMessage) and "continued from a previous conversation" in str(msgs[1].content)


def test_codex_context_starts_again_after_a_compacted_line():
    path = next(CODEX_REAL.rglob("rollout-2026-02-23T12-54-34-*.jsonl"))
    c = load(path, cache=False)
    x = contexts(c, at="calls").to_pylist()
    i = next(k for k, r in enumerate(x) if r["compaction_id"] is not None)
    assert (x[i - 1]["message_count"], x[i]["message_count"]) == (505, 1)
    assert (x[i - 1]["prompt_tokens"], x[i]["prompt_tokens"]) == (209_950, 48_297)  # the provider's count fell too
    (m,) = context_messages(c, x[i]["context_id"], session_id=x[i]["session_id"])
    assert isinstance(m, M.CompactionSummaryMessage) and m.tokens_before == 209_950
