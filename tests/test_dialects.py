"""dict <-> dataclass conversion in the "pi" (camelCase) and "seed" (snake_case) dialects."""

from __future__ import annotations

import pytest

from sessionlab.pi.io import (
    detect_dialect,
    entry_from_dict,
    entry_to_dict,
    header_from_dict,
    header_to_dict,
    message_from_dict,
    message_to_dict,
)
from sessionlab.pi.io.dialects import block_from_dict, block_to_dict
from sessionlab.pi.model import (
    ActiveToolsChangeEntry,
    AssistantMessage,
    BashExecutionMessage,
    BranchSummaryEntry,
    CompactionEntry,
    Cost,
    CustomEntry,
    CustomMessage,
    CustomMessageEntry,
    ImageContent,
    LabelEntry,
    LeafEntry,
    MessageEntry,
    ModelChangeEntry,
    SessionHeader,
    SessionInfoEntry,
    TextContent,
    ThinkingContent,
    ThinkingLevelChangeEntry,
    ToolCall,
    ToolResultMessage,
    UnknownContent,
    UnknownEntry,
    UnknownMessage,
    Usage,
    UserMessage,
)

T = "2026-01-01T00:00:00.000Z"
USAGE = Usage(input=10, output=2, cache_read=3, cache_write=0, total_tokens=15,
              cost=Cost(input=0.1, output=0.02, cache_read=0.003, cache_write=0, total=0.123))
USAGE_PI = {"input": 10, "output": 2, "cacheRead": 3, "cacheWrite": 0, "totalTokens": 15,
            "cost": {"input": 0.1, "output": 0.02, "cacheRead": 0.003, "cacheWrite": 0, "total": 0.123}}
USAGE_SEED = {"input": 10, "output": 2, "cache_read": 3, "cache_write": 0, "total_tokens": 15,
              "cost": {"input": 0.1, "output": 0.02, "cache_read": 0.003, "cache_write": 0, "total": 0.123}}

