"""pi's ``prepareCompaction`` on a branch of entries: where pi would cut if it compacted now.

The plain, entry-at-a-time reference; the vectorised ``find_cut_points`` is tested against it.
Rules (pi-semantics §9): the boundary starts after the latest compaction on the branch; walking
back from the newest entry, the estimates of ``message`` entries only are summed until they reach
``keep_recent_tokens``; the cut is the first valid cut point at or after that entry (default: the
first valid cut point), then moved back over non-message entries; it is a split turn when the cut
entry is not a user message and a turn start exists at or before it.

**The model-change quirk** (pi's Q8): when the user message chosen as the cut is preceded by a
``model_change`` (or any non-message entry), the backwards extension moves the cut onto that
entry, which is "not a user message", so pi flags a split turn and puts the whole previous,
complete turn into the turn prefix. This reproduces pi, quirk included.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..context import ProjectedEntry, project_context_entries, projected_context_estimate
from ..model import entries as E
from ..model import messages as M
from ..rules import DEFAULT_RULES, Rules, pi_rules
from ..tokens import estimate_context_tokens, estimate_tokens
from .rules import CUT_POINT_ROLES, compaction_message, is_cut_point, is_turn_start

__all__ = ["CutPoint", "find_cut_point", "CompactionPreparation", "prepare_compaction", "file_lists"]


@dataclass(frozen=True, slots=True)
class CutPoint:
    """Indices into the branch: the first kept entry, the turn start (``-1`` if none), split flag."""

    first_kept_entry_index: int
    turn_start_index: int
    is_split_turn: bool


def find_cut_point(entries: Sequence[E.SessionEntry], start: int, end: int, keep_recent_tokens: int, *,
                   rules: Rules = "pi-0.58") -> CutPoint:
    """pi 0.58's ``findCutPoint`` over ``entries[start:end]`` (estimates by ``rules``)."""
    cut_points = [i for i in range(start, end) if is_cut_point(entries[i])]
    if not cut_points:
        return CutPoint(start, -1, False)
    cut = cut_points[0]
    acc = 0
    for i in range(end - 1, start - 1, -1):
        e = entries[i]
        if not isinstance(e, E.MessageEntry):
            continue
        acc += estimate_tokens(e.message, rules=rules) if e.message is not None else 0
        if acc >= keep_recent_tokens:
            for c in cut_points:
                if c >= i:
                    cut = c
                    break
            break
    while cut > start:
        prev = entries[cut - 1]
        if prev.type in ("compaction", "message"):
            break
        cut -= 1
    cut_entry = entries[cut]
    is_user = isinstance(cut_entry, E.MessageEntry) and isinstance(cut_entry.message, M.UserMessage)
    turn_start = -1
    if not is_user:
        for i in range(cut, start - 1, -1):
            if is_turn_start(entries[i]):
                turn_start = i
                break
    return CutPoint(cut, turn_start, not is_user and turn_start != -1)


def _js_sorted(items: set[str]) -> list[str]:
    return sorted(items, key=lambda s: s.encode("utf-16-be", "surrogatepass"))


def file_lists(messages: Sequence[M.Message], previous: E.CompactionEntry | None = None, *,
               nested_calls: bool = False) -> dict[str, list[str]]:
    """pi's file lists: ``read``/``write``/``edit`` tool calls with a string ``path``, plus the previous
    pi-made compaction's lists; ``modifiedFiles`` = written or edited, ``readFiles`` = read only.
    ``nested_calls`` (pi 1.6) also reads the calls a tool result records in ``nestedCalls.calls``."""
    read: set[str] = set()
    modified: set[str] = set()
    if previous is not None and not previous.from_hook and isinstance(previous.details, dict):
        for key, target in (("readFiles", read), ("modifiedFiles", modified)):
            files = previous.details.get(key)
            if isinstance(files, list):
                target.update(f for f in files if isinstance(f, str))
    from ..model.content import ToolCall

    def add(name: object, args: object) -> None:
        path = args.get("path") if isinstance(args, dict) else None
        if not isinstance(path, str) or not path:
            return
        if name == "read":
            read.add(path)
        elif name in ("write", "edit"):
            modified.add(path)

    for m in messages:
        if nested_calls and isinstance(m, M.ToolResultMessage):
            nested = m.extra.get("nestedCalls")
            calls = nested.get("calls") if isinstance(nested, dict) else None
            for call in calls if isinstance(calls, list) else ():
                if isinstance(call, dict):
                    add(call.get("name"), call.get("arguments"))
        if not isinstance(m, M.AssistantMessage):
            continue
        for b in m.content or ():
            if isinstance(b, ToolCall):
                add(b.name, b.arguments)
    return {"readFiles": _js_sorted(read - modified), "modifiedFiles": _js_sorted(modified)}


