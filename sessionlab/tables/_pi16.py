"""pi 1.6 values that need more than one line: resolved once per file, after any loader path.

Some entries-table columns depend on other entries of the file, so no single-line scanner can fill
them: a ``context_edit``'s ``est_tokens`` (its replacement measured as its *target's* message; for
a compaction carrying the seed's retained tail, the ``retained_tail_*`` columns of that tail with
the replacement), its ``edit_action``, and ``system_est_tokens`` (every system message from the
compaction in effect down to this one replayed into one, pi-ai's ``getCurrentSystemMessage``; at a
compaction, its own ``systemMessage``). ``system_json`` (the system message itself, in pi's
spelling) needs only its own line but is filled here too, from the same parse of the same rows.
The rows concerned are rare (system messages, edits, compactions), so their lines are parsed again
here, with the object model's rules (:mod:`sessionlab.pi.tokens`, :mod:`sessionlab.pi.context`),
whichever path (C scanner, msgspec, objects) built the table: the three paths cannot disagree on
them. With these columns the analyses never read a session file again.
"""

from __future__ import annotations

import json
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from .._arrow import arrow_indices, from_numpy, from_pylist, scalar, strings, to_numpy
from .._arrow import compute as pc
from .._jsjson import raw_decode
from ..pi.rules import CHARS_PER_TOKEN, IMAGE_CHARS

if TYPE_CHECKING:  # the object model is imported when a file has rows to resolve
    from ..pi.model import entries as E
    from ..pi.model import messages as M

__all__ = ["resolve", "system_json", "table_rules", "table_rules_for", "apply_rules"]

_EDIT = strings(["context_edit"])
_COMPACTION = strings(["compaction"])
_SYSTEM = strings(["system"])
_LEAF = strings(["leaf"])


class _Lines:
    """The lines of one file's rows: from where the C scanner saw each row's line start, else from
    a newline scan of the file's bytes (once, on first use)."""

    def __init__(self, data: bytes | memoryview, starts: np.ndarray | None) -> None:
        self.data = data  # (a memoryview only with starts)
        self.starts = starts  # per row of the file, or None
        self._ends: np.ndarray | None = None

    @property
    def ends(self) -> np.ndarray:
        """The newlines' positions (found in 64 MB pieces: a whole-file comparison would hold a
        byte per byte of the file)."""
        if self._ends is None:
            raw = np.frombuffer(self.data, np.uint8)
            step = 1 << 26
            self._ends = np.concatenate([np.flatnonzero(raw[i:i + step] == 10) + i for i in range(0, len(raw), step)]
                                        or [np.zeros(0, np.int64)])
        return self._ends

    def get(self, rows: list[int], line_nos: list[int]) -> dict[int, bytes]:
        """The bytes of each row's line (``rows`` of the file, their 1-based ``line_nos``), newline
        excluded."""
        data, out = self.data, {}
        if self.starts is not None:  # a row's line ends before the next row's (blank lines are stripped)
            starts, last = self.starts, len(self.starts) - 1
            for r in rows:
                out[r] = bytes(data[int(starts[r]):int(starts[r + 1]) if r < last else len(data)])
            return out
        ends, n = self.ends, len(self.ends)
        for r, ln in zip(rows, line_nos):
            if 1 <= ln <= n + 1:
                a = int(ends[ln - 2]) + 1 if ln > 1 else 0
                out[r] = data[a:int(ends[ln - 1]) if ln - 1 < n else len(data)]
        return out


def _flags(mask: pa.Array | pa.ChunkedArray) -> np.ndarray:
    return to_numpy(mask, False).astype(bool, copy=False)


