"""Real Claude Code (2.0.64-2.1.7) and Codex Desktop (0.104) files, and the shapes they do not show.

One test per defect of the real-file list (issue 23): each fails on the code before its fix.
The fixtures and their licences: tests/data/claude/real/README.md, tests/data/codex/real/README.md,
tests/data/{claude,codex}/shapes/README.md.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pyarrow.compute as pc
import pytest

from sessionlab import contexts, load, usage_by
from sessionlab.agents import detect as detect_agent
from sessionlab.pi.io.formats import HEAD_BYTES
from sessionlab.pricing import price_calls

DATA = Path(__file__).parent / "data"
CLAUDE_REAL = DATA / "claude" / "real" / "codemie"
CODEX_REAL = DATA / "codex" / "real" / "localpush"
SUBAGENT_DIR = CLAUDE_REAL / "projects" / "-Users-User-repo-codemie-ai-codemie-code"
SUBAGENT = "e9fb405b-169f-40eb-9396-7e75076f045d/agent-a485154"
BOOKKEEPING = DATA / "claude" / "shapes" / "bookkeeping"
TOOL_SEARCH = DATA / "codex" / "shapes" / "tool-search"
NO_MODEL = DATA / "codex" / "shapes" / "no-model"
PRETTY = DATA / "codex" / "shapes" / "pretty-printed"


def _strict(source):
    """A load in which any warning fails (the real files must raise none)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return load(source, cache=False)


@pytest.fixture(scope="module")
def claude():
    return _strict(CLAUDE_REAL)


@pytest.fixture(scope="module")
def codex():
    return _strict(CODEX_REAL)


def test_real_files_load_without_issues(claude, codex):
    assert claude.sessions.num_rows == 9 and codex.sessions.num_rows == 6
    assert claude.issues.num_rows == 0 and codex.issues.num_rows == 0
    assert set(claude.sessions["agent_version"].to_pylist()) == {"2.0.64", "2.0.76", "2.1.4", "2.1.7"}
    assert set(codex.sessions["agent_version"].to_pylist()) == {"0.104.0-alpha.1"}


def test_1_a_response_with_parallel_tool_calls_counts_on_the_current_branch(claude):
    """Claude Code 2.1.7 writes one line per tool call of a response; the conversation goes on from
    an early one, and the last (largest usage) is a side branch: the usage lands on the first line."""
    u = usage_by(claude, by=["session_id", "branch"]).to_pylist()
    assert {r["branch"] for r in u} == {"current"}
    sub = [r for r in u if r["session_id"] == SUBAGENT]
    assert [(r["calls"], r["input_tokens"], r["output_tokens"], r["cache_read_tokens"], r["cache_write_tokens"])
            for r in sub] == [(6, 5233, 1845, 91980, 115531)]
    t = claude.entries.filter(pc.equal(claude.entries["session_id"], SUBAGENT))
    calls = t.filter(pc.is_valid(t["input_tokens"]))
    # the response msg_bdrk_…whk3r7oc spans lines 2-6 (output 8, 8, 8, 8, 265): counted once, on line 2,
    # with its largest usage (as ccusage keeps it)
    first = calls.filter(pc.equal(calls["message_id"], "msg_bdrk_01DsAgz3YxLZnomzwhk3r7oc")).to_pylist()
    assert [(r["line_no"], r["output_tokens"], r["cache_write_tokens"]) for r in first] == [(2, 265, 17159)]


def test_2_bookkeeping_lines_of_recent_claude_code_are_no_issue():
    c = _strict(BOOKKEEPING)  # permission-mode, last-prompt, mode, agent-name...: no warning
    assert c.issues.num_rows == 0 and c.entries.num_rows == 2
    # the user's own title (custom-title, /rename) wins over the generated ai-title
    assert c.sessions["name"].to_pylist() == ["checkout tz bug"]


def test_2_a_conversation_line_without_uuid_is_still_reported(tmp_path):
    src = next(BOOKKEEPING.rglob("*.jsonl")).read_text(encoding="utf-8")
    p = tmp_path / "s.jsonl"
    p.write_text(src + '{"type":"assistant","message":{"role":"assistant","content":[]}}\n', encoding="utf-8")
    with pytest.warns(UserWarning, match="missing_id"):
        c = load(p, cache=False)
    assert [(i["line"], i["kind"]) for i in c.issues.to_pylist()] == [(13, "missing_id")]