@dataclass(frozen=True, slots=True)
class CompactionPreparation:
    """What pi's ``prepareCompaction`` returns (indices are positions on the branch)."""

    first_kept_entry_id: str
    first_kept_branch_index: int
    is_split_turn: bool
    turn_start_index: int
    tokens_before: int
    messages_to_summarize: list[M.Message]
    turn_prefix_messages: list[M.Message]
    previous_summary: str | None
    file_lists: dict[str, list[str]] = field(default_factory=dict)

    def role_counts(self, which: str = "summarize") -> dict[str, int]:
        msgs = self.messages_to_summarize if which == "summarize" else self.turn_prefix_messages
        return dict(Counter(str(m.role) for m in msgs))


def prepare_compaction(
    branch: Sequence[E.SessionEntry], *, keep_recent_tokens: int = 20000, rules: Rules = DEFAULT_RULES
) -> CompactionPreparation | None:
    """pi's ``prepareCompaction(pathEntries, settings)``; ``None`` when there is nothing to do (the
    branch ends with a compaction, or the first kept entry has no id; under ``pi-1.6`` also when
    there is nothing to summarise).

    Under ``pi-1.6`` it works on the projection (:func:`sessionlab.pi.context.project_context_entries`):
    the segment starts after the compaction in effect *in projected order*, so the previous
    compaction's kept range is summarised now; ``tokens_before`` is the projected estimate.
    """
    if branch and isinstance(branch[-1], E.CompactionEntry):
        return None
    if pi_rules(rules).projection:
        return _prepare_projected(branch, keep_recent_tokens, rules)
    prev = -1
    for i in range(len(branch) - 1, -1, -1):
        if isinstance(branch[i], E.CompactionEntry):
            prev = i
            break
    start, end = prev + 1, len(branch)
    usage_msgs = [m for m in (compaction_message(e) for e in branch[max(prev, 0):end]) if m is not None]
    tokens_before = estimate_context_tokens(usage_msgs, rules=rules).tokens
    cut = find_cut_point(branch, start, end, keep_recent_tokens, rules=rules)
    if cut.first_kept_entry_index >= end:
        return None
    first = branch[cut.first_kept_entry_index]
    if not first.id:
        return None
    history_end = cut.turn_start_index if cut.is_split_turn else cut.first_kept_entry_index
    to_summarize = [m for m in (compaction_message(e) for e in branch[start:history_end]) if m is not None]
    prefix: list[M.Message] = []
    if cut.is_split_turn:
        prefix = [m for m in (compaction_message(e) for e in branch[cut.turn_start_index:cut.first_kept_entry_index])
                  if m is not None]
    previous = branch[prev] if prev >= 0 else None
    assert previous is None or isinstance(previous, E.CompactionEntry)
    return CompactionPreparation(
        first_kept_entry_id=first.id,
        first_kept_branch_index=cut.first_kept_entry_index,
        is_split_turn=cut.is_split_turn,
        turn_start_index=cut.turn_start_index,
        tokens_before=tokens_before,
        messages_to_summarize=to_summarize,
        turn_prefix_messages=prefix,
        previous_summary=previous.summary if previous is not None else None,
        file_lists=file_lists(to_summarize + prefix, previous),
    )


# -- pi 1.6: prepareCompaction on the projection ------------------------------------------------

_TURN_START_16 = frozenset({"user", "bashExecution", "custom", "branchSummary", "compactionSummary"})


def _visible(p: ProjectedEntry, rules: Rules) -> bool:
    """Whether the entry gives messages of its own, before any edit."""
    from ..context import session_entry_to_context_messages

    return p.entry.type != "context_edit" and bool(session_entry_to_context_messages(p.entry, 0, [], rules=rules))


def _turn_start(p: ProjectedEntry) -> bool:
    return p.entry.type != "compaction" and any(m.role in _TURN_START_16 for m in p.messages)


