"""Copilot CLI usage (GitHub Copilot CLI's OpenTelemetry file export: ``~/.copilot/otel/*.jsonl``).

Copilot CLI writes no token counts to its session folders; asked to (``COPILOT_OTEL_ENABLED=true``,
``COPILOT_OTEL_EXPORTER_TYPE=file``) it exports OpenTelemetry records as JSON lines to
``$COPILOT_OTEL_FILE_EXPORTER_PATH``, conventionally under ``~/.copilot/otel/``. A file holds
spans (``"type": "span"``: ``traceId``, ``spanId``, ``name``, ``startTime``/``endTime`` as
``[seconds, nanoseconds]``, ``attributes``) and log records (``hrTime``, ``spanContext``, ``body``,
``attributes``) of any number of sessions. Usage is in the GenAI attributes:
``gen_ai.usage.input_tokens`` (the whole prompt, cache reads included),
``gen_ai.usage.output_tokens`` (reasoning included), ``gen_ai.usage.cache_read.input_tokens``,
``gen_ai.usage.cache_creation.input_tokens`` (or ``cache_write``),
``gen_ai.usage.reasoning.output_tokens``, ``gen_ai.usage.total_tokens``; the model in
``gen_ai.response.model`` or ``gen_ai.request.model``, the session in ``gen_ai.conversation.id``.

One request appears several times: as a ``chat <model>`` span, as an inference-details log record
(``event.name`` ``gen_ai.client.inference.operation.details``), and within the ``invoke_agent``
span's totals. A call is a chat span; an inference log counts only when no chat span shares its
trace or response id, an agent-turn log only when neither does, an agent span only when none of
the three does (ccusage's rule). A record without a model takes its trace's first; without a
session id, its trace's (else its response id, else its trace id). Each session of a file is one
member path, ``<file>#<session id>``; ``execute_tool`` spans are its tool rows.
"""

from __future__ import annotations

import functools
import json
import os
import re
from functools import lru_cache
from pathlib import Path
from typing import IO, Any

from ._chain import as_dict, iso_ms, loads, store_memo
from ._rows import CallRows, SpendRows, agent_file
from ._spec import AgentSpec, home_path, jsonl_below, member_path, one_member, split_member

__all__ = ["SPEC", "roots", "stores", "files", "store_sessions", "read", "records", "spend_members"]

ENV = "COPILOT_OTEL_FILE_EXPORTER_PATH"
_CHAT, _LOG, _TURN, _AGENT = 0, 1, 2, 3
# the keys of a record the reader asks (each missing one is None; those of ``_PRESENT``, asked
# whether a record has them, are UNSET), by the name it asks them by
_RECORD = {"type": "type", "name": "name", "trace_id": "traceId", "span_id": "spanId",
           "span_context": "spanContext", "start_time": "startTime", "end_time": "endTime", "hr_time": "hrTime",
           "hr_time2": "_hrTime", "time": "time", "timestamp": "timestamp", "observed": "observedTimestamp",
           "unix_nano": "timeUnixNano", "body": "body", "body2": "_body", "resource": "resource",
           "duration": "duration", "kind": "kind"}
_PRESENT = ("start_time", "end_time", "duration", "kind")
# and of its attributes
_ATTRIBUTES = {"op": "gen_ai.operation.name", "response_model": "gen_ai.response.model",
               "request_model": "gen_ai.request.model", "conversation": "gen_ai.conversation.id",
               "chat_session": "copilot_chat.session_id", "chat_chat_session": "copilot_chat.chat_session_id",
               "session": "session.id", "interaction": "github.copilot.interaction_id",
               "response_id": "gen_ai.response.id", "event": "event.name", "tool": "gen_ai.tool.name",
               "call_id": "gen_ai.tool.call.id", "error": "error.type",
               "input": "gen_ai.usage.input_tokens", "output": "gen_ai.usage.output_tokens",
               "cache_read": "gen_ai.usage.cache_read.input_tokens",
               "cache_write": "gen_ai.usage.cache_write.input_tokens",
               "cache_creation": "gen_ai.usage.cache_creation.input_tokens",
               "reasoning": "gen_ai.usage.reasoning.output_tokens", "reasoning2": "gen_ai.usage.reasoning_tokens",
               "total": "gen_ai.usage.total_tokens", "total2": "gen_ai.usage.total.token_count"}
