"""What the readers of agents whose sessions have no tree share: a session is a chain of rows.

:class:`Chain` collects one file's rows into the common columns (each row the child of the
previous one), its content blocks, and turns the characters it counted into ``est_tokens``
(``ceil(chars / 4)``, pi's rule). :func:`files_below` lists an agent's session files by name.
"""

from __future__ import annotations

import contextlib
import fnmatch
import functools
import json
import operator
import os
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from .._jsjson import js_len
from ..pi.io.formats import AgentFile
from ..pi.rules import ROLE_CHARS
from ._spec import BATCH, is_spend_row, spend_only, split_member, store_memo

__all__ = ["Chain", "files_below", "text_chars", "json_chars", "as_dict", "as_list"]

_COLS = ("line_no", "entry_id", "parent_id", "type", "timestamps", "role", "provider", "model",
         "input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "total_tokens",
         "context_tokens", "est_tokens", "tool_name", "tool_call_count", "summary_chars", "reasoning_tokens",
         "usage_kind", "side_node", "cost_usd", "cost_source", "custom_type", "tokens_before")

_EMPTY_ROW: dict[str, Any] = {**dict.fromkeys(_COLS), "type": "message", "side_node": False}
_ROW_VALUES = operator.itemgetter(*_COLS)
_ROW_NAMES = tuple("est_chars" if c == "est_tokens" else c for c in _COLS)  # (a row counts characters)


def files_below(roots: Sequence[Path], patterns: Sequence[str], errors: list[tuple[str, str]] | None = None,
                ) -> list[str]:
    """The regular files below ``roots`` whose path relative to their root matches one of
    ``patterns`` (``fnmatch``, ``*`` crossing folders), sorted per root; a folder that cannot be
    listed goes to ``errors``. Symbolic links to folders are not followed (as ``os.walk``)."""
    import re

    match = re.compile("|".join(f"(?:{fnmatch.translate(p)})" for p in patterns)).match
    out: list[str] = []
    for root in roots:
        root = Path(root)
        if not root.is_dir():
            continue
        found: list[str] = []
        _walk(str(root), "", match, found, errors)
        out += sorted(found)
    return out


def _walk(folder: str, rel: str, match: Any, found: list[str], errors: list[tuple[str, str]] | None) -> None:
    """One folder's matching files into ``found``, then its subfolders' (``DirEntry`` knows each
    entry's kind without a ``stat`` of its own: thousands of small session files list fast)."""
    try:
        with os.scandir(folder) as it:
            entries = list(it)
    except OSError as exc:
        if errors is not None:
            errors.append((exc.filename or folder, f"{type(exc).__name__}: {exc.strerror or exc}"))
        return
    subfolders = []
    for e in entries:
        try:
            if e.is_dir(follow_symlinks=False):
                subfolders.append(e)
            elif match(rel + e.name) and e.is_file():
                found.append(e.path)
        except OSError:
            continue
    for e in subfolders:
        _walk(e.path, f"{rel}{e.name}/", match, found, errors)


def loads(raw: bytes | str) -> Any:
    """``json.loads(raw)``, by msgspec's faster decoder wherever it takes the text: what it refuses
    (``NaN``, a number past a double, another encoding than UTF-8, broken JSON) goes to ``json``,
    whose answer (or error) it is."""
    decode, refused = _decoder()
    try:
        return decode(raw)
    except refused:
        return json.loads(raw)


@functools.cache
def _decoder() -> tuple[Any, type[Exception]]:
    import msgspec  # (on a reader's first use: a load of pi files alone never needs it)

    return msgspec.json.Decoder().decode, msgspec.MsgspecError


def record_type(name: str, keys: Sequence[str]) -> type:
    """A msgspec Struct of the ``keys`` of a record a reader uses (each any JSON value, ``None``
    when missing), for :meth:`Chain.typed_records`."""
    import msgspec

    return msgspec.defstruct(name, [(k, Any, None) for k in keys])


@functools.cache
def _typed_decoder(typ: type) -> tuple[Any, Any, type[Exception]]:
    import msgspec

    dec = msgspec.json.Decoder(typ)
    return dec.decode_lines, dec.decode, msgspec.MsgspecError


def as_dict(value: Any) -> dict:
    """``value`` when it is a JSON object, else an empty one."""
    return value if isinstance(value, dict) else {}


