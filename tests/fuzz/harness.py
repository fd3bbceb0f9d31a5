"""Fuzzing the C scanner under AddressSanitizer and UBSan.

:func:`build` compiles ``sessionlab/_scan.c`` with ``-fsanitize=address,undefined`` into a temporary
folder (never over the in-place build). :func:`run` starts :mod:`tests.fuzz.worker` in a subprocess
with the ASan runtime preloaded; the worker loads that build as ``sessionlab._scan``, mutates seed
files and checks every input (see the worker's doc). The parent watches the worker: a worker that
dies (a crash or a sanitizer report, which aborts) or makes no progress for ``hang_seconds`` (a
hang) fails the run, and the input it was on is kept in ``out_dir``.
"""

from __future__ import annotations

import json
import os
import selectors
import shutil
import subprocess
import sys
import sysconfig
import time
from dataclasses import dataclass, field
from pathlib import Path

from sessionlab._scan_source import write_rules_header

ROOT = Path(__file__).resolve().parents[2]
SOURCE = ROOT / "sessionlab" / "_scan.c"


def compiler() -> str | None:
    """A C compiler with ASan and UBSan (gcc or clang), or None."""
    for cc in (os.environ.get("CC"), "gcc", "clang", "cc"):
        if cc and shutil.which(cc):
            return cc
    return None


def asan_runtime(cc: str) -> str | None:
    """The path of the compiler's shared ASan runtime (to preload into Python), or None."""
    for name in ("libasan.so", "libclang_rt.asan-x86_64.so"):
        try:
            out = subprocess.run([cc, f"-print-file-name={name}"], capture_output=True, text=True, check=True).stdout
        except (OSError, subprocess.CalledProcessError):
            continue
        path = out.strip()
        if path and os.path.isabs(path) and os.path.exists(path):
            return os.path.realpath(path)
    return None


def build(out_dir: Path, cc: str | None = None) -> Path:
    """Compile the scanner with ASan + UBSan into ``out_dir``; returns the module's path."""
    cc = cc or compiler()
    if cc is None:
        raise RuntimeError("no C compiler")
    out_dir.mkdir(parents=True, exist_ok=True)
    write_rules_header(SOURCE.parent)  # (pi's token rule as the scanner includes it, as setup.py writes it)
    target = out_dir / ("_scan" + sysconfig.get_config_var("EXT_SUFFIX"))
    cmd = [cc, "-shared", "-fPIC", "-g", "-O1", "-fno-omit-frame-pointer",
           "-fsanitize=address,undefined", "-fno-sanitize-recover=undefined",
           f"-I{sysconfig.get_paths()['include']}", str(SOURCE), "-o", str(target)]
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    return target


@dataclass
class Report:
    """What a run did: inputs tried (accepted by the scanner / refused), and the failures."""

    inputs: int = 0
    accepted: int = 0
    refused: int = 0
    by_mutator: dict[str, int] = field(default_factory=dict)
    failures: list[dict] = field(default_factory=list)
    seconds: float = 0.0


def run(module: Path, *, seconds: float, seed: int, out_dir: Path, hang_seconds: float = 60.0,
        runtime: str | None = None) -> Report:
    """Fuzz for ``seconds``; on a crash or hang, restart with the next seed until time is up."""
    report = Report()
    env = dict(os.environ)
    runtime = runtime or asan_runtime(compiler() or "gcc")
    if runtime:
        env["LD_PRELOAD"] = runtime
    # leaks: CPython keeps memory for good; abort on the first report so the parent sees it
    env["ASAN_OPTIONS"] = "detect_leaks=0:abort_on_error=1:allocator_may_return_null=1"
    env["UBSAN_OPTIONS"] = "halt_on_error=1:abort_on_error=1:print_stacktrace=1"
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("SESSIONLAB_NATIVE", None)
    out_dir.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    while time.monotonic() - start < seconds:
        left = seconds - (time.monotonic() - start)
        _run_worker(["tests.fuzz.worker", "--module", str(module)], env, left, seed, out_dir, hang_seconds, report)
        seed += 1_000_003
        if report.failures and report.failures[-1].get("fatal"):
            break
    report.seconds = time.monotonic() - start
    return report


def run_cache(*, seconds: float, seed: int, out_dir: Path, hang_seconds: float = 60.0) -> Report:
    """Fuzz the loaders' cache (:mod:`tests.fuzz.cache_worker`: damaged segments and manifests) for
    ``seconds``, with the package's own build; on a crash or hang, restart with the next seed."""
    report = Report()
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("SESSIONLAB_NATIVE", None)
    env.pop("SESSIONLAB_CACHE_DIR", None)
    out_dir.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    while time.monotonic() - start < seconds:
        left = seconds - (time.monotonic() - start)
        _run_worker(["tests.fuzz.cache_worker"], env, left, seed, out_dir, hang_seconds, report)
        seed += 1_000_003
    report.seconds = time.monotonic() - start
    return report


def _run_worker(worker: list[str], env: dict, seconds: float, seed: int, out_dir: Path, hang_seconds: float,
                report: Report) -> None:
    current = out_dir / f"current-{seed}.bin"
    cmd = [sys.executable, "-m", *worker, "--seconds", str(seconds), "--seed", str(seed), "--current", str(current)]
    proc = subprocess.Popen(cmd, env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)  # type: ignore[arg-type]
    last = time.monotonic()
    buf = b""
    done = None
    while True:
        if not sel.select(timeout=1.0):
            if proc.poll() is not None:
                break
            if time.monotonic() - last > hang_seconds:
                proc.kill()
                proc.wait()
                _fail(report, "hang", current, out_dir, f"no progress for {hang_seconds:.0f} s", fatal=False)
                return
            continue
        chunk = os.read(proc.stdout.fileno(), 65536)  # type: ignore[union-attr]
        if not chunk:
            break
        last = time.monotonic()
        buf += chunk
        *lines, buf = buf.split(b"\n")
        for line in lines:
            msg = json.loads(line)
            if msg["kind"] == "progress":
                continue
            if msg["kind"] == "mismatch":
                report.failures.append(msg)
            elif msg["kind"] == "done":
                done = msg
    rc = proc.wait()
    stderr = proc.stderr.read().decode("utf-8", "replace")  # type: ignore[union-attr]
    if done is not None:
        report.inputs += done["inputs"]
        report.accepted += done["accepted"]
        report.refused += done["refused"]
        for k, v in done["by_mutator"].items():
            report.by_mutator[k] = report.by_mutator.get(k, 0) + v
    if rc != 0 or done is None or "ERROR: AddressSanitizer" in stderr or "runtime error:" in stderr:
        _fail(report, "crash", current, out_dir, f"exit code {rc}\n{stderr[-6000:]}", fatal=False)
    else:
        current.unlink(missing_ok=True)


def _fail(report: Report, kind: str, current: Path, out_dir: Path, detail: str, *, fatal: bool) -> None:
    kept = out_dir / f"{kind}-{len(report.failures)}.jsonl"
    if current.exists():
        shutil.move(str(current), kept)
    report.failures.append({"kind": kind, "input": str(kept), "detail": detail, "fatal": fatal})
