"""Arrow arrays and scalars from NumPy and Python values, without importing pandas.

pyarrow imports pandas (~0.3 s) the first time it converts a NumPy array or a Python value: in
``pa.array``, ``pa.scalar``, ``Array.to_numpy``, and whenever a compute function is handed a Python
value (``pc.equal(col, "message")``) or a NumPy array. A load, and the analyses on what it loaded,
never need pandas, so the code on those paths builds its arrays from buffers with these helpers;
only the ``*_df`` views import pandas.

- :func:`strings`, :func:`const_strings`: string arrays from Python strings;
- :func:`from_numpy`: a NumPy array of booleans, integers or floats (nulls where ``mask``), any
  Arrow type of that width (``timestamp``, ``date32``...) given as ``type``; :func:`from_pylist`
  a list of Python values, and :func:`arrow_table` a table of such columns;
- :func:`arrow_indices`: row numbers as int64 (nulls where ``mask``), for ``take``;
- :func:`scalar`: an Arrow scalar for a compute function's Python argument;
- :func:`to_numpy`: the other way, an Arrow column of numbers or booleans as NumPy, and
  :func:`valid_mask` where any column is not null;
- :func:`without_pandas`: in a process that never hands pandas objects to pyarrow (a load's
  worker), pyarrow told pandas is absent, so ``pa.array`` converts Python values in C without
  importing it;
- :data:`compute`: ``pyarrow.compute``, imported on first use. Its import builds a Python wrapper
  per compute function (~30 ms, a tenth of a first load); the loader's modules use this name, so
  a load the C scanner does alone never imports it.
"""

from __future__ import annotations

import importlib.abc
import re
import sys
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import numpy as np
import pyarrow as pa

from .errors import ArgumentTypeError

__all__ = ["strings", "const_strings", "from_numpy", "from_pylist", "arrow_table", "arrow_indices", "scalar",
           "to_numpy", "validity", "valid_mask", "compute", "without_pandas"]


class _Compute:
    """``pyarrow.compute`` on first use (each name is looked up once, then kept here)."""

    def __getattr__(self, name: str) -> Any:
        import pyarrow.compute

        value = getattr(pyarrow.compute, name)
        setattr(self, name, value)
        return value


compute: Any = _Compute()


