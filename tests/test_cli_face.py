"""The command line as it is seen: in a terminal of 80 and 200 columns (a pseudo-terminal, so the
program sees a real tty of that width), piped, and as JSON and CSV.

Every printed line fits the terminal, model names stay whole, what is left out is named under the
table, ``--wide`` shows the file paths, ``--json``/``--csv`` carry every field, ``--project``
selects sessions for ``usage``, ``summary`` and ``report``, finding no sessions is exit code 1
with the folders searched named, and ``python -m sessionlab.synth`` has a command line."""

from __future__ import annotations

import csv
import fcntl
import functools
import io
import json
import os
import pty
import re
import struct
import subprocess
import sys
import tempfile
import termios
from pathlib import Path

import pytest

from sessionlab.cli._table import short_model

ROOT = Path(__file__).resolve().parent.parent
DATA = "data/"  # the README's quickstart folder: pi, Claude Code and Codex sessions
ANSI = re.compile(r"\x1b\[[0-9;?]*[a-zA-Z]")
# (one cache folder for the module's runs: each reads data/ once, the later ones from the cache)
ENV = {**os.environ, "PYTHONPATH": str(ROOT), "SESSIONLAB_CACHE_DIR": tempfile.mkdtemp(prefix="sessionlab-cli-face-")}


def tty(args: list[str], columns: int) -> tuple[int, list[str], str]:
    """:func:`run_tty`, each command once per module."""
    return _tty(tuple(args), columns)


@functools.cache
def _tty(args: tuple[str, ...], columns: int) -> tuple[int, list[str], str]:
    return run_tty(list(args), columns)


