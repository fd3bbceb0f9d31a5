"""Codex rollouts (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``) to entry rows.

Codex lines carry no ids, so the reader synthesises a linear chain: one entry per response item
that the model saw or wrote, each the child of the previous one, with the id ``L<line>`` (the line
the entry starts on, stable across loads because rollouts only grow). The items of one model
response (reasoning, assistant message, tool calls) form one ``assistant`` message entry, as pi
stores a response; ``user``/``developer``/``system`` messages are message entries with that role;
tool outputs are ``toolResult`` entries named after their call; a ``compacted`` line is a
``compaction`` entry (its estimate is that of its ``replacement_history``, the context that
replaced the old one, else of its summary); ``turn_context`` lines are side nodes carrying the model.

Usage: each ``token_count`` event gives one call's usage from ``last_token_usage`` (or the
difference of ``total_token_usage`` from the previous event); an event whose cumulative total
equals the previous one is a duplicate and is collapsed. Codex ``input_tokens`` include the cached
ones: ``input_tokens`` here is the uncached part, ``cache_read_tokens`` the cached part, and
``reasoning_tokens`` the part of ``output_tokens`` spent reasoning. The usage lands on the response
entry it follows (or on a usage-only assistant entry when the rollout has none). A fork or a
sub-agent thread that replays its parent's history replays its ``token_count`` lines too; those are
not counted again (see :func:`replayed_rows`). A rollout that never names its model is priced as
:data:`FALLBACK_MODEL` (``cost_source = 'fallback'``).

A rollout written pretty-printed (one JSON object over several lines, not one per line) is read
object by object; an entry's id is then the line its object starts on.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import msgspec
import numpy as np

from .._jsjson import js_len
from ..pi.io import formats
from ..pi.io.formats import AgentFile, iter_lines
from ..pi.io.reader import LineIssue
from ..pi.rules import CHARS_PER_TOKEN, ROLE_CHARS
from ._spec import NeedsOldLines, ToolNames, null_usage

__all__ = ["resume_codex", "finish", "read_codex", "replayed_rows", "FALLBACK_MODEL"]


class _TU(msgspec.Struct):
    input_tokens: int = 0
    cached_input_tokens: int = 0
    output_tokens: int = 0
    reasoning_output_tokens: int = 0
    total_tokens: int | None = None


class _Info(msgspec.Struct):
    total_token_usage: _TU | None = None
    last_token_usage: _TU | None = None
    model_context_window: int | None = None


class _Item(msgspec.Struct):
    type: str | None = None
    text: str | None = None


class _Payload(msgspec.Struct):
    type: str | None = None
    role: str | None = None
    content: str | list[_Item] | None = None
    name: str | None = None
    arguments: msgspec.Raw = msgspec.Raw()  # a JSON string, or an object (Codex 0.142 tool_search_call)
    input: str | None = None
    call_id: str | None = None
    output: msgspec.Raw = msgspec.Raw()
    tools: msgspec.Raw = msgspec.Raw()  # a tool_search_output's result
    summary: str | list[_Item] | None = None
    info: _Info | None = None
    model: str | None = None
    id: str | None = None
    cli_version: str | None = None
    cwd: str | None = None
    source: Any = None
    forked_from_id: str | None = None
    message: str | None = None
    replacement_history: msgspec.Raw = msgspec.Raw()


class _HistoryItem(msgspec.Struct):
    type: str | None = None
    content: str | list[_Item] | None = None


class _Line(msgspec.Struct):
    timestamp: str | None = None
    type: str | None = None
    payload: _Payload | None = None


_DECODE = msgspec.json.Decoder(_Line).decode
_DECODE_HISTORY = msgspec.json.Decoder(list[_HistoryItem]).decode


def _history_chars(raw: bytes) -> int | None:
    """Characters of the messages of a ``replacement_history`` (None without a readable one)."""
    if not raw or raw == b"null":
        return None
    try:
        items = _DECODE_HISTORY(raw)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    return sum(_items_chars(it.content) for it in items if it.type == "message")

_ASSISTANT_ITEMS = frozenset({"reasoning", "function_call", "custom_tool_call", "local_shell_call",
                              "web_search_call", "tool_search_call", "image_generation_call"})
_OUTPUT_ITEMS = frozenset({"function_call_output", "custom_tool_call_output", "tool_search_output"})
_COLS = ("line_no", "entry_id", "parent_id", "type", "timestamps", "role", "provider", "model",
         "input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "total_tokens",
         "context_tokens", "est_tokens", "tool_name", "tool_call_count", "tokens_before", "custom_type",
         "summary_chars", "reasoning_tokens", "usage_kind", "side_node", "cost_source")

FALLBACK_MODEL = "gpt-5"
"""The model of a call in a rollout that names none (Codex before ``turn_context`` carried the
model, e.g. 0.34-0.42): those releases' default, as ccusage assumes (``isFallbackModel``); such a
call's ``cost_source`` is ``'fallback'``."""


