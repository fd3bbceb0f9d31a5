"""The native fast path: clean pi v3 files scanned by :mod:`sessionlab._scan` straight to Arrow.

The C scanner validates every line as strict JSON, reads only the fields the tables need and
appends one row per entry to column buffers, without making a Python object per entry; it releases
the GIL while it scans, so the loader runs it in threads. It accepts what the msgspec path
(:mod:`._fast`) accepts, or less, and refuses a whole file otherwise; that file then takes the
msgspec path, and failing that the tolerant object-model path. A :class:`NativeBatch` gathers many
files into one set of buffers, turned into Arrow once per column for the whole batch and sliced
back per file (zero-copy), as :func:`._file.materialize` does for the other paths.

The extension is optional (``setup.py`` builds it where a C compiler is present). One built from
other C sources or another token rule than the package ships is refused at import, with one
:class:`~sessionlab.errors.NativeLoaderWarning` saying how to rebuild it (:func:`stale_reason`). Setting the
environment variable ``SESSIONLAB_NATIVE=0`` turns it off, which the tests use to compare paths.
"""

from __future__ import annotations

import os
import warnings
from typing import Any

import numpy as np
import pyarrow as pa

from .._arrow import from_numpy, utf8, validity
from .._rowsof import RowsOf
from .._scan_source import DEFERRED_PARTS, shipped_hash
from ..errors import NativeLoaderWarning, NativeUnavailableError
from ..pi.io.formats import HEAD_LINES
from ..pi.rules import CHARS_PER_TOKEN, IMAGE_CHARS, ROLE_CHARS
from ._arrays import with_pi_defaults
from ._pi16 import resolve
from ._schema import BLOCK_SCHEMA, ENTRY_SCHEMA, PI_TYPES

try:
    from .. import _scan  # type: ignore[attr-defined]
except ImportError:  # no compiler at install time: the msgspec path does the work
    _scan = None

_KINDS = {"string": pa.string(), "int64": pa.int64(), "int32": pa.int32(), "float64": pa.float64(), "bool": pa.bool_()}


#: how to rebuild the extension in a checkout (an editable install rebuilds it too)
REBUILD = "`python setup.py build_ext --inplace` (or `pip install -e .`)"


def stale_reason(scan: Any) -> str | None:
    """Why the built scanner must not be used, or ``None``: it was built from other C sources or
    another token rule than the package ships (its ``SOURCE_HASH`` against
    :func:`sessionlab._scan_source.shipped_hash`; a package without its C sources cannot tell, and
    trusts the build), or its rules and columns disagree with the Python ones."""
    want = shipped_hash(CHARS_PER_TOKEN, IMAGE_CHARS, ROLE_CHARS)
    got = getattr(scan, "SOURCE_HASH", None)
    if want is not None and got != want:
        return (f"sessionlab._scan is stale: it was built from other C sources or another token rule than "
                f"this package's (hash {got!r}, the sources' is {want!r})")
    if wrong := scanner_disagreements(scan):
        return f"sessionlab._scan disagrees with the Python rules ({'; '.join(wrong)})"
    return None


def scanner_disagreements(scan: Any) -> list[str]:
    """Where the built scanner's rules (its module attributes) differ from the Python ones: pi's
    constants and per-role rule (:mod:`sessionlab.pi.rules`, applied by :mod:`sessionlab.pi.tokens`),
    the dialect's head lines, the entry types (:data:`._schema.PI_TYPES`) and its columns against
    :mod:`._schema` (names and types; ``est_chars`` becomes ``est_tokens``). Empty when they agree."""
    want_roles = {r: "deferred" if DEFERRED_PARTS & set(p) else " ".join(p) for r, p in ROLE_CHARS.items()}
    out = [f"{name} is {got!r}, not {want!r}" for name, got, want in [
        ("CHARS_PER_TOKEN", getattr(scan, "CHARS_PER_TOKEN", None), CHARS_PER_TOKEN),
        ("IMAGE_CHARS", scan.IMAGE_CHARS, IMAGE_CHARS), ("HEAD_LINES", scan.HEAD_LINES, HEAD_LINES),
        ("ENTRY_TYPES", frozenset(scan.ENTRY_TYPES), PI_TYPES), ("ROLE_CHARS", scan.ROLE_CHARS, want_roles)]
        if got != want]
    for columns, schema in ((scan.ENTRY_COLUMNS, ENTRY_SCHEMA), (scan.BLOCK_COLUMNS, BLOCK_SCHEMA)):
        for name, kind in columns:
            name = "est_tokens" if name == "est_chars" else name
            typ = schema.field(name).type if name in schema.names else None
            if typ is None or (typ != _KINDS[kind] and not (name == "timestamp" and kind == "string")):
                out.append(f"column {name} ({kind}) is not {typ}")
    return out