class _NoPandas(importlib.abc.MetaPathFinder):
    def find_spec(self, name: str, path: Any, target: Any = None) -> None:
        if name == "pandas" or name.startswith("pandas."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


def without_pandas() -> None:
    """Let pyarrow convert Python values and NumPy arrays (``pa.array``) without importing pandas,
    in a process that never hands it pandas objects: a load's worker process, whose tables
    go back as Arrow IPC. pyarrow asks once, on its first conversion, whether pandas can be
    imported (to recognise its objects), and keeps the answer; here it is asked while pandas cannot
    be, which saves each worker the import (~0.2 s). A later ``to_pandas`` still imports pandas.
    Nothing is done where pandas is imported already."""
    if "pandas" in sys.modules:
        return
    block = _NoPandas()
    sys.meta_path.insert(0, block)
    try:
        pa.array([0], pa.int64())  # (pyarrow's one question, answered "no pandas")
    finally:
        sys.meta_path.remove(block)


def validity(valid: np.ndarray) -> tuple[pa.Buffer | None, int]:
    """An Arrow validity bitmap of a boolean array (None when nothing is null) and its null count."""
    valid = np.asarray(valid, np.bool_)
    nulls = len(valid) - int(np.count_nonzero(valid))
    return (None if nulls == 0 else pa.py_buffer(np.packbits(valid, bitorder="little"))), nulls


_SURROGATE = re.compile("[\ud800-\udfff]")


def utf8(value: str) -> bytes:
    """``value`` as UTF-8 for an Arrow string: a lone surrogate (half a JavaScript surrogate pair,
    or a non-UTF-8 byte of a file name as ``os.fsdecode`` escapes it) becomes U+FFFD."""
    try:
        return value.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE.sub("\ufffd", value).encode("utf-8")


def shown(value: str) -> str:
    """``value`` as an Arrow string column holds it (:func:`utf8`): the key to look it up by."""
    return value if value.isascii() else utf8(value).decode("utf-8")


def strings(values: Sequence[str | None]) -> pa.Array:
    """A list of str/None as an Arrow string array (see :func:`utf8`)."""
    data = [b"" if v is None else utf8(v) for v in values]
    offsets = np.zeros(len(data) + 1, np.int32)
    np.cumsum([len(b) for b in data], out=offsets[1:])
    bitmap, nulls = validity(np.fromiter((v is not None for v in values), np.bool_, len(values)))
    buffers = [bitmap, pa.py_buffer(offsets), pa.py_buffer(b"".join(data))]
    return pa.Array.from_buffers(pa.string(), len(values), buffers, null_count=nulls)


def const_strings(value: bytes, valid: np.ndarray) -> pa.Array:
    """``value`` (UTF-8) where ``valid``, else null."""
    n = len(valid)
    valid = np.asarray(valid, np.bool_)
    offsets = np.zeros(n + 1, np.int32)
    np.cumsum(valid.astype(np.int32) * len(value), out=offsets[1:])
    bitmap, nulls = validity(valid)
    data = pa.py_buffer(value * (n - nulls))
    return pa.Array.from_buffers(pa.string(), n, [bitmap, pa.py_buffer(offsets), data], null_count=nulls)


_WIDTH_TYPES = {np.dtype(np.bool_): pa.bool_(), np.dtype(np.int8): pa.int8(), np.dtype(np.int16): pa.int16(),
                np.dtype(np.int32): pa.int32(), np.dtype(np.int64): pa.int64(), np.dtype(np.uint8): pa.uint8(),
                np.dtype(np.uint16): pa.uint16(), np.dtype(np.uint32): pa.uint32(),
                np.dtype(np.uint64): pa.uint64(), np.dtype(np.float32): pa.float32(),
                np.dtype(np.float64): pa.float64()}


def from_numpy(values: Any, *, mask: Any = None, type: pa.DataType | None = None) -> pa.Array:  # noqa: A002
    """A NumPy array (or sequence) of booleans, integers or floats as an Arrow array, null where
    ``mask`` is true. ``type`` (default: the dtype's own) may be any fixed-width type of the same
    width, e.g. ``pa.timestamp("ms", tz="UTC")`` for int64 milliseconds; the values are cast to
    ``type``'s NumPy width first when it differs (``type=pa.int64()`` of an int32 array)."""
    a = np.asarray(values)
    if type is None:
        if a.dtype not in _WIDTH_TYPES:
            raise ArgumentTypeError("values", f"from_numpy takes booleans, integers or floats, not {a.dtype}")
        type = _WIDTH_TYPES[a.dtype]
    if pa.types.is_boolean(type):
        data = pa.py_buffer(np.packbits(a.astype(np.bool_, copy=False), bitorder="little"))
    else:
        width = type.bit_width // 8
        want = a.dtype if a.dtype.itemsize == width and a.dtype.kind in "iuf" else None
        if want is None:
            want = next(d for d, t in _WIDTH_TYPES.items() if t == _storage(type))
        data = pa.py_buffer(np.ascontiguousarray(a, want))
    bitmap, nulls = (None, 0) if mask is None else validity(~np.asarray(mask, np.bool_))
    return pa.Array.from_buffers(type, len(a), [bitmap, data], null_count=nulls)


_LIST_TYPES = {pa.int32(): np.int32, pa.int64(): np.int64, pa.float64(): np.float64}


def from_pylist(values: list, type: pa.DataType) -> pa.Array:  # noqa: A002
    """Python values (None: null) as an Arrow array of ``type``: strings, booleans, integers for an
    integer type and numbers for float64, from buffers; anything else as ``pa.array`` reads it."""
    if pa.types.is_string(type) and all(v is None or isinstance(v, str) for v in values):
        return strings(values)
    if type in _LIST_TYPES and all(v is None or isinstance(v, int) and not isinstance(v, bool) for v in values):
        missing = np.fromiter((v is None for v in values), bool, len(values))
        data = np.array([0 if v is None else v for v in values], _LIST_TYPES[type])
        return from_numpy(data, mask=missing, type=type)
    if type == pa.float64() and all(v is None or isinstance(v, (int, float)) and not isinstance(v, bool)
                                    for v in values):
        missing = np.fromiter((v is None for v in values), bool, len(values))
        return from_numpy(np.array([0.0 if v is None else v for v in values], np.float64), mask=missing, type=type)
    if pa.types.is_boolean(type) and all(v is None or isinstance(v, bool) for v in values):
        missing = np.fromiter((v is None for v in values), bool, len(values))
        return from_numpy(np.fromiter((v is True for v in values), bool, len(values)), mask=missing, type=type)
    return pa.array(values, type)


def arrow_table(columns: dict, schema: pa.Schema) -> pa.Table:
    """``pa.Table.from_pydict(columns, schema=schema)``, NumPy columns given as Arrow arrays of
    their field's type."""
    return pa.Table.from_pydict({k: from_numpy(v, type=schema.field(k).type) if isinstance(v, np.ndarray) else v
                                 for k, v in columns.items()}, schema=schema)


def _storage(type: pa.DataType) -> pa.DataType:  # noqa: A002
    """The integer or float type holding ``type``'s values (a timestamp is int64)."""
    if pa.types.is_floating(type) or pa.types.is_integer(type):
        return type
    return {32: pa.int32(), 64: pa.int64()}[type.bit_width]


def arrow_indices(rows: Any, mask: Any = None) -> pa.Array:
    """``rows`` as an int64 Arrow array (null where ``mask``), for ``take``."""
    return from_numpy(np.ascontiguousarray(rows, np.int64), mask=None if mask is None or not np.any(mask) else mask,
                      type=pa.int64())


@lru_cache(maxsize=256, typed=True)  # (typed: 0, 0.0 and False are equal keys otherwise)
def _scalar(value: Any, type: pa.DataType | None) -> pa.Scalar:  # noqa: A002
    if value is None:
        return pa.nulls(1, type or pa.null())[0]
    if isinstance(value, str):
        s = strings([value])
        return (s if type is None or type == pa.string() else s.cast(type))[0]
    if isinstance(value, bool):
        kind = pa.bool_()
    elif isinstance(value, int):
        kind = pa.int64()
    elif isinstance(value, float):
        kind = pa.float64()
    else:
        raise ArgumentTypeError("value", f"scalar takes None, str, bool, int or float, not {value.__class__.__name__}")
    arr = from_numpy(np.array([value]), type=kind)
    return (arr if type is None or type == kind else arr.cast(type))[0]


def scalar(value: Any, type: pa.DataType | None = None) -> pa.Scalar:  # noqa: A002
    """An Arrow scalar of a Python ``None``, str, bool, int or float (of ``type`` when given), for
    a compute function's argument: ``pc.equal(col, scalar("message"))``."""
    return _scalar(value, type)


_NUMPY_TYPES = {"bool": np.bool_, "int8": np.int8, "int16": np.int16, "int32": np.int32, "int64": np.int64,
                "uint8": np.uint8, "uint16": np.uint16, "uint32": np.uint32, "uint64": np.uint64,
                "float": np.float32, "double": np.float64}


def to_numpy(col: Any, fill: Any = 0) -> np.ndarray:
    """An Arrow array or chunked array of integers, floats or booleans as NumPy, nulls replaced by
    ``fill`` (a timestamp or date column gives its integer storage)."""
    dtype = _NUMPY_TYPES.get(str(col.type))
    if dtype is None and (pa.types.is_timestamp(col.type) or pa.types.is_date(col.type)
                          or pa.types.is_duration(col.type)):
        col = col.cast(_storage(col.type))
        dtype = _NUMPY_TYPES[str(col.type)]
    if dtype is None and not pa.types.is_null(col.type):  # (strings and the like: pyarrow's own way)
        import pyarrow.compute as pc

        return np.asarray(pc.fill_null(col, fill).to_numpy(zero_copy_only=False))
    if isinstance(col, pa.ChunkedArray):  # one array: a copy in C beats a Python step per chunk
        if col.num_chunks == 0:
            return np.zeros(0, dtype or type(fill))
        col = col.chunk(0) if col.num_chunks == 1 else col.combine_chunks()
    return _chunk_to_numpy(col, fill, dtype)


def _bits(buf: pa.Buffer, offset: int, n: int) -> np.ndarray:
    return np.unpackbits(np.frombuffer(buf, np.uint8), bitorder="little")[offset:offset + n].astype(bool)


def _chunk_to_numpy(c: pa.Array, fill: Any, dtype: Any) -> np.ndarray:
    n, off = len(c), c.offset
    if dtype is None or c.null_count == n:  # a null-typed or all-null chunk
        return np.full(n, fill, dtype or type(fill))
    bufs = c.buffers()
    data = _bits(bufs[1], off, n) if dtype is np.bool_ else np.frombuffer(bufs[1], dtype)[off:off + n]
    if c.null_count:
        data = np.where(_bits(bufs[0], off, n), data, np.asarray(fill).astype(dtype))
    return data


def valid_mask(col: Any) -> np.ndarray:
    """Where an Arrow array or chunked array (of any type) is not null, as NumPy booleans."""
    if col.null_count == 0:  # (the usual case: no walk over a table's many chunks)
        return np.ones(len(col), np.bool_)
    if col.null_count == len(col):
        return np.zeros(len(col), np.bool_)
    if isinstance(col, pa.ChunkedArray) and col.num_chunks > 8:  # (one bitmap walk, not one per chunk)
        return np.asarray(to_numpy(compute.is_valid(col), False), np.bool_)
    chunks = col.chunks if isinstance(col, pa.ChunkedArray) else [col]
    parts = []
    for c in chunks:
        if c.null_count == 0:
            parts.append(np.ones(len(c), np.bool_))
        elif c.null_count == len(c):
            parts.append(np.zeros(len(c), np.bool_))
        else:
            parts.append(_bits(c.buffers()[0], c.offset, len(c)))
    if len(parts) == 1:
        return parts[0]
    return np.concatenate(parts) if parts else np.zeros(0, np.bool_)
