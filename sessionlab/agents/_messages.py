"""The messages of Claude Code and Codex entries, as the object model's message types.

The tables hold no message text; a face that shows a context (``context_messages``, the
``BranchExplorer``) reads the member entries back from their file. :func:`agent_messages` gives,
for the entry ids asked, one message per entry, as the tables count them:

- Claude Code: a ``user`` line is a :class:`~sessionlab.pi.model.UserMessage`, or a
  :class:`~sessionlab.pi.model.ToolResultMessage` when it holds tool results; an ``assistant`` line
  (one streamed content block of a response) an :class:`~sessionlab.pi.model.AssistantMessage` with
  its blocks, model and usage; a ``compact_boundary`` a
  :class:`~sessionlab.pi.model.CompactionSummaryMessage` (its summary is the next user line).
- Codex: the rows the Codex reader makes (:mod:`sessionlab.agents._codex_reader`), from the same payloads: a
  response's reasoning, text and tool calls form one assistant message; ``developer`` and
  ``system`` messages are :class:`~sessionlab.pi.model.SystemMessage`.

Session text is returned as written (the faces escape it).
"""

from __future__ import annotations

import json
from typing import Any

from ..pi.io.formats import iter_lines
from ..pi.model import content as C
from ..pi.model import messages as M

__all__ = ["agent_messages"]


def agent_messages(path: str, agent: str, entry_ids: set[str] | list[str]) -> dict[str, M.Message]:
    """``{entry id: message}`` for the entries ``entry_ids`` of a Claude Code or Codex file.

    Example:
        >>> msgs = agent_messages("data/codex/generated/sessions/2026/02/02/rollout-….jsonl", "codex",
        ...                       {"L5"})  # doctest: +SKIP
    """
    want = set(entry_ids)
    if agent == "codex":
        return _codex(path, want)
    return _claude(path, want)


# -- Claude Code -------------------------------------------------------------------------------
def _claude_block(b: Any) -> C.ContentBlock:
    if not isinstance(b, dict):
        return C.UnknownContent(block_type=None, raw=b)
    t = b.get("type")
    if t == "text":
        return C.TextContent(text=str(b.get("text") or ""))
    if t in ("thinking", "redacted_thinking"):
        return C.ThinkingContent(thinking=str(b.get("thinking") or ""), redacted=t == "redacted_thinking" or None)
    if t == "tool_use":
        return C.ToolCall(id=b.get("id"), name=str(b.get("name") or ""), arguments=b.get("input"))
    if t == "image":
        src: dict = b["source"] if isinstance(b.get("source"), dict) else {}
        return C.ImageContent(data=str(src.get("data") or ""), mime_type=src.get("media_type"))
    return C.UnknownContent(block_type=t, raw=b)


def _result_content(c: Any) -> tuple[C.ContentBlock, ...]:
    if isinstance(c, str):
        return (C.TextContent(text=c),)
    if isinstance(c, list):
        return tuple(_claude_block(x) for x in c)
    return ()


