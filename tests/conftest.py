"""Shared fixtures: pi's sample files, their expected results, and the hypothesis profiles."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import settings

# the loaders' cache is on by default: the suite never writes into the user's cache folder, and the
# tests that do not ask for a cache run without one (tests/test_cache.py passes its own folders)
os.environ["SESSIONLAB_CACHE_DIR"] = ""

settings.register_profile("ci", deadline=None)
if os.environ.get("CI"):
    settings.load_profile("ci")

PI_DATA = Path(__file__).parent / "data" / "pi"
# pi v1-v3 samples with pi's expected results; the v4 harness files have their own tests (test_v4.py)
SAMPLE_FILES = sorted(p for p in PI_DATA.rglob("*.jsonl") if p.relative_to(PI_DATA).parts[0] != "v4")


def sample_id(path: Path) -> str:
    """Short test id of a sample file: its name without the long session-id suffix."""
    return path.stem.split("_")[0] if path.parent.name.startswith("--") else path.stem


def expected_for(path: Path, folder: str = "expected") -> dict:
    """pi's expected result for a sample file (see tests/data/pi/expected/README.md; ``folder``
    ``"expected-1.6"`` for pi 1.6.0's). Samples written after pi 0.58 have no 0.58 result: a test
    asking for one is skipped (test_pi16.py holds every sample to pi 1.6.0's results)."""
    name = str(path.relative_to(PI_DATA).with_suffix("")).replace(os.sep, "__") + ".json"
    file = PI_DATA / folder / name
    if not file.exists() and folder == "expected":
        pytest.skip(f"pi 0.58.3 has no result for {name} (a newer pi wrote it)")
    return json.loads(file.read_text(encoding="utf-8"))


@pytest.fixture(scope="session")
def pi_data() -> Path:
    """The folder of pi's sample sessions (tests/data/pi)."""
    return PI_DATA


@pytest.fixture(scope="session")
def sample_files() -> list[Path]:
    """Every sample .jsonl file under tests/data/pi, sorted."""
    return list(SAMPLE_FILES)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    # a test taking ``sample_path`` runs once per sample file
    if "sample_path" in metafunc.fixturenames:
        metafunc.parametrize("sample_path", SAMPLE_FILES, ids=[sample_id(p) for p in SAMPLE_FILES])


@pytest.fixture(scope="session")
def pi_expected():
    """Function: sample path -> pi's expected result for it."""
    return expected_for