# (entry, its pi dict, its seed dict); key order is the order written
ENTRIES = [
    (
        MessageEntry(id="a1", parent_id=None, timestamp=T, message=UserMessage(content="hi", timestamp=1)),
        {"type": "message", "id": "a1", "parentId": None, "timestamp": T,
         "message": {"role": "user", "content": "hi", "timestamp": 1}},
        {"type": "message", "id": "a1", "parent_id": None, "timestamp": T,
         "message": {"role": "user", "content": "hi", "timestamp": 1}},
    ),
    (
        MessageEntry(id="a2", parent_id="a1", timestamp=T, message=AssistantMessage(
            content=(ThinkingContent(thinking="hmm", thinking_signature="sig"), TextContent(text="ok"),
                     ToolCall(id="c1", name="read", arguments={"path": "/a", "n": [1, {"x": None}]})),
            api="anthropic-messages", provider="anthropic", model="m", usage=USAGE, stop_reason="toolUse",
            timestamp=2)),
        {"type": "message", "id": "a2", "parentId": "a1", "timestamp": T, "message": {
            "role": "assistant",
            "content": [{"type": "thinking", "thinking": "hmm", "thinkingSignature": "sig"},
                        {"type": "text", "text": "ok"},
                        {"type": "toolCall", "id": "c1", "name": "read",
                         "arguments": {"path": "/a", "n": [1, {"x": None}]}}],
            "api": "anthropic-messages", "provider": "anthropic", "model": "m", "usage": USAGE_PI,
            "stopReason": "toolUse", "timestamp": 2}},
        {"type": "message", "id": "a2", "parent_id": "a1", "timestamp": T, "message": {
            "role": "assistant",
            "content": [{"type": "thinking", "thinking": "hmm", "thinking_signature": "sig"},
                        {"type": "text", "text": "ok"},
                        {"type": "toolCall", "id": "c1", "name": "read",
                         "arguments": {"path": "/a", "n": [1, {"x": None}]}}],
            "api": "anthropic-messages", "provider": "anthropic", "model": "m", "usage": USAGE_SEED,
            "stop_reason": "toolUse", "timestamp": 2}},
    ),
    (
        MessageEntry(id="a3", parent_id="a2", timestamp=T, message=ToolResultMessage(
            tool_call_id="c1", tool_name="read", content=(TextContent(text="data"),
                                                          ImageContent(data="AAA", mime_type="image/png")),
            details={"diff": "x"}, is_error=False, timestamp=3)),
        {"type": "message", "id": "a3", "parentId": "a2", "timestamp": T, "message": {
            "role": "toolResult", "toolCallId": "c1", "toolName": "read",
            "content": [{"type": "text", "text": "data"}, {"type": "image", "data": "AAA", "mimeType": "image/png"}],
            "details": {"diff": "x"}, "isError": False, "timestamp": 3}},
        {"type": "message", "id": "a3", "parent_id": "a2", "timestamp": T, "message": {
            "role": "toolResult", "tool_call_id": "c1", "tool_name": "read",
            "content": [{"type": "text", "text": "data"}, {"type": "image", "data": "AAA", "mime_type": "image/png"}],
            "details": {"diff": "x"}, "is_error": False, "timestamp": 3}},
    ),
    (
        MessageEntry(id="a4", parent_id="a3", timestamp=T, message=BashExecutionMessage(
            command="ls", output="a\n", exit_code=0, cancelled=False, truncated=False, timestamp=4,
            exclude_from_context=True)),
        {"type": "message", "id": "a4", "parentId": "a3", "timestamp": T, "message": {
            "role": "bashExecution", "command": "ls", "output": "a\n", "exitCode": 0, "cancelled": False,
            "truncated": False, "timestamp": 4, "excludeFromContext": True}},
        {"type": "message", "id": "a4", "parent_id": "a3", "timestamp": T, "message": {
            "role": "bashExecution", "command": "ls", "output": "a\n", "exit_code": 0, "cancelled": False,
            "truncated": False, "timestamp": 4, "exclude_from_context": True}},
    ),
    (
        MessageEntry(id="a5", parent_id="a4", timestamp=T, message=CustomMessage(
            custom_type="todo", content="remember", display=True, timestamp=5)),
        {"type": "message", "id": "a5", "parentId": "a4", "timestamp": T, "message": {
            "role": "custom", "customType": "todo", "content": "remember", "display": True, "timestamp": 5}},
        {"type": "message", "id": "a5", "parent_id": "a4", "timestamp": T, "message": {
            "role": "custom", "custom_type": "todo", "content": "remember", "display": True, "timestamp": 5}},
    ),
    (
        ThinkingLevelChangeEntry(id="b1", parent_id="a1", timestamp=T, thinking_level="high"),
        {"type": "thinking_level_change", "id": "b1", "parentId": "a1", "timestamp": T, "thinkingLevel": "high"},
        {"type": "thinking_level_change", "id": "b1", "parent_id": "a1", "timestamp": T, "thinking_level": "high"},
    ),
    (
        ModelChangeEntry(id="b2", parent_id="b1", timestamp=T, provider="openai", model_id="gpt-5"),
        {"type": "model_change", "id": "b2", "parentId": "b1", "timestamp": T, "provider": "openai",
         "modelId": "gpt-5"},
        {"type": "model_change", "id": "b2", "parent_id": "b1", "timestamp": T, "provider": "openai",
         "model_id": "gpt-5"},
    ),
    (
        ActiveToolsChangeEntry(id="b3", parent_id="b2", timestamp=T, active_tool_names=("read", "bash")),
        {"type": "active_tools_change", "id": "b3", "parentId": "b2", "timestamp": T,
         "activeToolNames": ["read", "bash"]},
        {"type": "active_tools_change", "id": "b3", "parent_id": "b2", "timestamp": T,
         "active_tool_names": ["read", "bash"]},
    ),
    (
        CompactionEntry(id="b4", parent_id="b3", timestamp=T, summary="s", first_kept_entry_id="a3",
                        tokens_before=1234, details={"readFiles": ["/a"]}, from_hook=False,
                        retained_tail=(UserMessage(content="kept", timestamp=9),)),
        {"type": "compaction", "id": "b4", "parentId": "b3", "timestamp": T, "summary": "s",
         "firstKeptEntryId": "a3", "tokensBefore": 1234, "details": {"readFiles": ["/a"]}, "fromHook": False,
         "retainedTail": [{"role": "user", "content": "kept", "timestamp": 9}]},
        {"type": "compaction", "id": "b4", "parent_id": "b3", "timestamp": T, "summary": "s",
         "first_kept_entry_id": "a3", "tokens_before": 1234, "details": {"readFiles": ["/a"]}, "from_hook": False,
         "retained_tail": [{"role": "user", "content": "kept", "timestamp": 9}]},
    ),
    (
        BranchSummaryEntry(id="b5", parent_id="a1", timestamp=T, from_id="a1", summary="left", usage=USAGE),
        {"type": "branch_summary", "id": "b5", "parentId": "a1", "timestamp": T, "fromId": "a1",
         "summary": "left", "usage": USAGE_PI},
        {"type": "branch_summary", "id": "b5", "parent_id": "a1", "timestamp": T, "from_id": "a1",
         "summary": "left", "usage": USAGE_SEED},
    ),
    (
        CustomEntry(id="b6", parent_id="b5", timestamp=T, custom_type="ext", data={"k": [1, 2]}),
        {"type": "custom", "customType": "ext", "data": {"k": [1, 2]}, "id": "b6", "parentId": "b5",
         "timestamp": T},
        {"type": "custom", "custom_type": "ext", "data": {"k": [1, 2]}, "id": "b6", "parent_id": "b5",
         "timestamp": T},
    ),
    (
        CustomMessageEntry(id="b7", parent_id="b6", timestamp=T, custom_type="ext",
                           content=(TextContent(text="shown"),), display=True, details=[1]),
        {"type": "custom_message", "customType": "ext", "content": [{"type": "text", "text": "shown"}],
         "display": True, "details": [1], "id": "b7", "parentId": "b6", "timestamp": T},
        {"type": "custom_message", "custom_type": "ext", "content": [{"type": "text", "text": "shown"}],
         "display": True, "details": [1], "id": "b7", "parent_id": "b6", "timestamp": T},
    ),
    (
        LabelEntry(id="b8", parent_id="b7", timestamp=T, target_id="a1", label="start"),
        {"type": "label", "id": "b8", "parentId": "b7", "timestamp": T, "targetId": "a1", "label": "start"},
        {"type": "label", "id": "b8", "parent_id": "b7", "timestamp": T, "target_id": "a1", "label": "start"},
    ),
    (
        SessionInfoEntry(id="b9", parent_id="b8", timestamp=T, name="Demo"),
        {"type": "session_info", "id": "b9", "parentId": "b8", "timestamp": T, "name": "Demo"},
        {"type": "session_info", "id": "b9", "parent_id": "b8", "timestamp": T, "name": "Demo"},
    ),
    (
        LeafEntry(id="c1", parent_id=None, timestamp=T, target_id="a1"),
        {"type": "leaf", "id": "c1", "parentId": None, "timestamp": T, "targetId": "a1"},
        {"type": "leaf", "id": "c1", "parent_id": None, "timestamp": T, "target_id": "a1"},
    ),
]
IDS = [e.type for e, _, _ in ENTRIES]


