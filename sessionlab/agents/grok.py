"""Grok Build sessions (``~/.grok/sessions/<url-encoded cwd>/<session id>/updates.jsonl``).

Grok Build appends every session update to ``updates.jsonl``, each in an envelope
``{"timestamp": <unix seconds>, "method": "session/update" | "_x.ai/session/update",
"params": {"sessionId", "update": {"sessionUpdate": <kind>, ...}}}``; ``summary.json`` beside it
holds the session's facts (``info.id``, ``info.cwd``, ``generated_title``, ``session_summary``,
``current_model_id``, ``parent_session_id``). Usage is in the durable ``turn_completed`` updates,
one per prompt: ``usage`` sums the turn's model calls (``inputTokens`` is the whole prompt,
cache reads and cache writes included; ``reasoningTokens`` are part of ``outputTokens``;
``costUsdTicks``, 10^10 per USD, when the bill is complete), and ``modelUsage`` splits it per model.
Each turn and model is one usage row (``usage_kind = 'turn'``, a side node: a turn's sum, not one
call); a turn written twice (same ``prompt_id``) counts once, the later line.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import IO, Any

from ._chain import as_dict, iso_ms, loads
from ._rows import agent_file, as_int
from ._spec import AgentSpec, home_path

__all__ = ["SPEC", "roots", "files", "read"]

_METHODS = frozenset({"session/update", "_x.ai/session/update"})
TICKS_PER_USD = 10_000_000_000


def roots() -> list[Path]:
    """``sessions`` of ``$GROK_HOME``, else of ``~/.grok``."""
    env = os.environ.get("GROK_HOME")
    return [(home_path(env) if env and env.strip() else Path.home() / ".grok") / "sessions"]


def files(folders: list[Path], errors: list[tuple[str, str]] | None = None) -> list[str]:
    """``<cwd>/<session>/updates.jsonl`` below each folder, sorted."""
    out: list[str] = []
    for root in folders:
        if Path(root).is_dir():
            try:
                out += sorted(_updates(str(root)))
            except OSError as exc:
                if errors is not None:
                    errors.append((str(root), f"{type(exc).__name__}: {exc}"))
    return out


def _updates(root: str) -> list[str]:
    """``<cwd>/<session>/updates.jsonl`` files of ``root`` (a folder listed once each, its entries
    knowing their kind: tens of thousands of sessions list fast); a folder below it that cannot be
    listed is passed over."""
    out: list[str] = []
    with os.scandir(root) as cwds:
        for c in cwds:
            if not c.is_dir():
                continue
            try:
                with os.scandir(c.path) as sessions:
                    for s in sessions:
                        if s.is_dir() and os.path.isfile(f := os.path.join(s.path, "updates.jsonl")):
                            out.append(f)
            except OSError:
                continue
    return out


def _recognise(obj: dict) -> bool:
    return obj.get("method") in _METHODS and isinstance(obj.get("params"), dict) and "sessionId" in obj["params"]


def _summary(path: str) -> dict:
    try:
        with open(os.path.join(os.path.dirname(path), "summary.json"), "rb") as fh:
            d = loads(fh.read())
    except (OSError, ValueError):
        return {}
    return d if isinstance(d, dict) else {}


def _turn_rows(n: int, ts: str | None, u: dict, fallback_model: str | None) -> list[tuple[str | None, dict]]:
    per = u.get("modelUsage") if isinstance(u.get("modelUsage"), dict) and u.get("modelUsage") else None
    parts = [(m, v) for m, v in per.items() if isinstance(v, dict)] if per else [(fallback_model, u)]
    out = []
    for model, v in parts:
        full, cr = as_int(v.get("inputTokens")), as_int(v.get("cachedReadTokens"))
        cw = as_int(v.get("cacheCreationTokens"))
        ticks = v.get("costUsdTicks")
        cost = ticks / TICKS_PER_USD if isinstance(ticks, int) and not isinstance(ticks, bool) and ticks >= 0 \
            and not v.get("costIsPartial") and not u.get("usageIsIncomplete") else None
        out.append((model, {"type": "usage", "role": None, "timestamps": ts, "model": model, "side_node": True,
                            "input_tokens": max(full - cr - cw, 0), "output_tokens": as_int(v.get("outputTokens")),
                            "cache_read_tokens": cr, "cache_write_tokens": cw, "context_tokens": None,
                            "reasoning_tokens": as_int(v.get("reasoningTokens")), "usage_kind": "turn",
                            "cost_usd": cost, "line_no": n}))
    return out


def read(path: str, fh: IO[bytes]):
    """An ``updates.jsonl``: one usage row per turn and model, the session's facts from ``summary.json``."""
    s = _summary(path)
    info = as_dict(s.get("info"))
    sid = info.get("id") or os.path.basename(os.path.dirname(path))
    model = s.get("current_model_id") or None
    rows: dict[tuple, dict] = {}
    for n, raw in enumerate(fh, 1):
        if b"turn_completed" not in raw:
            continue  # (a line of another update: its name is written plainly, never escaped)
        try:
            d: Any = loads(raw)
        except ValueError:
            continue
        upd = (d.get("params") or {}).get("update") if isinstance(d, dict) else None
        if not isinstance(upd, dict) or upd.get("sessionUpdate") != "turn_completed" or not isinstance(
                upd.get("usage"), dict):
            continue
        ts = d.get("timestamp")
        ts = iso_ms(ts * 1000) if isinstance(ts, (int, float)) and not isinstance(ts, bool) and ts > 0 else None
        turn = upd.get("prompt_id") or f"turn-{n}"
        for m, row in _turn_rows(n, ts, upd["usage"], model):
            row["entry_id"] = f"{turn}:{m}"
            rows.pop((turn, m), None)  # (a turn written again: the later line)
            rows[(turn, m)] = row
    return agent_file(path, "grok", list(rows.values()), {
        "session_id": sid, "cwd": info.get("cwd") or None,
        "name": s.get("generated_title") or s.get("session_summary") or None,
        "parent_session_id": s.get("parent_session_id") or None})


SPEC = AgentSpec(
    name="grok", title="Grok Build", recognise=_recognise, roots=roots, env=("GROK_HOME",), files=files,
    reader="sessionlab.agents.grok:read", calls_need_usage=True, priced=True,
    folder_doc="`sessions/` of `$GROK_HOME`, else of `~/.grok` (`<url-encoded cwd>/<session>/updates.jsonl`, "
               "with `summary.json`): usage per turn and model, no calls",
)
