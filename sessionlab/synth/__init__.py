"""Seeded, deterministic generator of realistic pi v3 session files.

A session is built turn by turn the way pi appends entries: a header, a ``model_change`` (the
root), a ``thinking_level_change``, then turns of a user message, assistant calls with thinking,
text and tool calls, and the matching tool results. Between turns the generator switches models
and thinking levels, sets and clears labels, names the session, writes ``custom`` and
``custom_message`` entries, runs user ``!`` commands (``bashExecution``), moves the leaf back to an
earlier entry (a branch, sometimes with a ``branch_summary``) and compacts when the context
gets close to the window (pi's trigger: context > window - reserve).

Token usage follows the context: every assistant call's prompt is the system prompt plus the
context it was sent (pi's ``ceil(chars / 4)`` estimate of each message), split into cache read
(the prefix cached by the previous call on the branch with the same model), cache write (the new
part, Anthropic) and fresh input; after a compaction the prompt is the summary plus the kept
messages. Costs come from :data:`MODELS` exactly as pi computes them
(``price / 1e6 * tokens``; ``total`` = the sum of the four parts).

Every line is :func:`sessionlab.pi.io.to_line` of a model object, i.e. what pi's ``JSON.stringify``
writes. The same arguments and seed give the same bytes.

Example:
    >>> import tempfile
    >>> from sessionlab.synth import generate_session
    >>> p = generate_session(tempfile.mkdtemp(), seed=1, turns=5)
    >>> p.name.endswith(".jsonl")
    True
"""

from __future__ import annotations

import os
import random
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Literal

from ..errors import ArgumentValueError
from ..pi.model import SessionHeader
from ..pi.repo import encode_cwd
from ..pi.repo import session_file_name as _repo_file_name
from ._agents import generate_claude_session, generate_codex_session
from ._builder import LABELS, MODELS, NAMES, THINKING_LEVELS, THINKING_LEVELS_16, Builder, ModelSpec, iso

__all__ = ["MODELS", "ModelSpec", "SynthConfig", "encode_cwd", "generate_corpus", "generate_session",
           "session_file_name", "generate_claude_session", "generate_codex_session"]


def session_file_name(header_timestamp: str, session_id: str) -> str:
    """pi's file name for a header's timestamp and id (:func:`sessionlab.pi.repo.session_file_name`).

    Example:
        >>> session_file_name("2026-01-15T10:00:01.000Z", "0d9c2b4e")
        '2026-01-15T10-00-01-000Z_0d9c2b4e.jsonl'
    """
    return _repo_file_name(SessionHeader(id=session_id, timestamp=header_timestamp))


@dataclass(frozen=True, kw_only=True)
class SynthConfig:
    """How :func:`generate_session` draws a session; each field is also a keyword of it.

    Attributes:
        turns: Number of user turns (fewer when ``max_bytes`` is reached first).
        cwd: Working directory written in the header; also picks the project's language and files.
        start: Header time (UTC); default: a day in early 2026 drawn from the seed.
        branch_prob: Chance per turn of moving the leaf back to an earlier turn end.
        branch_summary_prob: Chance that a branch writes a ``branch_summary``.
        compaction_window: Context window (tokens) for pi's compaction trigger
            (``context > window - reserve``, reserve 16384 or a quarter of a small window).
        model_switch_prob: Chance per turn of a ``model_change`` to another model of ``models``.
        models: Model ids from :data:`MODELS` to use; the first is the initial model (default:
            claude-sonnet-4-5 first, then all).
        thinking_change_prob: Chance per turn of a ``thinking_level_change``.
        label_prob: Chance per turn of setting a label (one in four clears an earlier one).
        name_prob: Chance that the session gets a ``session_info`` name (sometimes renamed later).
        custom_prob: Chance per turn of a ``custom`` entry, and separately of a ``custom_message``.
        bash_prob: Chance per turn of a user ``!`` command (``bashExecution``).
        tool_rounds: Mean number of tool-call rounds per turn.
        result_scale: Multiplier on tool output sizes (files read, logs, grep hits).
        max_bytes: Stop at the turn end that brings the file closest to this size.
        pi: Which pi writes it: ``"1.6"`` (default: a system message with sections and tools, a
            ``usage`` entry for the title, compactions and branch summaries with the ``usage`` of
            their summary call and the ``systemMessage`` in effect, ``context_edit`` entries that
            elide large tool results or take failed attempts out, assistants with ``thinkingLevel``,
            ``responseId``/``responseModel``, reasoning and 1-hour cache-write tokens, thinking levels
            up to ``max``; estimates by pi 1.6's rules) or ``"0.58"`` (none of these).
    """

    turns: int = 40
    cwd: str = "/home/user/proj"
    start: datetime | None = None
    branch_prob: float = 0.04
    branch_summary_prob: float = 0.5
    compaction_window: int = 200_000
    model_switch_prob: float = 0.03
    models: Sequence[str] | None = None
    thinking_change_prob: float = 0.03
    label_prob: float = 0.05
    name_prob: float = 0.5
    custom_prob: float = 0.03
    bash_prob: float = 0.04
    tool_rounds: float = 3.0
    result_scale: float = 1.0
    max_bytes: int | None = None
    pi: Literal["1.6", "0.58"] = "1.6"


