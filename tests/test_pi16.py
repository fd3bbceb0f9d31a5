"""pi 1.6: every value of pi 1.6.0's own results (tests/data/pi/expected-1.6), from the object model
and from the vectorised functions, on every sample file; plus the rules option and the new entries."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import numpy as np
import pyarrow.compute as pc
import pytest

from sessionlab import (
    OptionError,
    RulesMismatchError,
    contexts,
    entries_table,
    open_session,
    sessions_table,
    table_rules,
)
from sessionlab.analysis import context_members
from sessionlab.compaction import find_cut_points, prepare_compaction
from sessionlab.pi.context import project_context_entries, projected_context_estimate
from sessionlab.pi.tokens import estimate_context_tokens, estimate_tokens
from tests.conftest import PI_DATA

EXPECTED = sorted((PI_DATA / "expected-1.6").glob("*__*.json"))
VALID = [(p.stem, json.loads(p.read_text(encoding="utf-8"))) for p in EXPECTED]
VALID = [(stem, exp) for stem, exp in VALID if exp["valid"]]
GENERATED_16 = sorted((PI_DATA / "generated-1.6").rglob("*.jsonl"))
_OPEN: dict = {}


def _session(exp: dict):
    if exp["file"] not in _OPEN:
        _OPEN[exp["file"]] = open_session(PI_DATA / exp["file"], on_bad_lines="skip")
    return _OPEN[exp["file"]]


def _reports(exp: dict):
    """(context entry id, report) for every leaf and every call whose parent pi found."""
    s = _session(exp)
    out = [(leaf["leafId"], leaf) for leaf in exp["leaves"]]
    out += [(c["parentId"], c) for c in exp["calls"] if c["parentId"] in s.storage.by_id]
    return out


def _estimate(e) -> dict:
    return {"tokens": e.tokens, "usageTokens": e.usage_tokens, "trailingTokens": e.trailing_tokens,
            "lastUsageIndex": e.last_usage_index}


@pytest.mark.parametrize("stem,exp", VALID, ids=[s for s, _ in VALID])
@pytest.mark.parametrize("native", ["1", "0"])
def test_session_names_are_pi_16s(stem, exp, native, monkeypatch):
    assert _session(exp).get_session_name() == exp["sessionName"]
    monkeypatch.setenv("SESSIONLAB_NATIVE", native)  # the C scanner, then the msgspec path
    assert sessions_table(PI_DATA / exp["file"], on_bad_lines="skip")["name"].to_pylist() == [exp["sessionName"]]


def test_the_data_is_all_there():
    assert len(EXPECTED) == 24 and len(VALID) == 23
    assert len(GENERATED_16) == 8
    assert sum(len(_reports(exp)) for _, exp in VALID) > 2000


@pytest.mark.parametrize("stem,exp", VALID, ids=[s for s, _ in VALID])
def test_object_model_equals_pi_16_at_every_leaf_and_call(stem, exp):
    s = _session(exp)
    for at, rep in _reports(exp):
        ctx = s.build_context(leaf_id=at)
        model = None if ctx.model is None else {"provider": ctx.model.provider, "modelId": ctx.model.model_id}
        assert (len(ctx.messages), [m.role for m in ctx.messages], ctx.thinking_level, model) == (
            rep["messageCount"], rep["roles"], rep["thinkingLevel"], rep["model"]), at
        assert [estimate_tokens(m) for m in ctx.messages] == rep["perMessageEstimatedTokens"], at
        assert _estimate(estimate_context_tokens(ctx.messages)) == rep["contextEstimate"], at
        assert _estimate(projected_context_estimate(s.get_branch(at))) == rep["projectedContextEstimate"], at


def _as_pi(p) -> dict | None:
    if p is None:
        return None
    out = {"firstKeptEntryId": p.first_kept_entry_id, "firstKeptBranchIndex": p.first_kept_branch_index,
           "isSplitTurn": p.is_split_turn, "tokensBefore": p.tokens_before,
           "messagesToSummarizeCount": len(p.messages_to_summarize),
           "messagesToSummarizeRoleCounts": p.role_counts("summarize"),
           "turnPrefixMessagesCount": len(p.turn_prefix_messages),
           "turnPrefixMessagesRoleCounts": p.role_counts("prefix"), "fileLists": p.file_lists}
    if p.previous_summary is not None:
        out["previousSummary"] = p.previous_summary
    return out


@pytest.mark.parametrize("stem,exp", VALID, ids=[s for s, _ in VALID])
def test_prepare_compaction_equals_pi_16_at_every_leaf(stem, exp):
    s = _session(exp)
    keep = exp["settings"]["keepRecentTokens"]
    for leaf in exp["leaves"]:
        branch = s.get_branch(leaf["leafId"])
        assert [e.id for e in branch] == leaf["branchIds"]
        assert _as_pi(prepare_compaction(branch, keep_recent_tokens=keep)) == leaf["prepareCompaction"]


@pytest.mark.parametrize("path", GENERATED_16, ids=[p.stem[:24] for p in GENERATED_16])
def test_the_compactions_pi_16_recorded_are_prepare_compaction_at_their_parent(path):
    """pi's driver compacted with keepRecentTokens 14400 (generated-1.6/README.md)."""
    s = open_session(path)
    comps = [e for e in s.storage.entries if e.type == "compaction"]
    assert comps
    for c in comps:
        p = prepare_compaction(s.get_branch(c.parent_id), keep_recent_tokens=14400)
        if c.first_kept_entry_id == c.id:  # pi found nothing to summarise: the driver kept nothing
            assert p is None
            continue
        assert (p.first_kept_entry_id, p.tokens_before) == (c.first_kept_entry_id, c.tokens_before)


