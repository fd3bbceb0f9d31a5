"""The insight tables equal plain Python loops (``tests/_insights_ref.py``) on random trees.

Random pi sessions: entries whose parent is the previous entry, any earlier one (branches), none
or a missing id; user and assistant messages (two models, cache reads and writes, some 1-hour
writes), tool results (three tools, some errors), compactions (first kept entry on or off the
path), branch summaries, model and thinking-level changes, system messages, custom messages and
images, pi 1.6's context edits (removing or replacing any entry's content with text; not a user
message with an image, whose replaced image ``estimate_accuracy`` keeps counting as an image);
timestamps with gaps from none to two hours. (No seed retained tails: they go to ``text``.)
Subagent roll-ups are checked on generated Claude Code corpora.
"""

from __future__ import annotations

import datetime as dt
import tempfile
import warnings
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sessionlab import (
    AssistantMessage,
    BranchSummaryEntry,
    CompactionEntry,
    ContextEditEntry,
    CustomMessageEntry,
    ImageContent,
    InMemorySessionStorage,
    MessageEntry,
    ModelChangeEntry,
    NeverCompact,
    PiThresholdPolicy,
    SessionWriter,
    SystemMessage,
    TextContent,
    ThinkingLevelChangeEntry,
    ToolResultMessage,
    Usage,
    UserMessage,
    cache_misses,
    compaction_diff,
    estimate_accuracy,
    new_session_header,
    simulate_compaction,
    subagent_costs,
    tool_stats,
)
from sessionlab.synth import generate_claude_session
from sessionlab.tables import entries_table
from tests import _insights_ref as ref

KINDS = ["user", "assistant", "assistant", "tool", "tool", "compaction", "branch_summary", "model", "thinking",
         "system", "custom", "user_image", "edit"]
spec = st.tuples(
    st.sampled_from(KINDS),
    st.one_of(st.just("prev"), st.just("prev"), st.just("prev"), st.integers(0, 60), st.just("root"),
              st.just("missing")),
    st.text(st.characters(blacklist_categories=("Cs",)), max_size=40),
    st.integers(0, 5000),  # tokens
    st.integers(0, 60),  # pick
    st.sampled_from([0, 5, 90, 200, 400, 4000, 7200]),  # seconds since the previous entry
)
T0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


def build(specs):
    entries, t = [], T0
    for i, (kind, parent, text, tokens, pick, gap) in enumerate(specs):
        t += dt.timedelta(seconds=gap)
        eid = f"e{i:07d}"
        pid = {"prev": f"e{i - 1:07d}" if i else None, "root": None, "missing": "nowhere"}.get(
            parent, f"e{parent % max(i, 1):07d}" if isinstance(parent, int) and i else None)
        base = dict(id=eid, parent_id=pid, timestamp=t.isoformat().replace("+00:00", "Z"))
        other = f"e{pick % max(i, 1):07d}"
        if kind == "user":
            e = MessageEntry(**base, message=UserMessage(content=text, timestamp=1))
        elif kind == "user_image":
            e = MessageEntry(**base, message=UserMessage(content=(TextContent(text=text), ImageContent(data="x")),
                                                          timestamp=1))
        elif kind == "assistant":
            e = MessageEntry(**base, message=AssistantMessage(
                content=(TextContent(text=text),), provider="anthropic", model=f"claude-sonnet-4-{5 + pick % 2}",
                stop_reason=["stop", "toolUse"][pick % 2], timestamp=2,
                usage=Usage(input=tokens % 7, output=3, cache_read=tokens * (pick % 3), cache_write=tokens,
                            cache_write_1h=tokens if pick % 5 == 0 else 0, total_tokens=tokens * 2 + 3)))
        elif kind == "tool":
            e = MessageEntry(**base, message=ToolResultMessage(
                tool_call_id="t", tool_name=["read", "bash", "edit"][pick % 3], content=(TextContent(text=text * 3),),
                is_error=pick % 4 == 0))
        elif kind == "compaction":
            e = CompactionEntry(**base, summary=text or "s", first_kept_entry_id=other, tokens_before=tokens)
        elif kind == "branch_summary":
            e = BranchSummaryEntry(**base, from_id=pid or "root", summary=text)
        elif kind == "model":
            e = ModelChangeEntry(**base, provider="anthropic", model_id=f"claude-opus-4-{5 + pick % 2}")
        elif kind == "thinking":
            e = ThinkingLevelChangeEntry(**base, thinking_level=["low", "high"][pick % 2])
        elif kind == "system":
            e = MessageEntry(**base, message=SystemMessage(content=text, timestamp=pick))
        elif kind == "edit":  # pi 1.6: replace (with text) or remove any entry's content but an image's
            target = "nowhere2" if specs[pick % max(i, 1)][0] == "user_image" else other
            e = ContextEditEntry(**base, target_id=target, replacement=None if pick % 3 == 0 else {"content": text * 2})
        else:
            e = CustomMessageEntry(**base, custom_type="ext", content=text, display=True)
        entries.append(e)
    return entries


