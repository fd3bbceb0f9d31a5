"""Vocabulary for :mod:`sessionlab.synth`: projects, code, logs and prose to fill sessions with.

Everything large (source files, grep hits, test logs) is cut from text pools built once per
language from a fixed seed, so making a 50 KB tool result is one string slice, not 50 000
random choices. The pools are the same in every process, which keeps generated sessions
deterministic for a given seed.
"""

from __future__ import annotations

import base64
import random
from dataclasses import dataclass
from functools import cache

__all__ = ["Pool", "Project", "b64", "code_pool", "grep_pool", "log_pool", "project_for", "prose"]

_POOL_SEED = 20260115
_POOL_LINES = 6000


@dataclass(frozen=True, slots=True, kw_only=True)
class Project:
    """What a working directory looks like: its language, files, and the commands run in it."""

    lang: str
    files: tuple[str, ...]
    test_cmd: str
    build_cmd: str
    symbols: tuple[str, ...]


_WORDS = ("session", "config", "parser", "client", "cache", "router", "store", "model", "token",
          "render", "event", "queue", "worker", "auth", "user", "index", "export", "tree", "entry",
          "context", "summary", "branch", "loader", "writer", "stream", "buffer", "schema", "plugin")

_FILES = {
    "ts": ("src/index.ts", "src/main.ts", "src/cli/args.ts", "src/core/session.ts", "src/core/agent.ts",
           "src/core/tools/bash.ts", "src/core/tools/read.ts", "src/core/compaction.ts", "src/utils/fs.ts",
           "src/utils/format.ts", "src/ui/footer.ts", "src/ui/editor.ts", "test/session.test.ts",
           "test/agent.test.ts", "package.json", "tsconfig.json", "README.md"),
    "py": ("src/app/__init__.py", "src/app/main.py", "src/app/models.py", "src/app/db.py",
           "src/app/api/routes.py", "src/app/api/schemas.py", "src/app/services/billing.py",
           "src/app/services/auth.py", "src/app/utils.py", "tests/test_models.py", "tests/test_api.py",
           "tests/conftest.py", "pyproject.toml", "README.md"),
    "rs": ("src/main.rs", "src/lib.rs", "src/cli.rs", "src/config.rs", "src/parser/mod.rs",
           "src/parser/lexer.rs", "src/render.rs", "src/error.rs", "tests/integration.rs", "Cargo.toml",
           "README.md"),
    "go": ("cmd/server/main.go", "internal/api/handler.go", "internal/api/middleware.go",
           "internal/store/store.go", "internal/store/postgres.go", "internal/queue/worker.go",
           "internal/config/config.go", "pkg/client/client.go", "internal/api/handler_test.go", "go.mod",
           "README.md"),
}
_CMDS = {
    "ts": ("npm test", "npm run build"),
    "py": ("python -m pytest -q", "ruff check src"),
    "rs": ("cargo test", "cargo build --release"),
    "go": ("go test ./...", "go build ./..."),
}


@cache
def project_for(cwd: str) -> Project:
    """The project profile of ``cwd`` (stable: derived from the path's text)."""
    langs = ("ts", "py", "rs", "go")
    lang = langs[sum(cwd.encode()) % len(langs)]
    rng = random.Random(cwd)
    symbols = tuple(sorted({_ident(rng) for _ in range(40)}))
    return Project(lang=lang, files=_FILES[lang], test_cmd=_CMDS[lang][0], build_cmd=_CMDS[lang][1],
                   symbols=symbols)


def _ident(rng: random.Random) -> str:
    a, b = rng.sample(_WORDS, 2)
    return a + b.capitalize()


class Pool:
    """One long text of lines; :meth:`take` cuts ``n`` whole lines out of it with one slice."""

    __slots__ = ("offsets", "text")

    def __init__(self, lines: list[str]) -> None:
        self.text = "\n".join(lines) + "\n"
        offsets = [0]
        pos = 0
        for ln in lines:
            pos += len(ln) + 1
            offsets.append(pos)
        self.offsets = offsets

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def take(self, rng: random.Random, n: int) -> tuple[int, str]:
        """``n`` consecutive lines from a random place: (first line index, text without final newline)."""
        n = max(1, min(n, len(self)))
        start = rng.randrange(0, len(self) - n + 1)
        return start, self.text[self.offsets[start]: self.offsets[start + n] - 1]


