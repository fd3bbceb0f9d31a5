"""A load of other agents' default folders starts its worker processes while it lists the files
(``_early_pool``), and they load it, however small: the same tables as a load in one process."""

from __future__ import annotations

import pytest

from sessionlab.tables import Corpus, _load
from sessionlab.tables._load import load_files

from ._agent_fixtures import use_home


def _entries(res):
    return Corpus(res.files).entries.drop_columns(["file"]).to_pylist()


def _early_pools(monkeypatch) -> list:
    """What each load's :func:`_load._early_pool` gives (None: no early workers), as the loads ask it."""
    started = []
    real = _load._early_pool

    def early(*args, **kwargs):
        started.append(real(*args, **kwargs))
        return started[-1]

    monkeypatch.setattr(_load, "_early_pool", early)
    return started


@pytest.mark.parametrize("spend_only", [False, True], ids=["full", "spend-only"])
@pytest.mark.parametrize("agent", ["gemini", "goose", "amp", "kilo", "openclaw"])
def test_workers_started_before_the_listing_load_what_one_process_does(agent, spend_only, monkeypatch):
    # (spend-only: the workers leave the calls unpriced, the loading process prices each chunk)
    use_home(monkeypatch, agent)
    alone = load_files(None, agents=[agent], cache=False, on_bad_lines="skip", max_workers=1, spend_only=spend_only)
    monkeypatch.setattr(_load, "_CHUNK_BYTES", (1, 1))  # (a task per file; a small load takes the pool too)
    started = _early_pools(monkeypatch)
    pooled = load_files(None, agents=[agent], cache=False, on_bad_lines="skip", max_workers=2, spend_only=spend_only)
    assert started and started[0] is not None
    assert _entries(pooled) == _entries(alone) and _entries(alone)
    assert [r.path for r in pooled.files] == [r.path for r in alone.files]
    sources = {e["cost_source"] for e in _entries(alone) if e["input_tokens"] is not None}
    assert sources & {"priced", "recorded"}, sources


def test_no_early_workers_for_pi_named_files(tmp_path, monkeypatch):
    assert _load._early_pool(None, ["pi"], 2) is None
    assert _load._early_pool(None, None, 2) is None
    assert _load._early_pool(str(tmp_path), ["gemini"], 2) is None
    assert _load._early_pool(None, ["gemini"], 1) is None
    assert _load._early_pool(None, ["gemini"], 2, False) is None  # (a cache answers the load)
    monkeypatch.setattr(_load.sys, "platform", "darwin")  # (no fork: workers would start from scratch)
    assert _load._early_pool(None, ["gemini"], 2) is None
    monkeypatch.setattr(_load.sys, "platform", "linux")
    with pytest.raises(ValueError, match="agents"):
        _load._early_pool(None, ["no-such-agent"], 2)


@pytest.mark.parametrize("spend_only", [False, True], ids=["full", "spend-only"])
@pytest.mark.parametrize("agent", ["goose", "opencode", "kilo", "hermes", "copilot"])
def test_a_cached_load_of_sessions_no_cache_keeps_starts_its_workers_early(agent, spend_only, monkeypatch, tmp_path):
    # (a database's sessions are read every time: the cache answers for none of them)
    use_home(monkeypatch, agent)
    alone = load_files(None, agents=[agent], cache=False, on_bad_lines="skip", max_workers=1, spend_only=spend_only)
    started = _early_pools(monkeypatch)
    for _ in range(2):  # (the cache filled, then warm)
        cached = load_files(None, agents=[agent], cache=tmp_path / "cache", on_bad_lines="skip", max_workers=2,
                            spend_only=spend_only)
        assert _entries(cached) == _entries(alone) and _entries(alone)
        assert [r.path for r in cached.files] == [r.path for r in alone.files]
    assert len(started) == 2 and None not in started
    if spend_only:  # (a usage report's sessions as the workers carried them: bundles, not one result each)
        assert len(cached.results) < len(cached.files)


def test_only_agents_whose_sessions_no_cache_keeps_start_a_cached_load_s_workers_early():
    assert _load._sources_uncached(["goose"]) and _load._sources_uncached(["opencode", "kilo", "copilot"])
    assert not _load._sources_uncached(["goose", "gemini"]) and not _load._sources_uncached(["claude-code"])
    assert not _load._sources_uncached(None)


