"""Redacted copies of session files, in their own format, line by line.

Every string value of every line is redacted except the structural ones (:data:`STRUCTURAL_KEYS`:
ids, parent links, types, roles, timestamps, models, provider signatures) and inline image data;
keys, numbers and everything else stay byte for byte (:mod:`._json`). A line that is not whole
JSON (damaged, truncated, pretty-printed) is also redacted as plain text, so nothing in it escapes.
The same pass gives the texts table: every text value of the files, redacted.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ._json import Path as KeyPath
from ._json import rewrite_line
from ._redactor import Redactor

__all__ = ["STRUCTURAL_KEYS", "FileWalk", "walk_file", "common_root", "output_path", "learn_files"]

#: string values under these keys are never redacted: they hold ids, links and enumerations the readers
#: need, or providers' opaque signatures (never the user's text)
STRUCTURAL_KEYS = frozenset({
    "id", "parentId", "uuid", "parentUuid", "leafUuid", "logicalParentUuid", "sessionId", "session_id",
    "messageId", "requestId", "toolUseID", "parentToolUseID", "tool_use_id", "toolCallId", "call_id", "turn_id",
    "promptId", "agentId", "firstKeptEntryId", "fromId", "targetId", "leafId", "forked_from_id",
    "parent_thread_id", "thread_id", "responseId", "response_id", "timestamp", "type", "subtype", "role",
    "version", "cli_version", "originator", "model", "provider", "api", "stopReason", "stop_reason",
    "stop_sequence", "model_provider", "userType", "level", "status", "mimeType", "media_type", "thinkingLevel",
    "modelId", "responseModel", "customType", "kind", "signature", "thinkingSignature", "textSignature",
    "encrypted_content", "effort", "approval_policy", "service_tier", "hookEvent", "action", "isMeta",
})
_IMAGE_DATA = re.compile(r"(?:data:image/[a-z0-9.+-]+;base64,)?[A-Za-z0-9+/=\r\n]{256,}")


def _structural(value: str, keys: KeyPath) -> bool:
    if keys and keys[-1] in STRUCTURAL_KEYS:
        return True
    return len(value) >= 256 and _IMAGE_DATA.fullmatch(value) is not None  # inline image bytes


@dataclass
class FileWalk:
    """What one file's pass found: per changed value (line, entry id, field, kind, placeholder); per
    text value (line, entry id, field, redacted text) when texts were asked for."""

    found: list[tuple[int, str | None, str, str, str]] = field(default_factory=list)
    texts: list[tuple[int, str | None, str, str]] = field(default_factory=list)


def _read_text(path: str) -> str:
    with open(path, "rb") as fh:
        return fh.read().decode("utf-8", "surrogateescape")


def learn_files(redactor: Redactor, files: Iterable[str]) -> None:
    """Let ``redactor`` learn the user and host names of every file (its path and its text)."""
    for f in files:
        redactor.learn(f)
        try:
            redactor.learn(_read_text(f))
        except OSError:
            continue  # (an unreadable file is a read_error issue of the load)


def _whole_json(line: str) -> bool:
    try:
        json.loads(line)
    except ValueError:
        return False
    return True


def walk_file(path: str, redactor: Redactor | None, *, out: str | os.PathLike[str] | None = None,
              texts: bool = False) -> FileWalk:
    """Redact one session file: write the copy to ``out`` (when given) and say what was replaced."""
    walk = FileWalk()
    if redactor is None and out is not None and not texts:
        shutil.copyfile(path, out)
        return walk
    lines = _read_text(path).split("\n")
    for no, line in enumerate(lines, 1):
        if not line.strip():
            continue

        def change(value: str, keys: KeyPath, no: int = no) -> str | None:
            if _structural(value, keys):
                return None
            new, found = redactor.text(value) if redactor is not None else (value, ())
            where = ".".join(keys) or "(value)"
            for kind, placeholder in found:
                walk.found.append((no, None, where, kind, placeholder))
            if texts:
                walk.texts.append((no, None, where, new))
            return new

        first = len(walk.found), len(walk.texts)
        new_line, entry_id = rewrite_line(line, change)
        if redactor is not None and not _whole_json(line):
            new_line, found = redactor.text(new_line)
            walk.found += [(no, None, "(line)", kind, p) for kind, p in found]
        if entry_id is not None:  # (the line's entry, known once its line is read)
            walk.found[first[0]:] = [(n, entry_id, w, k, p) for n, _, w, k, p in walk.found[first[0]:]]
            walk.texts[first[1]:] = [(n, entry_id, w, t) for n, _, w, t in walk.texts[first[1]:]]
        lines[no - 1] = new_line
    if out is not None:
        with open(out, "wb") as fh:
            fh.write("\n".join(lines).encode("utf-8", "surrogateescape"))
    return walk


def common_root(files: list[str]) -> str:
    """The folder every file is under (the files' own folder for one file)."""
    if not files:
        return ""
    dirs = [os.path.dirname(os.path.abspath(f)) for f in files]
    return os.path.commonpath(dirs)


def output_path(redactor: Redactor | None, file: str, root: str, out_dir: str | os.PathLike[str]) -> Path:
    """Where the copy of ``file`` goes: its path below ``root``, redacted, below ``out_dir``."""
    rel = os.path.relpath(os.path.abspath(file), root)
    if redactor is not None:
        rel = redactor.text(rel)[0]
    parts = [p for p in Path(rel).parts if p not in ("", ".", "..")]
    return Path(out_dir, *parts)
