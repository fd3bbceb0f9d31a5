"""Which pi release's rules a computation follows: the ``rules=`` option, the one place it lives.

pi changed how it builds contexts and counts tokens between 0.58.3 and 1.6.0 (see
``docs/pi-differences.md``). Every function whose result depends on that takes ``rules=``:

``"pi-1.6"`` (the default)
    pi 1.6.0: contexts are pi's *projection* (``context_edit`` entries replace or remove their
    target's content; system messages in a compaction's kept range are dropped; the compaction
    replays its ``systemMessage`` before its summary); user images count 1,200 tokens; assistants
    with zero usage are no usage source; ``tokensBefore`` is ``estimateProjectedContextTokens``;
    ``prepareCompaction`` works on the projection and returns nothing when there is nothing to
    summarise.
``"pi-0.58"``
    pi 0.58.3, exactly as sessionlab followed it before: no projection, images in user messages
    count nothing, ``prepareCompaction`` starts after the previous compaction in path order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ..errors import check_option

__all__ = ["Rules", "RULES", "DEFAULT_RULES", "PiRules", "pi_rules", "check_rules", "session_name", "CHARS_PER_TOKEN",
           "IMAGE_CHARS", "ROLE_CHARS"]

Rules = Literal["pi-1.6", "pi-0.58"]
RULES: tuple[str, ...] = ("pi-1.6", "pi-0.58")
DEFAULT_RULES: Rules = "pi-1.6"

# pi's token rule as data (applied by sessionlab.pi.tokens, the C scanner and the msgspec path)
# pi's token rule as data, the one source every path takes it from: the object model
# (sessionlab.tokens), the msgspec path (tables/_fast.py), the Claude Code and Codex readers, the
# pi 0.58 post-pass (tables/_pi16.py) and the C scanner, whose _scan_rules.h setup.py generates from
# these three literals (sessionlab/_scan_source.py; keep them literals). IMAGE_CHARS must stay a
# multiple of CHARS_PER_TOKEN: pi 0.58's rule takes whole images' tokens out of a user message.
CHARS_PER_TOKEN = 4
IMAGE_CHARS = 4800  # what pi counts for an image block in tool results and custom messages

#: pi's per-role character rule: the parts of a message whose characters add up to ``chars``
#: (``content``: a string content, or its text blocks; ``images``: :data:`IMAGE_CHARS` per image
#: block, in user messages from pi 1.6 on; ``toolCall``: name + ``JSON.stringify(arguments)``;
#: ``sections`` and ``toolsAdded``: pi 1.6's system message). Any other role counts 0.
ROLE_CHARS: dict[str, tuple[str, ...]] = {
    "user": ("content", "images"),
    "toolResult": ("content", "images"),
    "custom": ("content", "images"),
    "assistant": ("text", "thinking", "toolCall"),
    "bashExecution": ("command", "output"),
    "branchSummary": ("summary",),
    "compactionSummary": ("summary",),
    "system": ("content", "images", "sections", "toolsAdded"),
}


@dataclass(frozen=True, slots=True)
class PiRules:
    """The differences between the releases, as flags the code branches on."""

    name: str
    user_images: bool  # estimateTokens counts images in user messages (4,800 chars each)
    system_role: bool  # the ``system`` message role is known (estimated, dropped from kept ranges)
    skip_zero_usage: bool  # an assistant whose usage totals 0 is no usage source
    projection: bool  # context_edit entries apply; compactions replay their system message
    prepare_none: bool  # prepareCompaction returns nothing when there is nothing to summarise


_ALL = {
    "pi-1.6": PiRules("pi-1.6", True, True, True, True, True),
    "pi-0.58": PiRules("pi-0.58", False, False, False, False, False),
}


def check_rules(rules: object) -> Rules:
    """``rules`` if it names a known release, else an :class:`~sessionlab.errors.OptionError`
    saying which exist (as ``on_bad_lines=`` does: :func:`sessionlab.errors.check_option`)."""
    check_option("rules", rules, RULES)
    return rules  # type: ignore[return-value]


def session_name(name: object) -> str | None:
    """pi 1.6's ``getSessionName`` given the latest ``session_info`` entry's ``name``: trimmed, and an
    empty (or missing, or non-string) name clears the title. pi 0.58 kept the last non-empty name;
    no sample differs where pi 0.58 wrote the file, so sessionlab uses the 1.6 rule under both."""
    from .._jsjson import js_trim

    return (js_trim(name) or None) if isinstance(name, str) else None


def pi_rules(rules: object = DEFAULT_RULES) -> PiRules:
    """The flags of a release name (checked)."""
    return _ALL[check_rules(rules)]
