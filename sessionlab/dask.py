"""The entries table and the per-session analyses on a Dask cluster (optional extra ``[dask]``).

:func:`load_dask` builds a ``dask.dataframe.DataFrame`` of the entries table with
``dask.dataframe.from_map`` over groups of files: each partition is one group, loaded on a worker
by the same per-file loader as :func:`sessionlab.entries_table`, so the columns and their
Arrow-backed dtypes are those of the local table (``ENTRY_SCHEMA``). A session never spans two
partitions, nor do files whose usage the load compares across files (a Claude Code project
folder: sessions and their subagents; a Codex thread and its forks), so every analysis that works
session by session runs on each partition with
``map_partitions`` (``meta`` is the local function applied to the declared, empty entries table)
and the pieces combine into exactly what the local function returns on the whole table:

- row-level results (:func:`contexts`, :func:`find_cut_points`, :func:`cache_efficiency`) are
  concatenations: they come back lazy, as Dask DataFrames in the local row order;
- aggregates (:func:`usage_by`, :func:`branch_costs`) are computed: per partition, then the
  partial sums are summed again per group (a group such as a day or a model spans partitions);
- :func:`simulate_compaction` fits the per-model prices once over all calls (as the local default
  does), then replays each partition's sessions with those prices.

Sources are local paths (files, folders, globs, as for ``entries_table``) or any fsspec URL Dask
reads (``s3://bucket/sessions/``, ``gcs://...``; credentials through ``storage_options``): a
worker copies a remote group into a temporary folder, loads it, and keeps the URL in the ``file``
column.

Example:
    >>> from distributed import Client  # doctest: +SKIP
    >>> client = Client()  # doctest: +SKIP
    >>> ddf = load_dask("~/.pi/agent/sessions", files_per_partition=200)  # doctest: +SKIP
    >>> usage_by(ddf, by=["day", "model"])  # doctest: +SKIP
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

from .analysis import branch_costs as _branch_costs
from .analysis import cache_efficiency as _cache_efficiency
from .analysis import contexts as _contexts
from .analysis import usage_by as _usage_by
from .compaction import SimulationResult, fit_prices
from .compaction import find_cut_points as _find_cut_points
from .compaction import simulate_compaction as _simulate_compaction
from .errors import ArgumentValueError, MissingDependencyError, check_option
from .tables import ENTRY_SCHEMA, entries_table, find_files
from .tables.entries import to_pandas
from .tables.forest import as_table

if TYPE_CHECKING:
    import dask.dataframe as dd
    import pandas as pd

__all__ = [
    "load_dask", "contexts", "find_cut_points", "usage_by", "branch_costs", "cache_efficiency",
    "simulate_compaction", "to_parquet", "read_parquet", "PARTITION_COLUMNS",
]

_EXTRA = "sessionlab.dask needs the [dask] extra: pip install 'sessionlab[dask]' (dask[dataframe] and distributed)"
_BYTES_PER_PARTITION = 128_000_000

PARTITION_COLUMNS = {
    "agent": "The agent that wrote the session ('pi', 'claude-code' or 'codex').",
    "date": "UTC date (YYYY-MM-DD) of the session's first entry timestamp; 'unknown' without one.",
}


def _dd():
    try:
        import dask.dataframe as dd
    except ImportError as exc:  # the extra is optional: say how to get it
        raise MissingDependencyError(_EXTRA) from exc
    return dd


def _is_url(s: str) -> bool:
    return "://" in s


def _expand_url(url: str, storage_options: dict | None) -> list[tuple[str, int]]:
    """(URL, size) of the session files an fsspec URL names: a file, a folder (``*.jsonl`` below
    it) or a glob."""
    from fsspec.core import url_to_fs

    fs, root = url_to_fs(url, **(storage_options or {}))
    if any(ch in root for ch in "*?["):
        found = fs.glob(root, detail=True)
    elif fs.isdir(root):
        found = {k: v for k, v in fs.find(root, detail=True).items() if k.endswith(".jsonl")}
    else:
        found = {root: fs.info(root)}
    return [(fs.unstrip_protocol(k), int(v.get("size") or 0)) for k, v in sorted(found.items())
            if v.get("type", "file") == "file"]


def _files(source_or_paths: Any, storage_options: dict | None) -> list[tuple[str, int]]:
    items = [source_or_paths] if isinstance(source_or_paths, (str, os.PathLike)) or source_or_paths is None \
        else list(source_or_paths)
    out: dict[str, int] = {}
    for item in items:
        s = None if item is None else os.fspath(item)
        if s is not None and _is_url(s):
            for url, size in _expand_url(s, storage_options):
                out.setdefault(url, size)
            continue
        for p in find_files(item):
            out.setdefault(p, os.path.getsize(p) if os.path.exists(p) else 0)
    return list(out.items())


def _head(path: str, storage_options: dict | None) -> bytes:
    from .pi.io.formats import HEAD_BYTES

    try:
        if _is_url(path):
            from fsspec.core import url_to_fs

            fs, p = url_to_fs(path, **(storage_options or {}))
            with fs.open(p, "rb") as fh:
                return fh.read(HEAD_BYTES)
        from .agents import opener

        if opener(path) is not None:  # a session its agent's reader opens itself (in a database)
            return b""
        with open(path, "rb") as fh:
            return fh.read(HEAD_BYTES)
    except OSError:
        return b""


def _units(files: list[tuple[str, int]], storage_options: dict | None) -> list[int]:
    """For each file, the files it must share a partition with (a unit number): the load's
    cross-file pass needs them together. A Claude Code project folder is one unit (a session's
    subagent files dedupe against it); a Codex fork or spawned thread joins its parent's unit (its
    replayed usage is matched against the parent's); a pi file is a unit of its own. Each agent says
    which of its files go together (:attr:`sessionlab.agents.AgentSpec.together`)."""
    from . import agents

    unit = list(range(len(files)))

    def find(i: int) -> int:
        while unit[i] != i:
            unit[i] = unit[unit[i]]
            i = unit[i]
        return i

    by_key: dict[Any, int] = {}
    parent_of: list[tuple[int, str]] = []
    for i, (path, _) in enumerate(files):  # one head read per file, on the client
        head = _head(path, storage_options)
        spec = agents.spec(agents.opener(path) or agents.detect(head, path))
        key, parent = spec.together(path, head) if spec.together is not None else (None, None)
        if parent is not None:
            parent_of.append((i, parent))
        if key is not None:
            j = by_key.setdefault(key, i)
            unit[find(i)] = find(j)
    for i, parent in parent_of:
        at = by_key.get(parent)
        if at is not None:
            unit[find(i)] = find(at)
    return [find(i) for i in range(len(files))]


def _groups(files: list[tuple[str, int]], files_per_partition: int | None, bytes_per_partition: int,
            units: list[int] | None = None) -> list:
    """Consecutive files (the partitions keep the load order), cut only where no unit of files
    that belong together (:func:`_units`) would be split."""
    last: dict[int, int] = {}
    for i, u in enumerate(units or range(len(files))):
        last[u] = i
    groups: list[tuple[str, ...]] = []
    cur: list[str] = []
    size = 0
    open_until = -1  # the last file of the units the current group has begun
    for i, (path, n) in enumerate(files):
        cur.append(path)
        size += n
        open_until = max(open_until, last[units[i] if units else i])
        full = len(cur) >= files_per_partition if files_per_partition else size >= bytes_per_partition
        if full and open_until <= i:
            groups.append(tuple(cur))
            cur, size = [], 0
    if cur:
        groups.append(tuple(cur))
    return groups


def _load_group(paths: tuple[str, ...], on_bad_lines: str, storage_options: dict | None) -> pd.DataFrame:
    """One partition: a group of files through the local loader (remote files copied first)."""
    if not any(_is_url(p) for p in paths):
        return to_pandas(_entries(list(paths), on_bad_lines))
    from fsspec.core import url_to_fs

    tmp = tempfile.mkdtemp(prefix="sessionlab-dask-")
    try:
        local = []
        for i, url in enumerate(paths):
            target = os.path.join(tmp, f"{i:06d}.jsonl")
            if _is_url(url):
                fs, p = url_to_fs(url, **(storage_options or {}))
                fs.get_file(p, target)
            else:
                shutil.copyfile(url, target)
            local.append(target)
        table = _entries(local, on_bad_lines)
        # the file column names the URL, not the temporary copy
        index = pc.index_in(table["file"], value_set=pa.array(local))
        urls = pc.take(pa.array(list(paths), pa.string()), index)
        table = table.set_column(table.schema.get_field_index("file"), "file", urls)
        return to_pandas(table)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _entries(paths: list[str], on_bad_lines: str) -> pa.Table:
    # one worker thread per task: Dask already runs one task per worker thread
    kw: dict[str, Any] = {"on_bad_lines": on_bad_lines, "progress": False, "max_workers": 1}
    if "cache" in (entries_table.__kwdefaults__ or {}):  # the cache lives on the client's machine, not the workers'
        kw["cache"] = False
    return entries_table(paths, **kw)


def _meta(fn: Callable[[pa.Table], pa.Table] | None = None) -> pd.DataFrame:
    """The pandas meta of ``fn``'s result: ``fn`` on the declared, empty entries table."""
    empty = ENTRY_SCHEMA.empty_table()
    return to_pandas(empty if fn is None else fn(empty))