def _load(entries, d):
    path = Path(d) / "s.jsonl"
    with SessionWriter(path, header=new_session_header(session_id="p")) as w:
        w.append_many(entries)
    return entries_table(path, on_bad_lines="skip")


def _seconds(rows):
    return [r["timestamp"].timestamp() if r["timestamp"] is not None else None for r in rows]


@settings(max_examples=120, deadline=None, derandomize=True)
@given(st.lists(spec, min_size=1, max_size=40))
def test_insight_tables_equal_python_loops(specs):
    entries = build(specs)
    storage = InMemorySessionStorage(new_session_header(session_id="p"), entries)
    with tempfile.TemporaryDirectory() as d:
        table = _load(entries, d)
    rows = table.to_pylist()
    ts = _seconds(rows)

    diff = compaction_diff(table)
    assert {(r["compaction_id"], r["entry_id"], r["status"]) for r in diff.to_pylist()} == \
        ref.compaction_diff(rows, storage)

    got = cache_misses(table).to_pylist()
    assert [(r["at_id"], r["cause"], r["rewritten_tokens"]) for r in got] == ref.cache_misses(rows, ts)

    for r in estimate_accuracy(table).to_pylist():
        parent = storage.get_entry(r["at_id"]).parent_id
        parent = parent if parent in storage.by_id else None
        want = ref.kinds_at(rows, storage, parent)
        for k in ("tool_output", "images", "system", "summary"):
            assert r[f"{k}_tokens"] == want.get(k, 0), k
        assert r["estimated_tokens"] == sum(want.values())
        assert r["error"] == r["estimated_tokens"] - r["recorded_tokens"]
        assert sum(r[f"{k}_tokens"] for k in ("text", "tool_output", "images", "system", "summary")) \
            == r["estimated_tokens"]

    want = ref.tool_stats(rows, storage, ts)
    stats = {r["tool_name"]: r for r in tool_stats(table).to_pylist()}
    assert set(stats) == set(want)
    for name, w in want.items():
        s = stats[name]
        for c in ("calls", "failures", "retries", "result_tokens", "context_tokens"):
            assert s[c] == w[c], (name, c)
        assert abs(s["total_seconds"] - w.get("total_seconds", 0.0)) < 1e-6
        assert abs(s["cost_usd"] - w["cost_usd"]) < 1e-9
        assert (s["context_share"] is None) == (w["context_share"] is None)
        if w["context_share"] is not None:
            assert abs(s["context_share"] - w["context_share"]) < 1e-9


