"""Building the LLM context from a path of entries (the seed's ``buildSessionContext``).

For pi files the result equals pi's ``buildSessionContext`` exactly:

- thinking level, model and active tools are derived over the **whole** path (last change wins;
  an assistant message sets the model too);
- only the **last** compaction on the path counts: its summary comes first, then the path entries
  before it from ``first_kept_entry_id`` on (none if that id is not on the path), then every entry
  after it; older compactions contribute nothing;
- with the seed's ``retained_tail`` the compaction carries the kept messages itself: summary, then
  the retained messages, then the entries after the compaction;
- ``message`` entries give their message, ``custom_message`` a :class:`CustomMessage`,
  ``branch_summary`` with a non-empty summary a :class:`BranchSummaryMessage`; ``custom`` entries
  give what a projector for their ``custom_type`` returns (nothing by default); everything else
  (model/thinking/tool changes, labels, session info, leaf records, unknown types) gives nothing.

Example:
    >>> from sessionlab.model import MessageEntry, UserMessage
    >>> ctx = build_session_context([MessageEntry(id="a", message=UserMessage(content="hi"))])
    >>> len(ctx.messages), ctx.thinking_level, ctx.model
    (1, 'off', None)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from ._validate import ENTRY_CLASSES, MESSAGE_TYPES, check_entries, check_type
from .errors import ArgumentTypeError
from .model import entries as E
from .model import messages as M

__all__ = [
    "ModelRef",
    "SessionContext",
    "SessionContextBuildOptions",
    "EntryTransform",
    "EntryProjector",
    "build_session_context",
    "build_context_entries",
    "derive_session_context_state",
    "default_context_entry_transform",
    "session_entry_to_context_messages",
    "merge_context_build_options",
    "iso_to_ms",
]

EntryTransform = Callable[[list[E.SessionEntry]], list[E.SessionEntry]]
EntryProjector = Callable[[E.CustomEntry, int, list[E.SessionEntry]], list[M.Message]]


@dataclass(frozen=True, slots=True)
class ModelRef:
    """The model in effect: ``provider`` and ``model_id``."""

    provider: str | None
    model_id: str | None


@dataclass(frozen=True, slots=True)
class SessionContext:
    """What the model is sent: ``messages`` plus the settings in effect."""

    messages: list[M.Message]
    thinking_level: str = "off"
    model: ModelRef | None = None
    active_tool_names: tuple[str, ...] | None = None


@dataclass(frozen=True, slots=True)
class SessionContextBuildOptions:
    """Hooks for context building.

    ``entry_transforms`` run in order on the entry list after the default compaction transform;
    ``entry_projectors`` map a ``custom_type`` to a function ``(entry, index, entries) -> messages``
    for :class:`CustomEntry` entries.
    """

    entry_transforms: tuple[EntryTransform, ...] | None = None
    entry_projectors: Mapping[str, EntryProjector] | None = field(default=None)


def merge_context_build_options(
    base: SessionContextBuildOptions | None, extra: SessionContextBuildOptions | None
) -> SessionContextBuildOptions:
    """Session-level options combined with call-level ones: transforms of ``base`` then of
    ``extra``; projectors of both, ``extra`` winning for the same ``custom_type``."""
    if base is None:
        return extra or SessionContextBuildOptions()
    if extra is None:
        return base
    transforms = tuple(base.entry_transforms or ()) + tuple(extra.entry_transforms or ())
    projectors = {**(base.entry_projectors or {}), **(extra.entry_projectors or {})}
    return SessionContextBuildOptions(transforms or None, projectors or None)


def iso_to_ms(ts: str | None) -> int | None:
    """JavaScript ``Date.parse`` of an ISO-8601 timestamp, in Unix milliseconds (``None`` if invalid).

    A timestamp without an offset is read as UTC (JavaScript would use local time; pi always
    writes ``Z``).
    """
    if not isinstance(ts, str):
        return None
    try:
        dt = datetime.fromisoformat(ts)
    except ValueError:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return (dt - _EPOCH) // timedelta(milliseconds=1)


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class _State:
    thinking_level: str
    model: ModelRef | None
    active_tool_names: tuple[str, ...] | None


def derive_session_context_state(path_entries: Sequence[E.SessionEntry]) -> _State:
    """Thinking level (default ``"off"``), model and active tools over the whole path."""
    thinking = "off"
    model: ModelRef | None = None
    tools: tuple[str, ...] | None = None
    for e in path_entries:
        if isinstance(e, E.ThinkingLevelChangeEntry):
            thinking = e.thinking_level  # type: ignore[assignment]
        elif isinstance(e, E.ModelChangeEntry):
            model = ModelRef(e.provider, e.model_id)
        elif isinstance(e, E.MessageEntry) and isinstance(e.message, M.AssistantMessage):
            model = ModelRef(e.message.provider, e.message.model)
        elif isinstance(e, E.ActiveToolsChangeEntry):
            tools = tuple(e.active_tool_names)
    return _State(thinking, model, tools)


def default_context_entry_transform(path_entries: Sequence[E.SessionEntry]) -> list[E.SessionEntry]:
    """The entries whose messages form the context: see the module doc (last compaction counts)."""
    c_idx = None
    for i in range(len(path_entries) - 1, -1, -1):
        if isinstance(path_entries[i], E.CompactionEntry):
            c_idx = i
            break
    if c_idx is None:
        return list(path_entries)
    comp = path_entries[c_idx]
    assert isinstance(comp, E.CompactionEntry)
    out: list[E.SessionEntry] = [comp]
    if comp.retained_tail is None and comp.first_kept_entry_id is not None:
        found = False
        for e in path_entries[:c_idx]:
            if e.id == comp.first_kept_entry_id:
                found = True
            if found and not isinstance(e, E.CompactionEntry):  # older compactions give nothing
                out.append(e)
    out.extend(path_entries[c_idx + 1:])
    return out


def build_context_entries(
    path_entries: Sequence[E.SessionEntry], options: SessionContextBuildOptions | None = None
) -> list[E.SessionEntry]:
    """The default transform, then the option's transforms in order."""
    entries = default_context_entry_transform(path_entries)
    if options is not None and options.entry_transforms:
        for transform in options.entry_transforms:
            entries = _checked(transform(entries), "entry transform", transform, ENTRY_CLASSES, "entries")
    return entries