def load_dask(source_or_paths: Any = None, *, files_per_partition: int | None = None,
              bytes_per_partition: int = _BYTES_PER_PARTITION, on_bad_lines: str = "skip",
              storage_options: dict | None = None) -> dd.DataFrame:
    """The entries table as a Dask DataFrame, one partition per group of files.

    Args:
        source_or_paths: As for :func:`sessionlab.entries_table` (a file, folder, glob or list; None:
            pi's sessions folder), or fsspec URLs (``s3://bucket/team/sessions/``).
        files_per_partition: Files per partition. Default: groups of about ``bytes_per_partition``
            bytes of JSONL (a worker holds about that much Arrow data per partition).
        bytes_per_partition: See ``files_per_partition``.
        on_bad_lines: ``"skip"`` (default: warnings would go to the workers' logs; the bad lines
            are in :func:`sessionlab.issues_table`) or ``"raise"``.
        storage_options: Passed to fsspec for URLs (credentials, endpoint...).

    Returns:
        A ``dask.dataframe.DataFrame`` with the columns of ``ENTRY_SCHEMA`` (``ArrowDtype``), rows in
        the order of the local load; each session inside one partition.

    Example:
        >>> ddf = load_dask("data/sessions", files_per_partition=2)  # doctest: +SKIP
        >>> ddf.npartitions  # doctest: +SKIP
        3
    """
    dd = _dd()
    check_option("on_bad_lines", on_bad_lines, ("raise", "skip"))  # ("warn" has no one to warn on a cluster)
    if files_per_partition is not None and files_per_partition < 1:
        raise ArgumentValueError("files_per_partition",
                                 f"files_per_partition must be at least 1, not {files_per_partition!r}")
    files = _files(source_or_paths, storage_options)
    groups = _groups(files, files_per_partition, bytes_per_partition, _units(files, storage_options))
    if not groups:
        return dd.from_pandas(_meta(), npartitions=1)
    return dd.from_map(_load_group, groups, on_bad_lines=on_bad_lines, storage_options=storage_options,
                       meta=_meta(), label="sessionlab-entries", enforce_metadata=False)