@pytest.fixture(scope="module")
def table():
    return entries_table(PI_DATA, on_bad_lines="skip")


def test_the_default_rules_are_pi_16(table):
    assert table_rules(table) == "pi-1.6"


def test_vectorised_contexts_equal_pi_16(table):
    got = {}
    for at in ("leaves", "calls"):
        for r in contexts(table, at=at).to_pylist():
            got[(r["file"].split("/data/pi/")[-1], r["context_id"])] = r
    checked = 0
    for _, exp in VALID:
        for at, rep in _reports(exp):
            r = got.get((exp["file"], at))
            if r is None:  # a leaf that is a parent of a call's sibling branch, say: not a target here
                continue
            model = None if r["model"] is None else {"provider": r["provider"], "modelId": r["model"]}
            ce, pe = rep["contextEstimate"], rep["projectedContextEstimate"]
            assert (r["message_count"], r["thinking_level"], model) == (
                rep["messageCount"], rep["thinkingLevel"], rep["model"]), (exp["file"], at)
            assert (r["context_tokens"], r["usage_tokens"], r["trailing_tokens"], r["projected_tokens"]) == (
                ce["tokens"], ce["usageTokens"], ce["trailingTokens"], pe["tokens"]), (exp["file"], at)
            checked += 1
    assert checked > 2000


def test_vectorised_cut_points_equal_pi_16_at_every_leaf(table):
    got = {(r["file"].split("/data/pi/")[-1], r["at_id"]): r for r in find_cut_points(table, at="leaves").to_pylist()}
    for _, exp in VALID:
        for leaf in exp["leaves"]:
            r, p = got[(exp["file"], leaf["leafId"])], leaf["prepareCompaction"]
            want = None if p is None else (p["firstKeptEntryId"], p["isSplitTurn"], p["tokensBefore"],
                                           p["messagesToSummarizeCount"], p["turnPrefixMessagesCount"])
            assert (None if r["first_kept_entry_id"] is None else (
                r["first_kept_entry_id"], r["is_split_turn"], r["tokens_before"], r["messages_to_summarize"],
                r["turn_prefix_messages"])) == want


@pytest.mark.parametrize("path", GENERATED_16[:4] + sorted((PI_DATA / "real-newer").glob("*.jsonl")),
                         ids=lambda p: p.stem[:24])
@pytest.mark.parametrize("keep", [0, 700, 5000, 14400])
def test_vectorised_cut_points_equal_the_object_model_at_every_entry(path, keep):
    t = entries_table(path)
    s = open_session(path)
    rows = find_cut_points(t, at="entries", keep_recent_tokens=keep).to_pylist()
    assert len(rows) > 100
    for r in rows:
        p = prepare_compaction(s.get_branch(r["at_id"]), keep_recent_tokens=keep)
        want = None if p is None else (p.first_kept_entry_id, p.is_split_turn, p.tokens_before,
                                       len(p.messages_to_summarize), len(p.turn_prefix_messages))
        got = None if r["first_kept_entry_id"] is None else (
            r["first_kept_entry_id"], r["is_split_turn"], r["tokens_before"], r["messages_to_summarize"],
            r["turn_prefix_messages"])
        assert got == want, r["at_id"]


@pytest.mark.parametrize("path", GENERATED_16, ids=[p.stem[:24] for p in GENERATED_16])
def test_context_members_are_the_projection(path):
    t = entries_table(path)
    s = open_session(path)
    members = defaultdict(list)
    for m in context_members(t, at="entries").to_pylist():
        members[m["at_id"]].append(m["entry_id"])
    edited = 0
    for e in s.storage.entries:
        projected = project_context_entries(s.get_branch(e.id))
        assert members[e.id] == [p.entry.id for p in projected for _ in p.messages], e.id
        edited += any(p.entry.type == "context_edit" for p in projected)
    assert edited > 10  # the exact walk for edited contexts is exercised