_TS_BLOCKS = (
    ("export async function {a}({b}: {T}): Promise<{U}> {{", "\tconst {c} = await this.{d}.get({b}.id);",
     "\tif (!{c}) {{", '\t\tthrow new Error(`{a}: missing ${{{b}.id}}`);', "\t}}", "\treturn {c};", "}}", ""),
    ("export interface {T} {{", "\tid: string;", "\t{b}: {U} | null;", "\t{c}?: number;", "}}", ""),
    ("\tprivate {a}({b}: string): void {{", "\t\tfor (const {c} of this.{d}) {{",
     "\t\t\tif ({c}.name === {b}) continue;", "\t\t\tthis.emit(\"{b}\", {c});", "\t\t}}", "\t}}", ""),
    ('import {{ {T}, {U} }} from "./{b}.js";', 'import {{ {a} }} from "../utils/{d}.js";', ""),
)
_PY_BLOCKS = (
    ("def {a}({b}: {T}) -> {U}:", '    """Return the {d} for ``{b}``."""', "    {c} = {b}.get({d!r})",
     "    if {c} is None:", "        raise KeyError({b})", "    return {U}({c})", "", ""),
    ("class {T}:", "    def __init__(self, {b}: str) -> None:", "        self.{b} = {b}",
     "        self._{c}: dict[str, {U}] = {{}}", "", "    def {a}(self) -> list[{U}]:",
     "        return sorted(self._{c}.values(), key=lambda v: v.{d})", ""),
    ("from .{d} import {T}, {a}", "import logging", "", "log = logging.getLogger(__name__)", ""),
)
_RS_BLOCKS = (
    ("pub fn {a}({b}: &{T}) -> Result<{U}, Error> {{", "    let {c} = {b}.{d}()?;",
     "    if {c}.is_empty() {{", '        return Err(Error::Missing("{b}".into()));', "    }}",
     "    Ok({U}::from({c}))", "}}", ""),
    ("#[derive(Debug, Clone)]", "pub struct {T} {{", "    pub {b}: String,", "    {c}: Vec<{U}>,", "}}", ""),
    ("impl {T} {{", "    pub fn {a}(&mut self, {b}: usize) {{", "        self.{c}.truncate({b});", "    }}", "}}", ""),
)
_GO_BLOCKS = (
    ("func (s *{T}) {A}(ctx context.Context, {b} string) (*{U}, error) {{",
     "\t{c}, err := s.{d}.Get(ctx, {b})", "\tif err != nil {{",
     '\t\treturn nil, fmt.Errorf("{a}: %w", err)', "\t}}", "\treturn {c}, nil", "}}", ""),
    ("type {T} struct {{", "\t{A} string `json:\"{b}\"`", "\t{C} []*{U}", "}}", ""),
)
_BLOCKS = {"ts": _TS_BLOCKS, "py": _PY_BLOCKS, "rs": _RS_BLOCKS, "go": _GO_BLOCKS}


@cache
def code_pool(lang: str) -> Pool:
    """Source-like lines of ``lang`` (``ts``, ``py``, ``rs`` or ``go``)."""
    rng = random.Random(f"{_POOL_SEED}-{lang}")
    blocks = _BLOCKS[lang]
    lines: list[str] = []
    while len(lines) < _POOL_LINES:
        words = rng.sample(_WORDS, 4)
        a, b, c, d = words
        name = a + b.capitalize()
        fill = {"a": name, "A": name[0].upper() + name[1:], "b": b, "c": c, "C": c.capitalize(), "d": d,
                "T": a.capitalize() + "Options", "U": c.capitalize() + d.capitalize()}
        for tmpl in rng.choice(blocks):
            lines.append(tmpl.format(**fill))
    return Pool(lines)


@cache
def grep_pool(cwd: str) -> Pool:
    """``path:line:text`` hits, as a grep over the project at ``cwd`` prints them."""
    proj = project_for(cwd)
    rng = random.Random(f"{_POOL_SEED}-grep-{cwd}")
    code = code_pool(proj.lang)
    src = [f for f in proj.files if "." in f and not f.endswith((".md", ".json", ".toml", ".mod"))]
    lines = []
    for _ in range(3000):
        _, text = code.take(rng, 1)
        lines.append(f"{rng.choice(src)}:{rng.randint(1, 900)}:{text.strip()}")
    return Pool(lines)


