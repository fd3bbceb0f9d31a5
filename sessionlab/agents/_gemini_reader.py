"""Gemini CLI chat recordings (``~/.gemini/tmp/<project>/chats/session-*.json`` or ``.jsonl``) to rows.

Two generations of one record: a JSON document ``{sessionId, projectHash, startTime, lastUpdated,
messages: [...]}``, and a JSONL stream whose first line holds the session's fields, then one message
per line, a message written again under its ``id`` as it streams (the later copy replaces the
earlier one, in its place) and ``{"$set": {...}}`` lines updating the session's fields.

A message is ``{id, timestamp, type, content, thoughts?, toolCalls?, tokens?, model?}``; ``type``
``user`` and ``gemini`` are messages (user, assistant), ``info``, ``error`` and ``warning`` side
nodes. A tool call carries its result: it becomes a ``toolResult`` row after its message. The
session has no tree: rows form a chain.

Usage (``tokens``): ``input`` is the whole prompt, its ``cached`` part included (when ``total`` is
``input + output + thoughts + tool``), ``tool`` the tool-use prompt, ``thoughts`` the reasoning.
A call's ``input_tokens`` is ``input - cached + tool``, ``cache_read_tokens`` ``cached``,
``output_tokens`` ``output + thoughts`` (thoughts are billed as output), ``reasoning_tokens``
``thoughts``. No cost is recorded: calls are priced.
"""

from __future__ import annotations

import functools
import os
from typing import Any

from ._chain import Chain, count_of, json_chars, loads, store_memo, text_chars

__all__ = ["read_gemini", "call_usage"]

_SIDE = frozenset({"info", "error", "warning"})


def call_usage(tokens: dict) -> dict[str, int] | None:
    """A ``tokens`` object as a call's usage (None when it counts nothing)."""
    inp, out = count_of(tokens, "input", "prompt"), count_of(tokens, "output", "candidates")
    cached, tool = count_of(tokens, "cached"), count_of(tokens, "tool")
    thoughts = count_of(tokens, "thoughts", "reasoning")
    total = tokens.get("total")
    if cached and total == inp + out + thoughts + tool:  # the prompt count includes its cached part
        inp -= min(inp, cached)
    if not (inp or out or cached or thoughts or tool):
        return None
    return {"inp": inp + tool, "out": out + thoughts, "cache_read": cached, "reasoning": thoughts,
            "total": inp + tool + out + thoughts + cached}


def _records(data: bytes, chain: Chain) -> tuple[dict, list[tuple[int, dict]]]:
    """The session's fields and its messages (line number, record), from either generation."""
    text = data.decode("utf-8", "replace")
    try:
        doc = loads(text)
    except ValueError:
        doc = None
    if isinstance(doc, dict) and isinstance(doc.get("messages"), list):
        return doc, [(1, m) for m in doc["messages"] if isinstance(m, dict)]
    head: dict = {}
    order: list[str | int] = []
    found: dict[str | int, tuple[int, dict]] = {}
    for line_no, rec in chain.records(text):
        if "sessionId" in rec and "type" not in rec:
            head = {**rec, **head} if head else dict(rec)
        elif isinstance(rec.get("$set"), dict):
            head.update(rec["$set"])
        elif isinstance(rec.get("type"), str):
            key = rec["id"] if isinstance(rec.get("id"), str) else line_no
            if key not in found:
                order.append(key)
            found[key] = (line_no, rec)  # a message written again replaces the earlier copy
    return head, [found[k] for k in order]


def _call(chain: Chain, line_no: int, eid: Any, ts: Any, model: Any, tokens: Any) -> int:
    """A ``gemini`` message's row, a call when its tokens count something."""
    eid = eid if isinstance(eid, str) else f"L{line_no}"
    i = chain.add(line_no, eid, ts, role="assistant", provider="google", model=model, tool_call_count=0)
    usage = call_usage(tokens) if isinstance(tokens, dict) else None
    if usage is not None:
        chain.usage(i, model=model, provider="google", **usage)
    return i