def run_tty(args: list[str], columns: int, *, env: dict | None = None) -> tuple[int, list[str], str]:
    """Run ``python -m sessionlab ARGS`` with stdout on a pseudo-terminal ``columns`` wide (and
    ``COLUMNS`` set, as a shell does); returns the exit code, the lines shown (colours removed)
    and stderr."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    p = subprocess.Popen([sys.executable, "-m", "sessionlab", *args], stdout=slave, stderr=subprocess.PIPE,
                         cwd=ROOT, env={**ENV, "COLUMNS": str(columns), **(env or {})})
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # the terminal closed: the program has ended
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    err = p.stderr.read().decode() if p.stderr else ""
    code = p.wait(timeout=120)
    text = ANSI.sub("", b"".join(chunks).decode("utf-8")).replace("\r\n", "\n")
    return code, text.split("\n"), err


def piped(args: list[str], *, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "sessionlab", *args], capture_output=True, text=True, cwd=ROOT,
                          env={**ENV, **(env or {})}, timeout=120)


def as_json(args: list[str]) -> dict:
    """The JSON a command prints (each command run once per module)."""
    return json.loads(_json(tuple(args)))


@functools.cache
def _json(args: tuple[str, ...]) -> str:
    r = piped(list(args))
    assert r.returncode == 0, r.stderr
    return r.stdout


def note(lines: list[str]) -> str:
    """The "Left out to fit" note, its wrapped lines joined."""
    text = " ".join(ln.strip() for ln in lines)
    m = re.search(r"Left out to fit \d+ columns: [^;]*;", text)
    return m.group(0) if m else ""


def header(lines: list[str]) -> str:
    """The header lines of the first table (the lines before its rule), joined."""
    rule = next(i for i, ln in enumerate(lines) if ln.strip().startswith(("├", "─")))
    return " ".join(lines[:rule])


# -- every line fits; what is left out is named ------------------------------------------------------
COMMANDS = [["summary", DATA], ["usage", "daily", DATA], ["usage", "monthly", DATA], ["usage", "session", DATA]]


@pytest.mark.parametrize("columns", [80, 200])
@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: " ".join(a[:2]))
def test_every_line_fits_the_terminal(args, columns):
    code, lines, err = tty(args, columns)
    assert code == 0, err
    assert max(len(ln) for ln in lines) <= columns
    assert sum("Total" in ln for ln in lines) >= 1


def test_summary_at_80_columns_names_what_it_left_out():
    code, lines, _ = tty(["summary", DATA], 80)
    left = note(lines)
    for col in ("Input", "Output", "Cache read", "Cache write"):
        assert col in left and col not in header(lines)
    assert "the total tokens still count them" in left
    assert "Total tokens" in header(lines) and "Cost (USD)" in header(lines)
    text = "\n".join(lines)
    assert "Session ids shortened to their first 8 characters" in " ".join(ln.strip() for ln in lines)
    rows = as_json(["summary", DATA, "--json"])["sessions"]
    for r in rows:  # every session is there, by its short id, with its day
        assert r["session_id"][:8] in text
        assert r["last_timestamp"][:10] in text
    assert f"{sum(r['total_tokens'] for r in rows):,}" in text
    assert not any(r["file"] in text for r in rows)  # the path is --wide's


def test_summary_at_200_columns_keeps_ids_or_says_so():
    code, lines, _ = tty(["summary", DATA, "--no-usage"], 200)
    assert "Input" in header(lines) and "Output" in header(lines) and "Cache read" in header(lines)
    for col in ("Cache write",):  # the one column a 200-column terminal has no room for
        assert col in note(lines) and col not in header(lines)


def test_usage_at_80_columns_names_the_cache_columns_it_left_out():
    code, lines, _ = tty(["usage", "daily", DATA], 80)
    left = note(lines)
    assert "Cache create" in left and "Cache read" in left and "the total tokens still count them" in left
    assert "Cache create" not in header(lines)


@pytest.mark.parametrize("report", ["daily", "session"])
@pytest.mark.parametrize("columns", [80, 200])
def test_model_names_are_whole(report, columns):
    data = as_json(["usage", report, DATA, "--json"])
    rows = data["daily" if report == "daily" else "sessions"]
    models = {m for r in rows for m in r["modelsUsed"]}
    assert any(short_model(m) != m for m in models)  # data/ has dated ids (claude-sonnet-4-5-20250929)
    _, lines, _ = tty(["usage", report, DATA], columns)
    words = {w for ln in lines for w in ln.split()}
    for m in models:
        assert m in words or short_model(m) in words, m
    assert "claude-opus-4-5" in words and "claude-opus-4-6" in words  # not both "claude-opu…"
    assert not [w for w in words if w.startswith(("claude", "gpt", "gemini")) and w.endswith("…")]
    if any(m not in words for m in models):  # shortened: said under the table
        assert "Model names without their date suffix" in " ".join(ln.strip() for ln in lines)


def test_usage_sessions_show_date_and_project():
    data = as_json(["usage", "session", DATA, "--json"])
    for columns in (80, 200):
        _, lines, _ = tty(["usage", "session", DATA], columns)
        text = "\n".join(lines)
        for s in data["sessions"]:
            assert s["sessionId"][:8] in text
            assert s["lastActivity"][:10] in text
            assert s["cwd"].rsplit("/", 1)[-1] in text  # at least the project's own folder name
        assert "Project" in header(lines)
    _, lines, _ = tty(["usage", "session", DATA], 200)
    assert all(s["sessionId"] in "\n".join(lines) for s in data["sessions"])  # whole ids when they fit


# -- --wide, piped, --json, --csv ------------------------------------------------------------------------
def test_wide_shows_the_file_path():
    rows = as_json(["summary", DATA, "--json"])["sessions"]
    r = piped(["summary", DATA, "--wide", "--no-usage"])
    assert r.returncode == 0
    for row in rows:
        assert any(row["file"] in ln and row["session_id"] in ln for ln in r.stdout.splitlines())
    code, lines, _ = tty(["summary", DATA, "--wide", "--no-usage"], 80)  # whole, however narrow
    assert code == 0 and all(row["file"] in "\n".join(lines) for row in rows)
    assert "File" in header(lines) and "Left out" not in "\n".join(lines)


def test_piped_output_is_whole_and_plain():
    r = piped(["summary", DATA, "--no-usage"], env={"COLUMNS": "80"})
    assert "\x1b[" not in r.stdout and "…" not in r.stdout and "Left out" not in r.stdout
    assert "ffae836b-9420-4060-ac13-7745215f90ff" in r.stdout and "/Users/badlogic/workspaces/pi-mono" in r.stdout


def test_summary_csv_carries_every_json_field():
    rows = as_json(["summary", DATA, "--json"])["sessions"]
    r = piped(["summary", DATA, "--csv"])
    got = list(csv.DictReader(io.StringIO(r.stdout)))
    assert len(got) == len(rows) == 16
    for js, cs in zip(rows, got):
        for k, v in js.items():
            if k == "messages":
                for role, n in v.items():
                    col = f"messages_{role}" if f"messages_{role}" in cs else "messages_other"
                    assert int(cs[col]) >= n
                continue
            assert cs[k] == ("" if v is None else str(v)), k
    assert got[0]["cwd"] and got[0]["last_timestamp"].endswith("Z") and got[0]["file"].endswith(".jsonl")


def test_usage_session_csv_has_cwd_and_last_activity():
    data = as_json(["usage", "session", DATA, "--json"])
    r = piped(["usage", "session", DATA, "--csv"])
    got = list(csv.DictReader(io.StringIO(r.stdout)))
    assert [g["sessionId"] for g in got] == [s["sessionId"] for s in data["sessions"]]
    for g, s in zip(got, data["sessions"]):
        assert g["cwd"] == s["cwd"] and g["lastActivity"] == s["lastActivity"]
        assert int(g["totalTokens"]) == s["totalTokens"]


def test_summary_json_adds_calls_and_times_from_the_sessions_table():
    from sessionlab.tables import load

    rows = as_json(["summary", DATA, "--json", "--no-usage"])["sessions"]
    s = {r["file"]: r for r in load(DATA, on_bad_lines="skip", progress=False, cache=False).sessions.to_pylist()}
    for r in rows:
        t = s[r["file"]]
        assert r["calls"] == t["call_count"]
        assert r["last_timestamp"] == t["last_timestamp"].isoformat(timespec="milliseconds").replace("+00:00", "Z")


# -- --project ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("project, match", [("dev/shop", lambda c: "dev/shop" in c),
                                            ("*/webapp", lambda c: c.endswith("/webapp")),
                                            ("/home/*/[ar]*", lambda c: c.split("/")[3][0] in "ar")])
def test_project_filters_usage_and_summary(project, match):
    every = as_json(["summary", DATA, "--json", "--no-usage"])["sessions"]
    want = sorted(r["file"] for r in every if match(r["cwd"]))
    assert 0 < len(want) < len(every)
    got = as_json(["summary", DATA, "--json", "--no-usage", "--project", project])
    assert sorted(r["file"] for r in got["sessions"]) == want
    assert got["total"]["sessions"] == len(want)
    sess = as_json(["usage", "session", DATA, "--json", "--project", project])["sessions"]
    assert sess and all(match(s["cwd"]) for s in sess)
    whole = {s["sessionId"]: s for s in as_json(["usage", "session", DATA, "--json"])["sessions"]}
    for s in sess:  # a session's numbers do not change with the filter
        assert s["totalTokens"] == whole[s["sessionId"]]["totalTokens"]
    daily = as_json(["usage", "daily", DATA, "--json", "--project", project])
    assert daily["totals"]["totalTokens"] == sum(s["totalTokens"] for s in sess)


def test_project_filters_the_report(tmp_path):
    out = tmp_path / "r.html"
    r = piped(["report", DATA, "--project", "*/rust-cli", "-o", str(out)])
    assert r.returncode == 0, r.stderr
    html = out.read_text(encoding="utf-8")
    assert "b627ef1d-8e91-479a-a1c3-a39e50c19172" in html
    assert "ec99108d" not in html and "45ee8ea6" not in html
    r = piped(["report", DATA, "--project", "rust", "-o", str(out)])  # a substring
    assert r.returncode == 0 and "b627ef1d" in out.read_text(encoding="utf-8")


# -- nothing found ---------------------------------------------------------------------------------------
def empty_home(tmp_path: Path) -> dict:
    """An environment whose agents' default folders do not exist."""
    home = tmp_path / "home"
    home.mkdir()
    return {"HOME": str(home), "PI_CODING_AGENT_DIR": str(home / "pi"), "CLAUDE_CONFIG_DIR": str(home / "claude"),
            "CODEX_HOME": str(home / "codex"), "XDG_CONFIG_HOME": str(home / "config")}


