"""pi 1.6 values that need more than one line: resolved once per file, after any loader path.

Three entries-table columns depend on other entries of the file, so no single-line scanner can fill
them: a ``context_edit``'s ``est_tokens`` (its replacement measured as its *target's* message),
its ``edit_action``, and ``system_est_tokens`` (every system message from the compaction in effect
down to this one replayed into one, pi-ai's ``getCurrentSystemMessage``; at a compaction, its own
``systemMessage``). The rows concerned are rare (system messages, edits, compactions), so their
lines are parsed again here, with the object model's rules (:mod:`sessionlab.tokens`,
:mod:`sessionlab.context`), whichever path (C scanner, msgspec, objects) built the table: the
three paths cannot disagree on them.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .._jsjson import raw_decode
from ..context import _apply_edit, session_entry_to_context_messages
from ..io.dialects import entry_from_dict
from ..model import entries as E
from ..model import messages as M
from ..tokens import current_system_message, estimate_tokens
from ._native import strings

__all__ = ["needs_resolve", "resolve"]

# (built from buffers: pa.array and Python scalars in compute calls import pandas, which the loader avoids)
_EDIT = strings(["context_edit"])
_COMPACTION = strings(["compaction"])
_SYSTEM = strings(["system"])


def needs_resolve(table: pa.Table, data: bytes | None = None) -> bool:
    """Whether the file's table has rows this module fills. Given the file's ``data``, compactions
    alone count only when one of their lines may hold a ``systemMessage`` (with escapes, or the seed's
    ``system_message``): those of older files never do, and their lines are all this reads."""
    # (is_in is false, never null, on a null role: every entry that is not a message has one)
    if pc.any(pc.or_(pc.is_in(table["type"], value_set=_EDIT), pc.is_in(table["role"], value_set=_SYSTEM))).as_py():
        return True
    compaction = pc.is_in(table["type"], value_set=_COMPACTION)
    if not pc.any(compaction).as_py():
        return False
    if data is None:
        return True
    lines = _line_bytes(data, pc.filter(table["line_no"], compaction).to_pylist())
    return any(b"systemMessage" in t or b"system_message" in t or b"\\u" in t for t in lines.values())  # (seed key too)


def _column(values: list, typ: pa.DataType) -> pa.Array:
    """A string or int64 column from a list with None (without pa.array: see above)."""
    if typ == pa.string():
        return strings(values)
    valid = np.array([v is not None for v in values], np.bool_)
    data = np.array([0 if v is None else v for v in values], np.int64)
    nulls = len(values) - int(valid.sum())
    bitmap = None if nulls == 0 else pa.py_buffer(np.packbits(valid, bitorder="little"))
    return pa.Array.from_buffers(typ, len(values), [bitmap, pa.py_buffer(data)], null_count=nulls)


def _line_bytes(data: bytes, line_nos: list[int]) -> dict[int, bytes]:
    """The bytes of each of ``line_nos`` (1-based), newline excluded."""
    ends = np.flatnonzero(np.frombuffer(data, np.uint8) == 10)
    starts = np.concatenate([[0], ends + 1])
    out: dict[int, bytes] = {}
    for ln in set(line_nos):
        if 1 <= ln <= len(starts):
            out[ln] = data[int(starts[ln - 1]):int(ends[ln - 1]) if ln - 1 < len(ends) else len(data)]
    return out


def _line_objects(data: bytes, line_nos: list[int]) -> dict[int, list[Any]]:
    """The JSON objects on each of ``line_nos`` (1-based; a glued line may hold several)."""
    out: dict[int, list[Any]] = {}
    for ln, raw in _line_bytes(data, line_nos).items():
        text = raw.decode("utf-8", errors="replace").strip(" \t\r\n\ufeff")
        try:
            out[ln] = [json.loads(text)]
        except ValueError:
            out[ln] = _glued(text)
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
    dicts = [o for o in objs if isinstance(o, dict)]
    for d in dicts:
        if entry_id is None or d.get("id") == entry_id:
            return entry_from_dict(d, dialect)  # type: ignore[arg-type]
    return entry_from_dict(dicts[0], dialect) if len(dicts) == 1 else None  # type: ignore[arg-type]


def _system(entry: E.SessionEntry | None) -> M.Message | None:
    if isinstance(entry, E.MessageEntry) and isinstance(entry.message, M.SystemMessage):
        return entry.message
    if isinstance(entry, E.CompactionEntry) and entry.system_message is not None:
        return entry.system_message
    return None


def resolve(table: pa.Table, data: bytes, dialect: str = "pi") -> pa.Table:
    """``table`` (one file's entries) with ``est_tokens``, ``edit_action`` and ``system_est_tokens``
    filled where they depend on other entries; the other rows are untouched."""
    if table.num_rows == 0 or not needs_resolve(table, data):
        return table
    types = table["type"].to_pylist()
    roles = table["role"].to_pylist()
    ids = table["entry_id"].to_pylist()
    lines = table["line_no"].to_pylist()
    parent = table["parent_index"].to_pylist()
    wanted = [i for i, (t, r) in enumerate(zip(types, roles)) if t in ("context_edit", "compaction") or r == "system"]
    last_row = {eid: i for i, eid in enumerate(ids) if eid is not None and types[i] != "leaf"}
    targets = {last_row.get(t) for t, ty in zip(table["target_id"].to_pylist(), types) if ty == "context_edit"}
    targets.discard(None)
    objs = _line_objects(data, [lines[i] for i in wanted] + [lines[i] for i in targets])  # type: ignore[index]
    entry = {i: _entry(objs.get(lines[i], []), ids[i], dialect) for i in set(wanted) | targets}  # type: ignore[arg-type]

    est = table["est_tokens"].to_pylist()
    action: list[str | None] = table["edit_action"].to_pylist()
    sys_est: list[int | None] = [None] * table.num_rows
    state: dict[int, tuple[M.Message, ...]] = {}

    def marked_above(i: int) -> int | None:
        """The nearest system message or compaction row above row ``i``."""
        j, seen = parent[i], 0
        while j is not None and types[j] != "compaction" and roles[j] != "system" and seen <= len(types):
            j, seen = parent[j], seen + 1  # rows between two system messages: rare in practice
        return j if j is not None and j in entry else None

    def replayed(i: int) -> tuple[M.Message, ...]:
        """The system messages in effect at row ``i`` (a system message or compaction row)."""
        chain: list[int] = []
        k: int | None = i
        while k is not None and k not in state and k not in chain:
            chain.append(k)
            k = None if types[k] == "compaction" else marked_above(k)
        above = state.get(k, ()) if k is not None else ()
        for j in reversed(chain):
            own = _system(entry.get(j))
            if types[j] == "compaction":
                above = (own,) if own is not None else ()
            else:
                above = above + ((own,) if own is not None else ())
            state[j] = above
        return state[i]

    for i in wanted:
        e = entry.get(i)
        if types[i] == "context_edit":
            action[i], est[i] = _edit(e, entry.get(last_row.get(getattr(e, "target_id", None))))  # type: ignore[arg-type]
            continue
        if roles[i] == "system" and _system(e) is not None:
            est[i] = estimate_tokens(_system(e))  # type: ignore[arg-type]
        msgs = replayed(i) if _system(e) is not None else ()
        current = current_system_message(msgs) if msgs else None
        sys_est[i] = estimate_tokens(current) if current is not None else None
    out = table
    for name, values in (("est_tokens", est), ("edit_action", action), ("system_est_tokens", sys_est)):
        k = out.schema.get_field_index(name)
        out = out.set_column(k, out.schema.field(k), _column(values, out.schema.field(k).type))
    return out


def _edit(edit: E.SessionEntry | None, target: E.SessionEntry | None) -> tuple[str | None, int | None]:
    """(edit_action, est_tokens) of a context_edit: what its replacement makes of its target."""
    if not isinstance(edit, E.ContextEditEntry):
        return None, None
    if edit.replacement is None:
        return "remove", None
    if not isinstance(edit.replacement, dict):
        return None, None  # pi would fail on it; sessionlab leaves the target as it is
    if target is None:
        return "replace", None
    msgs = _apply_edit(session_entry_to_context_messages(target, 0, [], rules="pi-1.6"), edit)
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
    from .._rules import check_rules
    from ..errors import RulesMismatchError

    own = table_rules(table)
    if rules is None:
        return own
    check_rules(rules)
    if rules != own:
        raise RulesMismatchError(
            f"this table was loaded with rules={own!r}; its per-entry estimates differ under {rules!r}: "
            f"load it again with entries_table(..., rules={rules!r}) (or leave rules= out)")
    return own


def apply_rules(table: pa.Table, rules: str) -> pa.Table:
    """An entries table (loaded under pi 1.6's per-entry rules) as ``rules`` would have it, with the
    rules recorded in its schema metadata. pi 0.58 counts no image in a user message (1,200 tokens
    fewer per image) and knows no system role (0 tokens, no system_est_tokens)."""
    from .._rules import check_rules

    check_rules(rules)
    if rules == "pi-0.58" and table.num_rows:
        user = pc.fill_null(pc.equal(table["role"], "user"), False)
        images = pc.fill_null(table["image_count"], 0).cast(pa.int64())
        est = pc.if_else(user, pc.subtract(table["est_tokens"], pc.multiply(images, 1200)), table["est_tokens"])
        system = pc.fill_null(pc.equal(table["role"], "system"), False)
        est = pc.if_else(system, pa.scalar(0, pa.int64()), est)
        k = table.schema.get_field_index("est_tokens")
        table = table.set_column(k, table.schema.field(k), est)
        k = table.schema.get_field_index("system_est_tokens")
        table = table.set_column(k, table.schema.field(k), pa.nulls(table.num_rows, pa.int64()))
    return table.replace_schema_metadata({**(table.schema.metadata or {}), _KEY: rules.encode()})