# Codex's developer instructions are what pi calls a system message: counted by its parts
_PI_ROLE = {"developer": "system"}


def _counts(role: str | None, part: str) -> bool:
    """Whether pi's rule (:data:`sessionlab.pi.rules.ROLE_CHARS`) counts ``part`` of a ``role`` message."""
    return part in ROLE_CHARS.get(_PI_ROLE.get(role, role), ())  # type: ignore[arg-type]


def _raw_chars(raw: bytes) -> int:
    """Characters of a JSON value as the model gets it: a string's text, else the JSON itself."""
    if not raw or raw == b"null":
        return 0
    if raw[:1] == b'"':
        try:
            return js_len(msgspec.json.decode(raw, type=str))
        except (msgspec.DecodeError, msgspec.ValidationError):
            return len(raw)
    return len(raw)


def _items_chars(content: Any) -> int:
    if isinstance(content, str):
        return js_len(content)
    if not content:
        return 0
    return sum(js_len(x.text) for x in content)


def _parent_thread(source: Any) -> str | None:
    """``source.subagent.thread_spawn.parent_thread_id`` of a spawned sub-agent thread."""
    if isinstance(source, dict):
        sub = source.get("subagent")
        if isinstance(sub, dict):
            spawn = sub.get("thread_spawn")
            if isinstance(spawn, dict) and isinstance(spawn.get("parent_thread_id"), str):
                return spawn["parent_thread_id"]
    return None


_STATE = ("model", "prev_total", "last_prompt", "sid", "version", "cwd", "parent", "spawned", "last_id")


