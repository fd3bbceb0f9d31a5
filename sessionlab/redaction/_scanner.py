"""detect-secrets' plugins, run over one line of text at a time (the ``[redact]`` extra).

The plugins are called directly (``analyze_line``), not through ``scan_line``: that function is
detect-secrets' ad-hoc mode, which reports every string with its entropy whatever the limit. The
same heuristic filters detect-secrets applies to files are applied here (sequential strings,
UUIDs, templates, ``$VAR`` references, indirect references, id-like names), and no plugin verifies
a secret over the network.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from ..errors import MissingDependencyError

__all__ = ["Scanner", "kind_of"]

_FILENAME = "session.txt"  # (detect-secrets picks some regexes by file type: a plain text file)


def kind_of(secret_type: str) -> str:
    """detect-secrets' secret type as a placeholder kind: ``AWS Access Key`` -> ``aws-access-key``."""
    return re.sub(r"[^a-z0-9]+", "-", secret_type.lower()).strip("-")


@lru_cache(maxsize=1)
def _plugins_and_filters() -> tuple[list[Any], list[Callable[..., bool]], list[Callable[..., bool]]]:
    try:
        from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
        from detect_secrets.filters import heuristic
        from detect_secrets.settings import get_settings
    except ImportError as exc:
        raise MissingDependencyError(
            'redaction needs detect-secrets: pip install "sessionlab[redact]"') from exc
    settings = get_settings()
    # never ask a provider whether a secret is live
    settings.disable_filters("detect_secrets.filters.common.is_ignored_due_to_verification_policies")
    classes: list[Any] = list(get_mapping_from_secret_type_to_class().values())
    plugins = [cls() for cls in classes]
    on_secret = [heuristic.is_sequential_string, heuristic.is_potential_uuid, heuristic.is_templated_secret,
                 heuristic.is_prefixed_with_dollar_sign, heuristic.is_not_alphanumeric_string]
    on_line = [heuristic.is_indirect_reference]
    return plugins, on_secret, on_line


class Scanner:
    """(secret value, kind) pairs detect-secrets finds in a line; each line scanned once."""

    def __init__(self) -> None:
        self.plugins, self._on_secret, self._on_line = _plugins_and_filters()
        self._seen: dict[str, tuple[tuple[str, str], ...]] = {}

    def line(self, line: str) -> tuple[tuple[str, str], ...]:
        found = self._seen.get(line)
        if found is None:
            found = tuple(self._scan(line))
            if len(self._seen) >= 500_000:  # (a bound on what is remembered)
                self._seen.clear()
            self._seen[line] = found
        return found

    def _scan(self, line: str) -> list[tuple[str, str]]:
        from detect_secrets.filters.heuristic import is_likely_id_string

        out = []
        for plugin in self.plugins:
            for secret in plugin.analyze_line(filename=_FILENAME, line=line, line_number=1):
                # (some plugins' matches carry the character before and after: a space, a quote, '=')
                value = (secret.secret_value or "").strip(" \t\r\n\"'").lstrip("=:")
                if not value or any(f(value) for f in self._on_secret):
                    continue
                if is_likely_id_string(value, line, plugin):
                    continue
                out.append((value, kind_of(secret.type)))
        if out and any(f(line) for f in self._on_line):  # (a slow check: only where something was found)
            return []
        return out
