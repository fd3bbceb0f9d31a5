"""The fast path: one clean pi v3 file to table columns without building entry objects.

The file is decoded by msgspec (a slice of lines per call, see below) into small typed structs
that declare only the fields the tables need (everything else, images and tool details included,
is skipped by the decoder in C). The path refuses a file, and the caller falls back to the tolerant object-model path
(:mod:`._objects`), as soon as anything is unusual, so it never has to report issues itself:

- a line that is not exactly one JSON object (bad JSON, glued objects, a BOM, invalid UTF-8, lone
  surrogates), or a field of an unexpected JSON type (mixed types the object model accepts, such as
  ``content`` being a string or a list, are declared as unions and stay on the fast path);
- a header that is not ``{"type": "session", "id": str, "version": 3}``, or seed-dialect keys;
- an entry type outside pi's eleven (the nine of 0.58 and 1.6's ``usage`` and ``context_edit``),
  a missing or duplicate id, a parent not earlier in the file (which also rules out cycles and
  dangling parents).

The file is decoded in slices of lines (:data:`SLICE_BYTES` at a time, cut at line ends): each
slice's objects become Arrow column chunks and are dropped before the next slice is decoded, so a
huge file's load holds its bytes, its table and one slice's objects, never all its objects at
once. What needs the whole file (the header, the dialect from the head, line numbers, unique ids
and parents earlier in the file) keeps its whole-file meaning: line numbers are offset by the
lines before the slice and the id and parent columns are checked once, concatenated.

The pi 1.6 values that need other lines of the file (``edit_action``, ``system_est_tokens``,
``system_json``, the ``est_tokens`` of ``context_edit`` entries and of system messages) are not
computed here (null, or 0 for a system message's estimate) but filled by :mod:`._pi16` after any
path.

Tool-call arguments are kept as raw JSON text: for files pi wrote, that text *is*
``JSON.stringify(arguments)``, whose length pi's estimate counts. A round trip through msgspec's
encoder (which escapes strings exactly as JavaScript does) checks that; arguments holding floats
(formatted differently by JavaScript) or any other non-canonical text go through
:func:`sessionlab._jsjson.js_stringify` instead.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Annotated, Any

import msgspec
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .._jsjson import js_len, js_parse, js_stringify
from .._scan_source import DEFERRED_PARTS
from ..pi.io.formats import HEAD_LINES, detect_dialect
from ..pi.model.messages import context_token_count
from ..pi.rules import CHARS_PER_TOKEN, IMAGE_CHARS, ROLE_CHARS
from ._arrays import parse_timestamps
from ._schema import ENTRY_SCHEMA, PI_TYPES

__all__ = ["fast_columns", "PI_TYPES", "SLICE_BYTES"]

# bytes of lines decoded at a time: one slice's objects (a few times its size) are alive at once
SLICE_BYTES = 32 * 2**20


# pi's per-role rule (sessionlab.pi.rules.ROLE_CHARS) as this path applies it, read from the table: the
# assistant's parts (its content blocks), the roles whose content value counts (with their images or
# not: pi 1.6 counts user images, tables/_pi16.apply_rules takes them out for pi 0.58) and the string
# fields of every other role; a role with a part only pi 1.6's system message has is left to ._pi16
_ASSISTANT = frozenset(ROLE_CHARS.get("assistant", ()))
_TEXT, _THINKING, _TOOL_CALL = "text" in _ASSISTANT, "thinking" in _ASSISTANT, "toolCall" in _ASSISTANT
_DEFERRED = frozenset(r for r, parts in ROLE_CHARS.items() if DEFERRED_PARTS & set(parts))
_CONTENT_ROLES = {r: ("content" in parts, "images" in parts) for r, parts in ROLE_CHARS.items()
                  if r != "assistant" and r not in _DEFERRED and {"content", "images"} & set(parts)}
_FIELD_ROLES = {r: fields for r, parts in ROLE_CHARS.items() if r != "assistant" and r not in _DEFERRED
                and (fields := tuple(p for p in parts if p in ("command", "output", "summary")))}
# compaction and branch_summary entries count as the summary messages pi turns them into
_SUMMARY_COUNTS = {t: "summary" in ROLE_CHARS.get(r, ())
                   for t, r in (("compaction", "compactionSummary"), ("branch_summary", "branchSummary"))}
_NO_PARTS = (False, False)


class _Block(msgspec.Struct):
    type: str | None = None
    text: str | None = None
    thinking: str | None = None
    name: str | None = None
    id: str | None = None
    arguments: msgspec.Raw = msgspec.Raw()


# an integer outside int64 refuses the file (the object model makes it null)
Int64 = Annotated[int, msgspec.Meta(ge=-(2**63), le=2**63 - 1)]


class _Cost(msgspec.Struct):
    total: float | None = None


class _Usage(msgspec.Struct):
    input: Int64 | None = None
    output: Int64 | None = None
    cacheRead: Int64 | None = None
    cacheWrite: Int64 | None = None
    totalTokens: Int64 | None = None
    cost: _Cost | None = None
    cacheWrite1h: Int64 | None = None
    reasoning: Int64 | None = None


class _Message(msgspec.Struct):
    role: str | None = None
    content: str | list[_Block] | None = None
    api: str | None = None
    provider: str | None = None
    model: str | None = None
    usage: _Usage | None = None
    stopReason: str | None = None
    errorMessage: str | None = None
    toolName: str | None = None
    isError: bool | None = None
    customType: str | None = None
    command: str | None = None
    output: str | None = None
    summary: str | None = None
    responseModel: str | None = None


class _Entry(msgspec.Struct):
    type: str | None = None
    id: str | None = None
    parentId: str | None = None
    timestamp: str | None = None
    message: _Message | None = None
    thinkingLevel: str | None = None
    provider: str | None = None
    modelId: str | None = None
    summary: str | None = None
    firstKeptEntryId: str | None = None
    tokensBefore: Int64 | None = None
    retainedTail: msgspec.Raw | None = None
    fromId: str | None = None
    customType: str | None = None
    content: str | list[_Block] | None = None
    targetId: str | None = None
    label: str | None = None
    name: str | None = None
    # pi 1.6: the usage of a compaction, branch_summary or usage entry; a usage entry's kind and model
    usage: _Usage | None = None
    kind: str | None = None
    model: str | None = None
    # header fields
    version: Int64 | None = None
    cwd: str | None = None
    parentSession: str | None = None


_DECODER = msgspec.json.Decoder(_Entry)
_ANY = msgspec.json.Decoder()
_ENCODE = msgspec.json.encode


class Refused(Exception):
    """The file needs the tolerant path."""


def _args_len(b: bytes) -> int:
    """``len(JSON.stringify(arguments))`` in UTF-16 units, from the raw text when it is canonical."""
    if not b or b == b"null":
        return 0  # absent or null arguments: the object model holds None, which counts 0
    try:
        obj = _ANY.decode(b)
        if _ENCODE(obj) == b and not _LONG_DIGITS.search(b) and not _has_float(obj):
            return len(b) if b.isascii() else js_len(b.decode())
    except msgspec.MsgspecError:  # e.g. a number out of range (1e400 is Infinity, written null)
        pass
    return js_len(js_stringify(js_parse(b.decode())))


# 16 digits in a row: maybe an integer JavaScript prints differently (beyond 2**53, or as 1e+21)
_LONG_DIGITS = re.compile(rb"[0-9]{16}")
# an integer Python's json refuses to parse (over 640 digits: the lowest int_max_str_digits)
_HUGE_DIGITS = re.compile(rb"[0-9]{641}")


def _has_float(o: Any) -> bool:
    """Whether a decoded JSON value holds a float (JavaScript formats floats differently)."""
    c = o.__class__
    if c is dict:
        vals: Any = o.values()
    elif c is list:
        vals = o
    else:
        return c is float
    for v in vals:
        c = v.__class__
        if c is float or ((c is dict or c is list) and _has_float(v)):
            return True
    return False


def _batch_args_lens(raws: list[bytes]) -> list[int]:
    """:func:`_args_len` of many arguments; one decode/encode round trip for the whole list when
    all are canonical and float-free (the usual case), else one by one."""
    if not raws:
        return []
    joined = b"[" + b",".join(raws) + b"]"
    floats: list[str] = []
    try:
        objs = msgspec.json.Decoder(float_hook=floats.append).decode(joined)
        canonical = not floats and _ENCODE(objs) == joined and not _LONG_DIGITS.search(joined)
    except msgspec.MsgspecError:
        canonical = False
    if canonical:  # (null arguments count 0, as the object model's None does)
        return [0 if b == b"null" else len(b) if b.isascii() else js_len(b.decode()) for b in raws]
    return [_args_len(b) for b in raws]


def _content(content: Any, role: str, eid: str | None, blocks: list | None) -> tuple[int, int | None]:
    """Characters of a content value by the role's parts (``content``: a string or its text blocks;
    ``images``: :data:`IMAGE_CHARS` per image) and its image count; if ``blocks`` is given, one row
    per block."""
    if content is None:
        return 0, None
    text_counts, images_count = _CONTENT_ROLES.get(role, _NO_PARTS)
    if content.__class__ is str:
        n = js_len(content) if text_counts else 0
        if blocks is not None:
            blocks.append([eid, role, 0, "text", None, None, n])
        return n, 0
    total = images = 0
    for i, b in enumerate(content):
        t = b.type
        n = 0
        if t == "text":
            s = b.text
            n = 0 if s is None or not text_counts else len(s) if s.isascii() else js_len(s)
        elif t == "image":
            n = IMAGE_CHARS if images_count else 0
            images += 1
        total += n
        if blocks is not None:
            call = t == "toolCall"  # (a tool call outside an assistant message counts nothing, but is listed)
            blocks.append([eid, role, i, t, (b.name or "") if call else None, b.id if call else None, n])
    return total, images


def _line_numbers(data: bytes) -> np.ndarray:
    """1-based numbers of the non-blank lines; refuses lines that are not ``{...}``."""
    if data.startswith(b"\xef\xbb\xbf"):
        raise Refused("BOM")
    buf = np.frombuffer(data, np.uint8)
    nl = np.flatnonzero(buf == 10)
    starts = np.concatenate(([0], nl + 1))
    ends = np.concatenate((nl, [len(buf)]))
    cr = (ends > starts) & (buf[np.maximum(ends - 1, 0)] == 13) if len(buf) else ends > starts
    ends = ends - cr
    nonblank = ends > starts
    s, e = starts[nonblank], ends[nonblank]
    if len(s) and not ((buf[s] == 123).all() and (buf[e - 1] == 125).all()):
        raise Refused("a line is not one object")
    return np.flatnonzero(nonblank).astype(np.int32) + 1


def _head_lines(data: bytes, k: int = HEAD_LINES) -> list[bytes]:
    """``data.split(b"\n", k)[:k]`` without copying the rest of the file into the last piece."""
    end = -1
    for _ in range(k):  # k newline searches, not a loop over entries
        end = data.find(b"\n", end + 1)
        if end < 0:
            return data.split(b"\n")
    return data[:end].split(b"\n")


def _check_file(data: bytes) -> None:
    """The checks of the whole file that copy nothing: no BOM, no huge integer (Python's json cannot
    read one: the tolerant path's to report) and pi's dialect, decided from the head lines."""
    if data.startswith(b"\xef\xbb\xbf"):
        raise Refused("BOM")
    if _HUGE_DIGITS.search(data):
        raise Refused("huge integer")
    try:
        head_objs = [_ANY.decode(ln) for ln in _head_lines(data) if ln.strip()]
    except (msgspec.MsgspecError, UnicodeDecodeError, RecursionError) as exc:
        raise Refused(str(exc)) from None
    if not all(o.__class__ is dict for o in head_objs):
        raise Refused("a line is not one object")  # (which the slice's decode would find too)
    if detect_dialect(head_objs) != "pi":
        raise Refused("dialect")


def _slices(data: bytes, size: int) -> Iterator[tuple[int, int]]:
    """``(start, end)`` of consecutive pieces of ``data`` of about ``size`` bytes, each ending at a
    line's end (or the file's)."""
    start, n = 0, len(data)
    while start < n:
        nl = data.find(b"\n", start + max(size, 1) - 1)
        end = n if nl < 0 else nl + 1
        yield start, end
        start = end


def _decode(data: bytes, start: int, end: int, line0: int) -> tuple[list[_Entry], np.ndarray]:
    """The objects of the lines in ``data[start:end]`` and their line numbers (``line0`` lines come
    before the slice); :class:`Refused` unless every line is one object."""
    piece = memoryview(data)[start:end]
    try:
        # msgspec skips the fields the structs leave out without checking their UTF-8: the
        # tolerant path's to report (a slice's lines are checked, and dropped, one slice at a time)
        str(piece, "utf-8")
        objs = _DECODER.decode_lines(piece)
    except (msgspec.MsgspecError, UnicodeDecodeError, RecursionError) as exc:
        raise Refused(str(exc)) from None
    n_lines = data.count(b"\n", start, end) + (0 if data[end - 1] == 10 else 1)
    if objs and len(objs) == n_lines and data.find(b"\r", start, end) < 0:
        # one object on every line, no blank line: the lines are simply 1..n
        lines = np.arange(line0 + 1, line0 + n_lines + 1, dtype=np.int32)
    else:
        lines = _line_numbers(data[start:end]) + np.int32(line0)
    if len(objs) != len(lines):
        raise Refused("glued objects")
    return objs, lines


def _header(header: _Entry) -> dict[str, Any]:
    """The session's header fields; :class:`Refused` unless it is a pi v3 header."""
    if header.type != "session" or header.id is None or header.version != 3:
        raise Refused("header")
    return {"session_id": header.id, "version": 3, "dialect": "pi", "cwd": header.cwd,
            "parent_session": header.parentSession, "header_timestamp": header.timestamp}