@pytest.mark.parametrize(("entry", "pi", "seed"), ENTRIES, ids=IDS)
def test_entry_to_dict(entry, pi, seed):
    out_pi, out_seed = entry_to_dict(entry, "pi"), entry_to_dict(entry, "seed")
    assert out_pi == pi and list(out_pi) == list(pi)  # same keys in the same order
    assert out_seed == seed and list(out_seed) == list(seed)


@pytest.mark.parametrize(("entry", "pi", "seed"), ENTRIES, ids=IDS)
def test_entry_from_dict(entry, pi, seed):
    assert entry_from_dict(pi, "pi") == entry
    assert entry_from_dict(seed, "seed") == entry


@pytest.mark.parametrize(("entry", "pi", "seed"), ENTRIES, ids=IDS)
def test_detect_dialect_on_table(entry, pi, seed):
    assert detect_dialect([pi]) == "pi"
    assert detect_dialect([seed]) == "seed"


@pytest.mark.parametrize(
    ("objects", "expected"),
    [
        ([], "pi"),
        ([{"type": "session", "id": "s", "version": 3}], "pi"),  # tie: pi
        ([{"type": "session", "id": "s", "parent_session": "/p"}], "seed"),
        ([{"type": "session", "id": "s", "parentSession": "/p"}], "pi"),
        ([{"type": "session", "id": "s"}, {"type": "x", "parent_id": None}], "seed"),
        ([{"type": "session", "id": "s"}, {"type": "x", "parentId": None}], "pi"),
        ([{"type": "model_change", "model_id": "m"}, {"type": "model_change", "parentId": "a"}], "pi"),
        ([{"type": "model_change", "model_id": "m", "thinking_level": "x"}, {"modelId": "m"}], "seed"),
        ([{"type": "compaction", "firstKeptEntryIndex": 3}], "pi"),  # v1 pi
    ],
)
def test_detect_dialect(objects, expected):
    assert detect_dialect(objects) == expected


def test_header_both_dialects():
    h = SessionHeader(version=3, id="s1", timestamp=T, cwd="/w", parent_session="/p.jsonl",
                      metadata={"k": 1}, extra={"branchedFrom": "/old"})
    pi = header_to_dict(h, "pi")
    seed = header_to_dict(h, "seed")
    assert list(pi.items()) == [("type", "session"), ("version", 3), ("id", "s1"), ("timestamp", T),
                                ("cwd", "/w"), ("parentSession", "/p.jsonl"), ("metadata", {"k": 1}),
                                ("branchedFrom", "/old")]
    assert list(seed.items()) == [("type", "session"), ("version", 3), ("id", "s1"), ("timestamp", T),
                                  ("cwd", "/w"), ("parent_session", "/p.jsonl"), ("metadata", {"k": 1}),
                                  ("branchedFrom", "/old")]
    assert header_from_dict(pi, "pi") == h
    assert header_from_dict(seed, "seed") == h