def generate_session(path: str | os.PathLike[str], *, seed: int, config: SynthConfig | None = None,
                     **options: Any) -> Path:
    """Write one realistic pi v3 session and return its path.

    Args:
        path: A directory (the file gets pi's name, ``<timestamp>_<session id>.jsonl``, inside it)
            or a path ending in ``.jsonl`` (written as is).
        seed: Seed of the random generator; the same arguments give the same bytes.
        config: How the session is drawn (:class:`SynthConfig`; default: its defaults).
        **options: Fields of :class:`SynthConfig` (``turns=3``, ``pi="0.58"``...), which override
            ``config``'s; an unknown one raises ``TypeError``.

    Returns:
        The path of the written file.

    Example:
        >>> import tempfile
        >>> a = generate_session(tempfile.mkdtemp(), seed=7, turns=3)
        >>> b = generate_session(tempfile.mkdtemp(), seed=7, config=SynthConfig(turns=3))
        >>> a.read_bytes() == b.read_bytes()
        True
    """
    cfg = replace(config or SynthConfig(), **options)
    rng = random.Random(seed)
    model_ids = list(cfg.models) if cfg.models else list(MODELS)
    for m in model_ids:
        if m not in MODELS:
            raise ArgumentValueError("models", f"unknown model {m!r}; known: {', '.join(MODELS)}")
    start = cfg.start
    if start is None:
        start = datetime(2026, 1, 5, tzinfo=UTC) + timedelta(seconds=rng.randint(0, 60 * 86400))
    elif start.tzinfo is None:
        start = start.replace(tzinfo=UTC)
    start_ms = int(start.timestamp() * 1000) + rng.randint(0, 999)
    sid = str(uuid.UUID(int=rng.getrandbits(128), version=4))
    header_ts = iso(start_ms)
    thinking = rng.choice(("off", "medium", "medium", "high", "low"))
    b = Builder(rng, cwd=cfg.cwd, start_ms=start_ms, model=model_ids[0], thinking=thinking,
                compaction_window=cfg.compaction_window, result_scale=cfg.result_scale, pi16=cfg.pi == "1.6")
    b.write(SessionHeader(version=3, id=sid, timestamp=header_ts, cwd=cfg.cwd))
    b.model_change(model_ids[0], root=True)
    b.thinking_change(thinking)
    if b.pi16:
        b.system_message()
    _turns(b, cfg, model_ids)
    p = Path(path)
    out = p if p.suffix == ".jsonl" else p / session_file_name(header_ts, sid)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(b"\n".join(b.lines) + b"\n")
    return out


def _turns(b: Builder, cfg: SynthConfig, model_ids: list[str]) -> None:
    """The session's turns, with what happens between them, until ``turns`` or ``max_bytes``."""
    rng = b.rng
    named_at = rng.randint(1, 3) if rng.random() < cfg.name_prob else -1
    for t in range(cfg.turns):
        if t > 0:
            _between_turns(b, t, cfg, named_at=named_at, model_ids=model_ids)
        b.turn(tool_rounds=cfg.tool_rounds, first=t == 0)
        if b.pi16 and t == 0:  # pi 1.6 names the session with a cheap model: spend that is no message
            b.usage_entry("title", b.cur().ctx + rng.randint(200, 600), rng.randint(8, 40))
        b.maybe_elide()
        b.maybe_compact()
        # stop when the next turn would more likely overshoot max_bytes than fall short of it
        if cfg.max_bytes is not None and b.size + b.size / (2 * (t + 1)) >= cfg.max_bytes:
            break


