"""The entry model: frozen dataclasses, type tags, usage arithmetic, the leaf after loading."""

from __future__ import annotations

import dataclasses
import json

import pytest

from sessionlab.pi.io import parse_session_bytes
from sessionlab.pi.io.reader import SessionFile
from sessionlab.pi.model import (
    ENTRY_TYPES,
    ActiveToolsChangeEntry,
    AssistantMessage,
    BashExecutionMessage,
    BranchSummaryEntry,
    BranchSummaryMessage,
    CompactionEntry,
    CompactionSummaryMessage,
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


@pytest.mark.parametrize(
    ("cls", "tag"),
    [
        (MessageEntry, "message"), (ThinkingLevelChangeEntry, "thinking_level_change"),
        (ModelChangeEntry, "model_change"), (ActiveToolsChangeEntry, "active_tools_change"),
        (CompactionEntry, "compaction"), (BranchSummaryEntry, "branch_summary"), (CustomEntry, "custom"),
        (CustomMessageEntry, "custom_message"), (LabelEntry, "label"), (SessionInfoEntry, "session_info"),
        (LeafEntry, "leaf"), (SessionHeader, "session"),
    ],
)
def test_entry_type_tags(cls, tag):
    assert cls.type == tag
    assert cls().type == tag
    if cls is not SessionHeader:
        assert ENTRY_TYPES[tag] is cls


def test_entry_types_table_is_complete():
    assert set(ENTRY_TYPES) == {"message", "thinking_level_change", "model_change", "active_tools_change",
                                "compaction", "branch_summary", "custom", "custom_message", "label",
                                "session_info", "leaf", "usage", "context_edit"}


@pytest.mark.parametrize(
    ("cls", "role"),
    [
        (UserMessage, "user"), (AssistantMessage, "assistant"), (ToolResultMessage, "toolResult"),
        (BashExecutionMessage, "bashExecution"), (CustomMessage, "custom"),
        (CompactionSummaryMessage, "compactionSummary"), (BranchSummaryMessage, "branchSummary"),
    ],
)
def test_message_roles(cls, role):
    assert cls.role == role and cls().role == role


@pytest.mark.parametrize(
    ("cls", "tag"), [(TextContent, "text"), (ThinkingContent, "thinking"), (ImageContent, "image"),
                     (ToolCall, "toolCall")])
def test_block_types(cls, tag):
    assert cls().type == tag


def test_unknown_objects_report_their_tag():
    assert UnknownEntry(entry_type="x", raw={"type": "x"}).type == "x"
    assert UnknownMessage(message_role="hookMessage", raw={}).role == "hookMessage"
    assert UnknownContent(block_type=None, raw=5).type is None


@pytest.mark.parametrize(
    "obj",
    [MessageEntry(id="a"), SessionHeader(id="s"), UserMessage(content="x"), TextContent(text="t"), Usage(input=1),
     UnknownEntry(entry_type="x")],
)
def test_frozen_with_slots(obj):
    name = dataclasses.fields(obj)[0].name
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(obj, name, "b")
    assert not hasattr(obj, "__dict__")


def test_keyword_only():
    with pytest.raises(TypeError):
        MessageEntry("a")  # type: ignore[misc]


def test_defaults_mean_absent():
    e = MessageEntry()
    assert (e.id, e.parent_id, e.timestamp, e.message, e.extra) == (None, None, None, None, {})
    assert CompactionEntry().summary == "" and CompactionEntry().retained_tail is None
    assert ActiveToolsChangeEntry().active_tool_names == ()


def test_equality_includes_extra():
    assert TextContent(text="a") == TextContent(text="a", extra={})
    assert TextContent(text="a") != TextContent(text="a", extra={"k": 1})


@pytest.mark.parametrize(
    ("usage", "expected"),
    [
        (Usage(input=10, output=5, cache_read=100, cache_write=1, total_tokens=116), 116),
        (Usage(input=10, output=5, cache_read=100, cache_write=1), 116),  # old pi files: no totalTokens
        (Usage(input=10, output=5, total_tokens=0), 15),  # 0 is falsy, as in pi
        (Usage(input=10), 10),  # a missing part counts 0
        (Usage(), 0),
        (Usage(total_tokens=12.0), 12),
    ],
)
def test_usage_context_tokens(usage, expected):
    assert usage.context_tokens() == expected


HEADER = '{"type":"session","version":3,"id":"s"}'


def _msg(eid, parent):
    return json.dumps({"type": "message", "id": eid, "parentId": parent, "message": {"role": "user", "content": "x"}})


@pytest.mark.parametrize(
    ("lines", "leaf"),
    [
        ([HEADER], None),
        ([HEADER, _msg("a", None), _msg("b", "a")], "b"),
        ([HEADER, _msg("a", None), _msg("b", "a"), '{"type":"leaf","parentId":null,"targetId":"a"}'], "a"),
        ([HEADER, _msg("a", None), '{"type":"leaf","parentId":null,"targetId":null}'], None),
        ([HEADER, _msg("a", None), '{"type":"leaf","parentId":null,"targetId":"a"}', _msg("c", "a")], "c"),
        ([HEADER, _msg("a", None), '{"type":"label","id":"l1","parentId":"a","targetId":"a","label":"x"}'], "l1"),
    ],
)
def test_leaf_id_is_the_last_entry_or_the_seed_leaf(lines, leaf):
    sf = parse_session_bytes(("\n".join(lines) + "\n").encode(), on_bad_lines="skip")
    assert sf.leaf_id == leaf


def test_session_file_defaults():
    sf = SessionFile(path=None, header=None, entries=[])
    assert (sf.issues, sf.dialect, sf.version, sf.newline, sf.bom, sf.final_newline) == ([], "pi", 3, "\n",
                                                                                        False, True)
    assert sf.leaf_id is None