# a session id's attributes, each with its priority (the first of the highest wins)
_SESSION = (("conversation", 3), ("chat_session", 3), ("chat_chat_session", 3), ("session", 3),
            ("interaction", 2), ("response_id", 1))


def roots() -> list[Path]:
    """``~/.copilot/otel`` and the file ``$COPILOT_OTEL_FILE_EXPORTER_PATH`` names."""
    out = [Path.home() / ".copilot" / "otel"]
    env = (os.environ.get(ENV) or "").strip()
    return out + [home_path(env)] if env else out


def stores(folders: list[Path], errors: list[tuple[str, str]] | None = None) -> list[str]:
    """Every ``*.jsonl`` export below the folders (and an export named itself), sorted, each once."""
    found = jsonl_below([f for f in folders if Path(f).is_dir()], errors)
    found += [str(f) for f in folders if Path(f).is_file()]
    return sorted(dict.fromkeys(found))


def files(folders: list[Path], errors: list[tuple[str, str]] | None = None) -> list[str]:
    """Each session of every export of :func:`stores` (an export that cannot be read goes to ``errors``)."""
    _LISTED.clear()
    _HEADS.clear()
    out: list[str] = []
    for f in stores(folders, errors):
        try:
            out += store_sessions(f)
        except OSError as exc:
            if errors is not None:
                errors.append((f, f"{type(exc).__name__}: {exc.strerror or exc}"))
    return out


def store_sessions(store: str) -> list[str]:
    """The sessions of one export (``<file>#<session id>``), in the order of their first calls; its
    calls kept for the reads that follow until :func:`finish`."""
    return [member_path(store, s) for s in _sessions(store)]


def _version(path: str) -> tuple[str, int, int]:
    """An export's file version (path, mtime, size): stated once per batch while stores are shared
    (whether it is an export and its calls are asked of the same version)."""
    return store_memo(("copilot-version", path), lambda: _stated(path))


def _stated(path: str) -> tuple[str, int, int]:
    st = os.stat(path)
    return path, st.st_mtime_ns, st.st_size


def _is_export(store: str) -> bool:
    try:
        known = _HEADS.get(_version(store))  # (an export the listing parsed)
        if known is not None:
            return known
        with open(store, "rb") as fh:
            head = fh.read(4096)
    except OSError:
        return False
    return _export_head(head)


def _export_head(head: bytes) -> bool:
    """Whether a file's first 4 KB are an OpenTelemetry export's."""
    head = head[:4096]
    return b'"attributes"' in head and (b'"traceId"' in head or b'"spanContext"' in head or b'"hrTime"' in head)


def _opens(path: str) -> bool:
    """A session of a Copilot CLI export (``<file>.jsonl#<session id>``): the reader reads the file."""
    if "#" not in path:
        return False  # (most paths: a file of its own)
    store, key = split_member(path)
    return key is not None and store.endswith(".jsonl") and store_memo(("copilot-export", store),
                                                                        lambda: _is_export(store))


_OTEL_KEY = re.compile(rb'"(?:traceId|spanContext|hrTime|resource)"')


def _recognise_file(path: str, head: bytes) -> bool:
    """A whole export (its first line an OpenTelemetry span, log or metric record): the reader then
    says to name one session of it."""
    store = split_member(path)[0]
    if not store.endswith(".jsonl"):
        return False
    end = head.find(b"\n")
    line = head if end < 0 else head[:end]  # (not split: a copy of the whole head per file)
    if _OTEL_KEY.search(line) is None:
        return False  # (another agent's JSONL file: no parse)
    try:
        first = json.loads(line)
    except ValueError:
        return False
    return isinstance(first, dict) and first.get("type") in ("span", "log", "metric") and any(
        k in first for k in ("traceId", "spanContext", "hrTime", "resource"))