def test_context_members_of_edited_contexts_walk_as_the_exact_projection(monkeypatch):
    """Edited contexts take the walk less their removed rows; forcing every one through the exact
    projection instead gives the same table, and the walk does take most of them."""
    from sessionlab.analysis import _edits

    t = entries_table(GENERATED_16)
    walked = context_members(t, at="entries")
    good, removed, _ = _edits.removed_members(*_members_inputs(t))
    assert good.sum() > 50 and removed.size > 10
    monkeypatch.setattr(_edits, "removed_members", lambda prep, base, r: (
        np.zeros(len(base), bool), np.zeros(0, np.int64), np.zeros(len(base), np.int64)))
    assert context_members(t, at="entries").equals(walked)


def _members_inputs(t):
    from sessionlab.analysis.contexts import context_arrays, target_rows

    prep = context_arrays(t, None)
    _, base = target_rows(prep, "entries", None)
    return prep, base, prep.compute(base)


def test_rules_pi_058_keeps_the_058_estimates():
    path = PI_DATA / "generated/sessions"
    new, old = entries_table(path, on_bad_lines="skip"), entries_table(path, rules="pi-0.58", on_bad_lines="skip")
    assert table_rules(old) == "pi-0.58"
    images = pc.fill_null(old["image_count"], 0).to_pylist()
    user = [r == "user" for r in old["role"].to_pylist()]
    diff = [(a or 0) - (b or 0) for a, b in zip(new["est_tokens"].to_pylist(), old["est_tokens"].to_pylist())]
    assert diff == [1200 * k if u else 0 for k, u in zip(images, user)]
    assert sum(diff) == 1200 * 2  # one user image in each of two scenario files
    with pytest.raises(RulesMismatchError, match="pi-0.58"):
        contexts(old, rules="pi-1.6")
    assert contexts(old).num_rows == contexts(old, rules="pi-0.58").num_rows
    with pytest.raises(OptionError, match="pi-1.6"):
        entries_table(path, rules="pi-2", on_bad_lines="skip")


def test_usage_entries_and_compaction_usage_are_spend_counted_once():
    path = GENERATED_16[0]
    t = entries_table(path)
    raw = [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines()]
    spend = []  # (kind, input, cost) straight from the file
    for d in raw:
        if d.get("type") == "message" and d["message"].get("role") == "assistant" and "usage" in d["message"]:
            spend.append(("message", d["message"]["usage"]))
        elif d.get("type") == "usage":
            spend.append((d.get("kind") or "usage", d["usage"]))
        elif d.get("type") in ("compaction", "branch_summary") and "usage" in d:
            spend.append((d["type"], d["usage"]))
    kinds = [k for k in t["usage_kind"].to_pylist() if k is not None]
    assert sorted(kinds) == sorted(k for k, _ in spend)
    assert {"message", "compaction", "branch_summary"} <= set(kinds) and len(set(kinds)) > 3
    assert sum(pc.fill_null(t["input_tokens"], 0).to_pylist()) == sum(u["input"] for _, u in spend)
    s = sessions_table(path).to_pylist()[0]
    assert s["cost_usd"] == pytest.approx(sum(u["cost"]["total"] for _, u in spend))
    assert s["input_tokens"] == sum(u["input"] for _, u in spend)


def test_v4_contexts_equal_the_harness():
    files = sorted((PI_DATA / "v4").rglob("*.context.json"))
    assert len(files) >= 4
    for cj in files:
        exp = json.loads(cj.read_text(encoding="utf-8"))
        t = entries_table(cj.with_name(cj.name.replace(".context.json", ".jsonl")))
        got = {r["at_id"]: r for r in contexts(t, at="entries").to_pylist()}
        members = defaultdict(list)
        for m in context_members(t, at="entries").to_pylist():
            members[m["at_id"]].append(m["entry_id"])
        for b in exp["branches"]:
            assert got[b["tipId"]]["message_count"] == b["messageCount"] == len(members[b["tipId"]])


@pytest.fixture(scope="module")
def synth16(tmp_path_factory) -> Path:
    from sessionlab.synth import generate_session

    return generate_session(tmp_path_factory.mktemp("s16"), seed=3, turns=60, compaction_window=40_000,
                            branch_prob=0.1, thinking_change_prob=0.2)


