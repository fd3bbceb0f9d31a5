"""pi's token rules (sessionlab.pi.tokens) against pi's own numbers and a table of hand-counted cases,
and the loaders' fast paths (the C scanner, the msgspec path) against those rules."""

from __future__ import annotations

import math

import pytest

from sessionlab import estimate_context_tokens, estimate_tokens, message_from_dict
from sessionlab.pi.io.dialects import HEAD_LINES
from sessionlab.pi.model.messages import context_token_count
from sessionlab.pi.tokens import (
    CHARS_PER_TOKEN,
    IMAGE_CHARS,
    ROLE_CHARS,
    calculate_context_tokens,
    estimate_chars,
    is_usage_source,
)
from sessionlab.tables import _fast, _native, entries_table
from sessionlab.tables._schema import BLOCK_SCHEMA, ENTRY_SCHEMA
from tests._dict_estimate import estimate_tokens_dict
from tests._native_cases import assert_paths_agree, msg, needs_scan, pi_file
from tests._pi_expected import leaf_cases

LEAVES = leaf_cases()


def _ids(cases):
    return [c[0] for c in cases]


# ---------------------------------------------------------------------------- pi's own outputs


@pytest.mark.parametrize("case", LEAVES, ids=_ids(LEAVES))
def test_per_message_estimates_equal_pi(case):
    _, _, leaf = case
    dicts = leaf["context"]["messages"]
    messages = [message_from_dict(d) for d in dicts]
    want = leaf["compaction"]["perMessageEstimatedTokens"]  # pi 0.58.3's (test_pi16 checks 1.6.0's)
    assert [estimate_tokens(m, rules="pi-0.58") for m in messages] == want
    assert [estimate_tokens_dict(d, rules="pi-0.58") for d in dicts] == want  # the dict form, as loaders use it


@pytest.mark.parametrize("case", LEAVES, ids=_ids(LEAVES))
def test_context_estimate_equals_pi(case):
    _, _, leaf = case
    messages = [message_from_dict(d) for d in leaf["context"]["messages"]]
    want = leaf["compaction"]["contextEstimate"]
    got = estimate_context_tokens(messages, rules="pi-0.58")
    assert (got.tokens, got.usage_tokens, got.trailing_tokens, got.last_usage_index) == (
        want["tokens"], want["usageTokens"], want["trailingTokens"], want["lastUsageIndex"])
    # precomputed per-message estimates give the same result
    assert estimate_context_tokens(messages, [estimate_tokens(m) for m in messages]) == got


# ---------------------------------------------------------------------------- the rules, case by case

TEXT = {"type": "text", "text": "abcdefghij"}  # 10 chars
IMAGE = {"type": "image", "data": "AAAA", "mimeType": "image/png"}

CASES = [
    # (message in pi's dict form, characters pi counts)
    ({"role": "user", "content": "hello world"}, 11),
    ({"role": "user", "content": ""}, 0),
    ({"role": "user", "content": [TEXT, TEXT]}, 20),
    ({"role": "user", "content": [TEXT, IMAGE]}, 10 + IMAGE_CHARS),  # pi 1.6 counts user images (0.58: 10)
    ({"role": "user", "content": "😀é"}, 3),  # JavaScript length: the emoji is two UTF-16 units
    ({"role": "toolResult", "toolCallId": "c", "toolName": "t", "content": [TEXT, IMAGE], "isError": False},
     10 + IMAGE_CHARS),
    ({"role": "custom", "customType": "x", "content": [IMAGE], "display": True}, IMAGE_CHARS),
    ({"role": "custom", "customType": "x", "content": "abc", "display": True}, 3),
    ({"role": "assistant", "content": [TEXT, {"type": "thinking", "thinking": "abcd"}]}, 14),
    ({"role": "assistant", "content": [{"type": "toolCall", "id": "1", "name": "bash",
                                        "arguments": {"command": "ls -la"}}]},
     len("bash") + len('{"command":"ls -la"}')),
    ({"role": "assistant", "content": [{"type": "toolCall", "id": "1", "name": "f", "arguments": {"x": 1.5, "y": [1, None]}}]},
     len("f") + len('{"x":1.5,"y":[1,null]}')),
    ({"role": "assistant", "content": [{"type": "toolCall", "id": "1", "name": "ab", "arguments": None}]}, 2),
    ({"role": "bashExecution", "command": "ls", "output": "a b", "exitCode": 0, "cancelled": False,
      "truncated": False}, 5),
    ({"role": "branchSummary", "summary": "twelve chars", "fromId": "x"}, 12),
    ({"role": "compactionSummary", "summary": "abc", "tokensBefore": 9}, 3),
    ({"role": "somethingNew", "content": "ignored"}, 0),  # an unknown role counts nothing, as in pi
    ({"role": "system", "content": "abc", "sections": {"<a>": "de", "<b>": None},
      "toolsAdded": [{"name": "t"}]}, 3 + 2 + len('[{"name":"t"}]')),  # pi 1.6's system message
]


