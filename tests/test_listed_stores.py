"""Copilot's exports hold sessions that are known only once an export is parsed: a load of the
default folders lists the exports alone and each worker lists the sessions of the exports it is
given, where it then reads them (:mod:`sessionlab.tables._listed`). Each export is parsed once, and
the load is the one that lists every session first and reads them by name."""

from __future__ import annotations

import shutil

import pytest

from sessionlab.agents import copilot
from sessionlab.tables import Corpus, _load
from sessionlab.tables._load import find_files, load_files

from ._agent_fixtures import use_home


def _rows(res):
    return Corpus(res.files).entries.drop_columns(["file"]).to_pylist()


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("spend_only", [False, True], ids=["full", "spend-only"])
def test_the_default_folders_load_what_naming_every_session_loads(workers, spend_only, monkeypatch):
    use_home(monkeypatch, "copilot")
    listed = find_files(None, agents=["copilot"])  # (the sessions, each listed by parsing its export)
    named = load_files(listed, cache=False, on_bad_lines="skip", max_workers=1, spend_only=spend_only)
    monkeypatch.setattr(_load, "_CHUNK_BYTES", (1, 1))  # (a task per export: each worker lists its own)
    got = load_files(None, agents=["copilot"], cache=False, on_bad_lines="skip", max_workers=workers,
                     spend_only=spend_only)
    exports = copilot.stores(copilot.roots())
    assert len(exports) == 2 and len(listed) > len(exports)
    assert [r.path for r in got.files] == listed == [r.path for r in named.files]
    assert _rows(got) == _rows(named) and any(e["input_tokens"] for e in _rows(got))
    assert set(got.keys) == set(listed)
    assert copilot._LISTED == {}  # (let go once read)


def test_exports_load_after_the_other_agents_files(monkeypatch, tmp_path):
    home = use_home(monkeypatch, "copilot")
    gemini = use_home(monkeypatch, "gemini")
    shutil.copytree(home, tmp_path, dirs_exist_ok=True)
    shutil.copytree(gemini, tmp_path, dirs_exist_ok=True)
    monkeypatch.setenv("HOME", str(tmp_path))
    got = load_files(None, agents=["copilot", "gemini"], cache=False, on_bad_lines="skip", max_workers=2)
    agents = [r.session["agent"] for r in got.files]
    assert agents == sorted(agents, key=lambda a: a == "copilot") and {"copilot", "gemini"} == set(agents)
    alone = sorted(r.path for a in ("copilot", "gemini")
                   for r in load_files(None, agents=[a], cache=False, on_bad_lines="skip").files)
    assert sorted(r.path for r in got.files) == alone


def test_an_export_that_cannot_be_read_is_a_read_error_and_the_others_load(monkeypatch, tmp_path):
    home = use_home(monkeypatch, "copilot")
    shutil.copytree(home, tmp_path, dirs_exist_ok=True)
    monkeypatch.setenv("HOME", str(tmp_path))
    exports = copilot.stores(copilot.roots())
    real = copilot._parse

    def parse(path, *a, **kw):
        if path == exports[0]:
            raise PermissionError(13, "Permission denied")
        return real(path, *a, **kw)

    monkeypatch.setattr(copilot, "_parse", parse)
    got = load_files(None, agents=["copilot"], cache=False, on_bad_lines="skip", max_workers=1)
    bad = [r for r in got.files if r.path == exports[0]]
    assert len(bad) == 1 and [i.kind for i in bad[0].issues] == ["read_error"]
    assert "Permission denied" in bad[0].issues[0].message
    good = [r for r in got.files if r.session is not None]
    assert good and all(r.path.startswith(exports[1] + "#") for r in good)
