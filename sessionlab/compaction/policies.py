"""Compaction policies for what-if simulation: when to compact and what to keep.

Every policy is a frozen dataclass with the same small surface (:class:`CompactionPolicy`):

- ``trigger_tokens``: compact after a call when the context (the call's usage total, pi's
  ``calculateContextTokens``) is above this; ``inf`` never compacts;
- ``keep``: what survives a compaction: ``("tokens", n)`` pi's cut point for ``keepRecentTokens =
  n``, ``("turns", n)`` the last ``n`` user turns, ``("messages", n)`` the last ``n`` messages (the
  seed's ``retained_tail``);
- ``summary``: the size of the summary that replaces the rest (:class:`SummarySize`).

Example:
    >>> PiThresholdPolicy(200_000).trigger_tokens
    183616
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal, Protocol, runtime_checkable

from ..errors import ArgumentValueError

__all__ = [
    "SummarySize",
    "CompactionPolicy",
    "PiThresholdPolicy",
    "FractionPolicy",
    "KeepLastTurnsPolicy",
    "RetainedTailPolicy",
    "NeverCompact",
]

KeepKind = Literal["tokens", "turns", "messages", "none"]


@dataclass(frozen=True, slots=True)
class SummarySize:
    """The summary's size: ``tokens`` fixed, or a ``fraction`` of the tokens it replaces (rounded up
    to whole tokens, then capped at ``max_tokens``). The default, 2000 tokens, is a typical pi
    summary."""

    tokens: int | None = 2000
    fraction: float | None = None
    max_tokens: int | None = None

    def __post_init__(self) -> None:
        if (self.tokens is None) == (self.fraction is None):
            raise ArgumentValueError("tokens", "give exactly one of tokens or fraction")
        if self.fraction is not None and not 0 <= self.fraction <= 1:
            raise ArgumentValueError("fraction", f"fraction must be between 0 and 1, not {self.fraction!r}")


@runtime_checkable
class CompactionPolicy(Protocol):
    """What every policy provides to the simulation."""

    @property
    def name(self) -> str: ...
    @property
    def context_window(self) -> int | None: ...
    @property
    def trigger_tokens(self) -> float: ...
    @property
    def keep(self) -> tuple[KeepKind, int]: ...
    @property
    def summary(self) -> SummarySize: ...


@dataclass(frozen=True, slots=True)
class PiThresholdPolicy:
    """pi's rule: compact when the context exceeds ``context_window - reserve_tokens``, keeping
    pi's cut point for ``keep_recent_tokens``."""

    context_window: int
    reserve_tokens: int = 16384
    keep_recent_tokens: int = 20000
    summary: SummarySize = field(default_factory=SummarySize)

    @property
    def name(self) -> str:
        return f"pi(window={self.context_window}, reserve={self.reserve_tokens}, keep={self.keep_recent_tokens})"

    @property
    def trigger_tokens(self) -> float:
        return self.context_window - self.reserve_tokens

    @property
    def keep(self) -> tuple[KeepKind, int]:
        return ("tokens", self.keep_recent_tokens)


@dataclass(frozen=True, slots=True)
class FractionPolicy:
    """Compact when the context exceeds ``trigger_fraction`` of the window; keep pi's cut point."""

    context_window: int
    trigger_fraction: float
    keep_recent_tokens: int = 20000
    summary: SummarySize = field(default_factory=SummarySize)

    @property
    def name(self) -> str:
        return f"fraction(window={self.context_window}, at={self.trigger_fraction:g}, keep={self.keep_recent_tokens})"

    @property
    def trigger_tokens(self) -> float:
        return self.trigger_fraction * self.context_window

    @property
    def keep(self) -> tuple[KeepKind, int]:
        return ("tokens", self.keep_recent_tokens)


@dataclass(frozen=True, slots=True)
class KeepLastTurnsPolicy:
    """pi's trigger, but keep the last ``turns`` user turns whole."""

    context_window: int
    turns: int = 2
    reserve_tokens: int = 16384
    summary: SummarySize = field(default_factory=SummarySize)

    @property
    def name(self) -> str:
        return f"last_turns(window={self.context_window}, turns={self.turns})"

    @property
    def trigger_tokens(self) -> float:
        return self.context_window - self.reserve_tokens

    @property
    def keep(self) -> tuple[KeepKind, int]:
        return ("turns", self.turns)


@dataclass(frozen=True, slots=True)
class RetainedTailPolicy:
    """pi's trigger; the compaction carries the last ``tail_messages`` messages (the seed's
    ``retained_tail``)."""

    context_window: int
    tail_messages: int = 10
    reserve_tokens: int = 16384
    summary: SummarySize = field(default_factory=SummarySize)

    @property
    def name(self) -> str:
        return f"retained_tail(window={self.context_window}, messages={self.tail_messages})"

    @property
    def trigger_tokens(self) -> float:
        return self.context_window - self.reserve_tokens

    @property
    def keep(self) -> tuple[KeepKind, int]:
        return ("messages", self.tail_messages)


@dataclass(frozen=True, slots=True)
class NeverCompact:
    """Never compact (``context_window``, if given, only counts overflowing calls)."""

    context_window: int | None = None
    summary: SummarySize = field(default_factory=SummarySize)

    @property
    def name(self) -> str:
        return "never" if self.context_window is None else f"never(window={self.context_window})"

    @property
    def trigger_tokens(self) -> float:
        return math.inf

    @property
    def keep(self) -> tuple[KeepKind, int]:
        return ("none", 0)