def test_synth_writes_pi_16_files_that_read_clean_and_round_trip(synth16, tmp_path):
    from collections import Counter

    from sessionlab import read_session, write_session
    from sessionlab.synth import generate_session

    sf = read_session(synth16)
    assert sf.issues == []
    types = Counter(e.type for e in sf.entries)
    assert types["usage"] >= 1 and types["context_edit"] >= 3 and types["compaction"] >= 2
    roles = Counter(e.message.role for e in sf.entries if e.type == "message")
    assert roles["system"] == 1
    comps = [e for e in sf.entries if e.type == "compaction"]
    assert all(c.usage is not None and c.system_message is not None for c in comps)
    write_session(sf, tmp_path / "copy.jsonl")
    assert (tmp_path / "copy.jsonl").read_bytes() == synth16.read_bytes()
    old = read_session(generate_session(tmp_path / "old", seed=3, turns=60, compaction_window=40_000, pi="0.58"))
    assert not {"usage", "context_edit"} & {e.type for e in old.entries}
    assert "system" not in {e.message.role for e in old.entries if e.type == "message"}


def test_vectorised_contexts_equal_the_object_model_on_a_synth_16_session(synth16):
    t = entries_table(synth16)
    s = open_session(synth16)
    rows = contexts(t, at="entries").to_pylist()
    assert any(r["projected_tokens"] != r["context_tokens"] for r in rows)
    for r in rows:
        path = s.get_branch(r["at_id"])
        msgs = s.build_context(leaf_id=r["at_id"]).messages
        est = estimate_context_tokens(msgs)
        assert (r["message_count"], r["context_tokens"], r["usage_tokens"]) == (
            len(msgs), est.tokens, est.usage_tokens), r["at_id"]
        assert r["projected_tokens"] == projected_context_estimate(path).tokens, r["at_id"]
    for r in find_cut_points(t, at="calls", keep_recent_tokens=8000).to_pylist():
        p = prepare_compaction(s.get_branch(r["at_id"]), keep_recent_tokens=8000)
        assert r["first_kept_entry_id"] == (p.first_kept_entry_id if p else None), r["at_id"]
        if p is not None:
            assert (r["tokens_before"], r["messages_to_summarize"]) == (p.tokens_before, len(p.messages_to_summarize))


@pytest.mark.parametrize("dialect", ["pi", "seed"])
def test_system_json_holds_each_system_message_in_pi_spelling(dialect, tmp_path, monkeypatch):
    from sessionlab import CompactionEntry, SessionWriter, new_session_header, read_session
    from sessionlab.pi.io.dialects import message_from_dict
    from tests._edited import FIRST, SECOND, removed_system
    from tests._native_cases import assert_paths_agree

    entries, _ = removed_system(tmp_path / "src.jsonl")
    comp = CompactionEntry(id="c", parent_id=entries[-1].id, timestamp=entries[-1].timestamp, summary="s",
                           first_kept_entry_id=entries[1].id, tokens_before=9, system_message=SECOND)
    path = tmp_path / f"{dialect}.jsonl"
    with SessionWriter(path, header=new_session_header(session_id="x", cwd="/"), dialect=dialect) as w:
        w.append_many([*entries, comp])
    if dialect == "seed":
        assert b'"tools_added"' in path.read_bytes()
    t = assert_paths_agree(path, monkeypatch)["entries"]  # (the C scanner, msgspec and object paths alike)
    values = dict(zip(t["entry_id"].to_pylist(), t["system_json"].to_pylist()))
    assert {k for k, v in values.items() if v is not None} == {"e0000000", "e0000003", "c"}
    decoded = {k: message_from_dict(json.loads(v), "pi") for k, v in values.items() if v is not None}
    assert decoded == {"e0000000": FIRST, "e0000003": SECOND, "c": SECOND}
    assert '"toolsAdded"' in values["e0000003"] and '"tools_added"' not in values["e0000003"]
    assert [e.message for e in read_session(path).entries if e.id in ("e0000000", "e0000003")] == [FIRST, SECOND]


def test_system_json_keeps_a_lone_surrogate(tmp_path):
    # JSON may escape half a UTF-16 pair; pi counts it as one character, and so must the replay
    from sessionlab.pi.io.dialects import message_from_dict

    path = tmp_path / "s.jsonl"
    head = '{"type":"session","version":3,"id":"x","timestamp":"2026-02-01T00:00:00.000Z","cwd":"/"}'
    system = ('{"type":"message","id":"s1","parentId":null,"timestamp":"2026-02-01T00:00:00.000Z",'
              '"message":{"role":"system","content":"half \\udc00 a pair","timestamp":1}}')
    path.write_text(head + "\n" + system + "\n", encoding="utf-8")
    t = entries_table(path)
    (value,) = t["system_json"].to_pylist()
    assert message_from_dict(json.loads(value)).content == "half \udc00 a pair"
    assert t["est_tokens"].to_pylist() == [4]  # (16 characters)
