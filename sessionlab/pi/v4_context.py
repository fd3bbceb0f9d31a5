"""The LLM context at a branch tip of a v4 file, as pi-agent-core's harness builds it.

The harness's ``buildSessionContext`` (``harness/session/context.js``, pi-agent-core 0.99.1):

- the path is root -> tip (``parentId`` links);
- only the latest compaction on the path counts: the context is its summary (a
  ``compactionSummary`` message with the compaction's timestamp), then its ``retainedTail``
  messages, then the messages of the entries after it; entries before it are dropped;
- assistant messages whose ``stopReason`` is ``error``, ``aborted`` or ``deferred`` are dropped,
  inside the ``retainedTail`` too;
- ``custom`` entries give nothing unless a projector maps their ``customType`` (``options``);
- ``branch_summary`` entries give a ``branchSummary`` message only when the summary is non-empty.

Thinking level and model: v4 has no change entries for them (they live in lane values), so the
level is ``"off"`` and the model that of the last assistant message on the path.
"""

from __future__ import annotations

from .context import ModelRef, SessionContext, SessionContextBuildOptions, iso_to_ms
from .io.reader import SessionFile
from .model import entries as E
from .model import messages as M

__all__ = ["v4_path", "v4_session_context", "DROPPED_STOP_REASONS"]

DROPPED_STOP_REASONS = frozenset({"error", "aborted", "deferred"})


def v4_path(session_file: SessionFile, tip_id: str | None) -> list[E.SessionEntry]:
    """The entries root -> ``tip_id`` (empty for ``None``); a missing parent ends the walk.

    Raises:
        EntryNotFoundError: ``tip_id`` is not an entry of the file.
        CycleError: the parent chain loops.
    """
    return session_file.branch(tip_id) if tip_id is not None else []


def _kept(m: M.Message) -> bool:
    return not (isinstance(m, M.AssistantMessage) and m.stop_reason in DROPPED_STOP_REASONS)


def _entry_messages(e: E.SessionEntry, i: int, entries: list[E.SessionEntry],
                    options: SessionContextBuildOptions | None) -> list[M.Message]:
    if isinstance(e, E.MessageEntry):
        return [e.message] if e.message is not None and _kept(e.message) else []
    if isinstance(e, E.CompactionEntry):
        summary = M.CompactionSummaryMessage(summary=e.summary, tokens_before=e.tokens_before,
                                             timestamp=iso_to_ms(e.timestamp))
        return [summary, *(m for m in e.retained_tail or () if _kept(m))]
    if isinstance(e, E.BranchSummaryEntry):
        if not e.summary:
            return []
        return [M.BranchSummaryMessage(summary=e.summary, from_id=e.from_id, timestamp=iso_to_ms(e.timestamp))]
    if isinstance(e, E.CustomEntry):
        projectors = options.entry_projectors if options is not None else None
        if projectors and e.custom_type in projectors:
            # (as the harness: a projector's messages are not filtered)
            return list(projectors[e.custom_type](e, i, entries))  # type: ignore[index]
        return []
    return []  # v4 has no other entry types (unknown ones give nothing)


def v4_session_context(session_file: SessionFile, tip_id: str | None, *,
                       options: SessionContextBuildOptions | None = None) -> SessionContext:
    """The harness's context at ``tip_id`` of a v4 file (see the module doc).

    Args:
        session_file: A file read by :func:`sessionlab.pi.io.read_session` (``version`` 4).
        tip_id: The tip entry, e.g. ``session_file.branch_tips["main"]``; ``None`` gives an empty
            context.
        options: Only ``entry_projectors`` are used (custom entries to messages).

    Example:
        >>> sf = read_session("tests/data/pi/v4/--home-user-proj--/...jsonl")  # doctest: +SKIP
        >>> [m.role for m in v4_session_context(sf, sf.branch_tips["main"]).messages]  # doctest: +SKIP
        ['compactionSummary', 'user', 'assistant', 'user']
    """
    path = v4_path(session_file, tip_id)
    start = 0
    for i in range(len(path) - 1, -1, -1):
        if isinstance(path[i], E.CompactionEntry):
            start = i
            break
    entries = path[start:]
    messages: list[M.Message] = []
    for i, e in enumerate(entries):
        messages.extend(_entry_messages(e, i, entries, options))
    model = None
    for e in reversed(path):
        if isinstance(e, E.MessageEntry) and isinstance(e.message, M.AssistantMessage):
            model = ModelRef(e.message.provider, e.message.model)
            break
    return SessionContext(messages, "off", model, None)