def _text(v: Any) -> str | None:
    return v.strip() or None if isinstance(v, str) else None


def _num(v: Any) -> int | None:
    """A count as JSON gives it: a whole number at least 0, or such a number's ASCII digits."""
    t = type(v)  # (JSON's own types: a bool is no count)
    if t is int:
        return v if v >= 0 else None
    if t is float:
        return int(v) if v >= 0 and v.is_integer() else None
    if t is str:
        s = v.strip()
        return int(s) if s.isascii() and s.isdigit() else None  # (not "²", which int() refuses)
    return None


def _count(v: Any) -> int:
    """:func:`_num` of a value, 0 for none (most counts are JSON's whole numbers: no call)."""
    if type(v) is int:
        return v if v >= 0 else 0
    return 0 if v is None else _num(v) or 0


def _session_attr(a: Any) -> tuple[str, int] | None:
    """The session id an attribute names, with its priority (the first of the highest)."""
    v = a.conversation
    if type(v) is str:  # (the first key of the highest priority: no other is asked)
        v = v.strip()
        if v:
            return v, 3
    best = None
    for k, p in _SESSION:
        v = getattr(a, k)
        if type(v) is str and (best is None or p > best[1]):
            v = v.strip()
            if v:
                best = (v, p)
    return best


def _trace(r: Any) -> str | None:
    return _text(r.trace_id) or _text(as_dict(r.span_context).get("traceId"))


def _span_id(r: Any) -> str | None:
    return _text(r.span_id) or _text(as_dict(r.span_context).get("spanId"))


def _is_span(r: Any) -> bool:
    t = r.type
    if type(t) is str:  # (a JSON string)
        return t == "span"
    from msgspec import UNSET  # (a record without a type: rare)

    return _text(r.name) is not None and (
        _text(r.span_id) is not None or _text(r.trace_id) is not None
        or any(getattr(r, k) is not UNSET for k in _PRESENT))


def _what(r: Any, a: Any) -> tuple[int | None, str | None]:
    """What a record is (a call's kind, or None) and the tool an ``execute_tool`` span names."""
    op = a.op
    op = op.strip() if type(op) is str else None  # (its blank is no operation either way)
    if _is_span(r):
        tool = _text(a.tool) if op == "execute_tool" else None
        name = r.name
        name = name.strip() if type(name) is str else ""
        if op == "chat" or name.startswith("chat "):
            return _CHAT, tool
        return (_AGENT if op == "invoke_agent" or name.startswith("invoke_agent ") else None), tool
    event = _text(a.event)
    body = _text(r.body) or _text(r.body2) or ""
    if event == "gen_ai.client.inference.operation.details" or body.startswith("GenAI inference:"):
        return _LOG, None
    if event == "copilot_chat.agent.turn" or body.startswith("copilot_chat.agent.turn"):
        return _TURN, None
    return None, None


def _time_ms(r: Any) -> int | None:
    for v in (r.end_time, r.start_time, r.hr_time, r.hr_time2, r.time):
        if type(v) is list and len(v) >= 2:  # (a JSON array)
            s, ns = v[0], v[1]
            if type(s) is not int or type(ns) is not int or s < 0 or ns < 0:  # (JSON's whole numbers: no call)
                s, ns = _num(s), _num(ns)
            if s is not None and ns is not None:
                return s * 1000 + ns // 1_000_000
    for v in (r.timestamp, r.observed):
        n = _num(v)
        if n is not None:
            return n // 1_000_000 if n >= 10**17 else n // 1000 if n >= 10**14 else n if n >= 10**11 else n * 1000
    n = _num(r.unix_nano)
    return n // 1_000_000 if n else None