@pytest.mark.parametrize(("message", "chars"), CASES, ids=[f"{i}-{c[0]['role']}" for i, c in enumerate(CASES)])
def test_characters_and_tokens_per_role(message, chars):
    m = message_from_dict(message)
    assert estimate_chars(m) == chars
    assert estimate_tokens(m) == math.ceil(chars / CHARS_PER_TOKEN)
    assert estimate_tokens_dict(message) == estimate_tokens(m)


def _assistant(usage: dict | None, stop: str = "stop") -> dict:
    d = {"role": "assistant", "content": [TEXT], "stopReason": stop, "provider": "p", "model": "m"}
    if usage is not None:
        d["usage"] = usage
    return d


USAGE = {"input": 100, "output": 20, "cacheRead": 30, "cacheWrite": 5, "totalTokens": 0}


@pytest.mark.parametrize(("usage", "total"), [
    (dict(USAGE, totalTokens=999), 999),  # totalTokens when it is set
    (USAGE, 155),  # else the sum of the four parts
    ({k: v for k, v in USAGE.items() if k != "totalTokens"}, 155),
])
def test_calculate_context_tokens(usage, total):
    m = message_from_dict(_assistant(usage))
    assert calculate_context_tokens(m.usage) == total


@pytest.mark.parametrize(("stop", "usage", "source"), [
    ("stop", USAGE, True), ("toolUse", USAGE, True), ("aborted", USAGE, False), ("error", USAGE, False),
    ("stop", None, False),
])
def test_usage_sources(stop, usage, source):
    assert is_usage_source(message_from_dict(_assistant(usage, stop))) is source


