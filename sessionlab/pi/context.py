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

Under ``rules="pi-1.6"`` (the default) the context is pi 1.6's *projection*
(``buildSessionProjection``): system messages in the kept range before the compaction are dropped;
the compaction gives its ``system_message`` (when it has one) and then its summary; an older
compaction inside the kept range gives nothing; the last ``context_edit`` of each target among the
context entries replaces the content of that target's user, assistant, tool result or custom
messages (a string becomes one text block for assistants and tool results) or, with a ``None``
replacement, removes its messages; a message without content gets an empty one. ``rules="pi-0.58"``
is pi 0.58.3's ``buildSessionContext``.

Example:
    >>> from sessionlab.pi.model import MessageEntry, UserMessage
    >>> ctx = build_session_context([MessageEntry(id="a", message=UserMessage(content="hi"))])
    >>> len(ctx.messages), ctx.thinking_level, ctx.model
    (1, 'off', None)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from .._time import iso_to_ms
from ..errors import ArgumentTypeError
from ._validate import ENTRY_CLASSES, MESSAGE_TYPES, check_entries, check_type
from .model import entries as E
from .model import messages as M
from .model.content import TextContent
from .rules import DEFAULT_RULES, Rules, pi_rules

__all__ = [
    "ModelRef",
    "apply_context_edit",
    "SessionContext",
    "SessionContextBuildOptions",
    "EntryTransform",
    "EntryProjector",
    "build_session_context",
    "build_context_entries",
    "ProjectedEntry",
    "project_context_entries",
    "projected_context_estimate",
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


def _is_system(e: E.SessionEntry) -> bool:
    return isinstance(e, E.MessageEntry) and isinstance(e.message, M.SystemMessage)


def default_context_entry_transform(path_entries: Sequence[E.SessionEntry], *,
                                    rules: Rules = DEFAULT_RULES) -> list[E.SessionEntry]:
    """The entries whose messages form the context: see the module doc (last compaction counts)."""
    r = pi_rules(rules)
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
            # 1.6 keeps an older compaction on the list (it projects nothing) and drops system
            # messages; 0.58 leaves older compactions out
            if found and not (_is_system(e) if r.system_role else isinstance(e, E.CompactionEntry)):
                out.append(e)
    out.extend(path_entries[c_idx + 1:])
    return out


def build_context_entries(
    path_entries: Sequence[E.SessionEntry], options: SessionContextBuildOptions | None = None, *,
    rules: Rules = DEFAULT_RULES,
) -> list[E.SessionEntry]:
    """The default transform, then the option's transforms in order."""
    entries = default_context_entry_transform(path_entries, rules=rules)
    if options is not None and options.entry_transforms:
        for transform in options.entry_transforms:
            entries = _checked(transform(entries), "entry transform", transform, ENTRY_CLASSES, "entries")
    return entries


def _with_content(m: M.Message) -> M.Message:
    """pi 1.6 gives a message without content an empty one (``""`` for a system message)."""
    if isinstance(m, M.SystemMessage) and m.content is None:
        return replace(m, content="")
    if isinstance(m, (M.UserMessage, M.AssistantMessage, M.ToolResultMessage)) and m.content is None:
        return replace(m, content=())
    return m


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
    *,
    rules: Rules = DEFAULT_RULES,
) -> list[M.Message]:
    """The messages one context entry contributes (see the module doc)."""
    if isinstance(entry, E.MessageEntry):
        if entry.message is None:
            return []
        return [_with_content(entry.message) if pi_rules(rules).projection else entry.message]
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
        if entry.system_message is not None and pi_rules(rules).projection:
            msgs.insert(0, entry.system_message)
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


@dataclass(frozen=True, slots=True)
class ProjectedEntry:
    """One context entry and the messages it gives (pi 1.6's projected entry)."""

    entry: E.SessionEntry
    messages: list[M.Message]


_EDITABLE = ("user", "assistant", "toolResult", "custom")