def test_unknown_keys_kept_in_extra_and_written_after_known_ones():
    d = {"type": "message", "zz": 1, "id": "a", "parentId": None, "timestamp": T,
         "message": {"role": "assistant", "content": [{"type": "toolCall", "id": "c", "name": "n",
                                                         "arguments": {}, "partialJson": "{"}],
                     "usage": {"input": 1, "output": 2, "weird": 3, "cost": {"total": 0.5, "": 7}}}}
    e = entry_from_dict(d)
    assert e.extra == {"zz": 1}
    assert e.message.content[0].extra == {"partialJson": "{"}
    assert e.message.usage.extra == {"weird": 3}
    assert e.message.usage.cost.extra == {"": 7}  # an empty key is a key like any other
    out = entry_to_dict(e)
    assert out == d
    assert list(out) == ["type", "id", "parentId", "timestamp", "message", "zz"]


def test_known_key_with_null_stays_in_place():
    # pi omits absent keys; a null for a known key is kept in extra and written back where it was
    d = {"type": "message", "id": "a", "parentId": None, "timestamp": None,
         "message": {"role": "toolResult", "toolCallId": "c", "toolName": "n", "content": [], "details": None,
                     "isError": False, "timestamp": 5}}
    e = entry_from_dict(d)
    assert e.timestamp is None and e.extra == {"timestamp": None}
    assert e.message.details is None and e.message.extra == {"details": None}
    out = entry_to_dict(e)
    assert list(out.items()) == list(d.items())
    assert list(out["message"]) == list(d["message"])


@pytest.mark.parametrize(
    ("d", "attr", "extra"),
    [
        ({"type": "message", "id": "a", "parentId": None, "message": "not a dict"}, "message",
         {"message": "not a dict"}),
        ({"type": "active_tools_change", "id": "a", "parentId": None, "activeToolNames": [1, 2]},
         "active_tool_names", {"activeToolNames": [1, 2]}),
        ({"type": "compaction", "id": "a", "parentId": None, "summary": "s", "usage": 5}, "usage", {"usage": 5}),
    ],
)
def test_wrong_typed_known_value_kept_in_extra(d, attr, extra):
    e = entry_from_dict(d)
    assert getattr(e, attr) in (None, ())
    assert e.extra == extra
    assert entry_to_dict(e) == d
    assert list(entry_to_dict(e)) == list(d)


@pytest.mark.parametrize(
    ("d", "role"),
    [({"role": "hookMessage", "content": "x"}, "hookMessage"), ({"content": "x"}, None), ({"role": 5}, None)],
)
def test_unknown_message(d, role):
    m = message_from_dict(d)
    assert m == UnknownMessage(message_role=role, raw=d)
    assert m.role == role
    assert message_to_dict(m) is d


@pytest.mark.parametrize(
    ("b", "block_type"),
    [({"type": "audio", "x": 1}, "audio"), ({"text": "no type"}, None), ("just text", None), (None, None)],
)
def test_unknown_block(b, block_type):
    c = block_from_dict(b)
    assert c == UnknownContent(block_type=block_type, raw=b)
    assert c.type == block_type
    assert block_to_dict(c) == b


def test_user_content_string_or_blocks():
    assert message_from_dict({"role": "user", "content": "s"}).content == "s"
    assert message_from_dict({"role": "user", "content": [{"type": "text", "text": "t"}]}).content == (
        TextContent(text="t"),)


def test_unknown_entry_kept_as_read():
    d = {"type": "mystery", "id": "m1", "parentId": "a1", "timestamp": T, "payload": [1]}
    e = entry_from_dict(d)
    assert e == UnknownEntry(id="m1", parent_id="a1", timestamp=T, entry_type="mystery", raw=d)
    assert e.type == "mystery"
    assert entry_to_dict(e, "pi") is d


def test_unknown_entry_parent_key_follows_the_dialect():
    d = {"type": "mystery", "id": "m1", "parentId": "a1", "timestamp": T, "payload": [1]}
    seed = entry_to_dict(entry_from_dict(d, "pi"), "seed")
    assert list(seed.items()) == [("type", "mystery"), ("id", "m1"), ("parent_id", "a1"), ("timestamp", T),
                                  ("payload", [1])]
    back = entry_from_dict(seed, "seed")
    assert (back.id, back.parent_id, back.entry_type) == ("m1", "a1", "mystery")
    assert entry_to_dict(back, "pi") == d
    assert list(entry_to_dict(back, "pi")) == list(d)


@pytest.mark.parametrize(
    ("d", "expected"),
    [
        ({"type": 5, "id": "x", "parentId": 7}, UnknownEntry(entry_type=None, id="x", parent_id=None,
                                                              raw={"type": 5, "id": "x", "parentId": 7})),
        ({"id": 3}, UnknownEntry(entry_type=None, id=None, raw={"id": 3})),
    ],
)
def test_unknown_entry_odd_values(d, expected):
    assert entry_from_dict(d) == expected
