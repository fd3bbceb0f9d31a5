"""Compacting a session for real (the seed's "Compaction Process", with pi's cut point).

Example:
    >>> from sessionlab import Session, InMemorySessionStorage
    >>> def summarize(messages, previous_summary):  # any callable, e.g. one that calls an LLM
    ...     return f"{len(messages)} messages summarized"
    >>> # compact(session, keep_recent_tokens=20000, summarize=summarize)  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ...errors import SessionError
from ..context import session_entry_to_context_messages
from ..model import entries as E
from ..model import messages as M
from ..rules import DEFAULT_RULES, Rules
from .prepare import prepare_compaction

__all__ = ["compact", "format_file_operations", "SPLIT_TURN_SEPARATOR", "Summarizer"]

Summarizer = Callable[[Sequence[M.Message], "str | None"], str]
SPLIT_TURN_SEPARATOR = "\n\n---\n\n**Turn Context (split turn):**\n\n"


def format_file_operations(read_files: Sequence[str], modified_files: Sequence[str]) -> str:
    """The ``<read-files>`` / ``<modified-files>`` blocks pi appends to a summary ("" if none)."""
    sections = []
    if read_files:
        sections.append("<read-files>\n" + "\n".join(read_files) + "\n</read-files>")
    if modified_files:
        sections.append("<modified-files>\n" + "\n".join(modified_files) + "\n</modified-files>")
    return "\n\n" + "\n\n".join(sections) if sections else ""


def compact(session, *, keep_recent_tokens: int = 20000, summarize: Summarizer, retain_tail: bool = False,
            rules: Rules = DEFAULT_RULES) -> str:
    """Compact the current branch of ``session`` and return the new compaction entry's id.

    Finds pi's cut point (:func:`~sessionlab.pi.compaction.prepare.prepare_compaction`), calls
    ``summarize(messages_to_summarize, previous_summary)``; for a split turn it also calls
    ``summarize(turn_prefix_messages, None)`` and joins the two as pi does; pi's file lists are
    appended to the summary and stored in ``details``. With ``retain_tail=True`` the kept messages
    are also stored in the entry (the seed's ``retained_tail``).

    Raises:
        SessionError: code ``already_compacted`` when the leaf is a compaction, ``nothing_to_compact``
            when the branch is empty or pi finds nothing to cut.
    """
    branch = session.get_branch()
    if not branch:
        raise SessionError("nothing_to_compact", "the branch is empty")
    if isinstance(branch[-1], E.CompactionEntry):
        raise SessionError("already_compacted", "the leaf is already a compaction")
    prep = prepare_compaction(branch, keep_recent_tokens=keep_recent_tokens, rules=rules)
    if prep is None:
        raise SessionError("nothing_to_compact", "nothing to compact on this branch")
    summary = summarize(list(prep.messages_to_summarize), prep.previous_summary)
    if prep.is_split_turn:
        summary += SPLIT_TURN_SEPARATOR + summarize(list(prep.turn_prefix_messages), None)
    files = prep.file_lists
    summary += format_file_operations(files["readFiles"], files["modifiedFiles"])
    tail = None
    if retain_tail:
        kept = list(branch[prep.first_kept_branch_index:])
        tail = []
        for i, e in enumerate(kept):
            if not isinstance(e, E.CompactionEntry):
                tail.extend(session_entry_to_context_messages(e, i, kept))
    return session.append_compaction(
        summary, prep.first_kept_entry_id, prep.tokens_before,
        {"readFiles": files["readFiles"], "modifiedFiles": files["modifiedFiles"]}, False, None, tail,
    )