def _on_partition(df: pd.DataFrame, fn: Callable[..., pa.Table], kwargs: dict) -> pd.DataFrame:
    return to_pandas(fn(as_table(df), **kwargs))


def _per_partition(ddf: dd.DataFrame, fn: Callable[..., pa.Table], **kwargs: Any) -> dd.DataFrame:
    def bound(t: pa.Table) -> pa.Table:
        return fn(t, **kwargs)

    return ddf.map_partitions(_on_partition, fn, kwargs, meta=_meta(bound), enforce_metadata=False)


def contexts(ddf: dd.DataFrame, at: Any = "calls", *, session_id: str | None = None) -> dd.DataFrame:
    """:func:`sessionlab.contexts` on every partition: a lazy Dask DataFrame of the same rows."""
    return _per_partition(ddf, _contexts, at=at, session_id=session_id)


def find_cut_points(ddf: dd.DataFrame, at: Any = "calls", keep_recent_tokens: int = 20000, *,
                    session_id: str | None = None) -> dd.DataFrame:
    """:func:`sessionlab.find_cut_points` on every partition: a lazy Dask DataFrame of the same rows."""
    return _per_partition(ddf, _find_cut_points, at=at, keep_recent_tokens=keep_recent_tokens,
                          session_id=session_id)


def cache_efficiency(ddf: dd.DataFrame) -> dd.DataFrame:
    """:func:`sessionlab.cache_efficiency` on every partition: a lazy Dask DataFrame of the same rows."""
    return _per_partition(ddf, _cache_efficiency)