class _Batch:
    """The rows of a batch of files (one table, file after file) the post-pass may read, found in
    one pass over the whole batch. (``is_in`` is false, never null, on a null role: every entry
    that is not a message has one.)"""

    def __init__(self, table: pa.Table, counts: list[int]) -> None:
        self.table = table
        self.edit = _flags(pc.is_in(table["type"], value_set=_EDIT))
        self.comp = _flags(pc.is_in(table["type"], value_set=_COMPACTION))
        self.system = _flags(pc.is_in(table["role"], value_set=_SYSTEM))
        self.bounds = np.concatenate([[0], np.cumsum(counts, dtype=np.int64)])
        hot = np.concatenate([[0], np.cumsum(self.edit | self.comp | self.system)])
        self.hot = hot[self.bounds[1:]] - hot[self.bounds[:-1]]  # flagged rows per file

    @cached_property
    def line_no(self) -> np.ndarray:
        return to_numpy(self.table["line_no"], 0)

    @cached_property
    def parent(self) -> np.ndarray:
        """Each row's parent row in the batch (the file's row + the file's first row; -1: none)."""
        local = to_numpy(self.table["parent_index"], -1).astype(np.int64)
        first = np.repeat(self.bounds[:-1], np.diff(self.bounds))
        return np.where(local >= 0, local + first, -1)

    def ids(self, rows: list[int]) -> dict[int, str | None]:
        """The entry ids of ``rows``."""
        return dict(zip(rows, self.table["entry_id"].take(arrow_indices(rows)).to_pylist()))

    def targets(self) -> dict[int, int]:
        """Each edit row's target row: the later row of its file with the target's id, never a
        seed leaf record (pi's index)."""
        edits = np.flatnonzero(self.edit)
        if not len(edits):
            return {}
        t = self.table
        wanted = t["target_id"].take(arrow_indices(edits)).to_pylist()
        hits = _flags(pc.is_in(t["entry_id"], value_set=strings(sorted({w for w in wanted if w is not None}))))
        hits &= ~_flags(pc.is_in(t["type"], value_set=_LEAF))
        rows = np.flatnonzero(hits)
        last = dict(zip(zip(self.file_of(rows).tolist(), t["entry_id"].take(arrow_indices(rows)).to_pylist()),
                        rows.tolist()))
        return {e: last[key] for e, key in zip(edits.tolist(), zip(self.file_of(edits).tolist(), wanted))
                if key in last}

    def file_of(self, rows: np.ndarray) -> np.ndarray:
        return np.searchsorted(self.bounds, rows, side="right") - 1


def _compactions_hold_system(lines: _Lines, comps: list[int], line_nos: list[int]) -> bool:
    """Whether a compaction's line may hold a ``systemMessage`` (with escapes, or the seed's
    ``system_message``): those of older files never do, and their lines are all this reads."""
    found = lines.get(comps, line_nos)
    return any(b"systemMessage" in t or b"system_message" in t or b"\\u" in t for t in found.values())


def _line_objects(lines: dict[int, bytes]) -> dict[int, list[Any]]:
    """The JSON objects on each row's line (a glued line may hold several)."""
    out: dict[int, list[Any]] = {}
    for row, raw in lines.items():
        text = raw.decode("utf-8", errors="replace").strip(" \t\r\n\ufeff")
        try:
            out[row] = [json.loads(text)]
        except ValueError:
            out[row] = _glued(text)
    return out


def _glued(text: str) -> list[Any]:
    objs, i = [], 0
    while i < len(text):
        try:
            obj, i = raw_decode(text, i)
        except ValueError:
            break
        objs.append(obj)
        while i < len(text) and text[i] in " \t":
            i += 1
    return objs


def _entry(objs: list[Any], entry_id: str | None, dialect: str) -> E.SessionEntry | None:
    from ..pi.io.dialects import entry_from_dict

    dicts = [o for o in objs if isinstance(o, dict)]
    for d in dicts:
        if entry_id is None or d.get("id") == entry_id:
            return entry_from_dict(d, dialect)  # type: ignore[arg-type]
    return entry_from_dict(dicts[0], dialect) if len(dicts) == 1 else None  # type: ignore[arg-type]


