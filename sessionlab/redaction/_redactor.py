"""One corpus's redactor: finds secrets and private names in text and replaces each with a
placeholder that stays the same for the same value everywhere in the corpus."""

from __future__ import annotations

import re
from collections import Counter

from ._rules import ENCODED_HOME, GENERIC_USERS, HOME, PLACEHOLDER, PROMPT, spans
from ._scanner import Scanner

__all__ = ["Redactor", "Found"]

Found = tuple[tuple[str, str], ...]
"""(kind, placeholder) of each replacement made in a text."""

_HOME_KIND = "home-path"
_MIN_LINE = 8  # (no detector finds a secret in a shorter line)
_KEEP_CHARS = 1 << 16  # texts up to this long are remembered (agents repeat them: streamed lines, replays)
_KEEP_TEXTS = 200_000


class Redactor:
    """Redacts text with detect-secrets' plugins and the rules of :mod:`._rules`.

    ``learn`` first (every file's text): home paths and shell prompts name the user and host
    names that are then replaced wherever they occur as a word. ``text`` returns the redacted text
    and what it replaced; the same value always gets the same placeholder, ``[REDACTED-<kind>-<n>]``.
    """

    def __init__(self) -> None:
        self._scanner = Scanner()
        self._placeholders: dict[str, str] = {}
        self._counts: Counter[str] = Counter()
        self.users: set[str] = set()
        self.hosts: set[str] = set()
        self._names: re.Pattern[str] | None = None
        self._done: dict[str, tuple[str, Found]] = {}

    def learn(self, text: str) -> None:
        """Collect the user and host names ``text`` reveals (home folders, also as pi and Claude Code
        spell them in folder names, and shell prompts)."""
        before = len(self.users) + len(self.hosts)
        for m in HOME.finditer(text):
            self._add_user(m.group(2))
        for m in ENCODED_HOME.finditer(text):
            self._add_user(m.group(1))
        for m in PROMPT.finditer(text):
            self._add_user(m.group(1))
            if m.group(2).lower() not in GENERIC_USERS and len(m.group(2)) >= 3:
                self.hosts.add(m.group(2).lower())
        if len(self.users) + len(self.hosts) != before:
            self._names = None
            self._done.clear()

    def _add_user(self, name: str) -> None:
        if len(name) >= 3 and name.lower() not in GENERIC_USERS:
            self.users.add(name.lower())

    def _name_pattern(self) -> re.Pattern[str] | None:
        if self._names is None and (self.users or self.hosts):
            words = sorted(self.users | self.hosts, key=len, reverse=True)
            self._names = re.compile(r"(?i)(?<![A-Za-z0-9])(" + "|".join(map(re.escape, words)) + r")(?![A-Za-z0-9])")
        return self._names

    def placeholder(self, kind: str, value: str) -> str:
        """The placeholder of ``value`` (the first kind it was found as names it)."""
        key = value.lower() if kind in ("user", "host", "email") else value
        p = self._placeholders.get(key)
        if p is None:
            self._counts[kind] += 1
            p = self._placeholders[key] = f"[REDACTED-{kind}-{self._counts[kind]}]"
        return p

    def text(self, text: str) -> tuple[str, Found]:
        """``text`` with every finding replaced, and the (kind, placeholder) of each."""
        done = self._done.get(text)
        if done is None:
            done = self._redact(text)
            if len(text) <= _KEEP_CHARS:
                if len(self._done) >= _KEEP_TEXTS:
                    self._done.clear()
                self._done[text] = done
        return done

    def _findings(self, text: str) -> list[tuple[int, int, str]]:
        found = [(m.start(), m.end(), _HOME_KIND) for m in HOME.finditer(text)]
        found += spans(text)
        names = self._name_pattern()
        if names is not None:
            found += [(m.start(), m.end(), "user" if m.group(1).lower() in self.users else "host")
                      for m in names.finditer(text)]
        at = 0
        for line in text.split("\n"):  # detect-secrets reads lines
            if len(line) >= _MIN_LINE:
                for value, kind in self._scanner.line(line):
                    if PLACEHOLDER.search(value) or value in "[REDACTED-":
                        continue
                    found += [(at + m.start(), at + m.end(), kind) for m in re.finditer(re.escape(value), line)]
            at += len(line) + 1
        return found

    def _redact(self, text: str) -> tuple[str, Found]:
        found = self._findings(text)
        if not found:
            return text, ()
        found.sort(key=lambda f: (f[0], -f[1]))
        merged: list[list] = []  # [start, end, kind of the longest part, its length]
        for a, b, kind in found:
            if merged and a < merged[-1][1]:
                m = merged[-1]
                if b - a > m[3]:
                    m[2], m[3] = kind, b - a
                m[1] = max(m[1], b)
            else:
                merged.append([a, b, kind, b - a])
        out, made, at = [], [], 0
        for a, b, kind, _ in merged:
            value = text[a:b]
            if PLACEHOLDER.fullmatch(value):
                continue
            rep = "~" if kind == _HOME_KIND and HOME.fullmatch(value) else self.placeholder(kind, value)
            out += [text[at:a], rep]
            made.append((kind, rep))
            at = b
        out.append(text[at:])
        return "".join(out), tuple(made)
