"""The fuzz worker (run by :mod:`tests.fuzz.harness` under ASan; not a test module).

It loads the sanitized build of the scanner as ``sessionlab._scan`` before anything imports the
package's own build, then, until its time is up: takes a seed file (the test data's pi v3 files
and generated sessions), applies one to three mutations (byte flips, truncations, splices, huge
numbers, deep nesting, long strings, invalid UTF-8, NUL bytes, CRLF, a BOM, a 10 MB line, values
replaced in lines that stay valid JSON), writes
the input to ``--current`` (so a crash leaves it behind), and checks it:

- the scanner accepts it (a tuple) or refuses it (a reason): nothing else, no crash;
- loading the file with the scanner on gives the same entries and blocks tables, session row and
  issues as with it off (the msgspec path, or the tolerant path for files msgspec refuses).

One JSON line per event on stdout: ``progress`` (a heartbeat for the parent's hang check),
``mismatch`` (with the input kept), ``done`` (the counts).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import random
import shutil
import struct
import sys
import tempfile
import time
from pathlib import Path


def _load_sanitized(module: str) -> None:
    spec = importlib.util.spec_from_file_location("sessionlab._scan", module)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    sys.modules["sessionlab._scan"] = mod


# ------------------------------------------------------------------ mutations

NUMBERS = [b"1" + b"0" * 400, b"-1e999", b"1e400", b"99999999999999999999", b"9223372036854775808",
           b"-9223372036854775809", b"1.7976931348623157e309", b"-0", b"0.0000000000000000000001", b"1E+2",
           b"18446744073709551616", b"4.9e-324", b"123456789012345678901234567890.5"]
BAD_UTF8 = [b"\xff", b"\xc0\xaf", b"\xed\xa0\x80", b"\xf0\x9f\x98", b"\x80", b"\xf8\x88\x80\x80\x80", b"\xfe\xfe"]
ESCAPES = [b"\\ud800", b"\\udc00", b"\\ud83d\\ude00", b"\\u0000", b"\\x", b"\\", b"\\u12", b"\\/"]
TOKENS = [b"{", b"}", b"[", b"]", b",", b":", b'"', b"null", b"true", b"NaN", b"Infinity", b" ", b"\t", b"\r",
          b'"id":"e1"', b'"parentId":null', b'"type":"message"', b'"role":"assistant"', b'"usage":{}',
          b'"arguments":', b'"toolCall"', b'"timestamp":5']


def _positions(data: bytes, rng: random.Random, what: bytes) -> list[int]:
    out, i = [], data.find(what)
    while i >= 0 and len(out) < 2000:
        out.append(i)
        i = data.find(what, i + 1)
    return out


def m_flip(data, rng, corpus):
    b = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        if b:
            b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
    return bytes(b)


def m_byte(data, rng, corpus):
    b = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        if b:
            b[rng.randrange(len(b))] = rng.choice(b'{}[]",:\\\n\r\x00 0123456789-+.eE')
    return bytes(b)


def m_truncate(data, rng, corpus):
    return data[: rng.randrange(len(data) + 1)]


def m_splice(data, rng, corpus):
    other = rng.choice(corpus)
    i, j = rng.randrange(len(data) + 1), rng.randrange(len(other) + 1)
    return data[:i] + other[j: j + rng.randint(1, 4000)] + data[i + rng.randint(0, 200):]


def m_lines(data, rng, corpus):  # drop, repeat or swap whole lines
    lines = data.split(b"\n")
    op = rng.randrange(3)
    i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
    if op == 0:
        del lines[i]
    elif op == 1:
        lines.insert(i, lines[j])
    else:
        lines[i], lines[j] = lines[j], lines[i]
    return b"\n".join(lines)


def m_number(data, rng, corpus):
    digits = [i for i in _positions(data, rng, b":") if i + 1 < len(data) and data[i + 1:i + 2] in b"-0123456789"]
    if not digits:
        return data
    i = rng.choice(digits) + 1
    j = i
    while j < len(data) and data[j:j + 1] in b"-+.eE0123456789":
        j += 1
    return data[:i] + rng.choice(NUMBERS) + data[j:]


def m_nest(data, rng, corpus):
    depth = rng.choice([10, 63, 64, 65, 127, 128, 129, 255, 256, 1000, 100_000])
    spots = _positions(data, rng, b'":')
    if not spots:
        return data
    i = rng.choice(spots) + 2
    kind = rng.randrange(3)
    if kind == 0:
        inner = b"[" * depth + b"]" * depth
    elif kind == 1:
        inner = b'{"a":' * depth + b"1" + b"}" * depth
    else:
        inner = b"[" * depth  # unclosed
    return data[:i] + inner + b"," + data[i:] if rng.random() < 0.5 else data[:i] + inner + data[i:]


def m_long_string(data, rng, corpus):
    spots = _positions(data, rng, b':"')
    if not spots:
        return data
    i = rng.choice(spots) + 2
    n = rng.choice([255, 256, 65535, 65536, 1 << 20, 3 << 20])
    fill = rng.choice([b"x", b"\\n", b"\xc3\xa9", b"\xf0\x9f\x98\x80", b"\\u00e9", b"\\\""])
    return data[:i] + fill * (n // len(fill)) + data[i:]


def m_utf8(data, rng, corpus):
    i = rng.randrange(len(data) + 1)
    return data[:i] + rng.choice(BAD_UTF8) + data[i:]


def m_escape(data, rng, corpus):
    spots = _positions(data, rng, b'"')
    if not spots:
        return data
    i = rng.choice(spots) + 1
    return data[:i] + rng.choice(ESCAPES) + data[i:]


def m_nul(data, rng, corpus):
    i = rng.randrange(len(data) + 1)
    return data[:i] + b"\x00" * rng.randint(1, 3) + data[i:]


def m_crlf(data, rng, corpus):
    return data.replace(b"\n", b"\r\n") if rng.random() < 0.7 else data.replace(b"\n", b"\r", rng.randint(1, 3))


def m_bom(data, rng, corpus):
    return b"\xef\xbb\xbf" + data


def m_token(data, rng, corpus):
    i = rng.randrange(len(data) + 1)
    return data[:i] + rng.choice(TOKENS) + data[i + rng.randint(0, 3):]


def m_huge_line(data, rng, corpus):
    """A 10 MB line: a message whose text is 10 MB."""
    lines = data.split(b"\n")
    head = lines[0]
    text = (rng.choice([b"a", b"\xc3\xa9 ", b"\\n"]) * (10 << 20))[: 10 << 20]
    big = (b'{"type":"message","id":"big1","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z",'
           b'"message":{"role":"user","content":"' + text + b'","timestamp":1}}')
    at = rng.randrange(1, len(lines) + 1) if len(lines) > 1 else 1
    return b"\n".join([head, *lines[1:at], big, *lines[at:]])


VALUES = [None, True, False, 0, -1, 1.5, 2**53 + 1, 2**63, -(2**63) - 1, 1e300, "", "x", "\u00e9\U0001f600", [], {},
          [1, "a", None], {"a": 1}, "2026-01-01T00:00:00Z", "assistant", "toolCall", "message", "e1"]


def _paths(obj, prefix=()):
    yield prefix
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _paths(v, prefix + (i,))


def m_json(data, rng, corpus):
    """A line that stays valid JSON: one value replaced, removed or renamed, or a key added."""
    lines = data.split(b"\n")
    i = rng.randrange(len(lines))
    try:
        obj = json.loads(lines[i])
    except (ValueError, RecursionError):  # not JSON, or nested too deep for Python's json
        return data
    paths = [p for p in _paths(obj) if p]
    if not paths:
        return data
    path = rng.choice(paths)
    parent = obj
    for k in path[:-1]:
        parent = parent[k]
    key, op = path[-1], rng.randrange(4)
    if op == 0:
        parent[key] = rng.choice(VALUES)
    elif op == 1 and isinstance(parent, dict):
        del parent[key]
    elif op == 2 and isinstance(parent, dict):
        parent["zz" + str(key)] = parent.pop(key)
    elif isinstance(parent, dict):
        parent[rng.choice(["extra", "id", "parentId", "type", "role", "usage", "arguments"])] = rng.choice(VALUES)
    else:
        parent.insert(key, rng.choice(VALUES))
    try:
        text = json.dumps(obj, separators=(",", ":"), ensure_ascii=rng.random() < 0.3)
    except RecursionError:
        return data
    lines[i] = text.encode("utf-8", "surrogatepass")  # (a lone surrogate escape stays one)
    return b"\n".join(lines)


MUTATORS = {f.__name__[2:]: f for f in (
    m_flip, m_byte, m_truncate, m_splice, m_lines, m_number, m_nest, m_long_string, m_utf8, m_escape, m_nul,
    m_crlf, m_bom, m_token, m_huge_line, m_json)}
WEIGHTS = {"huge_line": 0.05, "long_string": 0.5, "nest": 1.0, "json": 4.0}  # (big inputs are slow through the slower paths)


def seeds(tmp: Path) -> list[bytes]:
    """Real pi v3 files of the test data, plus generated sessions (small, with branches/compactions)."""
    from sessionlab.synth import generate_session

    root = Path(__file__).resolve().parents[1] / "data"
    files = [p.read_bytes() for p in sorted(root.rglob("*.jsonl")) if p.stat().st_size < 300_000]
    for s in range(4):
        files.append(generate_session(tmp / f"g{s}.jsonl", seed=s, turns=6 + 4 * s, branch_prob=0.3,
                                      compaction_window=20_000).read_bytes())
    return [f for f in files if f]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--module", required=True)
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--current", required=True)
    args = ap.parse_args(argv)
    _load_sanitized(args.module)
    from sessionlab import _scan  # the sanitized build

    assert _scan.__file__ == args.module, _scan.__file__
    rng = random.Random(args.seed)
    tmp = Path(tempfile.mkdtemp(prefix="slfuzz-"))
    corpus = seeds(tmp)
    names = list(MUTATORS)
    weights = [WEIGHTS.get(n, 1.0) for n in names]
    current = Path(args.current)
    counts = {"inputs": 0, "accepted": 0, "refused": 0}
    by_mutator: dict[str, int] = {}
    end = time.monotonic() + args.seconds
    path = tmp / "input.jsonl"

    def emit(msg: dict) -> None:
        sys.stdout.write(json.dumps(msg) + "\n")
        sys.stdout.flush()

    try:
        while time.monotonic() < end:
            data = rng.choice(corpus)
            applied = rng.choices(names, weights, k=rng.choice([1, 1, 2, 3]))
            for name in applied:
                data = MUTATORS[name](data, rng, corpus) or data
                by_mutator[name] = by_mutator.get(name, 0) + 1
            current.write_bytes(data)  # (left behind if the next lines crash)
            emit({"kind": "progress", "n": counts["inputs"]})
            info = _scan.Scanner(bool(rng.getrandbits(1))).add(data)
            if not isinstance(info, (tuple, str)):
                emit({"kind": "mismatch", "input": _keep(current, counts), "detail": f"scanner returned {info!r}"})
            counts["accepted" if isinstance(info, tuple) else "refused"] += 1
            _read_timestamps(_scan, data, rng)
            path.write_bytes(data)
            diff = _differences(_load(path, native=True), _load(path, native=False))
            if diff:
                emit({"kind": "mismatch", "input": _keep(current, counts), "mutators": applied,
                      "detail": repr(diff)[:2000]})
            counts["inputs"] += 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    emit({"kind": "done", **counts, "by_mutator": by_mutator})
    return 0


def _read_timestamps(scan, data: bytes, rng: random.Random) -> None:
    """The scanner's timestamp reader on the input with random offsets (mostly rising, some out of
    range or falling): it reads them or raises ValueError, nothing else."""
    n = rng.randrange(40)
    ends = [rng.randrange(-3, len(data) + 4) for _ in range(n)]
    if rng.random() < 0.7:
        ends.sort()
    try:
        scan.pi_timestamps(struct.pack(f"<{n}i", *ends), data, bytes(rng.getrandbits(1) for _ in range(n)))
    except ValueError:
        pass


def _load(path: Path, *, native: bool) -> dict:
    """One file through the loader (the scanner on or off): its tables, session row and issues."""
    from sessionlab.tables import _file

    if native:
        os.environ.pop("SESSIONLAB_NATIVE", None)
    else:
        os.environ["SESSIONLAB_NATIVE"] = "0"
    try:
        (res,) = _file.load_chunk([str(path)], True)
    finally:
        os.environ.pop("SESSIONLAB_NATIVE", None)
    # (the session row's ``loader`` names the path taken, the one thing meant to differ)
    session = None if res.session is None else {k: v for k, v in res.session.items() if k != "loader"}
    return {"entries": res.entries, "blocks": res.blocks, "session": session,
            "issues": [(i.line, i.kind, i.message) for i in res.issues]}


def _differences(a: dict, b: dict) -> dict:
    out = {}
    for k in a:
        x, y = a[k], b[k]
        same = (x is None and y is None) or (x is not None and y is not None and x.equals(y)) \
            if k in ("entries", "blocks") else x == y
        if not same:
            out[k] = (x.to_pylist()[:3] if hasattr(x, "to_pylist") else x,
                      y.to_pylist()[:3] if hasattr(y, "to_pylist") else y)
    return out


def _keep(current: Path, counts: dict) -> str:
    kept = current.with_name(f"mismatch-{current.stem}-{counts['inputs']}.jsonl")
    shutil.copy(current, kept)
    return str(kept)


if __name__ == "__main__":
    sys.exit(main())