if _scan is not None and (_stale := stale_reason(_scan)):  # a build older than the sources or the rule
    warnings.warn(NativeLoaderWarning(f"{_stale}; rebuild it with {REBUILD}. Meanwhile the Python paths "
                                      "load every file"), stacklevel=2)
    _scan = None

__all__ = ["native_available", "NativeBatch"]


def native_available() -> bool:
    """Whether the C scanner is built and not switched off with ``SESSIONLAB_NATIVE=0``."""
    return _scan is not None and os.environ.get("SESSIONLAB_NATIVE", "1") != "0"


def _validity(valid: bytes, n: int) -> tuple[pa.Buffer | None, int]:
    return validity(np.frombuffer(valid, np.bool_))


def _array(spec: tuple, n: int, typ: pa.DataType) -> pa.Array:
    """One column from the scanner's buffers: ``(name, ends, data, valid)`` for strings (int32 end
    offsets), ``(name, values, valid)`` for numbers and booleans (one byte each)."""
    if len(spec) == 4:
        _, ends, data, valid = spec
        offsets = np.zeros(n + 1, np.int32)
        offsets[1:] = np.frombuffer(ends, np.int32)
        bitmap, nulls = _validity(valid, n)
        return pa.Array.from_buffers(pa.string(), n, [bitmap, pa.py_buffer(offsets), pa.py_buffer(data)],
                                     null_count=nulls)
    _, vals, valid = spec
    bitmap, nulls = _validity(valid, n)
    buf = (pa.py_buffer(np.packbits(np.frombuffer(vals, np.bool_), bitorder="little")) if typ == pa.bool_()
           else pa.py_buffer(vals))
    return pa.Array.from_buffers(typ, n, [bitmap, buf], null_count=nulls)


def _timestamps(spec: tuple, typ: pa.DataType) -> pa.Array:
    """The timestamp strings as :func:`._arrays.parse_timestamps` reads them: pi's own form in C,
    any other value (rare) by the object model's ``iso_to_ms``."""
    _, ends, data, valid = spec
    ms_bytes, ok_bytes = _scan.pi_timestamps(ends, data, valid)
    ms, ok = np.frombuffer(ms_bytes, np.int64), np.frombuffer(ok_bytes, np.bool_)
    odd = np.flatnonzero(~ok & np.frombuffer(valid, np.bool_))
    if len(odd):
        from .._time import iso_to_ms

        ms, ok = ms.copy(), ok.copy()
        stops = np.frombuffer(ends, np.int32)
        for i in odd.tolist():
            text = data[(int(stops[i - 1]) if i else 0):int(stops[i])].decode("utf-8", "surrogatepass")
            value = iso_to_ms(text)
            ms[i], ok[i] = (value, True) if value is not None else (0, False)
    return from_numpy(ms, mask=~ok, type=typ)


def _owner(counts: list[int], values: list[str]) -> pa.Array:
    """A per-file string repeated over each file's rows."""
    # (a lone surrogate: half a JavaScript surrogate pair, or a file name's non-UTF-8 byte as
    # os.fsdecode escapes it; Arrow strings are UTF-8, so it shows as U+FFFD, as in _objects._str)
    data = [utf8(v) for v in values]
    lengths = np.repeat(np.array([len(b) for b in data], np.int32), counts)
    offsets = np.zeros(len(lengths) + 1, np.int32)
    np.cumsum(lengths, out=offsets[1:])
    body = np.empty(int(offsets[-1]), np.uint8)  # (filled in place: no second copy of a big column)
    pos = 0
    for b, k in zip(data, counts):
        if b and k:
            body[pos:pos + len(b) * k].reshape(k, len(b))[:] = np.frombuffer(b, np.uint8)
        pos += len(b) * k
    return pa.Array.from_buffers(pa.string(), len(lengths), [None, pa.py_buffer(offsets), pa.py_buffer(body)])