_LOG = {
    "ts": ("✓ test/{w}.test.ts > {w} > {v} ({n} ms)", "✗ test/{w}.test.ts > {w} > {v}",
           "  AssertionError: expected {n} to be {m}", "src/{w}.ts({n},{m}): error TS2345: Argument of type 'string' is not assignable to parameter of type '{W}'.",
           " Test Files  {n} passed ({m})", "npm warn deprecated {w}@{n}.{m}.0"),
    "py": ("tests/test_{w}.py::test_{v} PASSED", "tests/test_{w}.py::test_{v} FAILED",
           "E       assert {n} == {m}", "src/app/{w}.py:{n}:{m}: F401 `{v}` imported but unused",
           "{n} passed, {m} warnings in 1.{n}s", "  warnings.warn(DeprecationWarning('{w}'))"),
    "rs": ("test {w}::tests::{v} ... ok", "test {w}::tests::{v} ... FAILED",
           "   Compiling {w} v0.{n}.{m}", "warning: unused variable: `{v}`", "  --> src/{w}.rs:{n}:{m}",
           "error[E0308]: mismatched types"),
    "go": ("=== RUN   Test{W}", "--- PASS: Test{W} (0.{n}s)", "--- FAIL: Test{W} (0.{n}s)",
           "    {w}_test.go:{n}: got {m}, want {n}", "ok  \texample.com/{w}\t0.{n}s", "# example.com/{w}"),
}


@cache
def log_pool(lang: str) -> Pool:
    """Build and test output lines of ``lang``'s tool chain."""
    rng = random.Random(f"{_POOL_SEED}-log-{lang}")
    tmpls = _LOG[lang]
    lines = []
    for _ in range(_POOL_LINES):
        w, v = rng.sample(_WORDS, 2)
        lines.append(rng.choice(tmpls).format(w=w, W=w.capitalize(), v=f"{v}_{w}", n=rng.randint(1, 999),
                                              m=rng.randint(1, 99)))
    return Pool(lines)


_ASK = (
    "Read {f} and explain how {s} works.", "There's a bug in {s}: it returns stale data after a reload. Can you fix it?",
    "Add tests for {s} in {f}.", "Refactor {f} so that {s} no longer depends on global state.",
    "Run the tests and fix whatever fails.", "Why does the build fail? Look at {f}.",
    "Rename {s} to something clearer everywhere it is used.", "Add a --verbose flag and log what {s} does.",
    "Can you make {s} handle empty input without crashing?", "Review the changes in {f} and tidy them up.",
    "ok, continue", "looks good, commit it", "no, revert that and try a smaller change",
    "Document {s} in the README.", "Profile {s}; it feels slow on big inputs.",
    "wait, that's wrong: {s} must keep the original order", "Try again", "Now update the changelog.",
)
_SAY = (
    "I'll start by reading {f} to see how {s} is wired up.", "The problem is in {s}: the cache key ignores the reload counter.",
    "Let me check where {s} is called.", "Tests pass now.", "I changed {f} so that {s} receives its dependencies explicitly.",
    "This keeps the public API unchanged.", "One test still fails because of a fixture that assumes the old order.",
    "Let me run the test suite to confirm.", "Here is what changed:", "`{s}` now validates its input first.",
    "The slow part was the repeated parse inside the loop; it now happens once.",
    "I left the behaviour for missing files as it was.", "Next, I'll update the callers in {f}.",
)
_THINK = (
    "The user wants {s} fixed. First I need to find where it is defined.", "Maybe {f} holds the entry point.",
    "Let me think about the edge cases: empty input, a missing file, a very large file.",
    "The failing assertion compares the wrong field.", "I should not change the public signature of {s}.",
    "Reading the test output again: only one test fails, the rest pass.", "This could also be a race in the worker.",
    "A smaller change would be to guard the call in {f}.", "I need to check how {s} handles errors before editing.",
)
_SUMMARY_DONE = ("Read {f} and traced {s}", "Fixed {s} to handle empty input", "Added tests for {s}",
                 "Refactored {f} to remove global state", "Ran the test suite; all green")


def prose(rng: random.Random, kind: str, n: int, proj: Project) -> str:
    """``n`` sentences of ``kind`` (``ask``, ``say``, ``think``, ``done``) about ``proj``."""
    src = {"ask": _ASK, "say": _SAY, "think": _THINK, "done": _SUMMARY_DONE}[kind]
    files, syms = proj.files, proj.symbols
    out = [rng.choice(src).format(f=rng.choice(files), s=rng.choice(syms)) for _ in range(n)]
    return " ".join(out) if kind != "done" else "\n".join(f"- [x] {x}" for x in out)


def b64(rng: random.Random, nbytes: int, prefix: bytes = b"") -> str:
    """Base64 of ``prefix`` plus ``nbytes`` random bytes (signatures, image data)."""
    return base64.b64encode(prefix + rng.randbytes(nbytes)).decode("ascii")