def _checked(out: object, role: str, fn: object, types: tuple[type, ...], what: str) -> list:
    """The list a hook returned, or an error naming the hook when it is not a list of ``types``."""
    name = getattr(fn, "__qualname__", repr(fn))
    if isinstance(out, (str, bytes, dict)) or not isinstance(out, (list, tuple)):
        raise ArgumentTypeError("options", f"the {role} {name} returned {type(out).__name__}; it must return a "
                                           f"list of {what}")
    for i, x in enumerate(out):
        if not isinstance(x, types):
            raise ArgumentTypeError("options", f"the {role} {name} returned a {type(x).__name__} at [{i}]; it "
                                               f"must return a list of {what}")
    return list(out)


def session_entry_to_context_messages(
    entry: E.SessionEntry,
    index: int,
    entries: list[E.SessionEntry],
    options: SessionContextBuildOptions | None = None,
) -> list[M.Message]:
    """The messages one context entry contributes (see the module doc)."""
    if isinstance(entry, E.MessageEntry):
        return [entry.message] if entry.message is not None else []
    if isinstance(entry, E.CustomMessageEntry):
        return [
            M.CustomMessage(
                custom_type=entry.custom_type,
                content=entry.content,
                display=entry.display,
                details=entry.details,
                timestamp=iso_to_ms(entry.timestamp),
            )
        ]
    if isinstance(entry, E.CompactionEntry):
        msgs: list[M.Message] = [
            M.CompactionSummaryMessage(
                summary=entry.summary, tokens_before=entry.tokens_before, timestamp=iso_to_ms(entry.timestamp)
            )
        ]
        if entry.retained_tail is not None:
            msgs.extend(entry.retained_tail)
        return msgs
    if isinstance(entry, E.BranchSummaryEntry):
        if not entry.summary:
            return []
        return [M.BranchSummaryMessage(summary=entry.summary, from_id=entry.from_id,
                                       timestamp=iso_to_ms(entry.timestamp))]
    if isinstance(entry, E.CustomEntry):
        projectors = options.entry_projectors if options is not None else None
        if projectors and entry.custom_type in projectors:
            fn = projectors[entry.custom_type]  # type: ignore[index]
            return _checked(fn(entry, index, entries), "entry projector", fn, MESSAGE_TYPES, "messages")
        return []
    return []


def build_session_context(
    path_entries: Sequence[E.SessionEntry], options: SessionContextBuildOptions | None = None
) -> SessionContext:
    """The context for a root-to-leaf path of entries (a pure function; see the module doc).

    ``path_entries`` may be any iterable of entries; anything else, or ``options`` that are not a
    :class:`SessionContextBuildOptions`, raises :class:`~sessionlab.errors.ArgumentTypeError`.
    """
    path_entries = check_entries(path_entries, "path_entries")
    check_type(options, SessionContextBuildOptions, "options", optional=True)
    state = derive_session_context_state(path_entries)
    entries = build_context_entries(path_entries, options)
    messages: list[M.Message] = []
    for i, e in enumerate(entries):
        messages.extend(session_entry_to_context_messages(e, i, entries, options))
    return SessionContext(messages, state.thinking_level, state.model, state.active_tool_names)
