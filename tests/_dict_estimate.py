"""pi's per-message estimate on a message in pi's dict form: a plain reference for the tests (and
``benchmarks/bench_loaders.py``'s json.loads loop), written from pi's source independently of the
object model's :func:`sessionlab.pi.tokens.estimate_tokens`, which the tests compare it with."""

from __future__ import annotations

import math
from typing import Any

from sessionlab._jsjson import js_len
from sessionlab.pi.rules import DEFAULT_RULES, Rules, pi_rules
from sessionlab.pi.tokens import CHARS_PER_TOKEN, IMAGE_CHARS, _json_len, _tools_len

__all__ = ["estimate_tokens_dict"]


def _s(v: Any) -> int:
    return js_len(v) if isinstance(v, str) else 0


def _content_chars(content: Any, images: bool) -> int:
    if isinstance(content, str):
        return js_len(content)
    if not isinstance(content, list):
        return 0
    chars = 0
    for b in content:
        if not isinstance(b, dict):
            continue
        t = b.get("type")
        if t == "text":
            chars += _s(b.get("text"))
        elif images and t == "image":
            chars += IMAGE_CHARS
    return chars


def estimate_tokens_dict(message: dict, *, rules: Rules = DEFAULT_RULES) -> int:
    """``estimate_tokens`` on a message in pi's dict form, after migration (a v2 ``hookMessage``
    is ``custom`` by then; in a v3 file it is an unknown role and counts 0, as in pi)."""
    r = pi_rules(rules)
    role = message.get("role")
    if role == "user":
        chars = _content_chars(message.get("content"), images=r.user_images)
    elif role == "system" and r.system_role:
        chars = _content_chars(message.get("content"), images=True)
        sections = message.get("sections")
        if isinstance(sections, dict):
            chars += sum(_s(v) for v in sections.values())
        if message.get("toolsAdded"):
            chars += _tools_len(message.get("toolsAdded"))
    elif role == "assistant":
        chars = 0
        content = message.get("content")
        for b in content if isinstance(content, list) else ():
            if not isinstance(b, dict):
                continue
            t = b.get("type")
            if t == "text":
                chars += _s(b.get("text"))
            elif t == "thinking":
                chars += _s(b.get("thinking"))
            elif t == "toolCall":
                chars += _s(b.get("name")) + _json_len(b.get("arguments"))
    elif role in ("custom", "toolResult"):
        chars = _content_chars(message.get("content"), images=True)
    elif role == "bashExecution":
        chars = _s(message.get("command")) + _s(message.get("output"))
    elif role in ("branchSummary", "compactionSummary"):
        chars = _s(message.get("summary"))
    else:
        chars = 0
    return math.ceil(chars / CHARS_PER_TOKEN)
