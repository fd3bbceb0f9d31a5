"""Reading and writing session files in pi's and the seed's JSONL dialects.

Names are imported from their modules on first use: a load that the C scanner does alone needs
only :mod:`.issues` and :mod:`.formats`, not the object model the reader and writer are built on.
"""

from __future__ import annotations

import importlib
from typing import Any

_MODULES = {
    "Dialect": "dialects", "detect_dialect": "dialects", "entry_from_dict": "dialects", "entry_to_dict": "dialects",
    "header_from_dict": "dialects", "header_to_dict": "dialects", "message_from_dict": "dialects",
    "message_to_dict": "dialects",
    "LineIssue": "issues", "OnBadLines": "issues",
    "SessionFile": "reader", "parse_session_bytes": "reader", "read_session": "reader",
    "SessionWriter": "writer", "to_line": "writer", "write_session": "writer",
}

__all__ = [
    "Dialect", "detect_dialect", "entry_from_dict", "entry_to_dict", "header_from_dict",
    "header_to_dict", "message_from_dict", "message_to_dict", "LineIssue", "OnBadLines",
    "SessionFile", "parse_session_bytes", "read_session", "SessionWriter", "to_line",
    "write_session",
]


def __getattr__(name: str) -> Any:
    module = _MODULES.get(name)
    if module is None:
        raise AttributeError(f"module 'sessionlab.pi.io' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