def _system(entry: E.SessionEntry | None) -> M.Message | None:
    from ..pi.model import entries as E
    from ..pi.model import messages as M

    if isinstance(entry, E.MessageEntry) and isinstance(entry.message, M.SystemMessage):
        return entry.message
    if isinstance(entry, E.CompactionEntry) and entry.system_message is not None:
        return entry.system_message
    return None


class _Rows:
    """The rows of one file the post-pass reads (edits, compactions, system messages and the edits'
    targets; rows of the batch); :meth:`parse` reads them from their lines."""

    def __init__(self, batch: _Batch, k: int, targets: dict[int, int]) -> None:
        a, b = int(batch.bounds[k]), int(batch.bounds[k + 1])
        self.batch, self.first = batch, a
        self.edits = (np.flatnonzero(batch.edit[a:b]) + a).tolist()
        self.comps = set((np.flatnonzero(batch.comp[a:b]) + a).tolist())
        self.systems = set((np.flatnonzero(batch.system[a:b]) + a).tolist())
        self.marked = self.comps | self.systems
        self.target = {e: targets[e] for e in self.edits if e in targets}
        self.rows = sorted(set(self.edits) | self.marked | set(self.target.values()))
        self.entry: dict[int, Any] = {}

    def parse(self, lines: _Lines, ids: dict[int, str | None], dialect: str) -> None:
        """Each row's entry, from its line (``ids``: the rows' entry ids)."""
        a, line_nos = self.first, self.batch.line_no
        objs = _line_objects(lines.get([r - a for r in self.rows], [int(line_nos[r]) for r in self.rows]))
        self.entry = {r: _entry(objs.get(r - a, []), ids[r], dialect) for r in self.rows}

    @property
    def parent(self) -> np.ndarray:
        """Each row's parent row in the batch (-1: none)."""
        return self.batch.parent


class _SystemReplay:
    """The system messages in effect at a system message or compaction row (pi 1.6 replays them
    from the last compaction on), memoised along the parent chain."""

    def __init__(self, rows: _Rows) -> None:
        self.rows = rows
        self.state: dict[int, tuple[M.Message, ...]] = {}

    def _marked_above(self, i: int) -> int | None:
        """The nearest system message or compaction row above row ``i``."""
        parent, marked = self.rows.parent, self.rows.marked
        j, seen = int(parent[i]), 0
        while j >= 0 and j not in marked and seen <= len(parent):
            j, seen = int(parent[j]), seen + 1  # rows between two system messages: rare in practice
        return j if j >= 0 else None

    def at(self, i: int) -> tuple[M.Message, ...]:
        comps, state = self.rows.comps, self.state
        chain: list[int] = []
        k: int | None = i
        while k is not None and k not in state and k not in chain:
            chain.append(k)
            k = None if k in comps else self._marked_above(k)
        above = state.get(k, ()) if k is not None else ()
        for j in reversed(chain):
            own = _system(self.rows.entry.get(j))
            mine = (own,) if own is not None else ()
            above = mine if j in comps else above + mine  # a compaction starts the replay again
            state[j] = above
        return state[i]


File = tuple[int, "bytes | None", str]
"""One file of a batch: its row count, its bytes (None: nothing to resolve) and its dialect."""