def test_4_codex_tool_search_call_with_object_arguments():
    c = _strict(TOOL_SEARCH)
    rows = c.entries.to_pylist()
    call = next(r for r in rows if r["entry_id"] == "L6")
    assert call["tool_call_count"] == 1 and call["input_tokens"] == 12040
    result = next(r for r in rows if r["entry_id"] == "L9")
    line = json.loads((next(TOOL_SEARCH.rglob("*.jsonl")).read_text().splitlines())[8])
    tools = json.dumps(line["payload"]["tools"], separators=(",", ":"))
    assert result["role"] == "toolResult" and result["tool_name"] == "tool_search_call"
    assert result["est_tokens"] == -(-(len(tools) - 2) // 4) > 0
    blocks = c.blocks.filter(pc.equal(c.blocks["entry_id"], "L6")).to_pylist()
    args = '{"query":"deploy log","limit":8}'
    assert [(b["block_type"], b["chars"]) for b in blocks] == [("thinking", 0),
                                                         ("toolCall", len("tool_search_call") + len(args))]


@pytest.mark.parametrize("which", ["claude", "codex"])
def test_5_every_call_names_its_model(which, claude, codex):
    c = claude if which == "claude" else codex
    x = contexts(c, at="calls")
    assert x.num_rows == (139 if which == "claude" else 485) == pc.sum(pc.is_valid(c.entries["input_tokens"])).as_py()
    assert x["model"].null_count == 0
    calls = c.entries.filter(pc.is_valid(c.entries["input_tokens"]))
    by_id = dict(zip(calls["entry_id"].to_pylist(), calls["model"].to_pylist()))
    assert x["model"].to_pylist() == [by_id[a] for a in x["at_id"].to_pylist()]


def test_6_a_pretty_printed_codex_rollout_is_read_as_codex():
    src = next(PRETTY.rglob("*.jsonl"))
    assert src.read_bytes().startswith(b"{\n")
    assert detect_agent(src.read_bytes()[:HEAD_BYTES]) == "codex"
    pretty = _strict(src)
    lines = _strict(next(CODEX_REAL.rglob(src.name)))
    assert pretty.sessions["agent"].to_pylist() == ["codex"] and pretty.issues.num_rows == 0
    for col in ("type", "role", "model", "input_tokens", "cache_read_tokens", "output_tokens", "est_tokens",
                "cost_usd"):
        assert pretty.entries[col].to_pylist() == lines.entries[col].to_pylist(), col


def test_7_a_codex_rollout_without_model_is_priced_as_gpt5_flagged():
    c = _strict(NO_MODEL)
    calls = c.entries.filter(pc.is_valid(c.entries["input_tokens"])).to_pylist()
    assert [(r["model"], r["cost_source"]) for r in calls] == [("gpt-5", "fallback")] * 2
    want, unknown = price_calls(["gpt-5"] * 2, [r["input_tokens"] for r in calls], [r["output_tokens"] for r in calls],
                                [r["cache_read_tokens"] for r in calls], [0, 0], [0, 0])
    assert not unknown and [r["cost_usd"] for r in calls] == pytest.approx(want)
    assert sum(want) == pytest.approx(0.0157, abs=1e-4)


def test_7_the_cli_says_which_calls_got_the_fallback_model(capsys):
    from sessionlab.cli import main

    assert main(["usage", "daily", str(NO_MODEL)]) == 0
    assert "2 Codex calls name no model (older rollouts): priced as gpt-5" in capsys.readouterr().out
    assert main(["usage", "daily", str(NO_MODEL), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["fallbackModelCalls"] == 2


def test_8_a_bedrock_model_id_is_priced_as_its_model(claude, tmp_path):
    t = claude.entries
    row = t.filter(pc.equal(t["model"], "converse/jp.anthropic.claude-haiku-4-5-20251001-v1:0")).filter(
        pc.is_valid(t.filter(pc.equal(t["model"], "converse/jp.anthropic.claude-haiku-4-5-20251001-v1:0"))
                    ["input_tokens"])).to_pylist()
    assert len(row) == 1 and row[0]["cost_source"] == "priced"
    want, _ = price_calls(["claude-haiku-4-5-20251001"], [16878], [237], [0], [0], [0])
    assert (row[0]["input_tokens"], row[0]["output_tokens"]) == (16878, 237)
    assert row[0]["cost_usd"] == pytest.approx(want[0]) and want[0] == pytest.approx(0.018063)
    # a model served through a proxy that the price table does not know stays unknown
    src = (next(BOOKKEEPING.rglob("*.jsonl")).read_text(encoding="utf-8")
           .replace("claude-sonnet-4-5-20250929", "qwen3.7-plus"))
    p = tmp_path / "s.jsonl"
    p.write_text(src, encoding="utf-8")
    with pytest.warns(UserWarning, match="unknown_model"):
        c = load(p, cache=False)
    call = c.entries.filter(pc.is_valid(c.entries["input_tokens"])).to_pylist()
    assert [(r["cost_usd"], r["cost_source"]) for r in call] == [(None, "unknown")]


def test_usage_daily_on_claude_code_folders_raises_no_warning(capsys):
    """`sessionlab usage daily` on folders of the lines Claude Code writes: no warning, no issue."""
    from sessionlab.cli import main

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert main(["usage", "daily", str(CLAUDE_REAL), str(BOOKKEEPING), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["unpricedModels"] == [] and len(data["daily"]) == 7
