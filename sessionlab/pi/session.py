"""The seed's ``Session``: append entries, move the leaf, build the LLM context.

Example:
    >>> from sessionlab import Session, InMemorySessionStorage, UserMessage, TextContent
    >>> s = Session(InMemorySessionStorage())
    >>> first = s.append_message(UserMessage(content=(TextContent(text="Hello"),), timestamp=0))
    >>> [m.role for m in s.build_context().messages]
    ['user']
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from typing import Any, Literal

from ..errors import ArgumentValueError, SessionNotFoundError
from ._validate import (
    MESSAGE_TYPES,
    THINKING_LEVELS,
    check_choice,
    check_content,
    check_int,
    check_names,
    check_str,
    check_type,
)
from .context import (
    SessionContext,
    SessionContextBuildOptions,
    build_session_context,
    merge_context_build_options,
)
from .io.reader import OnBadLines
from .model import entries as E
from .model import messages as M
from .rules import DEFAULT_RULES, Rules
from .storage import JsonlSessionStorage, SessionStats, SessionStorage, create_timestamp, require_node

__all__ = ["Session", "open_session"]


class Session:
    """A session over a storage (in memory or a JSONL file).

    A session may be shared by threads: each append and leaf move is one step under a lock (the
    storage's, so sessions over one storage share it).

    Every ``append_*`` creates an entry whose parent is the current leaf, stores it and returns
    its id; the leaf moves to it. ``context_build_options`` apply to every :meth:`build_context`.

    Arguments are checked before anything is stored: a wrong type raises
    :class:`~sessionlab.errors.ArgumentTypeError` (a ``TypeError``), a value that is not allowed
    :class:`~sessionlab.errors.ArgumentValueError` (a ``ValueError``), each naming the argument.
    """

    def __init__(
        self, storage: SessionStorage, context_build_options: SessionContextBuildOptions | None = None
    ) -> None:
        self.storage = check_type(storage, SessionStorage, "storage")  # type: ignore[arg-type]
        self.context_build_options = check_type(
            context_build_options, SessionContextBuildOptions, "context_build_options", optional=True
        ) or SessionContextBuildOptions()
        # (one lock per storage: two sessions over one storage share it)
        self._lock = getattr(self.storage, "lock", None) or threading.RLock()

    # -- appending ---------------------------------------------------------------------------
    def _base(self) -> dict[str, Any]:
        return {"id": self.storage.create_entry_id(), "parent_id": self.storage.get_leaf_id(),
                "timestamp": create_timestamp()}

    def _append(self, cls: type, **fields: Any) -> str:
        """A new entry of ``cls`` after the current leaf, stored: one step under the session's lock,
        so threads sharing this session each append after the other (never two children of one leaf)."""
        with self._lock:
            return self.append_typed_entry(cls(**self._base(), **fields))

    def append_typed_entry(self, entry: E.SessionEntry) -> str:
        """Store a ready-made entry; returns its id.

        The entry needs an id no entry of the session has, and a parent in the session (or none);
        otherwise :class:`~sessionlab.errors.InvalidEntryError` /
        :class:`~sessionlab.errors.EntryNotFoundError`, and nothing is stored.
        """
        with self._lock:
            self.storage.append_entry(entry)
        return entry.id  # type: ignore[return-value]

    def append_message(self, message: M.Message) -> str:
        """Append a user, assistant, tool result or bash execution message."""
        check_type(message, MESSAGE_TYPES, "message")
        return self._append(E.MessageEntry, message=message)

    def append_thinking_level_change(self, thinking_level: str) -> str:
        """Set the thinking level: one of pi's ``off``, ``minimal``, ``low``, ``medium``, ``high``, ``xhigh``,
        ``max`` (pi 1.6)."""
        check_choice(thinking_level, THINKING_LEVELS, "thinking_level")
        return self._append(E.ThinkingLevelChangeEntry, thinking_level=thinking_level)

    def append_model_change(self, provider: str, model_id: str) -> str:
        check_str(provider, "provider", nonempty=True)
        check_str(model_id, "model_id", nonempty=True)
        return self._append(E.ModelChangeEntry, provider=provider, model_id=model_id)

    def append_active_tools_change(self, active_tool_names: list[str] | tuple[str, ...]) -> str:
        """Set the active tools (a list of tool names)."""
        names = check_names(active_tool_names, "active_tool_names")
        return self._append(E.ActiveToolsChangeEntry, active_tool_names=names)

    def append_compaction(
        self,
        summary: str,
        first_kept_entry_id: str | None,
        tokens_before: int,
        details: Any = None,
        from_hook: bool = False,
        usage: M.Usage | None = None,
        retained_tail: list[M.Message] | tuple[M.Message, ...] | None = None,
    ) -> str:
        """Append a compaction: ``summary`` replaces the history before ``first_kept_entry_id``
        (pi), or the compaction carries the kept messages in ``retained_tail`` (seed)."""
        check_str(summary, "summary")
        if first_kept_entry_id is not None:
            require_node(self.storage, first_kept_entry_id, "first_kept_entry_id")
        check_int(tokens_before, "tokens_before", minimum=0)
        check_type(from_hook, bool, "from_hook")
        check_type(usage, M.Usage, "usage", optional=True)
        if retained_tail is not None:
            check_type(retained_tail, (list, tuple), "retained_tail")
            for i, m in enumerate(retained_tail):
                check_type(m, MESSAGE_TYPES, f"retained_tail[{i}]")
        return self._append(E.CompactionEntry, summary=summary, first_kept_entry_id=first_kept_entry_id,
            tokens_before=tokens_before, details=details, from_hook=from_hook, usage=usage,
            retained_tail=tuple(retained_tail) if retained_tail is not None else None,
        )

    def append_custom(self, custom_type: str, data: Any = None) -> str:
        """Extension data; not part of the context unless a projector maps it."""
        check_str(custom_type, "custom_type", nonempty=True)
        return self._append(E.CustomEntry, custom_type=custom_type, data=data)

    def append_custom_message(self, custom_type: str, content: Any, display: bool = True, details: Any = None) -> str:
        """An extension message that enters the context with role ``custom`` (``content``: a string or
        a list of content blocks)."""
        check_str(custom_type, "custom_type", nonempty=True)
        content = check_content(content, "content")
        check_type(display, bool, "display")
        return self._append(E.CustomMessageEntry, custom_type=custom_type, content=content, display=display,
                            details=details)

    def append_label(self, target_id: str, label: str | None) -> str:
        """Set (or with ``None``/``""`` clear) the label of ``target_id``."""
        require_node(self.storage, target_id, "target_id")
        check_str(label, "label", optional=True)
        return self._append(E.LabelEntry, target_id=target_id, label=label or None)

    def append_session_info(self, name: str | None) -> str:
        """Set the session's display name (trimmed, as pi does)."""
        check_str(name, "name", optional=True)
        return self._append(E.SessionInfoEntry, name=name.strip() if name else None)

    # -- navigation --------------------------------------------------------------------------
    def get_entry(self, entry_id: str) -> E.SessionEntry | None:
        return self.storage.get_entry(entry_id)

    def get_leaf_id(self) -> str | None:
        return self.storage.get_leaf_id()

    def move_to(self, entry_id: str | None, summary: Mapping[str, Any] | None = None) -> str | None:
        """Move the leaf to ``entry_id`` (``None``: before the root) and, with ``summary``
        (``{"summary": str, "details"?: ..., "usage"?: Usage, "from_hook"?: bool}``), append a
        branch summary as a child of the target. Returns the summary's id, or ``None``."""
        if entry_id is not None:
            require_node(self.storage, entry_id, "entry_id")
        if summary is not None:
            check_type(summary, Mapping, "summary", optional=True)
            if "summary" not in summary:
                raise ArgumentValueError("summary", "summary needs a 'summary' key (the text), and may have "
                                                    f"'details', 'usage' and 'from_hook'; got keys {sorted(summary)}")
            check_str(summary["summary"], "summary['summary']")
            check_type(summary.get("usage"), M.Usage, "summary['usage']", optional=True)
            check_type(summary.get("from_hook", False), bool, "summary['from_hook']")
        with self._lock:
            return self._move(entry_id, summary)

    def _move(self, entry_id: str | None, summary: Mapping[str, Any] | None) -> str | None:
        self.storage.set_leaf_id(entry_id)
        if summary is None:
            return None
        return self.append_typed_entry(E.BranchSummaryEntry(
            id=self.storage.create_entry_id(), parent_id=entry_id, timestamp=create_timestamp(),
            from_id=entry_id if entry_id is not None else "root", summary=summary["summary"],
            details=summary.get("details"), usage=summary.get("usage"),
            from_hook=summary.get("from_hook", False),
        ))

    def get_branch(self, leaf_id: str | None = None) -> list[E.SessionEntry]:
        """Entries root -> ``leaf_id`` (default: the current leaf)."""
        return self.storage.get_branch(leaf_id)

    # -- context and stats -------------------------------------------------------------------
    def merge_context_build_options(
        self, options: SessionContextBuildOptions | None = None
    ) -> SessionContextBuildOptions:
        """The session's options followed by ``options`` (see :func:`merge_context_build_options`)."""
        return merge_context_build_options(self.context_build_options, options)

    def build_context(
        self, options: SessionContextBuildOptions | None = None, *, leaf_id: str | None = None,
        rules: Rules = DEFAULT_RULES,
    ) -> SessionContext:
        """The context at the current leaf (or ``leaf_id``): what the model would be sent next,
        under the rules of pi release ``rules`` (see :func:`sessionlab.build_session_context`)."""
        check_type(options, SessionContextBuildOptions, "options", optional=True)
        sf = getattr(self.storage, "session_file", None)
        if sf is not None and sf.version == 4:  # pi's v4 harness file: the harness's own rules
            from .v4_context import v4_session_context

            tip = leaf_id if leaf_id is not None else self.storage.get_leaf_id()
            return v4_session_context(sf, tip, options=self.merge_context_build_options(options))
        path = self.storage.get_branch(leaf_id)
        return build_session_context(path, self.merge_context_build_options(options), rules=rules)

    def get_session_stats(self, scope: Literal["tree", "branch"] = "tree") -> SessionStats:
        """Counts and token/cost totals.

        ``scope="tree"`` (default) counts every entry of the session, all branches (what pi's
        footer sums); ``scope="branch"`` counts only the current branch (root to leaf).
        """
        if scope == "tree":
            return self.storage.get_session_stats()
        check_choice(scope, ("tree", "branch"), "scope")
        return SessionStats.of(self.storage.get_branch())

    def get_session_name(self) -> str | None:
        return self.storage.get_session_name()

    def get_label(self, entry_id: str) -> str | None:
        return self.storage.get_label(entry_id)


def open_session(path: str | os.PathLike[str], *, on_bad_lines: OnBadLines = "warn") -> Session:
    """Open an existing session file (pi v1/v2/v3 or seed dialect) as a :class:`Session`.

    Nothing is written until something is appended. A missing file raises
    :class:`~sessionlab.errors.SessionNotFoundError` (a ``FileNotFoundError``); a folder, an
    :class:`~sessionlab.errors.ArgumentValueError`.
    """
    check_type(path, (str, os.PathLike), "path")
    if not os.path.exists(path):
        raise SessionNotFoundError(f"no session file at {os.fspath(path)!r}")
    return Session(JsonlSessionStorage(path, on_bad_lines=on_bad_lines))