def resolve(table: pa.Table, files: list[File], line_starts: np.ndarray | None = None) -> pa.Table:
    """``table`` (a batch of files' entries, file after file, as ``files`` says) with
    ``est_tokens``, ``edit_action``, ``system_est_tokens``, ``system_json`` (and an edit's
    ``retained_tail_*``) filled where they depend on other entries of their file; the other rows
    are untouched. The rows concerned are found in one pass
    over the batch; only files that have some are read again, and only their lines for those rows
    (``line_starts``: where each row's line starts in its file, as the C scanner saw it)."""
    if table.num_rows == 0 or all(f[1] is None for f in files):
        return table
    batch = _Batch(table, [f[0] for f in files])
    todo = [k for k, f in enumerate(files) if f[1] is not None and batch.hot[k]]
    if not todo:
        return table
    targets = batch.targets()
    work = []
    for k in todo:
        a, b = int(batch.bounds[k]), int(batch.bounds[k + 1])
        lines = _Lines(files[k][1], None if line_starts is None else line_starts[a:b])  # type: ignore[arg-type]
        if not batch.edit[a:b].any() and not batch.system[a:b].any():  # compactions only: from an older pi?
            comps = np.flatnonzero(batch.comp[a:b])
            if not _compactions_hold_system(lines, comps.tolist(), batch.line_no[comps + a].tolist()):
                continue
        work.append((_Rows(batch, k, targets), lines, files[k][2]))
    ids = batch.ids(sorted(r for rows, _, _ in work for r in rows.rows))
    patches: dict[str, dict[int, Any]] = {name: {} for name in _PATCHED}
    for rows, lines, dialect in work:
        rows.parse(lines, ids, dialect)
        _resolve_file(rows, patches)
    for name, values in patches.items():
        if values:
            table = _patch(table, name, values)
    return table


#: the columns :func:`resolve` fills
_PATCHED = ("est_tokens", "edit_action", "system_est_tokens", "system_json", "retained_tail_messages",
            "retained_tail_est_tokens", "retained_tail_context_tokens")


def _resolve_file(rows: _Rows, patches: dict[str, dict[int, Any]]) -> None:
    """Add one file's values to ``patches`` (rows of the batch)."""
    from ..pi.tokens import current_system_message, estimate_tokens

    est, action, sys_est = patches["est_tokens"], patches["edit_action"], patches["system_est_tokens"]
    for i in rows.edits:
        edit, target = rows.entry.get(i), rows.entry.get(rows.target.get(i))  # type: ignore[arg-type]
        action[i], est[i] = _edit(edit, target)
        if action[i] == "replace" and getattr(target, "retained_tail", None) is not None:
            for name, value in _edited_tail(edit, target).items():
                patches[name][i] = value
    replay = _SystemReplay(rows)
    for i in sorted(rows.marked):
        own = _system(rows.entry.get(i))
        if i in rows.systems and own is not None:
            est[i] = estimate_tokens(own)
        current = current_system_message(replay.at(i)) if own is not None else None
        sys_est[i] = estimate_tokens(current) if current is not None else None
        if own is not None:
            patches["system_json"][i] = system_json(own)


def system_json(message: M.Message) -> str:
    """The ``system_json`` value of a system message: its JSON in pi's spelling, which
    :func:`sessionlab.pi.io.dialects.message_from_dict` reads back. (Encoded by msgspec: a system
    message carries the whole tool list, and ``json.dumps`` of it cost a tenth of a 1.6 load.)"""
    import msgspec

    from ..pi.io.dialects import message_to_dict

    d = message_to_dict(message, "pi")
    try:
        return msgspec.json.encode(d).decode()
    except UnicodeEncodeError:  # a lone surrogate (a valid JSON escape): kept as that escape
        return json.dumps(d, separators=(",", ":"))


def _edited_tail(edit: E.SessionEntry | None, target: E.SessionEntry | None) -> dict[str, Any]:
    """The ``retained_tail_*`` values of a replacing edit of a compaction that carries the seed's
    retained tail (the tail with the replacement applied, as pi 1.6 projects it); else none."""
    from ..pi.model import entries as E

    if not isinstance(target, E.CompactionEntry) or target.retained_tail is None:
        return {}
    from ..pi.context import apply_context_edit
    from ._objects import tail_columns  # (the tolerant path's module: only seed files get here)

    return tail_columns(apply_context_edit(list(target.retained_tail), edit))  # type: ignore[arg-type]