@pytest.mark.parametrize("spend_only", [False, True], ids=["full", "spend-only"])
def test_claude_code_and_codex_folders_through_early_workers_load_as_one_process(spend_only, monkeypatch, tmp_path):
    import shutil
    from pathlib import Path

    data = Path(__file__).parent / "data"
    shutil.copytree(data / "claude" / "generated" / "projects", tmp_path / "claude" / "projects")
    shutil.copytree(data / "codex" / "generated" / "sessions", tmp_path / "codex" / "sessions")
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex"))
    agents = ["claude-code", "codex"]
    alone = load_files(None, agents=agents, cache=False, on_bad_lines="skip", max_workers=1, spend_only=spend_only)
    pool = _load._early_pool(None, agents, 2)  # (these folders take the early workers)
    assert pool is not None
    pool.shutdown()
    pooled = load_files(None, agents=agents, cache=False, on_bad_lines="skip", max_workers=2, spend_only=spend_only)
    assert "priced" in Corpus(pooled.files).entries["cost_source"].to_pylist()  # (priced on the way back)
    assert _entries(pooled) == _entries(alone) and {"claude-code", "codex"} <= set(
        Corpus(alone.files).entries["agent"].to_pylist())


WORKER = r"""
import json, sys
from sessionlab.tables import _load

agent = sys.argv[1]
paths = _load.find_files(None, agents=[agent])
_load._warm(False)  # (as an early worker of a spend-only load)
results, (data, counts, _), _ = _load._load_chunk(paths, False, True)
print(json.dumps({"rows": sum(max(n, 0) for n in counts),
                  "imported": sorted(m for m in ("pandas", "genai_prices") if m in sys.modules)}))
"""


@pytest.mark.parametrize("agent", ["amp", "gemini", "qwen", "kimi", "opencode", "kilo", "copilot", "grok", "openclaw",
                                   "goose", "droid", "hermes"])
def test_a_spend_only_worker_imports_neither_pandas_nor_the_price_table(agent, monkeypatch):
    # (~0.2 s each, in every worker: the loading process prices the calls, see _load._unpack)
    import json
    import subprocess
    import sys

    use_home(monkeypatch, agent)  # (the environment the process inherits)
    out = subprocess.run([sys.executable, "-c", WORKER, agent], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    assert got["rows"] > 0 and got["imported"] == []


@pytest.mark.parametrize("agent", ["claude-code", "codex", "amp", "droid", "hermes", "openclaw"])
def test_a_listing_that_states_no_file_loads_what_one_process_does(agent, monkeypatch):
    """Many files in the default folders: the listing states none, the workers state each as they
    open it, and the files are cut into tasks by count; the tables, the files and their keys are a
    one-process load's (Claude Code's and Codex's large files as the small JSON of other agents)."""
    from pathlib import Path

    root = Path(__file__).parent / "data"
    if agent == "claude-code":
        monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(root / "claude" / "generated"))
    elif agent == "codex":
        monkeypatch.setenv("CODEX_HOME", str(root / "codex" / "generated"))
    else:
        use_home(monkeypatch, agent)
    alone = load_files(None, agents=[agent], cache=False, on_bad_lines="skip", max_workers=1)
    monkeypatch.setattr(_load, "_UNSTATED_FILES", 1)
    unstated = []
    real = _load._first_copies
    monkeypatch.setattr(_load, "_first_copies", lambda rs: (unstated.append(len(rs)), real(rs))[1])
    pooled = load_files(None, agents=[agent], cache=False, on_bad_lines="skip", max_workers=2)
    assert unstated == [len(alone.files)] and _entries(alone)
    assert _entries(pooled) == _entries(alone)
    assert [r.path for r in pooled.files] == [r.path for r in alone.files]
    assert pooled.keys == alone.keys


def test_many_stores_are_cut_into_tasks_by_count_without_their_sizes(monkeypatch):
    """Many stores listed by reading them (Copilot's exports): none is sized before the workers read
    them (a stat each, one after the other, while they wait); the load is a one-process load's."""
    use_home(monkeypatch, "copilot")
    alone = load_files(None, agents=["copilot"], cache=False, on_bad_lines="skip", max_workers=1)
    monkeypatch.setattr(_load, "_UNSTATED_FILES", 1)
    sized = []
    real = _load._sizes
    monkeypatch.setattr(_load, "_sizes", lambda paths, stats=None: (sized.append(len(paths)), real(paths, stats))[1])
    pooled = load_files(None, agents=["copilot"], cache=False, on_bad_lines="skip", max_workers=2)
    assert sum(sized) == 0 and len(alone.files) >= 3  # (the files listing, none here, may be sized)
    assert _entries(pooled) == _entries(alone)
    assert [r.path for r in pooled.files] == [r.path for r in alone.files]
    assert pooled.keys == alone.keys


def test_an_early_worker_imports_its_loads_readers_alone():
    """A load of some agents warms its workers with their readers (the others' cost ~0.05 s a
    worker); another agent's file among theirs still loads, its reader imported on it."""
    import json
    import subprocess
    import sys

    code = r"""
import json, sys
from sessionlab.tables import _load
_load._warm(False, ["qwen"])
mods = ("sessionlab.agents._qwen_reader", "sessionlab.agents._claude_reader", "sessionlab.agents._codex_reader")
print(json.dumps([m in sys.modules for m in mods]))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == [True, False, False]