def _usage(a: Any) -> tuple[int, int, int, int, int] | None:
    """(input without cache reads, output, cache read, cache write, reasoning); None without usage.
    Cache writes, reasoning and the total each have two keys: the first above zero counts."""
    inp, out, cr = a.input, a.output, a.cache_read
    if type(inp) is not int or type(out) is not int or type(cr) is not int or min(inp, out, cr) < 0:
        inp, out, cr = _count(inp), _count(out), _count(cr)  # (most are JSON's whole numbers: no call)
    cw = _count(a.cache_write) or _count(a.cache_creation)
    reason = _count(a.reasoning) or _count(a.reasoning2)
    total = _count(a.total) or _count(a.total2)
    inp = inp - min(inp, cr)
    missing = total - (inp + out + cr + cw)
    if missing > 0 and out == 0:  # only a total: output
        out = missing
    return (inp, out, cr, cw, reason) if inp + out + cr + cw > 0 else None


def _lines(path: str, version: tuple[str, int, int] | None = None) -> list:
    """The records of an export (its lines that are JSON objects whose ``attributes`` is one), as
    :func:`_record_type`'s (with its file ``version``, (path, mtime, size): whether its first 4 KB
    are an export's told to ``_HEADS``, which the reads of its sessions ask, :func:`_is_export`)."""
    decode, record, refused = _record_type()
    with open(path, "rb") as fh:
        data = fh.read()
    if version is not None:
        _HEADS[version] = _export_head(data)
    try:  # (the whole file at once: every line a record, a blank one skipped)
        return [r for r in decode.decode_lines(data) if r.attributes is not None]
    except refused:  # (a line it does not take: each line alone)
        pass
    out = []
    for raw in data.split(b"\n"):
        try:
            r = decode.decode(raw)
        except refused:  # (not JSON msgspec takes, or an object whose first "attributes" is no object)
            r = _plain(raw, record)
        if r is not None and r.attributes is not None:
            out.append(r)
    return out


def _plain(raw: bytes, record: type) -> Any:
    """A line the typed decode refused, as its plain parse (:func:`._chain.loads`) gives it: a
    record when that is an object whose attributes are one, else None."""
    import msgspec

    try:
        r = loads(raw)
    except ValueError:
        return None
    if isinstance(r, dict) and isinstance(r.get("attributes"), dict):
        return msgspec.convert(r, record)
    return None


@functools.cache
def _record_type() -> tuple[Any, type, tuple[type[Exception], ...]]:
    """The decoder of a record's line into a struct of the keys of ``_RECORD`` and its attributes'
    of ``_ATTRIBUTES`` (the others skipped unread; ``attributes`` None when the line has none or
    null), the struct, and the errors it raises for a line it does not take."""
    import msgspec

    attrs = msgspec.defstruct("CopilotAttributes", [(k, Any, None) for k in _ATTRIBUTES], rename=_ATTRIBUTES)
    record = msgspec.defstruct("CopilotRecord", [("attributes", attrs | None, None)] + [
        (k, Any, msgspec.UNSET if k in _PRESENT else None) for k in _RECORD], rename=_RECORD)
    return msgspec.json.Decoder(record), record, (msgspec.DecodeError, msgspec.ValidationError)


def _sessions(path: str) -> list[str]:
    """The sessions of an export, in the order of their first calls (its parse kept per file version
    in ``_LISTED``: a load does not parse an export its listing parsed)."""
    key = _version(path)
    recs = _LISTED.get(key)
    if recs is None:
        recs = _LISTED[key] = _parse(*key, listed=True)
    return list(dict.fromkeys(r["session"] for r in recs))


# the exports the last listing parsed, by (path, mtime, size), until the load that follows ends
# (:func:`finish`): its readers, in the process that listed them or in workers forked after it,
# take their calls from here instead of parsing each export again
_LISTED: dict[tuple[str, int, int], list[dict]] = {}
# whether each export parsed since is one by its first 4 KB, by (path, mtime, size), until then too
_HEADS: dict[tuple[str, int, int], bool] = {}


def records(path: str) -> list[dict]:
    """The calls of an export, deduplicated, in file order: dicts with ``session``, ``model``,
    ``ms``, ``key``, ``usage`` (or ``tool``: an ``execute_tool`` span; ``error``: a chat span
    without usage that failed). Shared: never changed by a caller."""
    key = _version(path)
    listed = _LISTED.get(key)
    return listed if listed is not None else _records(*key)