def count_of(d: Any, key: str, *others: str) -> int:
    """A token count a record holds under ``key`` (else the first of ``others`` that holds one): a
    number (a fraction cut, a negative one 0; no infinity or NaN, which json reads from 1e400 and
    NaN), else 0."""
    if not isinstance(d, dict):
        return 0
    v = d.get(key)
    if type(v) is int:  # (most counts: no conversion)
        return v if v > 0 else 0
    if isinstance(v, int) and not isinstance(v, bool) or isinstance(v, float) and v == v and abs(v) != float("inf"):
        return max(int(v), 0)
    return count_of(d, *others) if others else 0


def counts_of(d: Any, keys: Sequence[str]) -> list[int]:
    """:func:`count_of` of each key, in one call (a record's several counts)."""
    if not isinstance(d, dict):
        return [0] * len(keys)
    out = []
    for k in keys:
        v = d.get(k)
        out.append((v if v > 0 else 0) if type(v) is int else count_of(d, k))
    return out


_FAST_MS_END = 4_102_444_800_000  # 2100-01-01: up to here a whole millisecond is exact as seconds in a float
_DAYS: dict[int, str] = {}  # days since the epoch -> ``YYYY-MM-DDT`` (a load's calls fall on few days)
_MINUTES = [f"{h:02d}:{m:02d}:" for h in range(24) for m in range(60)]  # minute of the day -> ``HH:MM:``
_SECONDS = [f"{s:02d}." for s in range(60)]
_MILLIS = [f"{ms:03d}Z" for ms in range(1000)]


def iso_ms(ms: Any) -> str | None:
    """Milliseconds since the epoch as ISO text in UTC (``...T12:34:56.789Z``); None for anything else.
    A whole number of milliseconds from 1970 to 2100 is formatted by arithmetic (a reader formats one
    per call; :func:`iso_ms_plain` is the definition, and a test holds the two equal)."""
    if type(ms) is float and ms.is_integer():
        ms = int(ms)  # (seconds times 1000: the same instant)
    if type(ms) is not int or not 0 <= ms < _FAST_MS_END:
        return iso_ms_plain(ms)
    day, rest = divmod(ms, 86_400_000)
    date = _DAYS.get(day)
    if date is None:
        date = _DAYS[day] = iso_ms_plain(day * 86_400_000)[:11]
    sec, milli = divmod(rest, 1000)
    minute, sec = divmod(sec, 60)
    return date + _MINUTES[minute] + _SECONDS[sec] + _MILLIS[milli]