def apply_context_edit(messages: list[M.Message], edit: E.ContextEditEntry) -> list[M.Message]:
    """pi 1.6's ``projectContextEntry``: the edit's replacement content, or nothing."""
    from .io.dialects import block_from_dict

    if edit.replacement is None:
        return []
    raw = edit.replacement.get("content") if isinstance(edit.replacement, dict) else None
    out = []
    for m in messages:
        if m.role not in _EDITABLE:
            out.append(m)
            continue
        content: object
        if isinstance(raw, str):
            content = (TextContent(text=raw),) if m.role in ("assistant", "toolResult") else raw
        elif isinstance(raw, list):
            content = tuple(block_from_dict(b) for b in raw)
        else:
            content = raw
        out.append(replace(m, content=content))  # type: ignore[call-arg]
    return out


def project_context_entries(
    path_entries: Sequence[E.SessionEntry], options: SessionContextBuildOptions | None = None, *,
    rules: Rules = DEFAULT_RULES,
) -> list[ProjectedEntry]:
    """Every context entry with the messages it gives (see the module doc): under ``pi-1.6`` pi's
    ``buildSessionProjection(...).entries``, under ``pi-0.58`` the same list without edits."""
    r = pi_rules(rules)
    entries = build_context_entries(path_entries, options, rules=rules)
    edits: dict[str | None, E.ContextEditEntry] = {}
    if r.projection:
        for e in entries:
            if isinstance(e, E.ContextEditEntry):
                edits[e.target_id] = e
    out = []
    for i, e in enumerate(entries):
        if i and isinstance(e, E.CompactionEntry):  # an older compaction inside the kept range
            out.append(ProjectedEntry(e, []))
            continue
        msgs = session_entry_to_context_messages(e, i, entries, options, rules=rules)
        edit = edits.get(e.id) if e.id is not None else None
        out.append(ProjectedEntry(e, apply_context_edit(msgs, edit) if edit is not None else msgs))
    return out


def build_session_context(
    path_entries: Sequence[E.SessionEntry], options: SessionContextBuildOptions | None = None, *,
    rules: Rules = DEFAULT_RULES,
) -> SessionContext:
    """The context for a root-to-leaf path of entries (a pure function; see the module doc).

    ``path_entries`` may be any iterable of entries; anything else, or ``options`` that are not a
    :class:`SessionContextBuildOptions`, raises :class:`~sessionlab.errors.ArgumentTypeError`.
    """
    path_entries = check_entries(path_entries, "path_entries")
    check_type(options, SessionContextBuildOptions, "options", optional=True)
    state = derive_session_context_state(path_entries)
    messages = [m for p in project_context_entries(path_entries, options, rules=rules) for m in p.messages]
    return SessionContext(messages, state.thinking_level, state.model, state.active_tool_names)


def projected_context_estimate(path_entries: Sequence[E.SessionEntry], *, rules: Rules = DEFAULT_RULES):
    """pi 1.6's ``estimateProjectedContextTokens(buildSessionProjection(path), path)``: the usage of
    the last valid assistant counts only when its entry comes after the latest ``context_edit`` or
    compaction on the path; otherwise every message is estimated (the current system message once).
    Under ``pi-0.58`` it is ``estimateContextTokens`` of the context."""
    from .tokens import estimate_context_tokens, estimate_projected_context_tokens

    projected = project_context_entries(path_entries, rules=rules)
    messages = [m for p in projected for m in p.messages]
    if not pi_rules(rules).projection:
        return estimate_context_tokens(messages, rules=rules)
    est = estimate_context_tokens(messages, rules=rules)
    current = False
    if est.last_usage_index is not None:
        k = est.last_usage_index
        source_id = None
        for p in projected:
            if k < len(p.messages):
                source_id = p.entry.id
                break
            k -= len(p.messages)
        ids = [e.id for e in path_entries]
        at = ids.index(source_id) if source_id in ids else -1
        last_edit = max((i for i, e in enumerate(path_entries)
                         if isinstance(e, (E.ContextEditEntry, E.CompactionEntry))), default=-1)
        current = at > last_edit
    return estimate_projected_context_tokens(messages, current, rules=rules)