def finish(results: list) -> None:
    """The end of a load of Copilot sessions: the parsed exports its listing kept are let go."""
    _LISTED.clear()
    _HEADS.clear()


@lru_cache(maxsize=4)
def _records(path: str, mtime_ns: int, size: int) -> list[dict]:
    return _parse(path, mtime_ns, size)


def _parse(path: str, mtime_ns: int, size: int, listed: bool = False) -> list[dict]:
    recs = _lines(path, (path, mtime_ns, size) if listed else None)  # (what a listing parsed: until finish)
    # (each record's trace, session attribute and model, asked once)
    facts = [(_trace(r), _session_attr(r.attributes), _model_attr(r.attributes)) for r in recs]
    ctx: dict[str, dict] = {}
    for t, s, m in facts:
        if t is None:
            continue
        c = ctx.get(t)
        if c is None:
            c = ctx[t] = {"model": None, "session": None, "p": 0}
        c["model"] = c["model"] or m
        if s is not None and s[1] > c["p"]:
            c["session"], c["p"] = s
    fallback = mtime_ns // 1_000_000
    found = [c for c in (_candidate(i, r, f, ctx, fallback) for i, (r, f) in enumerate(zip(recs, facts)))
             if c is not None]
    # (a log, turn or agent record is dropped when one of a kind before it shares its trace or response)
    traces: tuple[set, set, set] = (set(), set(), set())
    resps: tuple[set, set, set] = (set(), set(), set())
    for c in found:
        k = c["kind"]
        if k is not None and k < 3:
            if c["trace"]:
                traces[k].add(c["trace"])
            if c["resp"]:
                resps[k].add(c["resp"])
    return [c for c in found if not c["kind"] or not _repeated(c, traces, resps)]


def _repeated(c: dict, traces: tuple[set, set, set], resps: tuple[set, set, set]) -> bool:
    for k in range(min(c["kind"], 3)):
        if c["trace"] in traces[k] or c["resp"] in resps[k]:
            return True
    return False


def _model_attr(a: Any) -> str | None:
    return _text(a.response_model) or _text(a.request_model)


def _candidate(i: int, r: Any, facts: tuple, ctx: dict, fallback_ms: int) -> dict | None:
    a = r.attributes
    kind, tool = _what(r, a)
    if kind is None and tool is None:
        return None  # (neither a call nor a tool: no usage or error of it is asked)
    usage = _usage(a)
    error = _text(a.error) if kind == _CHAT and usage is None else None
    if (kind is None or usage is None) and tool is None and error is None:
        return None
    trace, s, model = facts
    c = ctx.get(trace, _NO_CONTEXT) if trace else _NO_CONTEXT
    session = s[0] if s is not None else c.get("session") or trace or "unknown-session"
    ms = _time_ms(r)
    ms = fallback_ms if ms is None else ms
    span = _span_id(r)
    prefix = _PREFIX.get(kind, "")  # type: ignore[arg-type]
    key = f"{prefix}{trace}:{span}" if trace and span else f"{prefix or 'span:'}{session}:{ms}:{i}"
    res = r.resource
    return {"kind": None if usage is None else kind, "trace": trace, "resp": _text(a.response_id),
            "session": session, "model": model or c.get("model") or "unknown", "ms": ms, "key": key,
            "usage": usage, "tool": tool, "error": error, "call_id": _text(a.call_id),
            "version": _text(res.get("service.version")) if isinstance(res, dict) else None}


_NO_CONTEXT: dict = {}  # (a record without a trace, or of none seen: never changed)
_PREFIX = {_LOG: "log:", _TURN: "agent-turn:"}


