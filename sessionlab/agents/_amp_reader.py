"""Amp threads (``~/.local/share/amp/threads/T-<id>.json``) to rows.

A thread is one JSON document: ``{v, id, created, title, env, messages, usageLedger?}``. A message
is ``{role, messageId, content: [blocks], usage?, state?}``: ``text``, ``thinking`` and
``tool_use`` blocks on assistant messages; ``text`` and ``tool_result`` blocks (``toolUseID`` and
``run.result``) on user messages, a message of tool results being a ``toolResult`` row. The thread
has no tree: rows form a chain.

Usage: an assistant message's ``usage`` (``model``, ``timestamp``, ``inputTokens``,
``outputTokens``, ``cacheCreationInputTokens``, ``cacheReadInputTokens``) makes it a call. Older
threads keep a ledger instead, ``usageLedger.events`` (``timestamp``, ``model``, ``tokens.input``/
``output``, ``toMessageId``): then each event is a call, on the message it produced, its cache
counts taken from that message's ``usage``. Amp records credits, not dollars: calls are priced.
"""

from __future__ import annotations

import os
from typing import Any

from ._chain import Chain, as_dict, as_list, count_of, iso_ms, json_chars, loads, text_chars

__all__ = ["read_amp"]




def _blocks(chain: Chain, i: int, content: Any) -> None:
    for b in content if isinstance(content, list) else []:
        if not isinstance(b, dict):
            continue
        kind = b.get("type")
        if kind == "text":
            chain.block(i, "text", text_chars(b.get("text")))
        elif kind == "thinking":
            chain.block(i, "thinking", text_chars(b.get("thinking")))
        elif kind == "tool_use":
            chain.block(i, "toolCall", text_chars(b.get("name")) + json_chars(b.get("input")), b.get("name"),
                        b.get("id"))
        elif kind == "tool_result":
            run = as_dict(b.get("run"))
            chain.block(i, "toolResult", json_chars(run.get("result") if "result" in run else run.get("error")),
                        None, b.get("toolUseID") or b.get("tool_use_id"))


def _message_rows(chain: Chain, messages: list, created: str | None) -> dict[Any, int]:
    """A row per message; the rows of assistant messages by ``messageId``."""
    rows: dict[Any, int] = {}
    tools: dict[str, Any] = {}
    ts: Any = created
    for k, m in enumerate(messages):
        if not isinstance(m, dict):
            continue
        usage = as_dict(m.get("usage"))
        sent = m["meta"].get("sentAt") if isinstance(m.get("meta"), dict) else None
        ts = usage.get("timestamp") or iso_ms(sent) or ts
        eid = str(m.get("messageId", k))
        role = m.get("role")
        if role == "assistant":
            i = chain.add(k + 1, eid, ts, role="assistant", provider=None, model=usage.get("model"), tool_call_count=0)
            rows[m.get("messageId", k)] = i
        if chain.spend_only:  # (a spend-only read: the calls alone, no content)
            continue
        content = as_list(m.get("content"))
        if role == "assistant":
            for b in content:
                if isinstance(b, dict) and b.get("type") == "tool_use" and isinstance(b.get("id"), str):
                    tools[b["id"]] = b.get("name")
        else:
            results = [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]
            name = tools.get(str(results[0].get("toolUseID"))) if results else None
            i = chain.add(k + 1, eid, ts, role="toolResult" if results else "user", tool_name=name)
        _blocks(chain, i, content)
    return rows


def _from_messages(chain: Chain, messages: list, rows: dict[Any, int]) -> None:
    for k, m in enumerate(messages):
        if not isinstance(m, dict) or m.get("role") != "assistant" or not isinstance(m.get("usage"), dict):
            continue
        u = m["usage"]
        inp, out = count_of(u, "inputTokens"), count_of(u, "outputTokens")
        write, read = count_of(u, "cacheCreationInputTokens"), count_of(u, "cacheReadInputTokens")
        if inp or out or write or read:
            chain.usage(rows[m.get("messageId", k)], model=u.get("model") or None, provider=None, inp=inp, out=out,
                        cache_read=read, cache_write=write)


def _from_ledger(chain: Chain, events: list, messages: list, rows: dict[Any, int]) -> None:
    usage_of = {m.get("messageId"): m.get("usage") for m in messages
                if isinstance(m, dict) and isinstance(m.get("usage"), dict)}
    for n, e in enumerate(events):
        if not isinstance(e, dict) or not isinstance(e.get("tokens"), dict):
            continue
        to = e.get("toMessageId")
        cache = usage_of.get(to) or {}
        inp, out = count_of(e["tokens"], "input"), count_of(e["tokens"], "output")
        write, read = count_of(cache, "cacheCreationInputTokens"), count_of(cache, "cacheReadInputTokens")
        if not (inp or out or write or read):
            continue
        i = rows.get(to)
        if i is None or chain.rows[i].get("input_tokens") is not None:  # spend of no message (or a second event)
            i = chain.add(0, f"ledger/{e.get('id', n)}", e.get("timestamp"), role="assistant", tool_call_count=0)
        chain.usage(i, model=e.get("model") or None, provider=None, inp=inp, out=out, cache_read=read,
                    cache_write=write)
        chain.rows[i]["timestamps"] = e.get("timestamp") or chain.rows[i]["timestamps"]


def read_amp(path: str, fh: Any) -> Any:
    """Read one Amp thread from a binary file object."""
    chain = Chain(path, "amp")
    try:
        doc = loads(fh.read())
    except ValueError as exc:
        chain.issue(1, "invalid_json", str(exc))
        doc = {}
    doc = doc if isinstance(doc, dict) else {}
    messages = as_list(doc.get("messages"))
    rows = _message_rows(chain, messages, iso_ms(doc.get("created")))
    ledger = (doc.get("usageLedger") or {}).get("events") if isinstance(doc.get("usageLedger"), dict) else None
    if isinstance(ledger, list):
        _from_ledger(chain, ledger, messages, rows)
    else:
        _from_messages(chain, messages, rows)
    trees = ((doc.get("env") or {}).get("initial") or {}).get("trees") if isinstance(doc.get("env"), dict) else None
    uri = trees[0].get("uri") if isinstance(trees, list) and trees and isinstance(trees[0], dict) else None
    cwd = uri[len("file://"):] if isinstance(uri, str) and uri.startswith("file://") else None
    sid = doc.get("id") if isinstance(doc.get("id"), str) else os.path.splitext(os.path.basename(path))[0]
    return chain.done({"session_id": sid, "cwd": cwd, "name": doc.get("title") or None})
