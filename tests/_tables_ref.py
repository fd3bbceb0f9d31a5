"""Independent references for the table tests: the object model and a per-line json.loads pass."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from sessionlab import read_session
from sessionlab._jsjson import js_len
from sessionlab.pi import model as Mo
from sessionlab.pi.io.dialects import block_from_dict, message_to_dict
from sessionlab.pi.tokens import current_system_message, estimate_tokens
from tests._dict_estimate import estimate_tokens_dict

DATA = Path(__file__).parent / "data" / "pi"
SAMPLES = sorted(p for p in DATA.rglob("*.jsonl") if p.relative_to(DATA).parts[0] != "v4")  # v4: test_v4.py


def ts_ms(s):
    if not isinstance(s, str):
        return None
    try:
        dt = datetime.fromisoformat(s)
    except ValueError:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return (dt - datetime(1970, 1, 1, tzinfo=UTC)).total_seconds() * 1000 // 1


def _images(content):
    if isinstance(content, str):
        return 0
    if isinstance(content, tuple):
        return sum(isinstance(b, Mo.ImageContent) for b in content)
    return None


def _usage(u, kind):
    return dict(usage_kind=kind, input_tokens=u.input, output_tokens=u.output, cache_read_tokens=u.cache_read,
                cache_write_tokens=u.cache_write, total_tokens=u.total_tokens, context_tokens=u.context_tokens(),
                cost_usd=u.cost.total if u.cost else None, reasoning_tokens=u.reasoning,
                cache_write_1h_tokens=u.cache_write_1h)


def _system_est(e, by_id):
    """pi 1.6's current system message at a system message or compaction: the system messages on the
    path from the nearest compaction above (its systemMessage) down to ``e``, replayed into one."""
    chain, seen, x = [], set(), e
    while x is not None and id(x) not in seen:
        seen.add(id(x))
        if isinstance(x, Mo.CompactionEntry):
            chain += [x.system_message] if x.system_message is not None else []
            break
        if isinstance(x, Mo.MessageEntry) and isinstance(x.message, Mo.SystemMessage):
            chain.append(x.message)
        x = by_id.get(x.parent_id)
    current = current_system_message(chain[::-1])
    return estimate_tokens(current) if current is not None else None


def _edit(e, target):
    """(edit_action, est_tokens) of a context_edit: its target's message with the replacement content
    (a string is a text block for an assistant or toolResult target)."""
    if e.replacement is None:
        return "remove", None
    if not isinstance(e.replacement, dict):
        return None, None
    if isinstance(target, Mo.CustomMessageEntry):
        m = Mo.CustomMessage(content=target.content)
    elif isinstance(target, Mo.MessageEntry) and target.message is not None:
        m = target.message
    else:
        return "replace", None
    new = e.replacement.get("content")
    if m.role in ("user", "assistant", "toolResult", "custom"):
        if isinstance(new, str) and m.role in ("assistant", "toolResult"):
            new = (Mo.TextContent(text=new),)
        elif isinstance(new, list):
            new = tuple(block_from_dict(b) for b in new)
        m = replace(m, content=new)
    return "replace", estimate_tokens(m)


def object_rows(path):
    """Expected column values per entry, read off the object model."""
    sf = read_session(path, on_bad_lines="skip")
    out = []
    position = {}  # id -> index of its last entry (seed leaf records are not parents)
    for i, e in enumerate(sf.entries):
        if e.type != "leaf":
            position[e.id] = i
    by_id = {k: sf.entries[i] for k, i in position.items()}
    for i, (e, line) in enumerate(zip(sf.entries, sf.line_numbers)):
        r = {"entry_id": e.id, "parent_id": e.parent_id, "type": e.type, "line_no": line,
             "session_id": sf.header.id if sf.header else None, "entry_index": i,
             "parent_index": None if e.type == "leaf" else position.get(e.parent_id)}
        m = e.message if isinstance(e, Mo.MessageEntry) else None
        r["role"] = m.role if m is not None else None
        if isinstance(m, Mo.AssistantMessage):
            r.update(provider=m.provider, model=m.model, api=m.api, stop_reason=m.stop_reason,
                     error_message=m.error_message, response_model=m.response_model,
                     tool_call_count=sum(isinstance(b, Mo.ToolCall) for b in m.content or ()))
            if m.usage:
                r.update(_usage(m.usage, "message"))
        if isinstance(m, Mo.SystemMessage):
            r["system_est_tokens"] = _system_est(e, by_id)
            r["system_json"] = message_to_dict(m)
        if isinstance(m, Mo.ToolResultMessage):
            r.update(tool_name=m.tool_name, is_error=m.is_error)
        if isinstance(m, Mo.CustomMessage):
            r["custom_type"] = m.custom_type
        if m is not None:
            r["est_tokens"] = estimate_tokens(m)
            r["image_count"] = _images(getattr(m, "content", None))
        if isinstance(e, Mo.ModelChangeEntry):
            r.update(provider=e.provider, model=e.model_id)
        if isinstance(e, Mo.CompactionEntry):
            r.update(first_kept_entry_id=e.first_kept_entry_id, tokens_before=e.tokens_before,
                     summary_chars=js_len(e.summary),
                     est_tokens=estimate_tokens(Mo.CompactionSummaryMessage(summary=e.summary)),
                     system_est_tokens=_system_est(e, by_id), **(_usage(e.usage, "compaction") if e.usage else {}))
            if e.system_message is not None:
                r["system_json"] = message_to_dict(e.system_message)
        if isinstance(e, Mo.BranchSummaryEntry):
            r.update(from_id=e.from_id, summary_chars=js_len(e.summary),
                     est_tokens=estimate_tokens(Mo.BranchSummaryMessage(summary=e.summary)),
                     **(_usage(e.usage, "branch_summary") if e.usage else {}))
        if isinstance(e, Mo.CustomMessageEntry):
            r.update(custom_type=e.custom_type, est_tokens=estimate_tokens(Mo.CustomMessage(content=e.content)),
                     image_count=_images(e.content))
        if isinstance(e, Mo.UsageEntry):
            r.update(provider=e.provider, model=e.model, **(_usage(e.usage, e.kind or "usage") if e.usage else {}))
        if isinstance(e, Mo.ContextEditEntry):
            action, est = _edit(e, by_id.get(e.target_id))
            r.update(target_id=e.target_id, edit_action=action, est_tokens=est)
        if isinstance(e, Mo.CustomEntry):
            r["custom_type"] = e.custom_type
        if isinstance(e, Mo.LabelEntry):
            r.update(target_id=e.target_id, label=e.label)
        if isinstance(e, Mo.ThinkingLevelChangeEntry):
            r["thinking_level"] = e.thinking_level
        if isinstance(e, Mo.SessionInfoEntry):
            r["name"] = e.name
        r["timestamp_ms"] = ts_ms(e.timestamp)
        # what every pi row has beside other agents' rows
        r.update(agent="pi", side_node=False, root_session_id=r["session_id"],
                 cost_source="recorded" if r.get("cost_usd") is not None else None)
        out.append(r)
    return sf, out


def line_rows(path):
    """The same values from a plain per-line json.loads pass (clean pi v3 files only)."""
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    header = json.loads(lines[0])
    out = []
    for no, text in enumerate(lines[1:], start=2):
        if not text.strip():
            continue
        d = json.loads(text)
        t = d["type"]
        m = d.get("message") if t == "message" else None
        u = (m or {}).get("usage") if (m or {}).get("role") == "assistant" else None
        r = {"session_id": header["id"], "line_no": no, "entry_id": d.get("id"),
             "parent_id": d.get("parentId"), "type": t, "role": m.get("role") if m else None}
        if u:
            parts = [u.get(k) or 0 for k in ("input", "output", "cacheRead", "cacheWrite")]
            r.update(input_tokens=u.get("input"), total_tokens=u.get("totalTokens"),
                     context_tokens=u.get("totalTokens") or sum(parts),
                     cost_usd=(u.get("cost") or {}).get("total"))
        if m is not None:
            r["est_tokens"] = estimate_tokens_dict(m)
        if (m or {}).get("role") == "system":  # the system message as written
            r["system_json"] = m
        if t == "compaction":
            r["system_json"] = d.get("systemMessage")
        if t == "custom_message":
            r["est_tokens"] = estimate_tokens_dict({"role": "custom", "content": d.get("content")})
        if t in ("compaction", "branch_summary"):
            r["est_tokens"] = math.ceil(js_len(d.get("summary") or "") / 4)
        if t == "model_change":
            r["model"] = d.get("modelId")
        out.append(r)
    return out