def test_the_058_rules_count_no_user_image_no_system_and_zero_usage():
    user = message_from_dict({"role": "user", "content": [TEXT, IMAGE]})
    assert (estimate_chars(user), estimate_chars(user, rules="pi-0.58")) == (10 + IMAGE_CHARS, 10)
    system = message_from_dict({"role": "system", "content": "abcd"})
    assert (estimate_tokens(system), estimate_tokens(system, rules="pi-0.58")) == (1, 0)
    zero = message_from_dict(_assistant({"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0}))
    assert (is_usage_source(zero), is_usage_source(zero, rules="pi-0.58")) == (False, True)


def test_context_estimate_anchors_on_the_last_valid_usage():
    user = {"role": "user", "content": "x" * 40}  # 10 tokens
    msgs = [message_from_dict(d) for d in (
        user, _assistant(dict(USAGE, totalTokens=500)), user, _assistant(dict(USAGE, totalTokens=900), "aborted"),
        user)]
    est = estimate_context_tokens(msgs)
    # the aborted call's usage is skipped: usage of message 1, then messages 2-4 estimated
    assert est.last_usage_index == 1 and est.usage_tokens == 500
    assert est.trailing_tokens == 10 + estimate_tokens(msgs[3]) + 10
    assert est.tokens == est.usage_tokens + est.trailing_tokens
    only_users = estimate_context_tokens([msgs[0], msgs[2]])
    assert (only_users.tokens, only_users.usage_tokens, only_users.last_usage_index) == (20, 0, None)


# ---------------------------------------------------------------------------- one rule table
# pi's rules are stated once in Python (sessionlab.pi.tokens, Usage.context_tokens, io.dialects); the
# loaders' fast paths apply them without building messages: the C scanner exports its constants,
# per-role table and columns, and both fast paths must give the object model's numbers.


@needs_scan
def test_the_scanner_exports_the_python_rules():
    scan = _native._scan
    assert (scan.IMAGE_CHARS, scan.HEAD_LINES) == (IMAGE_CHARS, HEAD_LINES) == (4800, 21)
    assert scan.CHARS_PER_TOKEN == CHARS_PER_TOKEN == 4
    assert frozenset(scan.ENTRY_TYPES) == _fast.PI_TYPES and len(scan.ENTRY_TYPES) == 11
    assert scan.ROLE_CHARS == {r: "deferred" if r == "system" else " ".join(p) for r, p in ROLE_CHARS.items()}
    entry_names = ["est_tokens" if n == "est_chars" else n for n, _ in scan.ENTRY_COLUMNS]
    # every scanned column is one of the schema's, and the scanner fills what the msgspec path fills
    # (less the columns both leave null: the seed's retained tail, and ._pi16's)
    assert set(entry_names) <= set(ENTRY_SCHEMA.names)
    fast = {"timestamp" if n == "timestamps" else n for n in _fast._COLUMN_ORDER}
    assert fast - set(entry_names) == {"retained_tail_messages", "retained_tail_est_tokens",
                                       "retained_tail_context_tokens", "edit_action", "system_est_tokens",
                                       "system_json"}
    assert set(entry_names) <= fast
    assert {n for n, _ in scan.BLOCK_COLUMNS} == set(BLOCK_SCHEMA.names) - {"session_id"}
    assert _native.scanner_disagreements(scan) == []


def test_a_stale_scanner_is_told_apart():
    """The import-time check names what a scanner built from other sources gets wrong."""
    class Stale:
        CHARS_PER_TOKEN, IMAGE_CHARS, HEAD_LINES = 3, 1200, 21
        ENTRY_TYPES = tuple(_fast.PI_TYPES - {"usage"})
        ROLE_CHARS = {"user": "content"}
        ENTRY_COLUMNS = (("line_no", "int64"), ("entry_id", "string"), ("est_chars", "int64"), ("nope", "int32"))
        BLOCK_COLUMNS = (("chars", "int64"),)

    got = _native.scanner_disagreements(Stale)
    assert [g.split(" ")[0] for g in got] == ["CHARS_PER_TOKEN", "IMAGE_CHARS", "ENTRY_TYPES", "ROLE_CHARS", "column",
                                                 "column"]
    assert "column line_no (int64) is not int32" in got and "column nope (int32) is not None" in got


def _one_message_file(message: dict) -> bytes:
    return pi_file(msg(dict(message, timestamp=1767607200000)))


@pytest.mark.parametrize(("message", "chars"), CASES, ids=[f"{i}-{c[0]['role']}" for i, c in enumerate(CASES)])
def test_every_path_counts_the_per_role_rule_alike(message, chars, tmp_path, monkeypatch):
    """The native scanner, the msgspec path and the object model give estimate_tokens's number
    (system messages: filled after any path from the system messages before them)."""
    f = tmp_path / "s.jsonl"
    f.write_bytes(_one_message_file(message))
    native = assert_paths_agree(f, monkeypatch)
    assert native["entries"]["est_tokens"].to_pylist() == [estimate_tokens(message_from_dict(message))]
    if message["role"] != "system":
        assert native["entries"]["est_tokens"].to_pylist() == [math.ceil(chars / CHARS_PER_TOKEN)]


@pytest.mark.parametrize(("usage", "total"), [
    (dict(USAGE, totalTokens=999), 999), (USAGE, 155), ({k: v for k, v in USAGE.items() if k != "totalTokens"}, 155),
    ({"input": 7}, 7), ({}, 0),
])
def test_every_path_counts_context_tokens_alike(usage, total, tmp_path, monkeypatch):
    """pi's calculateContextTokens: the one Python statement of it, the object model, the msgspec
    path and the C scanner agree."""
    parts = [usage.get(k) for k in ("totalTokens", "input", "output", "cacheRead", "cacheWrite")]
    assert context_token_count(*parts) == total
    f = tmp_path / "s.jsonl"
    f.write_bytes(_one_message_file(_assistant(usage)))
    assert_paths_agree(f, monkeypatch)
    assert entries_table(f)["context_tokens"].to_pylist() == [total]
