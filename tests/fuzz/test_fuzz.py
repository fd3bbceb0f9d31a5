"""The C scanner under AddressSanitizer + UBSan, fed mutated real and generated files for a bounded
time (``SESSIONLAB_FUZZ_SECONDS``, default 60; see README.md here for long runs)."""

from __future__ import annotations

import os
import subprocess

import pytest

from tests.fuzz.harness import asan_runtime, build, compiler, run

SECONDS = float(os.environ.get("SESSIONLAB_FUZZ_SECONDS", "60"))


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
    report = run(sanitized, seconds=SECONDS, seed=int(os.environ.get("SESSIONLAB_FUZZ_SEED", "1")),
                 out_dir=tmp_path, hang_seconds=60)
    assert report.failures == [], report.failures
    # the run really exercised both outcomes and every mutation kind
    assert report.inputs >= 50 and report.accepted > 0 and report.refused > 0, report
    assert len(report.by_mutator) >= 10, report.by_mutator