def iso_ms_plain(ms: Any) -> str | None:
    """:func:`iso_ms` by :mod:`datetime`, for any number (a fraction, before 1970, after 2100)."""
    if not isinstance(ms, (int, float)) or isinstance(ms, bool):
        return None
    from datetime import UTC, datetime

    return datetime.fromtimestamp(ms / 1000, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def open_readonly(path: str) -> Any:
    """A SQLite database opened read-only (``mode=ro``: never created, never written), its rows
    addressable by column name."""
    import sqlite3

    uri = "file:" + os.path.abspath(path).replace("?", "%3F").replace("#", "%23") + "?mode=ro"
    con = sqlite3.connect(uri, uri=True)
    con.row_factory = sqlite3.Row
    return con


SQLITE_HEAD = b"SQLite format 3\x00"


@contextlib.contextmanager
def sharing_stores(paths: Sequence[str] = ()) -> Iterator[None]:
    """While a batch of sessions (``paths``) is read: one read-only connection per SQLite store, one
    answer per :func:`store_memo` question, and each store's sessions in the batch (``members``: an
    agent's joint read asks its store for them at once, :func:`rows_by_key`), closed and dropped at
    the end. A store holds thousands of sessions;
    opening it, checking its schema and querying it once per session cost more than reading them."""
    if getattr(BATCH, "stores", None) is not None:  # (already sharing: the outer one closes)
        yield
        return
    members: dict[str, dict[str, None]] = {}
    for p in paths:
        if "#" in p:  # (a store's session: ``<db>#<id>``; a file that only has a ``#`` asks nothing)
            store, _, key = p.rpartition("#")
            members.setdefault(store, {})[key] = None
    BATCH.stores, BATCH.memo, BATCH.members = {}, {}, members
    try:
        yield
    finally:
        stores, BATCH.stores, BATCH.memo, BATCH.members = BATCH.stores, None, None, None
        for con in stores.values():
            con.close()


def parent_lookup(con: Any, db: str, table: str, id_col: str = "id", parent_col: str = "parent_id", *,
                  read: dict | None = None) -> Any:
    """``id -> parent id`` of the sessions of a store's ``table`` (None for an id it does not hold):
    while stores are shared, the parents of the batch's sessions of the store and theirs, up to the
    top, asked level by level for the whole batch at once (not the whole table: a store holds
    thousands of sessions, and a load reads it in many batches); an id asked beyond them, and every
    id when nothing is shared, one query each. ``read``: the parents of sessions whose rows the
    caller has read already (their table's values, by the batch's ids), not asked again."""
    one = f'SELECT "{parent_col}" FROM "{table}" WHERE "{id_col}" = ?'

    def ask(i: Any) -> Any:
        r = con.execute(one, (i,)).fetchone()
        return None if r is None else r[0]

    if getattr(BATCH, "memo", None) is None:
        return ask
    select = f'SELECT "{id_col}", "{parent_col}" FROM "{table}" WHERE "{id_col}" IN'
    known = store_memo(("parents", db, select), lambda: _ancestors(con, db, select, read or {}))

    def cached(i: Any) -> Any:
        if i not in known:
            known[i] = ask(i)
        return known[i]
    return cached


def _ancestors(con: Any, db: str, select: str, read: dict) -> dict[Any, Any]:
    """``id -> parent id`` of the batch's sessions of ``db`` and of their parents, up to the top
    (``select``: ``SELECT id, parent FROM table WHERE id IN``), one query per level (per
    :data:`_IDS_PER_QUERY` ids; the sessions of ``read`` known already); an id asked for beyond the
    first level that the table does not hold maps to None."""
    known: dict[Any, Any] = dict(read)
    todo: list = [i for i in getattr(BATCH, "members", {}).get(db, ()) if i not in known]
    first = bool(todo)  # (the batch's own ids, the paths' text: see below)
    if not todo:  # (every session of the batch read: its parents' level is next)
        todo = list({p for p in known.values() if p and p not in known})
    while todo:
        known.update(rows_for_ids(con.cursor(), select + " ({ids})", todo))
        if not first:  # (the batch's own ids are the paths' text: the table's may be numbers)
            for i in todo:
                known.setdefault(i, None)
        first = False
        todo = list({p for p in known.values() if p and p not in known})
    return known


def sessions_with_messages(db: str, sids: list, order: str, columns: Sequence[str], *, messages: bool = True
                           ) -> list[tuple[dict, list[dict], str | None, str | None]]:
    """Sessions of a store with ``sessions`` and ``messages`` tables (Goose's, Hermes'), in the order
    of ``sids``: each one's row (its ``columns`` the table has, with ``id`` and
    ``parent_session_id``: a session row's other columns are its reader's to ignore), its messages
    (in ``order``; none read when ``messages`` is False), its parent (``parent_session_id``) and the
    top of its parents' chain. One query per table for them all (per :data:`_IDS_PER_QUERY` ids),
    rows as tuples until each becomes its dict."""
    has = store_memo(("session columns", db), lambda: sqlite_names(db, "PRAGMA table_info(sessions)", 1))
    wanted = ", ".join(f'"{c}"' for c in dict.fromkeys(["id", "parent_session_id", *columns]) if c in has)
    with store_connection(db) as con:
        found = rows_by_key(con, f"SELECT {wanted} FROM sessions WHERE id IN ({{ids}})", sids, "id")
        msgs = rows_by_key(con, "SELECT * FROM messages WHERE session_id IN ({ids}) "
                            f"ORDER BY {order}", sids, "session_id") if messages else {}
        rows = [found[sid][0] if sid in found else {} for sid in sids]
        parents = [s.get("parent_session_id") or None for s in rows]
        roots = session_roots(con, db, sids, parents, lambda: {i: found[i][0].get("parent_session_id")
                                                               for i in sids if i in found})
    return [(s, msgs.get(sid, []), parent, root) for sid, s, parent, root in zip(sids, rows, parents, roots,
                                                                                 strict=True)]


def session_roots(con: Any, db: str, sids: list, parents: list, read: Callable[[], dict]) -> list:
    """The top of the chain of parents of each of the sessions ``sids`` of a store's ``sessions``
    table (``parent_session_id``), whose parents are ``parents`` (None for a session without one:
    its top is None too). The store's parent links are read only for a batch with a parent
    (:func:`parent_lookup`; ``read()``: the parents of the sessions whose rows were read, by id)."""
    parent_of = None
    out = []
    for sid, parent in zip(sids, parents, strict=True):
        if parent and parent_of is None:  # (the batch's rows name their parents already)
            parent_of = parent_lookup(con, db, "sessions", parent_col="parent_session_id", read=read())
        root, seen = parent, {sid}
        while parent and root is not None and root not in seen:
            seen.add(root)
            up = parent_of(root)  # type: ignore[misc]
            if not up:
                break
            root = up
        out.append(root)
    return out


def tuples_by_key(con: Any, sql: str, ids: list, key: int) -> dict[Any, list[tuple]]:
    """The rows of ``sql`` (``... IN ({ids}) ...``, its columns named in it) for ``ids`` as tuples,
    grouped by their ``key``-th column's value, each group in the query's order."""
    cur = con.cursor()
    cur.row_factory = None
    out: dict[Any, list[tuple]] = {}
    for r in rows_for_ids(cur, sql, ids):
        got = out.get(r[key])
        if got is None:
            out[r[key]] = [r]
        else:
            got.append(r)
    return out


def rows_by_key(con: Any, sql: str, ids: list, key: str) -> dict[Any, list[dict]]:
    """The rows of ``sql`` (``... IN ({ids}) ...``) for ``ids`` on the connection ``con`` as dicts,
    grouped by their ``key`` column's value, each group in the query's order (read as tuples: a
    batch reads thousands of sessions)."""
    cur = con.cursor()
    cur.row_factory = None
    out: dict[Any, list[dict]] = {}
    names: list[str] = []
    k = 0
    for r in rows_for_ids(cur, sql, ids):
        if not names:  # (every part of the query has the table's columns)
            names = [c[0] for c in cur.description]
            k = names.index(key)
        got = out.get(r[k])
        d = dict(zip(names, r))
        if got is None:
            out[r[k]] = [d]
        else:
            got.append(d)
    return out


_IDS_PER_QUERY = 500  # (well under SQLite's least limit on a statement's parameters)


def rows_for_ids(cur: Any, sql: str, ids: list) -> Iterator[Any]:
    """The rows of ``sql`` (``... IN ({ids}) ...``) for ``ids``, run on the cursor ``cur`` once per
    :data:`_IDS_PER_QUERY` ids (``cur.description`` names the columns of the rows it yields)."""
    for k in range(0, len(ids), _IDS_PER_QUERY):
        part = ids[k:k + _IDS_PER_QUERY]
        yield from cur.execute(sql.format(ids=",".join("?" * len(part))), part)


@contextlib.contextmanager
def store_connection(db: str) -> Iterator[Any]:
    """A read-only connection to the store ``db``: the batch's shared one (:func:`sharing_stores`),
    else one of its own, closed after."""
    stores = getattr(BATCH, "stores", None)
    if stores is not None:
        con = stores.get(db)
        if con is None:
            con = stores[db] = open_readonly(db)
        yield con
        return
    con = open_readonly(db)
    try:
        yield con
    finally:
        con.close()


def sqlite_names(db: str, sql: str, column: int = 0) -> set[str]:
    """One column of a query's rows in a SQLite database opened read-only (the names of its tables
    or of a table's columns, to recognise whose store it is); empty when it cannot be read."""
    import sqlite3

    try:
        with store_connection(db) as con:  # (a connection's own ``with`` would not close it)
            return {r[column] for r in con.execute(sql)}
    except sqlite3.Error:
        return set()


class SqliteStore:
    """A SQLite store of many sessions, known by its file name (and, where the name is common, a check
    of its schema): a member path ``<db>#<session id>`` is a source the agent's reader opens
    (``AgentSpec.opens``), and the store given whole is recognised as the agent's (its reader then
    says to name one session)."""

    def __init__(self, name: str, schema: Any = None) -> None:
        self.name = name
        self.schema = schema  # ``schema(db) -> bool``, or None: the name is enough

    def _is(self, store: str) -> bool:
        return os.path.basename(store) == self.name and (
            self.schema is None or store_memo(("schema", self.name, store), lambda: self.schema(store)))

    def opens(self, path: str) -> bool:
        if "#" not in path:
            return False  # (most paths: a file of its own)
        store, key = split_member(path)
        return key is not None and self._is(store)

    def recognise_file(self, path: str, head: bytes) -> bool:
        if not head.startswith(SQLITE_HEAD):
            return False
        return self._is(split_member(path)[0])


def as_list(value: Any) -> list:
    """``value`` when it is a JSON array, else an empty one."""
    return value if isinstance(value, list) else []


def text_chars(value: Any) -> int:
    """Characters of a message's text: a string, or the ``text`` of a list of parts."""
    if isinstance(value, str):
        return js_len(value)
    if isinstance(value, list):
        return sum(text_chars(p.get("text")) if isinstance(p, dict) else text_chars(p) for p in value)
    return 0


def json_chars(value: Any) -> int:
    """Characters of a value as the model gets it: a string's text, else its compact JSON."""
    import json

    if value is None:
        return 0
    if isinstance(value, str):
        return js_len(value)
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False))


