"""The tools a generated pi session calls (sessionlab.synth): each draws a call's arguments and
its result from the builder's random generator, in a fixed order (the same seed gives the same bytes)."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from ._text import Project, code_pool, grep_pool, log_pool

__all__ = ["TOOLS", "ToolRun", "Builder"]


class Builder(Protocol):
    """What a tool reads of the session builder that calls it (``._builder.Builder``)."""

    rng: random.Random
    cwd: str
    proj: Project
    scale: float
    pi16: bool


@dataclass
class ToolRun:
    """What one generated tool call did: its arguments, result text and the file it read or changed."""

    args: dict[str, Any]
    text: str
    details: Any = None
    is_error: bool = False
    read: str | None = None
    mod: str | None = None


def _read(b: Builder, f: str, path: str) -> ToolRun:
    rng = b.rng
    args: dict[str, Any] = {"path": path}
    if rng.random() < 0.15:
        args["offset"] = rng.randint(1, 400)
        args["limit"] = rng.choice((50, 100, 200))
    if rng.random() < 0.04:
        return ToolRun(args, f"ENOENT: no such file or directory, access '{b.cwd}/{f}'", is_error=True,
                       read=path)
    n = int(args.get("limit") or rng.choice((20, 60, 120, 250, 400, 900))) * b.scale
    _, text = code_pool(b.proj.lang).take(rng, int(n) + 1)
    return ToolRun(args, text, read=path)


def _bash(b: Builder, f: str, path: str) -> ToolRun:
    rng, proj = b.rng, b.proj
    cmd = rng.choice((proj.test_cmd, proj.build_cmd, f"rg -n {rng.choice(proj.symbols)} src",
                      "git diff", f"wc -l {f}", "git status --short"))
    args: dict[str, Any] = {"command": cmd}
    if rng.random() < 0.2:
        args["timeout"] = rng.choice((60, 120, 300))
    n = int(rng.choice((2, 10, 40, 150)) * b.scale) + 1
    _, text = log_pool(proj.lang).take(rng, n)
    is_error = rng.random() < 0.15
    if is_error:
        text += f"\n\nCommand exited with code {rng.choice((1, 1, 2, 101))}"
    return ToolRun(args, text, details={}, is_error=is_error)


def _edit(b: Builder, f: str, path: str) -> ToolRun:
    rng = b.rng
    code = code_pool(b.proj.lang)
    first, old = code.take(rng, rng.randint(1, 12))
    # pi's edit tool needs text to find (the 0.58 mode keeps its old bytes, which data/ pins)
    while b.pi16 and not old.strip():
        first, old = code.take(rng, rng.randint(1, 12))
    _, new = code.take(rng, rng.randint(1, 14))
    args = {"path": path, "oldText": old, "newText": new}
    if rng.random() < 0.08:
        return ToolRun(args, f"Could not find the exact text in {b.cwd}/{f}. The old text must match exactly "
                       "including all whitespace and newlines.", details={}, is_error=True)
    line = first % 700 + 1
    diff = ["      ..."]
    diff += [f"-{line + k:>4} {ln}" for k, ln in enumerate(old.split("\n"))]
    diff += [f"+{line + k:>4} {ln}" for k, ln in enumerate(new.split("\n"))]
    return ToolRun(args, f"Successfully replaced text in {path}.",
                   details={"diff": "\n".join(diff), "firstChangedLine": line}, mod=path)


def _write(b: Builder, f: str, path: str) -> ToolRun:
    _, content = code_pool(b.proj.lang).take(b.rng, int(b.rng.randint(10, 200) * b.scale) + 1)
    return ToolRun({"path": path, "content": content},
                   f"Successfully wrote {len(content.encode())} bytes to {path}", mod=path)


def _grep(b: Builder, f: str, path: str) -> ToolRun:
    rng = b.rng
    args: dict[str, Any] = {"pattern": rng.choice(b.proj.symbols)}
    if rng.random() < 0.5:
        args["path"] = "src"
    if rng.random() < 0.3:
        args["glob"] = "*." + f.rsplit(".", 1)[-1]
    if rng.random() < 0.2:
        args["ignoreCase"] = True
    if rng.random() < 0.1:
        return ToolRun(args, "No matches found")
    _, text = grep_pool(b.cwd).take(rng, int(rng.choice((3, 10, 40, 100)) * b.scale) + 1)
    return ToolRun(args, text)


def _ls(b: Builder, f: str, path: str) -> ToolRun:
    rng, files = b.rng, b.proj.files
    args = {"path": rng.choice((".", "src", "tests"))}
    return ToolRun(args, "\n".join(sorted({p.split("/")[-1] for p in rng.sample(files, min(8, len(files)))})))


TOOLS: dict[str, Callable[[Builder, str, str], ToolRun]] = {
    "read": _read, "bash": _bash, "edit": _edit, "write": _write, "grep": _grep, "ls": _ls,
}
