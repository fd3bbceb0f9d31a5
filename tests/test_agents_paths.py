"""Claude Code and Codex files load to the same tables whichever way the loader runs: in this
process, or in worker processes (chosen when most files are other agents' than pi's: their
readers hold the GIL), with pi files mixed in."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import sessionlab as sl
from sessionlab.tables import _load

ROOT = Path(__file__).parent.parent


@pytest.fixture
def mixed(tmp_path):
    src = tmp_path / "mixed"
    shutil.copytree(ROOT / "tests" / "data" / "claude" / "generated", src / "claude")
    shutil.copytree(ROOT / "tests" / "data" / "codex" / "generated", src / "codex")
    shutil.copytree(ROOT / "data" / "pi", src / "pi")
    return src


def test_worker_processes_equal_one_process(mixed, monkeypatch):
    paths = _load.find_files(mixed)
    assert _load._mostly_agents(paths)
    serial = sl.entries_table(mixed, cache=False, max_workers=1, on_bad_lines="skip")
    seen = []
    real = _load._before_fork
    monkeypatch.setattr(_load, "_before_fork", lambda: (seen.append(True), real())[1])
    monkeypatch.setattr(_load, "_SERIAL_BYTES", 0)
    monkeypatch.setattr(_load, "_CHUNK_BYTES", (1, 200_000))  # several chunks, two workers
    pooled = sl.entries_table(mixed, cache=False, max_workers=2, on_bad_lines="skip")
    assert seen == [True], "the agents' files went to worker processes"
    assert pooled.equals(serial)
    assert set(pooled["agent"].to_pylist()) == {"pi", "claude-code", "codex"}


def test_mostly_pi_files_keep_threads(tmp_path):
    src = tmp_path / "pi"
    shutil.copytree(ROOT / "data" / "pi", src / "pi")
    shutil.copytree(ROOT / "data" / "sessions", src / "sessions")
    (src / "claude").mkdir()
    shutil.copy(ROOT / "tests" / "data" / "claude" / "real" / "apanloco-random-session.jsonl", src / "claude")
    paths = _load.find_files(src)
    agents = [_load._agent_of(p) for p in paths]
    assert agents.count("pi") * 2 > len(agents) and "claude-code" in agents
    assert not _load._mostly_agents(paths)