def _arrow(df: pd.DataFrame) -> pa.Table:
    return pa.Table.from_pandas(df, preserve_index=False)


def usage_by(ddf: dd.DataFrame, by: str | Sequence[str] = ("session_id",), *, tz: str = "UTC") -> pa.Table:
    """:func:`sessionlab.usage_by` over the cluster: per-partition sums, summed again per group.

    Integer columns equal the local result exactly; ``cost_usd`` is a sum of partial sums, equal to
    the local one up to floating-point rounding (about 1e-15 relative).
    """
    keys = [by] if isinstance(by, str) else list(by)
    partial = _arrow(_per_partition(ddf, _usage_by, by=keys, tz=tz).compute())
    sums = [c for c in partial.column_names if c not in keys]
    g = partial.group_by(keys, use_threads=False).aggregate([(c, "sum") for c in sums])
    out = pa.table({**{k: g[k] for k in keys}, **{c: g[f"{c}_sum"] for c in sums}})
    return out.sort_by([(k, "ascending") for k in keys])


def branch_costs(ddf: dd.DataFrame) -> pa.Table:
    """:func:`sessionlab.branch_costs` over the cluster (a session's rows share one partition, so the
    per-partition rows are final; they are only sorted together)."""
    t = _arrow(_per_partition(ddf, _branch_costs).compute())
    return t.sort_by([("session_id", "ascending"), ("file", "ascending")])


def _calls_only(t: pa.Table) -> pa.Table:
    from .tables import call_mask

    return t.filter(pa.array(call_mask(t)))


def simulate_compaction(ddf: dd.DataFrame, policies: Sequence[Any], *, branch: str = "current",
                        recorded: str = "replace", prices: dict | None = None) -> SimulationResult:
    """:func:`sessionlab.simulate_compaction` over the cluster.

    Without ``prices``, the per-model prices are fitted once on every call of the corpus (only the
    calls travel to the client), exactly as the local default; each partition then replays its
    sessions with them. ``calls`` is computed on the cluster when first read.
    """
    policies = list(policies)
    if prices is None:
        prices = fit_prices(_arrow(_per_partition(ddf, _calls_only).compute()))
    kw = {"policies": policies, "branch": branch, "recorded": recorded, "prices": prices}
    sessions = _arrow(_per_partition(ddf, _sim_sessions, **kw).compute())
    calls = _per_partition(ddf, _sim_calls, **kw)
    return SimulationResult(_cast_like(sessions, _sim_sessions(ENTRY_SCHEMA.empty_table(), **kw)),
                            lambda: _cast_like(_arrow(calls.compute()), _sim_calls(ENTRY_SCHEMA.empty_table(), **kw)),
                            tuple(policies))