@pytest.mark.parametrize("args", [["usage", "daily"], ["usage", "session", "--json"], ["summary"], ["report"]],
                         ids=lambda a: " ".join(a))
def test_no_agent_folders_is_an_error_naming_them(tmp_path, args):
    env = empty_home(tmp_path)
    r = piped([*args, *(["-o", str(tmp_path / "r.html")] if args == ["report"] else [])], env=env)
    assert r.returncode == 1 and r.stdout == ""
    assert "no " in r.stderr and str(Path(env["HOME"], "pi")) in r.stderr and "(missing)" in r.stderr
    assert str(Path(env["HOME"], "codex")) in r.stderr and str(Path(env["HOME"], "claude")) in r.stderr
    assert not (tmp_path / "r.html").exists()


def test_an_empty_date_range_is_an_error_naming_the_folders():
    r = piped(["usage", "daily", DATA, "--since", "2030-01-01"])
    assert r.returncode == 1 and r.stdout == ""
    assert "2030-01-01" in r.stderr and "in: data/" in r.stderr


@pytest.mark.parametrize("args", [["summary", DATA], ["usage", "monthly", DATA], ["report", DATA, "-o", "/dev/null"]],
                         ids=lambda a: a[0])
def test_a_project_matching_nothing_is_an_error(args):
    r = piped([*args, "--project", "no-such-project"])
    assert r.returncode == 1 and "--project 'no-such-project'" in r.stderr and "data/" in r.stderr