def _row(c: dict) -> dict:
    row = {"entry_id": c["key"], "message_id": c["resp"], "timestamps": iso_ms(c["ms"])}
    if c["tool"] is not None:
        return {**row, "role": "toolResult", "tool_name": c["tool"], "est_tokens": 0}
    row.update(role="assistant", model=c["model"], is_error=c["error"] is not None, error_message=c["error"],
               est_tokens=0)
    if c["usage"] is not None:
        inp, out, cr, cw, reason = c["usage"]
        row.update(input_tokens=inp, output_tokens=out, cache_read_tokens=cr, cache_write_tokens=cw,
                   reasoning_tokens=reason)
    return row


def read(path: str, fh: IO[bytes] | None):
    """One session of a Copilot CLI export (``<file>#<session id>``): its calls and tool spans, a chain."""
    store, sid = one_member(path)
    return read_members(store, [sid])[0]


def read_members(store: str, sids: list[str]) -> list:
    """Sessions of one export, together (:attr:`~sessionlab.agents.AgentSpec.members`): its calls
    grouped by session once."""
    return [agent_file(member_path(store, sid), "copilot", [_row(c) for c in calls],
                       {"session_id": sid, "agent_version": _version_of(calls)})
            for sid, calls in zip(sids, _session_calls(store, sids), strict=True)]


def spend_members(store: str, sids: list[str]) -> SpendRows:
    """A usage report's read of sessions of one export: their spend rows and facts as a spend-only
    :func:`read_members` gives them, without a file per session (a task's exports, one after the
    other, make one bundle: :mod:`sessionlab.tables._bundle`)."""
    rows: list[tuple] = []
    counts, versions = [], []
    for calls in _session_calls(store, sids):
        got = _spend_rows(calls)
        rows += got
        counts.append(len(got))
        versions.append(_version_of(calls))
    return SpendRows(rows, counts, {"session_id": list(sids), "agent_version": versions})


# (a call's spend row: its place, ids, time, model and error; an export records no cost)
_CALLS = CallRows(("line_no", "entry_id", "parent_id", "timestamps", "model", "message_id", "is_error",
                   "error_message"), est_tokens=0)


def _spend_rows(calls: list[dict]) -> list[tuple]:
    """A session's spend rows, ``file_rows([_row(c) for c in calls], True)`` built straight (a test
    holds the two equal): a call's row of :data:`~._rows.COLUMNS` (its usage summed into its total
    and context tokens), each the child of the row before, a tool span's row left out."""
    out = []
    prev = None
    for i, c in enumerate(calls, 1):
        key = c["key"]
        if c["tool"] is None:
            u, error = c["usage"], c["error"]
            out.append(_CALLS.row((i, key, prev, iso_ms(c["ms"]), c["model"], c["resp"], error is not None, error),
                                  None if u is None else (*u, None)))
        prev = key
    return out


def _session_calls(store: str, sids: list[str]) -> list[list[dict]]:
    """The calls of each of the sessions ``sids`` of an export, in time order."""
    mine: dict[str, list[dict]] = {}
    for c in records(store):
        got = mine.get(c["session"])
        if got is None:
            mine[c["session"]] = [c]
        else:
            got.append(c)
    return [sorted(mine.get(sid, ()), key=_ms) for sid in sids]


def _ms(c: dict) -> int:
    return c["ms"]


def _version_of(calls: list[dict]) -> str | None:
    """The service version of a session's first call that names one."""
    return next((c["version"] for c in calls if c["version"]), None)


SPEC = AgentSpec(
    name="copilot", title="Copilot CLI", recognise=lambda obj: False, recognise_file=_recognise_file, opens=_opens,
    roots=roots, env=(ENV,), files=files, reader="sessionlab.agents.copilot:read",
    members="sessionlab.agents.copilot:read_members", spend_members="sessionlab.agents.copilot:spend_members",
    finish="sessionlab.agents.copilot:finish", calls_need_usage=True, priced=True, stores=stores, bundled=True,
    store_sessions="sessionlab.agents.copilot:store_sessions",
    folder_doc="`~/.copilot/otel/*.jsonl` and the file `$COPILOT_OTEL_FILE_EXPORTER_PATH` names: Copilot CLI's "
               "OpenTelemetry export, written when enabled; each session is `<file>#<session id>`",
)