def _sim_sessions(t: pa.Table, **kw: Any) -> pa.Table:
    return _simulate_compaction(t, **kw).sessions


def _sim_calls(t: pa.Table, **kw: Any) -> pa.Table:
    return _simulate_compaction(t, **kw).calls


def _cast_like(t: pa.Table, like: pa.Table) -> pa.Table:
    return t.cast(like.schema)


def _with_partitions(df: pd.DataFrame) -> pd.DataFrame:
    t = as_table(df)
    n = t.num_rows
    # the agent: the entries table's own column (pi, claude-code, codex); 'pi' for an older table
    agent = t["agent"] if "agent" in t.column_names else pa.array(["pi"] * n, pa.string())
    # the date of each session's first timestamp, for all of its rows: a session stays in one folder
    first = t.group_by("file", use_threads=False).aggregate([("timestamp", "min")])
    day = pc.fill_null(pc.strftime(first["timestamp_min"], format="%Y-%m-%d"), "unknown")
    date = pc.take(day, pc.index_in(t["file"], value_set=first["file"]))
    out = t.append_column("agent", agent) if "agent" not in t.column_names else t
    return to_pandas(out.append_column("date", date))


def to_parquet(ddf: dd.DataFrame, path: str | os.PathLike, *, compression: str = "zstd",
               storage_options: dict | None = None) -> None:
    """Write a Dask entries table as a Parquet dataset partitioned by ``agent`` and ``date``.

    Layout: hive folders ``path/agent=pi/date=2026-01-05/part.N.parquet``; a session is in one
    folder (its date is the date of its first entry) and one file. The entries columns keep their
    types; ``agent`` and ``date`` (see ``PARTITION_COLUMNS``) live in the folder names. Readers::

        duckdb.sql(f"SELECT * FROM read_parquet('{path}/**/*.parquet', hive_partitioning=true)")
        polars.scan_parquet(f"{path}/**/*.parquet", hive_partitioning=True)
        sessionlab.tables.read_parquet(path)      # the entries table (local)
        sessionlab.dask.read_parquet(path)        # the entries table (Dask)

    Example:
        >>> to_parquet(load_dask("data/sessions"), "/tmp/entries-ds")  # doctest: +SKIP
    """
    base = ENTRY_SCHEMA.empty_table()
    if "agent" not in base.column_names:
        base = base.append_column("agent", pa.array([], pa.string()))
    meta = to_pandas(base.append_column("date", pa.array([], pa.string())))
    with_parts = ddf.map_partitions(_with_partitions, meta=meta, enforce_metadata=False)
    with_parts.to_parquet(os.fspath(path), partition_on=["agent", "date"], write_index=False,
                          compression=compression, storage_options=storage_options, engine="pyarrow")


def _read_file(path: str, storage_options: dict | None) -> pd.DataFrame:
    from .tables.parquet import read_parquet as read_local

    return to_pandas(read_local(path, storage_options=storage_options))


def read_parquet(path: str | os.PathLike, *, storage_options: dict | None = None) -> dd.DataFrame:
    """A dataset written by :func:`to_parquet` (or :func:`sessionlab.to_parquet`) as a Dask entries
    table: one partition per Parquet file (each holds whole sessions), the partition folders'
    columns dropped, the entries schema restored.

    Example:
        >>> ddf = read_parquet("/tmp/entries-ds")  # doctest: +SKIP
    """
    dd = _dd()
    root = os.fspath(path)
    if _is_url(root):
        from fsspec.core import url_to_fs

        fs, p = url_to_fs(root, **(storage_options or {}))
        files = [fs.unstrip_protocol(f) for f in sorted(fs.find(p)) if f.endswith(".parquet")]
    else:
        files = sorted(str(f) for f in Path(root).rglob("*.parquet"))
    if not files:
        return dd.from_pandas(_meta(), npartitions=1)
    return dd.from_map(_read_file, files, storage_options=storage_options, meta=_meta(),
                       label="sessionlab-parquet", enforce_metadata=False)