class _Rows:
    """The entries of one file and what every column builder looks at."""

    def __init__(self, ents: list[_Entry]) -> None:
        self.ents = ents
        self.n = len(ents)
        self.typ = [e.type for e in ents]
        if not PI_TYPES.issuperset(self.typ):
            raise Refused("entry type")
        if any(e.retainedTail is not None for e in ents):
            raise Refused("retained tail")  # the seed's compaction tail: the object path measures it
        self.ids = [e.id for e in ents]
        self.parents = [e.parentId for e in ents]
        self.msgs = [e.message if t == "message" else None for t, e in zip(self.typ, ents)]
        self.roles = [m.role if m is not None else None for m in self.msgs]
        self.asst = [m if r == "assistant" else None for m, r in zip(self.msgs, self.roles)]
        self.calls: list[int | None] = []  # (these two: filled with the estimates)
        self.images: list[int | None] = []
        self.by_type: dict[str | None, list[int]] = {}
        for i, t in enumerate(self.typ):  # row indices per entry type (so columns only visit their rows)
            self.by_type.setdefault(t, []).append(i)

    def pick(self, kind: str, attr: str) -> list:
        """``attr`` of the entries of type ``kind``, null elsewhere."""
        col: list = [None] * self.n
        for i in self.by_type.get(kind, ()):
            col[i] = getattr(self.ents[i], attr)
        return col