class NativeBatch:
    """Files scanned into one set of buffers; :meth:`finish` gives each its tables."""

    def __init__(self, want_blocks: bool) -> None:
        if _scan is None:
            raise NativeUnavailableError("sessionlab._scan is not built, or was refused as stale")
        self._scanner = _scan.Scanner(want_blocks)
        self._want_blocks = want_blocks
        # (FileResult, rows, block rows, session id, bytes, agent): the bytes of a file with rows that
        # need other lines (else None), until they are resolved (:mod:`._pi16`)
        self._files: list[tuple[Any, int, int, str, Any]] = []
        self.kept_last = False

    def add(self, res: Any, data: bytes | bytearray | memoryview, agent: str = "pi") -> bool:
        """Scan one file for ``res`` (a :class:`._file.FileResult`) of ``agent`` (pi, or an agent whose
        sessions are pi session files: its session and rows are labelled so); ``False`` when refused. The
        batch keeps ``data`` until :meth:`finish` when the file has rows that need other lines
        (:mod:`._pi16`): ``kept_last`` then says so, and a caller that reuses its buffer must take
        a new one."""
        self.kept_last = False
        info = self._scanner.add(data)
        if isinstance(info, str):
            return False
        n, nb, sid, cwd, parent_session, header_ts, cross_rows = info  # (facts: the facts module's)
        res.session = {"session_id": sid, "version": 3, "dialect": "pi", "cwd": cwd,
                       "parent_session": parent_session, "header_timestamp": header_ts, "file": res.path,
                       "issue_count": 0, "loader": "native", "agent": agent}
        res.loader = "native"
        self.kept_last = cross_rows > 0
        self._files.append((res, n, nb, sid, data if self.kept_last else None, agent))
        return True

    def finish(self) -> None:
        """Build the batch's tables and hand each file its slices."""
        out = self._scanner.finish()
        files = self._files
        self._files = []
        if not files:
            return
        specs = {s[0]: s for s in out["entries"]}
        est_chars, block_chars = self._chars(out, specs)
        table = self._entries(out, specs, files, est_chars)
        blocks = self._blocks(out, files, block_chars) if self._want_blocks else None
        start = bstart = 0
        for res, k, kb, *_ in files:
            res.entries = RowsOf(table, start, k)
            start += k
            if blocks is not None:
                res.blocks = RowsOf(blocks, bstart, kb)
                bstart += kb

    def _chars(self, out: dict, specs: dict) -> tuple[np.ndarray, np.ndarray | None]:
        """The entries' (and blocks') character counts, with the tool-call arguments JavaScript
        would format differently measured in Python (rare: numbers JSON.stringify rewrites)."""
        est_chars = np.frombuffer(specs["est_chars"][1], np.int64).copy()
        block_chars = None
        slow = np.frombuffer(out["slow"], np.int64).reshape(-1, 4)
        if len(slow):
            from ._fast import _batch_args_lens

            raw = out["slow_bytes"]
            lens = np.array(_batch_args_lens([raw[o:o + k] for o, k in slow[:, 2:4].tolist()]), np.int64)
            np.add.at(est_chars, slow[:, 0], lens)
            if self._want_blocks:
                block_chars = np.frombuffer(out["blocks"][-1][1], np.int64).copy()
                has_block = slow[:, 1] >= 0
                np.add.at(block_chars, slow[has_block, 1], lens[has_block])
        return est_chars, block_chars

    @staticmethod
    def _entries(out: dict, specs: dict, files: list, est_chars: np.ndarray) -> pa.Table:
        n = out["rows"]
        counts = [f[1] for f in files]
        arrays = []
        for f in ENTRY_SCHEMA:
            name = f.name
            if name == "session_id":
                arrays.append(_owner(counts, [x[3] for x in files]))
            elif name == "file":
                arrays.append(_owner(counts, [x[0].path for x in files]))
            elif name == "timestamp":
                arrays.append(_timestamps(specs["timestamp"], f.type))
            elif name == "est_tokens":
                tokens = -(-est_chars // CHARS_PER_TOKEN)  # ceil(chars / 4)
                arrays.append(_array(("est_tokens", tokens.tobytes(), specs["est_chars"][2]), n, f.type))
            elif name in specs:
                arrays.append(_array(specs[name], n, f.type))
            else:  # the seed's retained tail (a native file never has one); pi 1.6's columns ._pi16 fills
                arrays.append(pa.nulls(n, f.type))
        table = with_pi_defaults(pa.Table.from_arrays(arrays, schema=ENTRY_SCHEMA))
        if any(x[5] != "pi" for x in files):  # (another agent's pi session files: OpenClaw's)
            table = table.set_column(table.schema.get_field_index("agent"), "agent",
                                     _owner(counts, [x[5] for x in files]))
        return resolve(table, [(f[1], f[4], "pi") for f in files], np.frombuffer(out["line_starts"], np.int64))

    @staticmethod
    def _blocks(out: dict, files: list, block_chars: np.ndarray | None) -> pa.Table:
        bspecs = {s[0]: s for s in out["blocks"]}
        nb = out["block_rows"]
        bcounts = [f[2] for f in files]
        barrays = []
        for f in BLOCK_SCHEMA:
            if f.name == "session_id":
                barrays.append(_owner(bcounts, [x[3] for x in files]))
            elif f.name == "chars" and block_chars is not None:
                barrays.append(_array(("chars", block_chars.tobytes(), bspecs["chars"][2]), nb, f.type))
            else:
                barrays.append(_array(bspecs[f.name], nb, f.type))
        return pa.Table.from_arrays(barrays, schema=BLOCK_SCHEMA)
