"""Amp threads (``~/.local/share/amp/threads/T-<id>.json``).

Recognised by a thread document's start (``"id": "T-…"`` with ``"messages"``). Read by
:func:`sessionlab.agents._amp_reader.read_amp`; an assistant message with usage (or a usage ledger
event) is a call, priced from the price table.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from ._chain import files_below
from ._spec import AgentSpec, home_path

__all__ = ["SPEC", "roots", "files"]

_THREAD_ID = re.compile(rb'"id"\s*:\s*"T-[0-9a-fA-F-]+"')


def _recognise(obj: dict) -> bool:
    tid = obj.get("id")
    return isinstance(tid, str) and tid.startswith("T-") and isinstance(obj.get("messages"), list)


def _recognise_start(start: bytes) -> bool:
    return _THREAD_ID.search(start) is not None and b'"messages"' in start


def _recognise_file(path: str, head: bytes) -> bool:
    """A thread by its name (``T-*.json``) and its start: known before detection walks the lines of
    a pretty document (where an inner one-line object could be mistaken for another agent's)."""
    return (path.endswith(".json") and "T-" in path  # (most files: no path arithmetic)
            and os.path.basename(path).startswith("T-") and _recognise_start(head[:4096]))


def roots() -> list[Path]:
    """The ``threads`` folder of each ``$AMP_DATA_DIR`` folder (comma-separated), else of
    ``$XDG_DATA_HOME/amp`` (``~/.local/share/amp``)."""
    env = os.environ.get("AMP_DATA_DIR")
    if env is not None:
        return [home_path(p) / "threads" for p in env.split(",") if p.strip()]
    xdg = os.environ.get("XDG_DATA_HOME", "").strip()
    return [(home_path(xdg) if xdg else Path.home() / ".local" / "share") / "amp" / "threads"]


def files(folders: list[Path], errors: list[tuple[str, str]] | None = None) -> list[str]:
    """``T-*.json`` in each folder."""
    out: list[str] = []
    for folder in folders:
        top = os.path.join(str(folder), "")  # (the folder itself, not below: ``T-x/y.json`` matches too)
        out += [f for f in files_below([folder], ("T-*.json",), errors) if f.startswith(top) and os.sep not in
                f[len(top):]]
    return out


SPEC = AgentSpec(
    name="amp", title="Amp", recognise=_recognise, recognise_start=_recognise_start, recognise_file=_recognise_file,
    roots=roots,
    env=("AMP_DATA_DIR", "XDG_DATA_HOME"), files=files, reader="sessionlab.agents._amp_reader:read_amp",
    calls_need_usage=True, priced=True,
    folder_doc="`threads/` of each `$AMP_DATA_DIR` folder (comma-separated), else of `$XDG_DATA_HOME/amp` "
               "(`~/.local/share/amp`; `T-<id>.json`)",
)