def _recovery_suffix(entries: list[ProjectedEntry], cut: int, end: int, rules: Rules) -> bool:
    """pi 1.6's recovery-omission suffix: after the cut, only omitted (edited away) entries and
    invisible metadata, with at least one omitted assistant and no outside replacement."""
    suffix = entries[cut + 1:end]
    omitted = [p for p in suffix if _visible(p, rules) and not p.messages]
    omitted_ids = {p.entry.id for p in omitted}
    if any(isinstance(p.entry, E.ContextEditEntry) and p.entry.replacement is not None
           and p.entry.target_id not in omitted_ids for p in suffix):
        return False
    if not any(isinstance(p.entry, E.MessageEntry) and p.entry.message is not None
               and p.entry.message.role == "assistant" for p in omitted):
        return False
    return all(p.entry.type != "compaction" and (not _visible(p, rules) or not p.messages) for p in suffix)


def find_projected_cut_point(entries: list[ProjectedEntry], start: int, end: int, keep_recent_tokens: int, *,
                             rules: Rules = DEFAULT_RULES) -> CutPoint:
    """pi 1.6's ``findProjectedCutPoint`` over projected entries ``[start, end)``."""
    cut_points = [i for i in range(start, end) if entries[i].entry.type != "compaction"
                  and any(m.role in CUT_POINT_ROLES for m in entries[i].messages)]
    if not cut_points:
        return CutPoint(start, -1, False)
    cut, exceeded, acc = cut_points[0], False, 0
    for i in range(end - 1, start - 1, -1):
        tokens = sum(estimate_tokens(m, rules=rules) for m in entries[i].messages)
        if tokens == 0:
            continue
        acc += tokens
        if acc >= keep_recent_tokens:
            exceeded = True
            cut = next((c for c in cut_points if c >= i), cut_points[-1])
            break
    if exceeded and _recovery_suffix(entries, cut, end, rules):
        cut += 1
    while cut > start:
        prev = entries[cut - 1]
        if prev.entry.type == "compaction" or prev.messages:
            break
        cut -= 1
    if _turn_start(entries[cut]):
        return CutPoint(cut, -1, False)
    turn_start = next((i for i in range(cut, start - 1, -1) if _turn_start(entries[i])), -1)
    return CutPoint(cut, turn_start, turn_start != -1)


def _for_summary(entries: list[ProjectedEntry]) -> list[M.Message]:
    return [m for p in entries if p.entry.type != "compaction" for m in p.messages
            if not isinstance(m, M.SystemMessage)]


def _prepare_projected(branch: Sequence[E.SessionEntry], keep_recent_tokens: int,
                       rules: Rules) -> CompactionPreparation | None:
    projected = project_context_entries(branch, rules=rules)
    prev = next((i for i, p in enumerate(projected) if p.entry.type == "compaction" and p.messages), -1)
    previous = projected[prev].entry if prev >= 0 else None
    assert previous is None or isinstance(previous, E.CompactionEntry)
    start, end = prev + 1, len(projected)
    tokens_before = projected_context_estimate(branch, rules=rules).tokens
    cut = find_projected_cut_point(projected, start, end, keep_recent_tokens, rules=rules)
    if cut.first_kept_entry_index >= end:
        return None
    first = projected[cut.first_kept_entry_index].entry
    if not first.id:
        return None
    history_end = cut.turn_start_index if cut.is_split_turn else cut.first_kept_entry_index
    to_summarize = _for_summary(projected[start:history_end])
    prefix = _for_summary(projected[cut.turn_start_index:cut.first_kept_entry_index]) if cut.is_split_turn else []
    if not to_summarize and not prefix:
        return None
    ids = [e.id for e in branch]
    return CompactionPreparation(
        first_kept_entry_id=first.id,
        first_kept_branch_index=ids.index(first.id),
        is_split_turn=cut.is_split_turn,
        turn_start_index=ids.index(projected[cut.turn_start_index].entry.id) if cut.is_split_turn else -1,
        tokens_before=tokens_before,
        messages_to_summarize=to_summarize,
        turn_prefix_messages=prefix,
        previous_summary=previous.summary if previous is not None else None,
        file_lists=file_lists(to_summarize + prefix, previous, nested_calls=True),
    )
