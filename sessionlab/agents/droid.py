"""Factory Droid sessions (``~/.factory/sessions/<project>/<session>.settings.json``).

Droid keeps each session's token counts as running totals in the session's settings file
(``tokenUsage``: ``inputTokens``, ``outputTokens``, ``cacheCreationTokens``, ``cacheReadTokens``,
``thinkingTokens``, ``totalTokens``), beside the model (``model``), the provider
(``providerLock``) and when that was set (``providerLockTimestamp``). There is no per-call record:
a session's totals are one usage row (``usage_kind = 'session_total'``, no call), at
``providerLockTimestamp`` (else the file's time).
The transcript beside it (``<session>.jsonl``) is read only for the model when the settings name
none (its ``Model: ...`` line). A session's totals are priced at the model's base rates (no
long-context tier: they add up many requests). Thinking tokens are output tokens (priced as output):
``output_tokens`` holds both, ``reasoning_tokens`` the thinking part. A session found twice (an
older copy in another folder) counts once: the copy with the latest timestamp.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import IO, Any

from .._rowsof import joined_tables, rebatched, row_count
from ._chain import as_dict, files_below, iso_ms, loads
from ._rows import agent_file, as_int, text, totals_row
from ._spec import AgentSpec, home_path, null_usage

__all__ = ["SPEC", "roots", "files", "read", "finish", "normalise_model"]

_SUFFIX = ".settings.json"


def roots() -> list[Path]:
    """The folders of ``$DROID_SESSIONS_DIR`` (comma-separated), else ``~/.factory/sessions``."""
    env = os.environ.get("DROID_SESSIONS_DIR")
    if env:
        return [home_path(p) for p in env.split(",") if p.strip()]
    return [Path.home() / ".factory" / "sessions"]


def files(folders: list[Path], errors: list[tuple[str, str]] | None = None) -> list[str]:
    """Every ``*.settings.json`` below the folders, sorted per folder."""
    return files_below(folders, ("*" + _SUFFIX,), errors)


def _recognise_file(path: str, head: bytes) -> bool:
    return path.endswith(_SUFFIX)  # (one without usage is a session without calls; a broken one, an issue)


def normalise_model(model: str) -> str:
    """Droid's model label as a model name: ``custom:`` and ``[...]`` dropped, lower case, dots and
    spaces as dashes (``"Claude-Sonnet-4.5-[Anthropic]"`` -> ``"claude-sonnet-4-5"``)."""
    raw = model[len("custom:"):] if model.startswith("custom:") else model
    raw = _BRACKETS.sub("", raw).strip().rstrip("-").lower()
    return _SEPARATORS.sub("-", raw).strip("-")


_BRACKETS, _SEPARATORS = re.compile(r"\[[^\]]*\]?"), re.compile(r"[-.\s]+")


_PROVIDERS = {"claude": "anthropic", "anthropic": "anthropic", "openai": "openai", "google": "google",
              "google_ai": "google", "gemini": "google", "vertex": "google", "vertex_ai": "google", "xai": "xai",
              "x_ai": "xai", "grok": "xai"}
_DEFAULT_MODEL = {"anthropic": "claude-unknown", "openai": "gpt-unknown", "google": "gemini-unknown",
                  "xai": "grok-unknown"}


def _provider(value: object) -> str:
    v = value.strip().lower().replace("-", "_") if isinstance(value, str) else ""
    return _PROVIDERS.get(v, v) or "unknown"


def _infer_provider(model: str) -> str:
    if any(k in model for k in ("claude", "opus", "sonnet", "haiku")):
        return "anthropic"
    if model.startswith("gpt-") or "-gpt-" in model or "chatgpt" in model or re.match(r"o\d", model):
        return "openai"
    return "google" if "gemini" in model else "xai" if "grok" in model else "unknown"


def _sidecar_model(path: str) -> str | None:
    try:
        with open(path[:-len(_SUFFIX)] + ".jsonl", encoding="utf-8", errors="replace") as fh:
            for _, line in zip(range(500), fh):
                if "Model:" in line:
                    raw = re.split(r'["\\\[]', line.split("Model:", 1)[1])[0].strip()
                    if raw and normalise_model(raw):
                        return normalise_model(raw)
    except OSError:
        return None
    return None


def read(path: str, fh: IO[bytes]):
    """A settings file as one session with one usage row (its totals), or none without usage."""
    d = loads(fh.read())
    sid = os.path.basename(path)[:-len(_SUFFIX)]
    d = as_dict(d)
    u = as_dict(d.get("tokenUsage"))
    inp, out, cw, cr, think = (as_int(u.get("inputTokens")), as_int(u.get("outputTokens")),
                               as_int(u.get("cacheCreationTokens")), as_int(u.get("cacheReadTokens")),
                               as_int(u.get("thinkingTokens")))
    missing = as_int(u.get("totalTokens")) - (inp + out + cw + cr + think)
    if missing > 0:  # only a total: the rest is output (or, beside an output count, more thinking)
        out, think = (missing, think) if out == 0 else (out, think + missing)
    provider = _provider(d.get("providerLock"))
    label = text(d.get("model"))
    model = normalise_model(label) if label else (_sidecar_model(path) or "")
    model = model or _DEFAULT_MODEL.get(provider, "unknown")
    provider = _infer_provider(model) if provider == "unknown" else provider
    ts = d.get("providerLockTimestamp")
    ts = ts if isinstance(ts, str) and ts.strip() else iso_ms(os.stat(path).st_mtime * 1000)
    rows = []
    if inp + out + cw + cr + think > 0:
        rows.append(totals_row(f"droid:{sid}", ts, model, provider, inp, out + think, cr, cw, think, None))
    return agent_file(path, "droid", rows, {"session_id": sid})


def finish(results: list) -> None:
    """A session in several settings files counts once: the copy with the latest timestamp (the
    files' first timestamps read, and the others' usage nulled, over all of them at once). A result
    that stands for many files (a usage report's bundle: ``members``) is asked each of its files'."""
    import numpy as np
    import pyarrow as pa

    from .._arrow import arrow_indices

    owners, helds, spans = _droid_spans(results)
    if not spans:
        return
    sizes = np.fromiter(map(row_count, helds), np.int64, len(helds))
    base = np.r_[0, np.cumsum(sizes)[:-1]]
    owner, start, n = (np.array(c, np.int64) for c in zip(*spans))
    tables = joined_tables(helds)
    at = arrow_indices(base[owner] + start)  # (each file's first row)

    def firsts(name: str) -> Any:  # (the chunks given, not the columns: pyarrow would convert those, importing pandas)
        return pa.chunked_array([c for t in tables for c in t[name].chunks], tables[0].schema.field(name).type).take(at)

    # (a file's rows all carry its session's id)
    drop = ~kept_copies(firsts("session_id"), firsts("timestamp"))
    if not drop.any():
        return
    hit = np.unique(owner[drop])  # (the results that hold a dropped copy: their tables alone rebuilt)
    where = np.full(len(owners), -1, np.int64)
    where[hit] = np.arange(len(hit))
    at_hit = np.r_[0, np.cumsum(sizes[hit])[:-1]]
    firsts_at, k = at_hit[where[owner[drop]]] + start[drop], n[drop]  # (each dropped copy's rows)
    mask = np.zeros(int(sizes[hit].sum()), np.bool_)
    mask[np.repeat(firsts_at - (np.cumsum(k) - k), k) + np.arange(int(k.sum()))] = True  # (every one nulled)
    rebatched([owners[i] for i in hit.tolist()], lambda t, _counts: null_usage(t, mask))


def _droid_spans(results: list) -> tuple[list, list, list[tuple[int, int, int]]]:
    """The results that hold Droid files with rows, their tables as held, and each such file as
    (its result's place among them, its first row in the result's table, its rows): one pass over a
    load of hundreds of thousands of files."""
    owners: list = []
    helds: list = []
    spans: list[tuple[int, int, int]] = []
    for r in results:
        held = r.raw_table("entries")
        if not row_count(held):
            continue
        members = getattr(r, "members", None)
        i = len(owners)
        if members is None:
            if r.session is None or r.session.get("agent") != "droid":
                continue
            spans.append((i, 0, row_count(held)))
        else:
            at = 0
            for agent, k in zip(members.sessions.get("agent", ()), members.counts, strict=True):
                if agent == "droid" and k:
                    spans.append((i, at, k))
                at += k
            if len(spans) == 0 or spans[-1][0] != i:
                continue
        owners.append(r)
        helds.append(held)
    return owners, helds, spans


def kept_copies(sessions: Any, firsts: Any) -> Any:
    """Which files count, as a boolean array: per session (``sessions``: each file's, a list or an
    Arrow array), the file with the latest first timestamp (``firsts``, Arrow; the later file of
    equal ones), or its first file when none has a timestamp."""
    import numpy as np
    import pyarrow.compute as pc

    from .._arrow import strings, to_numpy, valid_mask

    n = len(sessions)
    if n == 0:
        return np.zeros(0, np.bool_)
    ids = strings(sessions) if isinstance(sessions, list) else sessions
    ids = ids.combine_chunks() if hasattr(ids, "combine_chunks") else ids
    code = to_numpy(pc.dictionary_encode(ids).indices)  # (no pandas: see sessionlab._arrow)
    has = valid_mask(firsts)
    ts = to_numpy(firsts, 0)  # (a timestamp column's integer storage)
    k = np.arange(n, dtype=np.int64)
    order = np.lexsort((np.where(has, k, -k), ts, has, code))  # (the last of each session's run wins)
    last = np.r_[code[order][1:] != code[order][:-1], True]
    keep = np.zeros(n, np.bool_)
    keep[order[last]] = True
    return keep


SPEC = AgentSpec(
    name="droid", title="Droid", recognise=lambda obj: False, recognise_file=_recognise_file, roots=roots,
    env=("DROID_SESSIONS_DIR",), files=files, reader="sessionlab.agents.droid:read",
    finish="sessionlab.agents.droid:finish", calls_need_usage=True, priced=True, bundled=True,
    folder_doc="`$DROID_SESSIONS_DIR` (comma-separated), else `~/.factory/sessions` "
               "(`<project>/<session>.settings.json`: a session's running totals, no calls)",
)