def _links(id_arr: pa.Array, par_arr: pa.Array) -> dict[str, Any]:
    """The entry-index and parent-index columns of the whole file's ids and parents; :class:`Refused`
    for a missing or repeated id, a dangling parent or one not earlier in the file (which also rules
    out cycles)."""
    n = len(id_arr)
    if n and (id_arr.null_count or pc.count_distinct(id_arr).as_py() != n):
        raise Refused("ids")
    pidx = pc.index_in(par_arr, value_set=id_arr).to_numpy(zero_copy_only=False)
    has_parent = ~np.isnan(pidx) if pidx.dtype.kind == "f" else np.ones(n, bool)
    if int(has_parent.sum()) != n - par_arr.null_count or (pidx[has_parent] >= np.flatnonzero(has_parent)).any():
        raise Refused("parents")  # a dangling parent, or one not earlier in the file
    return {
        "entry_index": pa.array(np.arange(n, dtype=np.int32)),
        "parent_index": pa.array(np.where(has_parent, np.nan_to_num(pidx, nan=0), 0).astype(np.int32)
                                 if pidx.dtype.kind == "f" else pidx.astype(np.int32), mask=~has_parent),
    }


def _assistant_chars(rows: _Rows, i: int, blocks: list | None, raws: list[tuple[int, int, bytes]]) -> int:
    """An assistant message's characters (text, thinking, tool-call names; the arguments go to
    ``raws`` to be measured in one batch) and its block rows; sets its image and call counts."""
    r = "assistant"
    content: Any = rows.msgs[i].content  # type: ignore[union-attr]
    chars = k = n_img = 0
    if content is not None and content.__class__ is not str:
        for j, blk in enumerate(content):
            bt = blk.type
            nc = 0
            if bt == "text":
                s_ = blk.text
                nc = 0 if s_ is None or not _TEXT else len(s_) if s_.isascii() else js_len(s_)
            elif bt == "thinking":
                s_ = blk.thinking
                nc = 0 if s_ is None or not _THINKING else len(s_) if s_.isascii() else js_len(s_)
            elif bt == "image":
                n_img += 1
            elif bt == "toolCall":
                k += 1
                if _TOOL_CALL:
                    nc = js_len(blk.name)
                    raws.append((i, len(blocks) if blocks is not None else -1, bytes(blk.arguments)))
            chars += nc
            if blocks is not None:
                blocks.append([rows.ids[i], r, j, bt, (blk.name or "") if bt == "toolCall" else None,
                               blk.id if bt == "toolCall" else None, nc])
        rows.images[i] = n_img  # (a string as assistant content is no content: null)
    rows.calls[i] = k
    return chars