@settings(max_examples=40, deadline=None)
@given(st.lists(spec, min_size=2, max_size=40), st.integers(10, 500))
def test_simulated_compaction_diff_equals_a_path_walk(specs, trigger):
    entries = build(specs)
    with tempfile.TemporaryDirectory() as d:
        table = _load(entries, d)
    rows = table.to_pylist()
    by_id = {r["entry_id"]: i for i, r in enumerate(rows)}
    policies = [PiThresholdPolicy(trigger * 4, reserve_tokens=trigger * 3, keep_recent_tokens=trigger), NeverCompact()]
    sim = simulate_compaction(table, policies)
    comps = sim.compactions.to_pylist()
    want = set()
    for p in (0, 1):
        mine = sorted((c for c in comps if c["policy_index"] == p), key=lambda c: c["call_index"])
        walk = ref.simulated_diff(rows, [(by_id[c["at_id"]], by_id.get(c["cut_entry_id"])) for c in mine])
        want |= {(f"sim{p}@{a}", e, s) for a, e, s in walk}
    got = compaction_diff(table, simulation=sim)
    assert {(r["compaction_id"], r["entry_id"], r["status"]) for r in got.to_pylist()
            if r["source"] == "simulated"} == want


@settings(max_examples=10, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 6))
def test_subagent_roll_up_equals_a_loop_over_rows(seed, turns):
    with tempfile.TemporaryDirectory() as d:
        generate_claude_session(d, seed=seed, turns=turns)
        generate_claude_session(d, seed=seed + 1, turns=turns, subagent=False)
        table = entries_table(Path(d) / "projects", on_bad_lines="skip")
    rows = table.to_pylist()
    want = ref.subagent_runs(rows)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (the subagent type is not in the tables: one warning)
        runs = {r["run_id"]: r for r in subagent_costs(table, by="run").to_pylist()}
    assert set(runs) == set(want)
    for run_id, w in want.items():
        assert runs[run_id]["session_id"] == w["session_id"]
        assert runs[run_id]["calls"] == w["calls"]
        assert abs(runs[run_id]["cost_usd"] - w["cost_usd"]) < 1e-9
    sessions = {r["session_id"]: r for r in subagent_costs(table).to_pylist()}
    for sid, s in sessions.items():
        mine = [w for w in want.values() if w["session_id"] == sid]
        assert s["runs"] == len(mine)
        assert abs(s["subagent_cost_usd"] - sum(w["cost_usd"] for w in mine)) < 1e-9


# found by a random run of the test above: a context edit that removes the content of the
# compaction in effect, then calls; estimate_accuracy counted its summary, which pi's context drops.
SUMMARY_REMOVED_BY_AN_EDIT = [('user', 'prev', '', 0, 0, 0), ('user', 'prev', '', 0, 0, 0), ('user', 'prev', '', 0, 0, 0), ('compaction', 'prev', '', 0, 0, 0), ('edit', 'prev', '', 0, 51, 0), ('user', 'prev', '', 0, 0, 0), ('user', 'prev', '', 0, 0, 0), ('user', 'prev', '', 0, 0, 0), ('user', 'prev', '', 0, 0, 0), ('user', 'prev', '', 0, 0, 0), ('user', 'prev', '', 0, 0, 0), ('user', 'prev', '', 0, 0, 0), ('user', 'prev', '', 0, 0, 0), ('assistant', 'prev', '', 1, 0, 0)]
# the same compaction's content replaced instead: pi's context keeps the summary
SUMMARY_REPLACED_BY_AN_EDIT = [*SUMMARY_REMOVED_BY_AN_EDIT[:4], ('edit', 'prev', 'new summary text', 0, 7, 0),
                               *SUMMARY_REMOVED_BY_AN_EDIT[5:]]


@pytest.mark.parametrize("specs", [SUMMARY_REMOVED_BY_AN_EDIT, SUMMARY_REPLACED_BY_AN_EDIT], ids=["removed", "replaced"])
def test_an_edit_of_the_compaction_in_effect_changes_its_summary_part(specs):
    test_insight_tables_equal_python_loops.hypothesis.inner_test(specs)
