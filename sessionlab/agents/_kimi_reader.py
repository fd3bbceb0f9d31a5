"""Kimi CLI wire logs (``~/.kimi/sessions/<work dir md5>/<session id>/wire.jsonl``) to rows.

One wire message per line, ``{"timestamp": <seconds>, "message": {"type", "payload"}}`` after a
``{"type": "metadata", "protocol_version"}`` line. ``TurnBegin`` (its ``user_input``) is a user
message; a step's ``ContentPart`` (``text``, ``think``) and ``ToolCall`` lines make one assistant
message (``StepBegin`` starts the next); ``ToolResult`` is a tool result; ``CompactionBegin`` a
compaction. The log has no tree: rows form a chain.

Usage: each ``StatusUpdate`` with ``token_usage`` is one step's call: ``input_other`` (the uncached
input), ``output``, ``input_cache_read``, ``input_cache_creation``. The wire log names no model: the
model is the configuration's default one (``default_model`` of ``config.toml``, its ``model``), as
the session's folder cannot tell which one ran. No cost is recorded: calls are priced.
"""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any

from ._chain import Chain, as_dict, count_of, iso_ms, json_chars, store_memo, text_chars

__all__ = ["read_kimi", "configured_model", "work_dirs"]


def _share_dir(path: str) -> str:
    """``<share dir>`` of ``<share dir>/sessions/<work dir md5>/<session id>/wire.jsonl``."""
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(path))))


def configured_model(share: str) -> str | None:
    """The model of the configuration's ``default_model`` (``config.toml``, else the older ``config.json``)."""
    import tomllib

    conf: Any = None
    try:
        with open(os.path.join(share, "config.toml"), "rb") as fh:
            conf = tomllib.load(fh)
    except (OSError, tomllib.TOMLDecodeError):
        try:
            with open(os.path.join(share, "config.json"), "rb") as fh:
                conf = json.load(fh)
        except (OSError, ValueError):
            return None
    if not isinstance(conf, dict):
        return None
    name = conf.get("default_model")
    model = (conf.get("models") or {}).get(name) if isinstance(name, str) else None
    found = model.get("model") if isinstance(model, dict) else None
    return found if isinstance(found, str) and found else (name or None)


def work_dirs(share: str) -> dict[str, str]:
    """``kimi.json``'s work folders by the md5 their sessions' folder is named after."""
    try:
        with open(os.path.join(share, "kimi.json"), "rb") as fh:
            meta = json.load(fh)
    except (OSError, ValueError):
        return {}
    out = {}
    for w in meta.get("work_dirs") or [] if isinstance(meta, dict) else []:
        if isinstance(w, dict) and isinstance(w.get("path"), str):
            out[hashlib.md5(w["path"].encode("utf-8")).hexdigest()] = w["path"]
    return out


def _iso(seconds: Any) -> str | None:
    if not isinstance(seconds, (int, float)) or isinstance(seconds, bool):
        return None
    return iso_ms(int(seconds * 1000))



class _Wire:
    def __init__(self, path: str, model: str | None) -> None:
        self.chain = Chain(path, "kimi")
        self.model = model
        self.step: int | None = None  # the assistant row of the current step
        self.tools: dict[str, str] = {}

    def assistant(self, line_no: int, t: Any) -> int:
        if self.step is None:
            self.step = self.chain.add(line_no, f"L{line_no}", _iso(t), role="assistant", provider="moonshot",
                                       model=self.model, tool_call_count=0)
        return self.step

    def spend(self, line_no: int, t: Any, kind: Any, p: dict) -> None:
        """A line of a spend-only read: the steps' calls alone."""
        if kind in ("TurnBegin", "StepBegin", "CompactionBegin"):
            self.step = None
        elif kind in ("ContentPart", "ToolCall"):
            self.assistant(line_no, t)
        elif kind == "StatusUpdate" and isinstance(p.get("token_usage"), dict):
            self.usage(line_no, t, p["token_usage"])

    def message(self, line_no: int, t: Any, kind: Any, p: dict) -> None:
        """A line (``t``: its timestamp as written)."""
        c = self.chain
        if c.spend_only:
            self.spend(line_no, t, kind, p)
            return
        ts = _iso(t)
        if kind == "TurnBegin":
            self.step = None
            i = c.add(line_no, f"L{line_no}", ts, role="user")
            c.block(i, "text", text_chars(p.get("user_input")))
        elif kind == "StepBegin":
            self.step = None
        elif kind == "ContentPart":
            i = self.assistant(line_no, t)
            c.block(i, "thinking" if p.get("type") == "think" else "text", text_chars(p.get("think") or p.get("text")))
        elif kind == "ToolCall":
            fn = as_dict(p.get("function"))
            name, cid = fn.get("name"), p.get("id")
            if isinstance(cid, str) and isinstance(name, str):
                self.tools[cid] = name
            c.block(self.assistant(line_no, t), "toolCall", text_chars(name) + json_chars(fn.get("arguments")),
                    name, cid)
        elif kind == "ToolResult":
            cid = p.get("tool_call_id")
            name = self.tools.get(cid) if isinstance(cid, str) else None
            i = c.add(line_no, f"L{line_no}", ts, role="toolResult", tool_name=name)
            rv = as_dict(p.get("return_value"))
            c.block(i, "toolResult", json_chars(rv.get("output")), name, cid)
        elif kind == "StatusUpdate" and isinstance(p.get("token_usage"), dict):
            self.usage(line_no, t, p["token_usage"])
        elif kind == "CompactionBegin":
            self.step = None
            c.add(line_no, f"L{line_no}", ts, type="compaction")
        elif isinstance(kind, str) and kind not in ("TurnEnd", "CompactionEnd", "StatusUpdate"):
            c.add(line_no, f"L{line_no}", ts, type=kind, side_node=True)

    def usage(self, line_no: int, t: Any, u: dict) -> None:
        inp, out = count_of(u, "input_other"), count_of(u, "output")
        read, write = count_of(u, "input_cache_read"), count_of(u, "input_cache_creation")
        if not (inp or out or read or write):
            return
        i = self.assistant(line_no, t)
        if self.chain.rows[i].get("input_tokens") is not None:  # a second update in one step: a call of its own
            self.step = None
            i = self.assistant(line_no, t)
        self.chain.usage(i, model=self.model, provider="moonshot", inp=inp, out=out, cache_read=read,
                         cache_write=write)


def read_kimi(path: str, fh: Any) -> Any:
    """Read one Kimi CLI ``wire.jsonl`` from a binary file object."""
    share = _share_dir(path)
    # (the share folder's configuration and work folders: read once per batch of sessions)
    w = _Wire(path, store_memo(("kimi-model", share), lambda: configured_model(share)))
    version = None
    for line_no, d in w.chain.records(fh.read()):
        if d.get("type") == "metadata":
            version = d.get("protocol_version") if isinstance(d.get("protocol_version"), str) else version
            continue
        m = as_dict(d.get("message"))
        p = as_dict(m.get("payload"))
        w.message(line_no, d.get("timestamp"), m.get("type"), p)
    folder = os.path.dirname(path)
    return w.chain.done({"session_id": os.path.basename(folder),
                         "cwd": store_memo(("kimi-work-dirs", share), lambda: work_dirs(share)).get(
                             os.path.basename(os.path.dirname(folder))),
                         "agent_version": f"wire {version}" if version else None})