def _message_chars(rows: _Rows, i: int, blocks: list | None, raws: list[tuple[int, int, bytes]]) -> int:
    """A message's characters by pi's per-role rule (:data:`sessionlab.pi.rules.ROLE_CHARS`)."""
    m = rows.msgs[i]
    r = rows.roles[i]
    if r == "assistant":
        return _assistant_chars(rows, i, blocks, raws)
    if r in _DEFERRED:  # (pi 1.6's system message: its estimate needs the ones before it, see ._pi16)
        c_ = m.content  # type: ignore[union-attr]
        rows.images[i] = (None if c_ is None else 0 if c_.__class__ is str
                          else sum(b.type == "image" for b in c_))  # type: ignore[union-attr]
        return 0
    chars = 0
    if r in _CONTENT_ROLES:
        chars, rows.images[i] = _content(m.content, r, rows.ids[i], blocks)  # type: ignore[union-attr]
    if r in _FIELD_ROLES:
        chars += sum(js_len(getattr(m, f)) for f in _FIELD_ROLES[r])
    return chars


def _estimates(rows: _Rows, blocks: list | None) -> dict[str, list]:
    """``est_tokens``, ``tool_call_count``, ``image_count`` and ``summary_chars``; the block rows are
    appended to ``blocks`` (unless None)."""
    n = rows.n
    est: list[int | None] = [None] * n
    rows.calls = [None] * n
    rows.images = [None] * n
    summary_chars: list[int | None] = [None] * n
    raws: list[tuple[int, int, bytes]] = []  # tool-call arguments (row, block row, raw), measured in one batch
    # Per-entry loop: content is a variable-length list of blocks whose characters follow pi's
    # per-role rule, which has no array form; it is kept to one flat loop with inlined lengths.
    for i, t in enumerate(rows.typ):
        if t == "message":
            if rows.msgs[i] is not None:
                est[i] = _message_chars(rows, i, blocks, raws)  # characters for now; tokens below
        elif t == "custom_message":
            est[i], rows.images[i] = _content(rows.ents[i].content, "custom", rows.ids[i], blocks)
        elif t == "compaction" or t == "branch_summary":
            summary_chars[i] = n_ = js_len(rows.ents[i].summary)
            est[i] = n_ if _SUMMARY_COUNTS[t] else 0
    for (i, bi, _), nc in zip(raws, _batch_args_lens([r[2] for r in raws])):
        est[i] += nc  # type: ignore[operator]
        if blocks is not None:
            blocks[bi][6] += nc
    tokens = [None if c is None else -(-c // CHARS_PER_TOKEN) for c in est]  # ceil(chars / CHARS_PER_TOKEN)
    return {"est_tokens": tokens, "tool_call_count": rows.calls, "image_count": rows.images,
            "summary_chars": summary_chars}


def _ctx(u: _Usage | None) -> int | None:
    if u is None:
        return None
    v = context_token_count(u.totalTokens, u.input, u.output, u.cacheRead, u.cacheWrite)
    return v if -(2**63) <= v < 2**63 else None  # (a sum beyond int64 is null, as in the object model)


def _usage_columns(rows: _Rows) -> dict[str, list]:
    """The token, cost and usage-kind columns: an assistant's call, or spend another entry records."""
    usage = [m.usage if m is not None else None for m in rows.asst]
    kinds: list[str | None] = [None if u is None else "message" for u in usage]
    for t in ("compaction", "branch_summary", "usage"):
        for i in rows.by_type.get(t, ()):
            u = usage[i] = rows.ents[i].usage
            if u is not None:
                kinds[i] = (rows.ents[i].kind or "usage") if t == "usage" else t
    cost = [u.cost if u is not None else None for u in usage]
    return {
        "input_tokens": [u.input if u is not None else None for u in usage],
        "output_tokens": [u.output if u is not None else None for u in usage],
        "cache_read_tokens": [u.cacheRead if u is not None else None for u in usage],
        "cache_write_tokens": [u.cacheWrite if u is not None else None for u in usage],
        "total_tokens": [u.totalTokens if u is not None else None for u in usage],
        "context_tokens": [_ctx(u) for u in usage],
        "cost_usd": [c.total if c is not None else None for c in cost],
        "reasoning_tokens": [u.reasoning if u is not None else None for u in usage],
        "cache_write_1h_tokens": [u.cacheWrite1h if u is not None else None for u in usage],
        "usage_kind": kinds,
    }


def _field_columns(rows: _Rows) -> dict[str, list]:
    """The columns read straight from an entry's or its message's fields."""
    n, pick, asst = rows.n, rows.pick, rows.asst
    tres = [m if r == "toolResult" else None for m, r in zip(rows.msgs, rows.roles)]
    provider = [m.provider if m is not None else p for m, p in zip(asst, pick("model_change", "provider"))]
    model = [m.model if m is not None else p for m, p in zip(asst, pick("model_change", "modelId"))]
    for i in rows.by_type.get("usage", ()):
        provider[i], model[i] = rows.ents[i].provider, rows.ents[i].model
    target = pick("label", "targetId")
    for i in rows.by_type.get("context_edit", ()):
        target[i] = rows.ents[i].targetId
    ctype = [e.customType if t in ("custom", "custom_message")
             else (m.customType if r == "custom" and m is not None else None)
             for t, e, m, r in zip(rows.typ, rows.ents, rows.msgs, rows.roles)]
    return {
        "type": rows.typ, "role": rows.roles, "provider": provider, "model": model,
        "api": [m.api if m is not None else None for m in asst],
        "stop_reason": [m.stopReason if m is not None else None for m in asst],
        "tool_name": [m.toolName if m is not None else None for m in tres],
        "is_error": [m.isError if m is not None else None for m in tres],
        "error_message": [m.errorMessage if m is not None else None for m in asst],
        "thinking_level": pick("thinking_level_change", "thinkingLevel"),
        "first_kept_entry_id": pick("compaction", "firstKeptEntryId"),
        "tokens_before": pick("compaction", "tokensBefore"),
        "from_id": pick("branch_summary", "fromId"),
        "target_id": target,
        "label": pick("label", "label"),
        "custom_type": ctype,
        "name": pick("session_info", "name"),
        "response_model": [m.responseModel if m is not None else None for m in asst],
        # the seed's retained tail (never on this path); pi 1.6's columns ._pi16 fills
        **{k: [None] * n for k in ("retained_tail_messages", "retained_tail_est_tokens",
                                   "retained_tail_context_tokens", "edit_action", "system_est_tokens",
                                   "system_json")},
    }


def _slice_columns(objs: list[_Entry], lines: np.ndarray, blocks: list | None) -> dict[str, pa.Array]:
    """The columns of one slice's entries, as Arrow arrays of the entries table's types (all but the
    entry and parent indexes, which need the whole file's ids)."""
    rows = _Rows(objs)
    if None in rows.ids:
        raise Refused("ids")
    # a missing or unreadable timestamp is a ``bad_timestamp`` issue, which only the tolerant path reports
    timestamps = parse_timestamps(pa.array([e.timestamp for e in rows.ents], pa.string()))
    if timestamps.null_count:
        raise Refused("timestamp")
    found = {"line_no": lines, "entry_id": rows.ids, "parent_id": rows.parents, **_estimates(rows, blocks),
             **_usage_columns(rows), **_field_columns(rows)}
    return {"timestamps": timestamps, **{k: pa.array(v, _TYPES[k]) for k, v in found.items()}}


def fast_columns(data: bytes, *, want_blocks: bool) -> dict[str, Any]:
    """Columns of a clean pi v3 file, or :class:`Refused`.

    Returns ``{"header": {...}, "columns": {name: Arrow array}, "blocks": [tuples] or None}`` (the
    session's facts are the facts module's, from the rows).
    """
    _check_file(data)
    head: dict[str, Any] | None = None
    blocks: list | None = [] if want_blocks else None
    parts: list[dict[str, pa.Array]] = []
    line0 = 0
    for start, end in _slices(data, SLICE_BYTES):
        objs, lines = _decode(data, start, end, line0)
        line0 += data.count(b"\n", start, end)
        if head is None and objs:  # the first object is the header
            head, objs, lines = _header(objs[0]), objs[1:], lines[1:]
        parts.append(_slice_columns(objs, lines, blocks))
        del objs  # (the slice's objects go before the next slice is decoded)
    if head is None:
        raise Refused("no object")
    found: dict[str, Any] = {}
    for name in list(parts[0]):  # a column at a time, its chunks dropped as it is built
        found[name] = pa.concat_arrays([p.pop(name) for p in parts])
    found.update(_links(found["entry_id"], found["parent_id"]))
    columns = {name: found[name] for name in _COLUMN_ORDER}
    return {"header": head, "columns": columns, "blocks": blocks}


# the columns in the order fast_columns has always given them (callers index them by name)
_COLUMN_ORDER = (
    "line_no", "entry_id", "parent_id", "entry_index", "parent_index", "type", "timestamps", "role", "provider",
    "model", "api", "stop_reason", "input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens",
    "total_tokens", "context_tokens", "cost_usd", "est_tokens", "tool_name", "tool_call_count", "is_error",
    "error_message", "thinking_level", "first_kept_entry_id", "tokens_before", "from_id", "target_id", "label",
    "custom_type", "summary_chars", "retained_tail_messages", "retained_tail_est_tokens",
    "retained_tail_context_tokens", "name", "response_model", "reasoning_tokens", "cache_write_1h_tokens",
    "usage_kind", "image_count", "edit_action", "system_est_tokens", "system_json",
)

_TYPES = {f.name: f.type for f in ENTRY_SCHEMA}