class Chain:
    """One file's rows, each the child of the previous one, in the common columns (a dict per row,
    ``rows``, turned into columns once by :meth:`done`)."""

    def __init__(self, path: str, agent: str) -> None:
        self.out = AgentFile(path=path, agent=agent)
        self.rows: list[dict[str, Any]] = []
        self.calls: list[tuple] = []  # (a spend-only read's calls, as their tuples: see call)
        self.nblocks: dict[int, int] = {}
        self.spend_only = spend_only()  # (the rows that are no spend left out: see done)

    @property
    def n(self) -> int:
        return len(self.rows)

    def add(self, line_no: int, entry_id: str, ts: Any, **values: Any) -> int:
        """A row (``type`` defaults to ``"message"``); returns its index."""
        rows = self.rows
        row = {**_EMPTY_ROW, **values, "line_no": line_no, "entry_id": entry_id, "timestamps": ts,
               "parent_id": rows[-1]["entry_id"] if rows else None}
        if row["type"] == "message" and "est_tokens" not in values:
            row["est_tokens"] = 0
        rows.append(row)
        return len(rows) - 1

    def records(self, data: bytes | str) -> Any:
        """``(line number, object)`` for each line of ``data`` that is a JSON object; a line that is no
        JSON becomes an ``invalid_json`` issue, blank lines and other values are passed over."""
        for line_no, raw in enumerate(data.splitlines(), 1):
            rec = self._object(line_no, raw)
            if rec is not None:
                yield line_no, rec

    def _object(self, line_no: int, raw: bytes | str) -> dict | None:
        """The line's JSON object; None for a blank line, another value, or no JSON (then an
        ``invalid_json`` issue)."""
        if not raw.strip():
            return None
        try:
            rec = loads(raw)
        except ValueError as exc:
            self.issue(line_no, "invalid_json", str(exc), raw)
            return None
        return rec if isinstance(rec, dict) else None

    def typed_records(self, data: bytes, typ: type) -> Any:
        """:meth:`records`, each object as ``typ`` (a :func:`record_type`): the keys it names, the
        others parsed but not built. The whole of ``data`` is decoded at once when every line is a
        JSON object msgspec takes (no blank line, no carriage return: the line numbers are then
        each object's place); else line by line, each line as :meth:`records` reads it. (Text that
        is no UTF-8 goes to :meth:`records`: msgspec does not check the strings it skips.)"""
        import msgspec

        decode_lines, decode, refused = _typed_decoder(typ)
        if not data.isascii():
            try:
                data.decode("utf-8")
            except UnicodeDecodeError:
                return ((n, msgspec.convert(d, typ)) for n, d in self.records(data))
        if b"\r" not in data:
            try:
                recs = decode_lines(data)
            except refused:
                recs = None
            if recs is not None and len(recs) == data.count(b"\n") + (data[-1:] not in (b"\n", b"")):
                return enumerate(recs, 1)
        return self._typed_lines(data, typ, decode, refused)

    def _typed_lines(self, data: bytes, typ: type, decode: Any, refused: type[Exception]) -> Iterator[tuple[int, Any]]:
        import msgspec

        for line_no, raw in enumerate(data.splitlines(), 1):
            try:
                yield line_no, decode(raw)
                continue
            except refused:
                pass
            rec = self._object(line_no, raw)  # (what msgspec refuses to type: json's answer, or its error)
            if rec is not None:
                yield line_no, msgspec.convert(rec, typ)

    def block(self, i: int, kind: str, nc: int, name: str | None = None, call_id: str | None = None) -> None:
        """A content block of row ``i`` with ``nc`` characters (counted when pi's rule counts it);
        a spend-only read (:func:`._spec.reading_spend_only`) keeps none."""
        row = self.rows[i]
        if self.spend_only:
            return
        role = row.get("role")
        part = {"toolResult": "content", "text": "text" if role == "assistant" else "content"}.get(kind, kind)
        nc = nc if part in ROLE_CHARS.get(role, ()) else 0
        k = self.nblocks.get(i, 0)
        self.nblocks[i] = k + 1
        self.out.blocks.append((row["entry_id"], role, k, kind, name, call_id, nc))
        if row.get("est_tokens") is not None:
            row["est_tokens"] += nc
        if kind == "toolCall":
            row["tool_call_count"] = (row.get("tool_call_count") or 0) + 1

    def usage(self, i: int, *, model: str | None, provider: str | None, inp: int, out: int, cache_read: int = 0,
              cache_write: int = 0, reasoning: int | None = None, total: int | None = None,
              cost: float | None = None) -> None:
        """Row ``i`` is a call with this usage (``cost``: the one the agent recorded, else priced later)."""
        self.rows[i].update(model=model, provider=provider, input_tokens=inp, output_tokens=out,
                            cache_read_tokens=cache_read, cache_write_tokens=cache_write, reasoning_tokens=reasoning,
                            total_tokens=total if total is not None else inp + out + cache_read + cache_write,
                            context_tokens=inp + cache_read + cache_write + out, usage_kind="message")
        if cost is not None:
            self.rows[i].update(cost_usd=cost, cost_source="recorded")

    def usage_of(self, i: int, usage: tuple | None) -> None:
        """Row ``i``'s usage given as the arguments of :meth:`usage` in its order (``model, provider,
        inp, out, cache_read, cache_write, reasoning, total, cost``: a reader's usage rule, which
        :func:`~._calls.call_values` takes too); None: it has none."""
        if usage is not None:
            model, provider, inp, out, cache_read, cache_write, reasoning, total, cost = usage
            self.usage(i, model=model, provider=provider, inp=inp, out=out, cache_read=cache_read,
                       cache_write=cache_write, reasoning=reasoning, total=total, cost=cost)

    def call(self, values: tuple) -> None:
        """A call's row as :func:`~._calls.call_values` builds it: a spend-only read's rows, when it
        keeps its calls alone (no row of :meth:`add` beside them)."""
        self.calls.append(values)

    def issue(self, line_no: int, kind: str, message: str, raw: bytes | str = b"") -> None:
        from ..pi.io.reader import LineIssue  # (with a reader only: the loader's first table needs none)

        text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
        self.out.issues.append(LineIssue(self.out.path, line_no, kind, message, text[:80]))

    def done(self, session: dict[str, Any]) -> AgentFile:
        """The file read: its rows (as tuples: the batch's table turns them into columns at once,
        ``est_tokens`` from the characters counted) and the session's facts (a spend-only read: the
        spend rows alone)."""
        if self.calls:
            assert not self.rows, "a chain's rows are its calls' tuples or rows it added, not both"
            self.out.rows = self.calls
        else:
            rows = [r for r in self.rows if is_spend_row(r)] if self.spend_only else self.rows
            # every row has every column (_EMPTY_ROW): one C call per row
            self.out.rows = list(map(_ROW_VALUES, rows))
        self.out.row_names = _ROW_NAMES
        self.out.n = len(self.out.rows)
        self.out.session = {"agent": self.out.agent, "name": None, "parent_session_id": None, **session}
        self.out.session.setdefault("root_session_id", session.get("session_id"))
        return self.out
