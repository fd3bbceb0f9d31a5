"""Rewrite the string values of one JSON line, leaving every other byte as it was.

The line is not parsed and dumped again (each agent writes JSON its own way: escapes, number
forms): its string literals are found in place, each value is offered to a function with the keys
that lead to it, and only the literals it changes are written anew. Keys, numbers, ids that are not
changed, spacing and escapes stay byte for byte. A line that is only part of a JSON value (a
pretty-printed file) works too: a string followed by ``:`` is a key.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable

from .._jsjson import js_stringify

__all__ = ["rewrite_line", "Path"]

Path = tuple[str, ...]
_TOKEN = re.compile(r'"(?:[^"\\\n]|\\.)*"|[{}\[\]:,]')
_KEY_AFTER = re.compile(r"\s*:")


def _decode(literal: str) -> str | None:
    try:
        return json.loads(literal, strict=False)
    except ValueError:
        return None


def rewrite_line(line: str, change: Callable[[str, Path], str | None]) -> tuple[str, str | None]:
    """The line with ``change(value, keys)`` applied to each string value (None: keep), and the
    entry id of the line (its top-level ``id`` or ``uuid``) when it has one."""
    stack: list[list] = []  # one [bracket, key] per open object or array
    root_key: str | None = None
    out: list[str] = []
    at = 0
    entry_id = None
    header = False  # (a pi header's id is the session's, not an entry's)
    for m in _TOKEN.finditer(line):
        tok = m.group()
        if tok == "{" or tok == "[":
            stack.append([tok, None])
        elif tok == "}" or tok == "]":
            if stack:
                stack.pop()
        elif tok[0] == '"':
            value = _decode(tok)
            if value is None:
                continue
            if _KEY_AFTER.match(line, m.end()):  # a key
                if stack and stack[-1][0] == "{":
                    stack[-1][1] = value
                else:
                    root_key = value
                continue
            keys = tuple(k for k in ([root_key] + [f[1] for f in stack if f[0] == "{"]) if k is not None)
            if len(stack) == 1 and keys and keys[-1] in ("id", "uuid") and entry_id is None:
                entry_id = value
            header = header or (len(stack) == 1 and keys == ("type",) and value == "session")
            new = change(value, keys)
            if new is not None and new != value:
                out += [line[at:m.start()], js_stringify(new)]
                at = m.end()
    if header:
        entry_id = None
    if not out:
        return line, entry_id
    out.append(line[at:])
    return "".join(out), entry_id