def _claude_user(d: dict, tool_names: dict[str, str]) -> M.Message:
    content = (d.get("message") or {}).get("content")
    if isinstance(content, str):
        return M.UserMessage(content=content)
    blocks = content if isinstance(content, list) else []
    results = [b for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result"]
    if not results:
        return M.UserMessage(content=tuple(_claude_block(b) for b in blocks))
    first = results[0]
    body: tuple = ()
    for r in results:  # one message per entry, as the tables count it (several results: all their parts)
        body += _result_content(r.get("content"))
    call = first.get("tool_use_id")
    return M.ToolResultMessage(tool_call_id=call, tool_name=tool_names.get(call) if isinstance(call, str) else None,
                               content=body, is_error=any(bool(r.get("is_error")) for r in results))


def _claude_assistant(d: dict) -> M.AssistantMessage:
    m = d.get("message") or {}
    content = m.get("content")
    blocks = tuple(_claude_block(b) for b in content) if isinstance(content, list) else (
        (C.TextContent(text=content),) if isinstance(content, str) else ())
    u = m.get("usage") if isinstance(m.get("usage"), dict) else None
    usage = None
    if u is not None:
        parts = [u.get(k) or 0 for k in ("input_tokens", "output_tokens", "cache_read_input_tokens",
                                         "cache_creation_input_tokens")]
        usage = M.Usage(input=parts[0], output=parts[1], cache_read=parts[2], cache_write=parts[3],
                        total_tokens=sum(parts))
    return M.AssistantMessage(content=blocks, provider="anthropic", model=m.get("model"), usage=usage,
                              stop_reason=m.get("stop_reason"), response_id=m.get("id"))


def _claude(path: str, want: set[str]) -> dict[str, M.Message]:
    out: dict[str, M.Message] = {}
    tool_names: dict[str, str] = {}
    with open(path, "rb") as fh:
        for _, raw, _ in iter_lines(fh):  # (a huge file-history-snapshot line is skipped unread)
            if not raw or b'"uuid"' not in raw:
                continue
            try:
                d = json.loads(raw)
            except ValueError:
                continue
            if not isinstance(d, dict):
                continue
            typ, uid = d.get("type"), d.get("uuid")
            if typ == "assistant":  # tool names, for the results that follow
                for b in (d.get("message") or {}).get("content") or ():
                    if isinstance(b, dict) and b.get("type") == "tool_use" and isinstance(b.get("id"), str):
                        tool_names[b["id"]] = str(b.get("name") or "")
            if uid not in want:
                continue
            if typ == "user":
                out[uid] = _claude_user(d, tool_names)
            elif typ == "assistant":
                out[uid] = _claude_assistant(d)
            elif typ == "system" and d.get("subtype") == "compact_boundary":
                meta: dict = d["compactMetadata"] if isinstance(d.get("compactMetadata"), dict) else {}
                out[uid] = M.CompactionSummaryMessage(summary="", tokens_before=meta.get("preTokens"))
    return out


# -- Codex -------------------------------------------------------------------------------------
def _texts(content: Any) -> tuple[C.ContentBlock, ...]:
    if isinstance(content, str):
        return (C.TextContent(text=content),)
    return tuple(C.TextContent(text=x.text or "") for x in content or ())


def _arguments(p: Any) -> Any:
    raw = bytes(p.arguments)
    if raw and raw != b"null":
        try:
            return json.loads(raw)
        except ValueError:
            return raw.decode("utf-8", "replace")
    return p.input


def _codex_assistant(payloads: list, model: str | None, usage: M.Usage | None) -> M.AssistantMessage:
    blocks: list[C.ContentBlock] = []
    for p in payloads:
        if p.type == "message":
            blocks.extend(_texts(p.content))
        elif p.type == "reasoning":
            blocks.append(C.ThinkingContent(thinking="\n".join(x.text or "" for x in p.summary or ())
                                            if not isinstance(p.summary, str) else p.summary))
        else:
            args = _arguments(p)
            if isinstance(args, str):  # a JSON string argument: its text (function_call) as the model wrote it
                try:
                    args = json.loads(args)
                except ValueError:
                    pass
            blocks.append(C.ToolCall(id=p.call_id, name=p.name or p.type or "", arguments=args))
    return M.AssistantMessage(content=tuple(blocks), provider="openai", model=model, usage=usage)


def _codex_output(p: Any, tool_name: str | None) -> M.ToolResultMessage:
    raw = bytes(p.output) or bytes(p.tools)
    try:
        val = json.loads(raw) if raw else ""
    except ValueError:
        val = raw.decode("utf-8", "replace")
    text = val if isinstance(val, str) else json.dumps(val, ensure_ascii=False)
    return M.ToolResultMessage(tool_call_id=p.call_id, tool_name=tool_name, content=(C.TextContent(text=text),))


def _codex(path: str, want: set[str]) -> dict[str, M.Message]:
    from ._codex_reader import read_codex

    items: dict[int, list] = {}
    with open(path, "rb") as fh:
        af = read_codex(path, fh, items=items)
    cols = af.column_lists()
    out: dict[str, M.Message] = {}
    for i in range(af.n):
        eid = cols["entry_id"][i]
        if eid not in want:
            continue
        payloads = items.get(i, [])
        typ, role = cols["type"][i], cols["role"][i]
        if typ == "compaction":
            out[eid] = M.CompactionSummaryMessage(summary=(payloads[0].message if payloads else None) or "",
                                                  tokens_before=cols["tokens_before"][i])
        elif role == "assistant":  # (a usage-only response has no payloads: an empty message)
            usage = None
            if cols["input_tokens"][i] is not None:
                usage = M.Usage(input=cols["input_tokens"][i], output=cols["output_tokens"][i],
                                cache_read=cols["cache_read_tokens"][i], cache_write=0,
                                total_tokens=cols["total_tokens"][i], reasoning=cols["reasoning_tokens"][i])
            out[eid] = _codex_assistant(payloads, cols["model"][i], usage)
        elif not payloads:
            continue
        elif role == "toolResult":
            out[eid] = _codex_output(payloads[0], cols["tool_name"][i])
        elif role in ("developer", "system"):
            out[eid] = M.SystemMessage(content=_texts(payloads[0].content))
        else:
            out[eid] = M.UserMessage(content=_texts(payloads[0].content))
    return out