# -- python -m sessionlab.synth ----------------------------------------------------------------------------
def test_synth_has_a_command_line(tmp_path):
    r = subprocess.run([sys.executable, "-m", "sessionlab.synth", "--help"], capture_output=True, text=True, env=ENV,
                       cwd=ROOT, timeout=60)
    assert r.returncode == 0 and r.stdout.startswith("usage: python -m sessionlab.synth")
    assert all(k in r.stdout for k in ("pi", "claude", "codex", "corpus"))
    made = []
    for agent in ("pi", "claude", "codex"):
        r = subprocess.run([sys.executable, "-m", "sessionlab.synth", agent, str(tmp_path), "--seed", "3", "--turns",
                            "2"], capture_output=True, text=True, env=ENV, cwd=ROOT, timeout=60)
        assert r.returncode == 0, r.stderr
        made.append(Path(r.stdout.split()[-1]))
    rows = as_json(["summary", str(tmp_path), "--json", "--no-usage"])["sessions"]
    assert {r["agent"] for r in rows} == {"pi", "claude-code", "codex"}
    assert {Path(r["file"]) for r in rows} >= set(made)
    again = tmp_path / "again"
    subprocess.run([sys.executable, "-m", "sessionlab.synth", "pi", str(again), "--seed", "3", "--turns", "2"],
                   check=True, capture_output=True, env=ENV, cwd=ROOT, timeout=60)
    (same,) = again.rglob("*.jsonl")
    assert same.read_bytes() == made[0].read_bytes()  # seeded: the same bytes


# -- the install line and the data the quickstart reads ------------------------------------------------------
def _extra(name: str, project: dict) -> set[str]:
    """The distributions an extra installs, the extras it names followed."""
    out: set[str] = set()
    for req in project["optional-dependencies"][name]:
        m = re.match(r"([A-Za-z0-9_.-]+)(?:\[([^\]]*)\])?", req)
        dist, extras = m.group(1).lower(), (m.group(2) or "")
        if dist == "sessionlab":
            for e in filter(None, (x.strip() for x in extras.split(","))):
                out |= _extra(e, project)
        else:
            out.add(dist)
    return out


def test_the_all_extra_holds_what_every_notebook_imports():
    """``pip install ".[all]" jupyterlab`` (the README's line) runs every notebook: each module a
    notebook imports is the standard library's, a core dependency's or one the ``all`` extra installs."""
    import importlib.metadata
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    have = _extra("all", project) | {re.match(r"[A-Za-z0-9_.-]+", d).group(0).lower() for d in project["dependencies"]}
    dists = importlib.metadata.packages_distributions()
    missing = {}
    for nb in sorted((ROOT / "notebooks").glob("*.ipynb")):
        cells = json.loads(nb.read_text())["cells"]
        code = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
        for mod in re.findall(r"^\s*(?:from|import)\s+([A-Za-z_][A-Za-z0-9_]*)", code, re.M):
            if mod in sys.stdlib_module_names or mod == "sessionlab":
                continue
            names = {d.lower() for d in dists.get(mod, [mod])}
            if not names & have:
                missing.setdefault(nb.name, []).append(mod)
    assert not missing, missing
    assert {"duckdb", "dask", "distributed"} <= have


def test_the_readmes_list_every_notebook():
    readme = (ROOT / "README.md").read_text()
    table = (ROOT / "notebooks" / "README.md").read_text()
    for nb in sorted((ROOT / "notebooks").glob("*.ipynb")):
        assert f"`{nb.stem}`" in readme or f"`{nb.stem}` " in readme, nb.stem
        assert f"`{nb.name}`" in table, nb.name


def test_data_readme_says_what_is_there():
    from sessionlab.tables import load

    text = (ROOT / "data" / "README.md").read_text()
    assert "All are pi" not in text
    label = {"pi": "pi", "claude-code": "Claude Code", "codex": "Codex"}
    rows = re.findall(r"^\| `([^`]+)/` \| ([^|]+) \| (\d+) \|", text, re.M)
    said = {folder: (agent.strip(), int(n)) for folder, agent, n in rows}
    sessions = load(ROOT / "data", on_bad_lines="skip", progress=False, cache=False).sessions.to_pylist()
    found: dict[str, tuple[set, int]] = {}
    for s in sessions:
        rel = Path(s["file"]).relative_to(ROOT / "data").parts
        folder = "/".join(rel[:2] if rel[0] in ("claude", "codex") else rel[:1])
        agents, n = found.get(folder, (set(), 0))
        found[folder] = (agents | {label[s["agent"]]}, n + 1)
    assert {f: ({a}, n) for f, (a, n) in said.items()} == found
    assert f"{len(sessions)} JSONL files" in text
