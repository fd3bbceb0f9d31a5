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

from ._chain import Chain, as_dict, as_list, count_of, json_chars, text_chars

__all__ = ["read_qwen"]



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


def _usage(chain: Chain, i: int, d: dict) -> None:
    u = d.get("usageMetadata")
    if not isinstance(u, dict) or isinstance(d.get("forkedFrom"), dict):
        return  # (a /branch copy of its parent's record: the parent's spend)
    prompt, out = count_of(u, "promptTokenCount"), count_of(u, "candidatesTokenCount")
    cached = count_of(u, "cachedContentTokenCount")
    if not (prompt or out or cached):
        return
    cached = min(cached, prompt)
    chain.usage(i, model=d.get("model") or None, provider="qwen", inp=prompt - cached, out=out, cache_read=cached,
                reasoning=count_of(u, "thoughtsTokenCount"), total=count_of(u, "totalTokenCount") or prompt + out)


def _title(d: dict, facts: dict) -> None:
    if d.get("subtype") == "custom_title":
        title = (d.get("systemPayload") or {}).get("customTitle")
        facts["name"] = title if isinstance(title, str) else facts.get("name")


def _record(chain: Chain, line_no: int, d: dict, facts: dict) -> None:
    typ = d.get("type")
    if chain.spend_only and typ != "assistant":  # (a spend-only read: the calls alone)
        _title(d, facts)
        return
    ts = d.get("timestamp")
    eid = d["uuid"] if isinstance(d.get("uuid"), str) else f"L{line_no}"
    message = as_dict(d.get("message"))
    if typ in ("user", "assistant", "tool_result"):
        role = {"user": "user", "assistant": "assistant", "tool_result": "toolResult"}[typ]
        tool = None
        if typ == "tool_result":
            fr: dict = next((p["functionResponse"] for p in as_list(message.get("parts")) if isinstance(p, dict)
                             and isinstance(p.get("functionResponse"), dict)), {})
            tool = fr.get("name")
        extra = {"model": d.get("model"), "provider": "qwen", "tool_call_count": 0} if role == "assistant" else {}
        i = chain.add(line_no, eid, ts, role=role, tool_name=tool, **extra)
        if not chain.spend_only:
            _parts(chain, i, message.get("parts"))
        if role == "assistant":
            _usage(chain, i, d)
    elif typ == "system" and d.get("subtype") == "chat_compression":
        payload = as_dict(d.get("systemPayload"))
        info = as_dict(payload.get("info"))
        history = payload.get("compressedHistory") or []
        nc = sum(text_chars(c.get("parts")) for c in history if isinstance(c, dict))
        chain.add(line_no, eid, ts, type="compaction", tokens_before=count_of(info, "originalTokenCount") or None,
                  summary_chars=nc, est_tokens=nc)
    else:
        _title(d, facts)
        chain.add(line_no, eid, ts, type=typ if isinstance(typ, str) else "unknown", side_node=True,
                  custom_type=d.get("subtype"))
    chain.rows[-1]["parent_id"] = d.get("parentUuid") if isinstance(d.get("parentUuid"), str) else None


def read_qwen(path: str, fh: Any) -> Any:
    """Read one Qwen Code chat record file from a binary file object."""
    chain = Chain(path, "qwen")
    facts: dict[str, Any] = {}
    for line_no, d in chain.records(fh.read()):
        for key in ("sessionId", "cwd", "version"):
            if key not in facts and isinstance(d.get(key), str):
                facts[key] = d[key]
        fork = d.get("forkedFrom")
        if "parent" not in facts and isinstance(fork, dict) and isinstance(fork.get("sessionId"), str):
            facts["parent"] = fork["sessionId"]
        _record(chain, line_no, d, facts)
    sid = facts.get("sessionId") or os.path.splitext(os.path.basename(path))[0]
    return chain.done({"session_id": sid, "cwd": facts.get("cwd"), "name": facts.get("name"),
                       "agent_version": facts.get("version"), "parent_session_id": facts.get("parent")})