def _patch(table: pa.Table, name: str, values: dict[int, Any]) -> pa.Table:
    """``table`` with column ``name`` set at the rows of ``values`` (the other rows untouched)."""
    k = table.schema.get_field_index(name)
    field = table.schema.field(k)
    col = table[name].combine_chunks() if isinstance(table[name], pa.ChunkedArray) else table[name]
    mask = np.zeros(table.num_rows, np.bool_)
    rows = sorted(values)
    mask[rows] = True
    patched = pc.replace_with_mask(col, from_numpy(mask), from_pylist([values[i] for i in rows], field.type))
    return table.set_column(k, field, patched)


def _edit(edit: E.SessionEntry | None, target: E.SessionEntry | None) -> tuple[str | None, int | None]:
    """(edit_action, est_tokens) of a context_edit: what its replacement makes of its target."""
    from ..pi.context import apply_context_edit, session_entry_to_context_messages
    from ..pi.model import entries as E
    from ..pi.tokens import estimate_tokens

    if not isinstance(edit, E.ContextEditEntry):
        return None, None
    if edit.replacement is None:
        return "remove", None
    if not isinstance(edit.replacement, dict):
        return None, None  # pi would fail on it; sessionlab leaves the target as it is
    if target is None:
        return "replace", None
    msgs = apply_context_edit(session_entry_to_context_messages(target, 0, [], rules="pi-1.6"), edit)
    return "replace", sum(estimate_tokens(m) for m in msgs)


# -- which release's rules a table was built with ------------------------------------------------

_KEY = b"sessionlab.rules"


def table_rules(table: pa.Table) -> str:
    """The pi release whose rules built ``table``'s estimates (``"pi-1.6"`` when not recorded, as a
    table from pandas or built by hand)."""
    meta = table.schema.metadata or {}
    return meta.get(_KEY, b"pi-1.6").decode()


def table_rules_for(table: pa.Table, rules: object = None) -> str:
    """The rules a function should follow on ``table``: the table's own when ``rules`` is ``None``;
    a :class:`~sessionlab.RulesMismatchError` when they differ (its estimates would be wrong)."""
    from ..errors import RulesMismatchError
    from ..pi.rules import check_rules

    own = table_rules(table)
    if rules is None:
        return own
    check_rules(rules)
    if rules != own:
        raise RulesMismatchError(
            f"this table was loaded with rules={own!r}; its per-entry estimates differ under {rules!r}: "
            f"load it again with entries_table(..., rules={rules!r}) (or leave rules= out)", "rules")
    return own


def apply_rules(table: pa.Table, rules: str) -> pa.Table:
    """An entries table (loaded under pi 1.6's per-entry rules) as ``rules`` would have it, with the
    rules recorded in its schema metadata. pi 0.58 counts no image in a user message (1,200 tokens
    fewer per image) and knows no system role (0 tokens, no system_est_tokens)."""
    from ..pi.rules import check_rules

    check_rules(rules)
    if rules == "pi-0.58" and table.num_rows:
        user = pc.fill_null(pc.equal(table["role"], scalar("user")), scalar(False))
        images = pc.fill_null(table["image_count"], scalar(0, pa.int32())).cast(pa.int64())
        image_tokens = pc.multiply(images, scalar(IMAGE_CHARS // CHARS_PER_TOKEN))
        est = pc.if_else(user, pc.subtract(table["est_tokens"], image_tokens), table["est_tokens"])
        system = pc.fill_null(pc.equal(table["role"], scalar("system")), scalar(False))
        est = pc.if_else(system, scalar(0), est)
        k = table.schema.get_field_index("est_tokens")
        table = table.set_column(k, table.schema.field(k), est)
        k = table.schema.get_field_index("system_est_tokens")
        table = table.set_column(k, table.schema.field(k), pa.nulls(table.num_rows, pa.int64()))
    return table.replace_schema_metadata({**(table.schema.metadata or {}), _KEY: rules.encode()})