def _between_turns(b: Builder, t: int, cfg: SynthConfig, *, named_at: int, model_ids: list[str]) -> None:
    rng = b.rng
    if t == named_at or (named_at >= 0 and t > named_at and rng.random() < 0.01):
        b.session_name(rng.choice(NAMES))
    if len(model_ids) > 1 and rng.random() < cfg.model_switch_prob:
        b.model_change(rng.choice([m for m in model_ids if m != b.model.model]))
    if rng.random() < cfg.thinking_change_prob:
        levels = THINKING_LEVELS_16 if b.pi16 else THINKING_LEVELS
        b.thinking_change(rng.choice([lv for lv in levels if lv != b.thinking]))
    if rng.random() < cfg.label_prob:
        if b.labels and rng.random() < 0.25:
            b.label(rng.choice(sorted(b.labels)), None)
        else:
            targets = [e for e in b.path(b.leaf)[-40:] if b.kind.get(e) in ("user", "assistant:stop")]
            if targets:
                b.label(rng.choice(targets), rng.choice(LABELS))
    if rng.random() < cfg.custom_prob:
        b.custom()
    if rng.random() < cfg.custom_prob:
        b.custom_message()
    if rng.random() < cfg.bash_prob:
        b.bash_execution()
    if rng.random() < cfg.branch_prob:
        b.branch(summary=rng.random() < cfg.branch_summary_prob,
                 label=rng.choice(LABELS) if rng.random() < 0.2 else None)


_CWDS = ("/home/user/proj", "/home/user/webapp", "/home/user/api-server", "/home/user/ml-pipeline",
         "/home/user/rust-cli", "/home/user/dotfiles", "/home/user/work/billing-service")


def generate_corpus(
    out_dir: str | os.PathLike[str],
    *,
    n_sessions: int = 300,
    target_bytes: int = 150_000_000,
    seed: int = 0,
    pi: Literal["1.6", "0.58"] = "1.6",
) -> list[Path]:
    """Write ``n_sessions`` sessions in pi's layout ``out_dir/--<encoded cwd>--/<file>.jsonl``.

    Sizes are spread (log-normal) around ``target_bytes / n_sessions`` and add up to about
    ``target_bytes`` (each session stops at the turn end nearest its share). Sessions use
    several working directories, models, branch and compaction settings, all drawn from ``seed``;
    ``pi`` picks which pi release writes them (see :func:`generate_session`).

    Returns:
        The written paths, in generation order.

    Example:
        >>> import tempfile
        >>> paths = generate_corpus(tempfile.mkdtemp(), n_sessions=3, target_bytes=300_000)
        >>> len(paths)
        3
    """
    rng = random.Random(seed)
    weights = [rng.lognormvariate(0, 0.8) for _ in range(n_sessions)]
    total_w = sum(weights) or 1.0
    start = datetime(2026, 1, 5, 8, tzinfo=UTC)
    out = Path(out_dir)
    paths = []
    all_models = list(MODELS)
    for w in weights:
        share = int(target_bytes * w / total_w)
        cwd = rng.choice(_CWDS)
        first = rng.choices(all_models, (5, 2, 2, 1))[0]
        models = [first] + [m for m in all_models if m != first]
        start += timedelta(minutes=rng.randint(5, 600))
        paths.append(generate_session(
            out / encode_cwd(cwd),
            seed=rng.getrandbits(63),
            turns=100_000,
            cwd=cwd,
            start=start,
            branch_prob=rng.choice((0.0, 0.02, 0.05, 0.1)),
            compaction_window=rng.choice((200_000, 200_000, 128_000)),
            model_switch_prob=rng.choice((0.0, 0.01, 0.03)),
            models=models,
            result_scale=rng.choice((0.5, 1.0, 1.0, 2.0)),
            max_bytes=max(share, 2_000),
            pi=pi,
        ))
    return paths