class _Reader:
    def __init__(self, path: str, state: dict | None = None) -> None:
        self.out = AgentFile(path=path, agent="codex", extra=[])
        self.cols: dict[str, list] = {c: [] for c in _COLS}
        self.n = 0
        self.base = 0  # the rows an earlier reader read (a resumed reader's rows come after them)
        self.model: str | None = None
        self.open_call: int | None = None  # the assistant entry awaiting its usage
        self.prev_total: tuple | None = None
        self.last_prompt: int | None = None
        self.tool_names = ToolNames((state or {}).get("pending"), resumed=state is not None)
        self.nblocks: dict[int, int] = {}
        self.items: dict[int, list] | None = None  # row -> its payloads, when asked (agent_messages)
        self.sid = self.version = self.cwd = self.parent = self.spawned = self.last_id = None
        self.pretty = False
        if state is not None:
            for k in _STATE:
                setattr(self, k, state[k])
            self.prev_total = tuple(state["prev_total"]) if state["prev_total"] is not None else None
            self.base = state["rows"]

    def state(self) -> dict | None:
        """What a reader of the file's later lines needs; None when they would change rows read
        already (an assistant entry still waiting for its usage) or the file is pretty-printed."""
        if self.open_call is not None or self.pretty:
            return None
        names = self.tool_names
        return {**{k: getattr(self, k) for k in _STATE}, "rows": self.base + self.n,
                "last_id": self.cols["entry_id"][-1] if self.n else self.last_id,
                "pending": names.pending()}

    def keep(self, i: int, p: Any) -> None:
        if self.items is not None:
            self.items.setdefault(i, []).append(p)

    def add(self, line_no: int, ts: str | None, **values: Any) -> int:
        i = self.n
        values.update(line_no=line_no, entry_id=f"L{line_no}", timestamps=ts,
                      parent_id=self.cols["entry_id"][i - 1] if i else self.last_id)
        values.setdefault("side_node", False)
        for c, col in self.cols.items():
            col.append(values.get(c))
        self.n += 1
        return i

    def block(self, i: int, kind: str, nc: int, name: str | None = None, call_id: str | None = None) -> None:
        k = self.nblocks.get(i, 0)  # position within the entry
        self.nblocks[i] = k + 1
        self.out.blocks.append((self.cols["entry_id"][i], self.cols["role"][i], k, kind, name, call_id, nc))
        self.cols["est_tokens"][i] = None if self.cols["est_tokens"][i] is None else self.cols["est_tokens"][i] + nc

    def assistant_item(self, line_no: int, ts: str | None, p: _Payload) -> None:
        i = self.open_call
        if i is None or self.cols["input_tokens"][i] is not None:
            i = self.open_call = self.add(line_no, ts, type="message", role="assistant", provider="openai",
                                          model=self.model, est_tokens=0, tool_call_count=0)
        self.keep(i, p)
        t = p.type
        if t == "message":
            self.block(i, "text", _items_chars(p.content) if _counts("assistant", "text") else 0)
        elif t == "reasoning":
            self.block(i, "thinking", _items_chars(p.summary) if _counts("assistant", "thinking") else 0)
        else:
            name = p.name or t
            if isinstance(p.call_id, str) and name:
                self.tool_names[p.call_id] = name
            self.cols["tool_call_count"][i] += 1
            args = bytes(p.arguments)
            nc = js_len(name) + (_raw_chars(args) if args and args != b"null" else js_len(p.input))
            self.block(i, "toolCall", nc if _counts("assistant", "toolCall") else 0, name, p.call_id)

    def token_count(self, line_no: int, ts: str | None, info: _Info) -> None:
        tot = info.total_token_usage
        key = (tot.input_tokens, tot.cached_input_tokens, tot.output_tokens, tot.reasoning_output_tokens) \
            if tot is not None else None
        if key is not None and key == self.prev_total:
            return  # the same cumulative total again: a duplicate event
        last = info.last_token_usage
        if last is None and tot is not None:
            p = self.prev_total or (0, 0, 0, 0)
            last = _TU(tot.input_tokens - p[0], tot.cached_input_tokens - p[1], tot.output_tokens - p[2],
                       tot.reasoning_output_tokens - p[3])
        if key is not None:
            self.prev_total = key
        if last is None or not (last.input_tokens or last.cached_input_tokens or last.output_tokens):
            return
        i = self.open_call
        if i is None or self.cols["input_tokens"][i] is not None:
            i = self.add(line_no, ts, type="message", role="assistant", provider="openai", model=self.model,
                         est_tokens=0, tool_call_count=0)
        cached = min(last.cached_input_tokens, last.input_tokens)
        total = last.total_tokens if last.total_tokens is not None else last.input_tokens + last.output_tokens
        c = self.cols
        c["input_tokens"][i] = last.input_tokens - cached
        c["cache_read_tokens"][i] = cached
        c["cache_write_tokens"][i] = 0
        c["output_tokens"][i] = last.output_tokens
        c["reasoning_tokens"][i] = last.reasoning_output_tokens
        c["total_tokens"][i] = total
        c["context_tokens"][i] = last.input_tokens + last.output_tokens
        c["usage_kind"][i] = "message"
        if c["model"][i] is None:
            c["model"][i] = self.model
        if c["model"][i] is None:  # an old rollout that never names its model
            c["model"][i], c["provider"][i], c["cost_source"][i] = FALLBACK_MODEL, "openai", "fallback"
        self.last_prompt = last.input_tokens
        self.out.extra.append((self.base + i, key))
        self.open_call = None


    def response_item(self, line_no: int, ts: Any, p: Any) -> None:
        """A ``response_item`` line: an assistant item, a message, a tool output or a side node."""
        pt = p.type
        if pt == "message" and p.role == "assistant" or pt in _ASSISTANT_ITEMS:
            self.assistant_item(line_no, ts, p)
        elif pt == "message":
            self.open_call = None
            i = self.add(line_no, ts, type="message", role=p.role, est_tokens=0)
            self.keep(i, p)
            self.block(i, "text", _items_chars(p.content) if _counts(p.role, "content") else 0)
        elif pt in _OUTPUT_ITEMS:
            self.open_call = None
            name = self.tool_names.get(p.call_id) if isinstance(p.call_id, str) else None
            i = self.add(line_no, ts, type="message", role="toolResult", tool_name=name, est_tokens=0)
            self.keep(i, p)
            out = bytes(p.output) or bytes(p.tools)  # (a tool_search_output's result is its tools)
            nc = max(len(out) - 2, 0)
            self.block(i, "toolResult", nc if _counts("toolResult", "content") else 0, name, p.call_id)
        else:
            self.add(line_no, ts, type="response_item", custom_type=pt, side_node=True)

    def compacted(self, line_no: int, ts: Any, p: Any) -> None:
        """A ``compacted`` line: a compaction row estimated from the history that replaced the context."""
        self.open_call = None
        nc = js_len(p.message)
        hist = _history_chars(bytes(p.replacement_history))  # the context that replaced the old one
        i = self.add(line_no, ts, type="compaction", tokens_before=self.last_prompt, summary_chars=nc,
                     est_tokens=-(-(nc if hist is None else hist) // CHARS_PER_TOKEN))
        self.keep(i, p)

    def characters_to_tokens(self) -> None:
        """``est_tokens`` held characters until now: ``ceil(chars / 4)`` (compaction rows have tokens already)."""
        est = self.cols["est_tokens"]
        self.cols["est_tokens"] = [None if v is None else -(-v // CHARS_PER_TOKEN) for v in est]
        for i in range(self.n):
            if self.cols["type"][i] == "compaction":
                self.cols["est_tokens"][i] = est[i]


def _objects(fh: Any, max_line: int, reader: Any = None) -> Iterator[tuple[int, bytes | None, bytes]]:
    """``iter_lines`` of a rollout, or, for a pretty-printed one (its first line is ``{``), one
    ``(line the object starts on, the object's bytes, b"")`` per object."""
    lines = iter_lines(fh, max_line=max_line)
    for line_no, raw, start in lines:
        if raw is not None and not raw.strip():
            continue
        if raw is None or raw.strip() != b"{":
            yield line_no, raw, start
            yield from lines
            return
        buf, first = [raw], line_no
        if reader is not None:
            reader.pretty = True  # (its objects span lines: a later reader could not start mid-object)
        for line_no, raw, start in lines:
            if raw is None:  # a line past the limit: the object holding it is too long
                yield first, None, start
                return
            if not buf:
                if not raw.strip():
                    continue
                first = line_no
            buf.append(raw)
            if raw[:1] == b"}":  # a top-level object closes at column 0
                yield first, b"\n".join(buf), b""
                buf = []
        if buf:
            yield first, b"\n".join(buf), b""
        return


def read_codex(path: str, fh: Any, *, max_line: int | None = None, items: dict | None = None) -> AgentFile:
    """Read one Codex rollout from a binary file object ``fh`` (``items``, when given, receives
    each row's payloads: what :mod:`sessionlab.agents._messages` turns into messages)."""
    r = _Reader(path)
    r.items = items
    return _read(r, fh, 0, formats.MAX_LINE if max_line is None else max_line)


def resume_codex(path: str, fh: Any, state: dict, lines_before: int) -> AgentFile | None:
    """The lines of a rollout after its first ``lines_before``, read alone from ``fh`` with the
    ``state`` a reader of those lines left (:attr:`AgentFile.state`); None when a new line needs an
    old one the state does not hold (an output of a call whose name it dropped)."""
    try:
        return _read(_Reader(path, state), fh, lines_before, formats.MAX_LINE)
    except NeedsOldLines:
        return None


def _read(r: _Reader, fh: Any, lines_before: int, max_line: int) -> AgentFile:
    path, out = r.out.path, r.out
    for line_no, raw, start in _objects(fh, max_line, r):
        line_no += lines_before
        if raw is None:
            out.issues.append(LineIssue(path, line_no, "line_too_long", f"line longer than {max_line} bytes skipped",
                                        start[:80].decode("utf-8", "replace")))
            continue
        if not raw.strip():
            continue
        try:
            ln = _DECODE(raw)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            kind = "bad_field" if isinstance(exc, msgspec.ValidationError) else "invalid_json"
            out.issues.append(LineIssue(path, line_no, kind, str(exc), raw[:80].decode("utf-8", "replace")))
            continue
        p, typ, ts = ln.payload, ln.type, ln.timestamp
        if p is None:
            out.issues.append(LineIssue(path, line_no, "missing_payload", f"{typ!r} line without payload",
                                        raw[:80].decode("utf-8", "replace")))
            continue
        pt = p.type
        if typ == "session_meta":
            if r.sid is None:  # (a fork may repeat its parent's meta line: the first one is this thread)
                r.sid, r.version, r.cwd = p.id, p.cli_version, p.cwd
                r.spawned = _parent_thread(p.source)
                r.parent = p.forked_from_id or r.spawned
        elif typ == "turn_context":
            r.model = p.model or r.model
            r.add(line_no, ts, type="turn_context", model=p.model, side_node=True)
        elif typ == "response_item":
            r.response_item(line_no, ts, p)
        elif typ == "event_msg":
            if pt == "token_count" and p.info is not None:
                r.token_count(line_no, ts, p.info)
        elif typ == "compacted":
            r.compacted(line_no, ts, p)
        else:
            out.issues.append(LineIssue(path, line_no, "unknown_type", f"unknown line type {typ!r}",
                                        raw[:80].decode("utf-8", "replace")))
    r.characters_to_tokens()
    out.columns, out.n = r.cols, r.n
    out.session = {"session_id": r.sid, "agent": "codex", "agent_version": r.version, "cwd": r.cwd, "name": None,
                   "parent_session_id": r.parent, "root_session_id": _parent_thread_of(r.parent, r.spawned) or r.sid}
    out.state = r.state()
    return out


def _parent_thread_of(parent: str | None, spawned: str | None) -> str | None:
    return spawned if spawned is not None and parent == spawned else None


def replayed_rows(child: list[tuple[int, tuple | None]], parent: list[tuple[int, tuple | None]]) -> set[int]:
    """Rows of a fork or sub-agent thread whose usage replays its parent's: the child's leading
    token counts whose cumulative totals the parent file also has. (Totals may come as lists: the
    cache keeps them as JSON.)"""
    seen = {tuple(k) for _, k in parent if k is not None}
    out: set[int] = set()
    for i, k in child:
        if k is None or tuple(k) not in seen:
            break
        out.add(i)
    return out


def _codex_replays(results: list) -> None:
    by_id = {r.session["session_id"]: r for r in results
             if r.session is not None and r.session.get("agent") == "codex" and r.entries is not None}
    for r in by_id.values():
        parent = by_id.get(r.session.get("parent_session_id"))
        if parent is None or parent is r:
            continue
        rows = replayed_rows(r.agent_extra or [], parent.agent_extra or [])
        if rows:
            drop = np.zeros(r.entries.num_rows, bool)
            drop[sorted(rows)] = True
            r.entries = null_usage(r.entries, drop)


def finish(results: list) -> None:
    """Codex's pass over a load: a fork or sub-agent thread's replay of its parent counted once."""
    _codex_replays(results)
