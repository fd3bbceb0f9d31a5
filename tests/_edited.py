"""Two small sessions whose contexts take pi 1.6's rare edit cases (tests build them, no data file):

- ``removed_system``: a system message patched by a second one, a call, then an edit that removes
  the second: the contexts after the edit hold a usage that is no longer current, so their
  projected estimate is the first system message alone replayed, plus the other messages;
- ``edited_tail`` (the seed's dialect): a compaction that carries a retained tail with a call in
  it, then an edit that replaces the tail's content.
"""

from __future__ import annotations

from pathlib import Path

from sessionlab import (
    AssistantMessage,
    CompactionEntry,
    ContextEditEntry,
    MessageEntry,
    SessionWriter,
    SystemMessage,
    TextContent,
    Usage,
    UserMessage,
    new_session_header,
)

_TS = "2026-02-01T00:00:00.000Z"


def _entries(*specs) -> list:
    out, parent = [], None
    for i, make in enumerate(specs):
        eid = f"e{i:07d}"
        out.append(make(id=eid, parent_id=parent, timestamp=_TS))
        parent = eid
    return out


def _msg(message):
    return lambda **base: MessageEntry(**base, message=message)


def _call(total: int):
    return _msg(AssistantMessage(content=(TextContent(text="done " * 20),), provider="p", model="m",
                                 stop_reason="stop", timestamp=2,
                                 usage=Usage(input=total - 10, output=10, cache_read=0, cache_write=0,
                                             total_tokens=total)))


FIRST = SystemMessage(content="You are a coding agent. " * 10, sections={"<rules>": "be brief " * 30},
                      tools_added=[{"name": "read", "description": "read a file " * 5}], timestamp=1)
SECOND = SystemMessage(sections={"<rules>": None, "<env>": "cwd: /home/me " * 40},
                       tools_added=[{"name": "bash", "description": "run a command " * 20}],
                       tools_removed=[{"name": "read"}], timestamp=3)


def removed_system(path: Path) -> tuple[list, str]:
    """Write the ``removed_system`` session to ``path``: (its entries, the edit's id)."""
    entries = _entries(
        _msg(FIRST), _msg(UserMessage(content="hello", timestamp=1)), _call(5_000),
        _msg(SECOND), _msg(UserMessage(content="and now " * 30, timestamp=4)),
        lambda **base: ContextEditEntry(**base, target_id="e0000003", replacement=None),
        _msg(UserMessage(content="go on", timestamp=5)), _call(7_000),
    )
    _write(path, entries, "pi")
    return entries, "e0000005"


def edited_tail(path: Path) -> tuple[list, str]:
    """Write the ``edited_tail`` session to ``path`` (the seed's dialect): (its entries, the edit's id)."""
    tail = (UserMessage(content="kept question " * 20, timestamp=1),
            AssistantMessage(content=(TextContent(text="kept answer " * 20),), provider="p", model="m",
                             stop_reason="stop", timestamp=2,
                             usage=Usage(input=900, output=100, cache_read=0, cache_write=0, total_tokens=1_000)),
            UserMessage(content="kept follow-up " * 30, timestamp=3))
    entries = _entries(
        _msg(UserMessage(content="long ago", timestamp=0)),
        lambda **base: CompactionEntry(**base, summary="what happened", first_kept_entry_id=None,
                                       tokens_before=50_000, retained_tail=tail),
        _msg(UserMessage(content="next", timestamp=4)),
        lambda **base: ContextEditEntry(**base, target_id="e0000001", replacement={"content": "short"}),
        _msg(UserMessage(content="after the edit", timestamp=5)),
    )
    _write(path, entries, "seed")
    return entries, "e0000003"


def _write(path: Path, entries: list, dialect: str) -> None:
    with SessionWriter(path, header=new_session_header(session_id=path.stem, cwd="/home/me"), dialect=dialect) as w:
        w.append_many(entries)


def expected(entries: list) -> dict[str, tuple[int, int, int]]:
    """At every entry, from the object model: (message count, pi's estimateContextTokens, pi 1.6's
    projected estimate)."""
    from sessionlab import InMemorySessionStorage
    from sessionlab.pi.context import build_session_context, projected_context_estimate
    from sessionlab.pi.tokens import estimate_context_tokens

    storage = InMemorySessionStorage(new_session_header(session_id="x"), entries)
    out = {}
    for e in entries:
        path = storage.get_branch(e.id)
        msgs = build_session_context(path).messages
        out[e.id] = (len(msgs), estimate_context_tokens(msgs).tokens, projected_context_estimate(path).tokens)
    return out


def got(contexts_table) -> dict[str, tuple[int, int, int]]:
    """The same values from a ``contexts(..., at="entries")`` table."""
    return {r["at_id"]: (r["message_count"], r["context_tokens"], r["projected_tokens"])
            for r in contexts_table.to_pylist()}
