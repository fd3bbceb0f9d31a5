"""The C scanner under AddressSanitizer + UBSan, fed mutated real and generated files, and the
loaders' cache, damaged between loads, for a bounded time together (``SESSIONLAB_FUZZ_SECONDS``,
default 60: three quarters for the scanner, a quarter for the cache; see README.md here for long
runs)."""

from __future__ import annotations

import os
import subprocess

import pytest

from tests.fuzz.harness import asan_runtime, build, compiler, run, run_cache

SECONDS = float(os.environ.get("SESSIONLAB_FUZZ_SECONDS", "60"))
SCANNER_SECONDS, CACHE_SECONDS = SECONDS * 0.75, SECONDS * 0.25


@pytest.fixture(scope="module")
def sanitized(tmp_path_factory):
    cc = compiler()
    if cc is None:
        pytest.skip("no C compiler: the scanner cannot be built with sanitizers")
    if asan_runtime(cc) is None:
        pytest.skip(f"{cc} has no shared AddressSanitizer runtime (libasan) to preload into Python")
    if SECONDS <= 0:
        pytest.skip("SESSIONLAB_FUZZ_SECONDS=0")
    try:
        return build(tmp_path_factory.mktemp("asan"), cc)
    except subprocess.CalledProcessError as exc:
        if "sanitize" in exc.stderr or "cannot find -l" in exc.stderr:  # a compiler without the runtimes
            pytest.skip(f"{cc} cannot build with -fsanitize=address,undefined: {exc.stderr.strip()[-300:]}")
        raise


def test_scanner_survives_mutated_files(sanitized, tmp_path):
    report = run(sanitized, seconds=SCANNER_SECONDS, seed=int(os.environ.get("SESSIONLAB_FUZZ_SEED", "1")),
                 out_dir=tmp_path, hang_seconds=60)
    assert report.failures == [], report.failures
    # the run really exercised both outcomes and every mutation kind
    assert report.inputs >= 50 and report.accepted > 0 and report.refused > 0, report
    assert len(report.by_mutator) >= 10, report.by_mutator


@pytest.mark.skipif(SECONDS <= 0, reason="SESSIONLAB_FUZZ_SECONDS=0")
def test_cache_survives_damaged_segments_and_manifests(tmp_path):
    report = run_cache(seconds=CACHE_SECONDS, seed=int(os.environ.get("SESSIONLAB_FUZZ_SEED", "1")),
                       out_dir=tmp_path, hang_seconds=60)
    assert report.failures == [], report.failures
    # damage was met both ways: caught (a warning and a fresh read) and harmless (e.g. a deleted segment)
    assert report.inputs >= 20 and report.refused > 0 and report.accepted > 0, report
    assert len(report.by_mutator) >= 10, report.by_mutator
