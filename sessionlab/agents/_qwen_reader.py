"""Qwen Code chat records (``~/.qwen/projects/<project>/chats/<session id>.jsonl``) to rows.

One record per line: ``{uuid, parentUuid, sessionId, timestamp, type, cwd, version, message?,
usageMetadata?, model?, subtype?, systemPayload?, toolCallResult?, forkedFrom?}``; ``uuid`` and
``parentUuid`` make a tree. ``type`` ``user`` and ``assistant`` are messages (``message.parts`` in
Gemini's form: ``text``, ``thought`` text, ``functionCall``), ``tool_result`` a tool's result (its
``functionResponse`` part), ``system`` a side node (``ui_telemetry``, ``slash_command``,
``custom_title``, which names the session...) except ``chat_compression``, a compaction.

Usage (``usageMetadata``, as Qwen Code converts the provider's OpenAI-style usage):
``promptTokenCount`` is the whole prompt, its ``cachedContentTokenCount`` included;
``candidatesTokenCount`` the output, its ``thoughtsTokenCount`` included. A call's
``input_tokens`` is the uncached part, ``cache_read_tokens`` the cached one, ``output_tokens`` the
output and ``reasoning_tokens`` the part of it spent reasoning (as for Codex). No cost is recorded:
calls are priced. A ``/branch`` session copies its parent's records (each with ``forkedFrom``):
the copies are the parent's spend, not calls of their own.
"""

from __future__ import annotations

import os
from typing import Any

from ._calls import call_values
from ._chain import Chain, as_dict, as_list, count_of, counts_of, json_chars, record_type, text_chars

__all__ = ["read_qwen"]

# the keys of a record the reader uses (a spend-only read never asks the message)
_SPEND_KEYS = ("uuid", "parentUuid", "sessionId", "timestamp", "type", "cwd", "version", "model", "usageMetadata",
               "forkedFrom", "subtype", "systemPayload")
_SpendRecord = record_type("QwenSpendRecord", _SPEND_KEYS)
_Record = record_type("QwenRecord", (*_SPEND_KEYS, "message"))


def _parts(chain: Chain, i: int, parts: Any) -> None:
    for p in parts if isinstance(parts, list) else []:
        if not isinstance(p, dict):
            continue
        if isinstance(p.get("functionCall"), dict):
            fc = p["functionCall"]
            chain.block(i, "toolCall", text_chars(fc.get("name")) + json_chars(fc.get("args")), fc.get("name"),
                        fc.get("id"))
        elif isinstance(p.get("functionResponse"), dict):
            fr = p["functionResponse"]
            chain.block(i, "toolResult", json_chars(fr.get("response")), fr.get("name"), fr.get("id"))
        elif "text" in p:
            chain.block(i, "thinking" if p.get("thought") else "text", text_chars(p.get("text")))


_COUNTS = ("promptTokenCount", "candidatesTokenCount", "cachedContentTokenCount", "thoughtsTokenCount",
           "totalTokenCount")


def _usage_of(d: Any) -> tuple | None:
    """An assistant record's usage as the arguments of :meth:`Chain.usage` in its order (``model,
    provider, inp, out, cache_read, cache_write, reasoning, total, cost``); None without one."""
    u = d.usageMetadata
    if not isinstance(u, dict) or isinstance(d.forkedFrom, dict):
        return None  # (a /branch copy of its parent's record: the parent's spend)
    prompt, out, cached, thoughts, total = counts_of(u, _COUNTS)
    if not (prompt or out or cached):
        return None
    cached = min(cached, prompt)
    return d.model or None, "qwen", prompt - cached, out, cached, 0, thoughts, total or prompt + out, None


def _ids(line_no: int, d: Any) -> tuple[str, str | None]:
    """A record's entry id (its line's when it has none) and its parent's."""
    eid = d.uuid if isinstance(d.uuid, str) else f"L{line_no}"
    parent = d.parentUuid
    return eid, parent if isinstance(parent, str) else None


def _title(d: Any, facts: dict) -> None:
    if d.subtype == "custom_title":
        title = as_dict(d.systemPayload).get("customTitle")
        facts["name"] = title if isinstance(title, str) else facts.get("name")


_ROLES = {"user": "user", "assistant": "assistant", "tool_result": "toolResult"}


def _record(chain: Chain, line_no: int, d: Any, facts: dict) -> None:
    typ = d.type
    ts = d.timestamp
    eid, parent = _ids(line_no, d)
    role = _ROLES.get(typ) if isinstance(typ, str) else None
    if role == "assistant":
        i = chain.add(line_no, eid, ts, role=role, tool_name=None, model=d.model, provider="qwen", tool_call_count=0)
        if not chain.spend_only:
            _parts(chain, i, as_dict(d.message).get("parts"))
        chain.usage_of(i, _usage_of(d))
    elif role is not None:
        tool = None
        if typ == "tool_result":
            parts = as_list(as_dict(d.message).get("parts"))
            fr: dict = next((p["functionResponse"] for p in parts if isinstance(p, dict)
                             and isinstance(p.get("functionResponse"), dict)), {})
            tool = fr.get("name")
        i = chain.add(line_no, eid, ts, role=role, tool_name=tool)
        if not chain.spend_only:
            _parts(chain, i, as_dict(d.message).get("parts"))
    elif typ == "system" and d.subtype == "chat_compression":
        payload = as_dict(d.systemPayload)
        info = as_dict(payload.get("info"))
        history = payload.get("compressedHistory") or []
        nc = sum(text_chars(c.get("parts")) for c in history if isinstance(c, dict))
        chain.add(line_no, eid, ts, type="compaction", tokens_before=count_of(info, "originalTokenCount") or None,
                  summary_chars=nc, est_tokens=nc)
    else:
        _title(d, facts)
        chain.add(line_no, eid, ts, type=typ if isinstance(typ, str) else "unknown", side_node=True,
                  custom_type=d.subtype)
    chain.rows[-1]["parent_id"] = parent


def read_qwen(path: str, fh: Any) -> Any:
    """Read one Qwen Code chat record file from a binary file object."""
    chain = Chain(path, "qwen")
    facts: dict[str, Any] = {}
    sid = cwd = version = parent = None
    spend = chain.spend_only
    for line_no, d in chain.typed_records(fh.read(), _SpendRecord if spend else _Record):
        if sid is None or cwd is None or version is None:  # (each the first record's that has it)
            if sid is None and isinstance(d.sessionId, str):
                sid = d.sessionId
            if cwd is None and isinstance(d.cwd, str):
                cwd = d.cwd
            if version is None and isinstance(d.version, str):
                version = d.version
        if parent is None and isinstance(d.forkedFrom, dict) and isinstance(d.forkedFrom.get("sessionId"), str):
            parent = d.forkedFrom["sessionId"]
        if not spend:
            _record(chain, line_no, d, facts)
        elif d.type == "assistant":  # (a spend-only read: the calls alone, as their tuples, and the name)
            eid, up = _ids(line_no, d)
            chain.call(call_values(line_no, eid, up, d.timestamp, "qwen", d.model, _usage_of(d)))
        else:
            _title(d, facts)
    return chain.done({"session_id": sid or os.path.splitext(os.path.basename(path))[0], "cwd": cwd,
                       "name": facts.get("name"), "agent_version": version, "parent_session_id": parent})