def _message(chain: Chain, line_no: int, m: dict) -> None:
    kind, ts = m.get("type"), m.get("timestamp")
    if chain.spend_only:  # (a spend-only read: the calls alone, no content)
        if kind == "gemini":
            _call(chain, line_no, m.get("id"), ts, m.get("model"), m.get("tokens"))
        return
    eid = m["id"] if isinstance(m.get("id"), str) else f"L{line_no}"
    if kind in _SIDE or kind not in ("user", "gemini"):
        chain.add(line_no, eid, ts, type=kind if isinstance(kind, str) else "unknown", side_node=True)
        return
    if kind == "user":
        i = chain.add(line_no, eid, ts, role="user")
        chain.block(i, "text", text_chars(m.get("content")))
        return
    i = _call(chain, line_no, eid, ts, m.get("model"), m.get("tokens"))
    for t in m.get("thoughts") or []:
        if isinstance(t, dict):
            chain.block(i, "thinking", text_chars(t.get("subject")) + text_chars(t.get("description")))
    if m.get("content"):
        chain.block(i, "text", text_chars(m.get("content")))
    calls = [c for c in m.get("toolCalls") or [] if isinstance(c, dict)]
    for c in calls:
        name = c.get("name")
        chain.block(i, "toolCall", text_chars(name) + json_chars(c.get("args")), name, c.get("id"))
    for c in calls:
        if c.get("result") is None:
            continue
        name, cid = c.get("name"), c.get("id")
        j = chain.add(line_no, f"{eid}/{cid}", c.get("timestamp") or ts, role="toolResult", tool_name=name)
        chain.block(j, "toolResult", json_chars(c.get("result")), name, cid)


def read_gemini(path: str, fh: Any) -> Any:
    """Read one Gemini CLI chat recording from a binary file object."""
    chain = Chain(path, "gemini")
    data = fh.read()
    spend = _spend_document(data) if chain.spend_only else None
    if spend is not None:  # (a document's usage fields alone: the calls)
        head = {"sessionId": spend.sessionId}
        for m in spend.messages:
            if m.type == "gemini":
                _call(chain, 1, m.id, m.timestamp, m.model, m.tokens)
    else:
        head, messages = _records(data, chain)
        for line_no, m in messages:
            _message(chain, line_no, m)
    sid = head.get("sessionId")
    if not isinstance(sid, str):
        sid = os.path.splitext(os.path.basename(path))[0]
    folder = os.path.dirname(os.path.dirname(path))  # (the project's: read once a batch, for all its sessions)
    cwd = store_memo(("gemini-root", folder), lambda: _project_root(folder))
    return chain.done({"session_id": sid, "cwd": cwd})


def _spend_document(data: bytes) -> Any:
    """A JSON document's session id and messages with the fields a spend-only read uses, the rest
    skipped as it is parsed (a chat's text is most of it); None when ``data`` is not such a
    document with a list of message objects (then it is read as :func:`_records` reads it)."""
    decode, refused = _spend_decoder()
    try:
        doc = decode(data)
    except refused:
        return None
    return doc if doc.messages is not None else None


@functools.cache
def _spend_decoder() -> tuple[Any, Any]:
    import msgspec

    # (the fields of a message that a spend-only read uses: see _call)
    message = msgspec.defstruct("Message", [(k, Any, None) for k in ("id", "timestamp", "type", "model", "tokens")])
    document = msgspec.defstruct("Document", [("sessionId", Any, None), ("messages", list[message] | None, None)])
    return msgspec.json.Decoder(document).decode, (msgspec.ValidationError, msgspec.DecodeError)


def _project_root(folder: str) -> str | None:
    """The project's folder, from the ``.project_root`` file of its ``folder`` (beside ``chats/``, newer releases)."""
    try:
        with open(os.path.join(folder, ".project_root"), encoding="utf-8") as fh:
            return fh.read().strip() or None
    except (OSError, UnicodeDecodeError):
        return None
