"""Columns every loader path builds the same way: timestamps from ISO strings, and the columns
other agents fill, as a pi file has them. No object model here: the C scanner's path needs only
this module and :mod:`sessionlab._arrow`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa

from .._arrow import compute as pc
from .._arrow import const_strings, scalar, valid_mask
from ._schema import TIMESTAMP

__all__ = ["parse_timestamps", "with_pi_defaults"]

# pi's own form, which Arrow's cast reads exactly as iso_to_ms does (checked on random values; year
# 0 aside, which Arrow accepts and Python's datetime does not)
_PI_TIMESTAMP = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,3})?Z$"
_YEAR_1_MS = -62135596800000  # 0001-01-01T00:00:00Z


def parse_timestamps(values: list[Any] | pa.Array) -> pa.Array:
    """ISO-8601 strings to ``timestamp[ms, tz=UTC]``, each value as :func:`iso_to_ms` reads it (naive
    means UTC, sub-ms digits truncated, unparseable or before year 1 is null).

    When every value has pi's form (``...T12:34:56.789Z``) one Arrow cast reads them all; otherwise
    each value is parsed on its own, so a value never depends on the others in its batch.
    """
    arr = values if isinstance(values, pa.Array) else pa.array(values, pa.string())
    if pc.all(pc.match_substring_regex(arr, _PI_TIMESTAMP)).as_py() in (True, None):
        try:
            ms = arr.cast(TIMESTAMP).cast(pa.int64())
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            pass  # e.g. February 30: the per-value parse makes it null
        else:
            low = pc.min(ms).as_py()
            if low is not None and low < _YEAR_1_MS:
                ms = pc.if_else(pc.less(ms, scalar(_YEAR_1_MS)), scalar(None, pa.int64()), ms)
            return ms.cast(TIMESTAMP)
    from .._time import iso_to_ms  # (the object model: only for values not in pi's form)

    return pa.array([iso_to_ms(v) for v in arr.to_pylist()], pa.int64()).cast(TIMESTAMP)


def with_pi_defaults(table: pa.Table) -> pa.Table:
    """A pi entries table with the columns other agents fill: ``agent`` 'pi', ``cost_source``
    'recorded' where the file has a cost, ``side_node`` false, ``root_session_id`` the session
    (every loader path calls this, so they agree)."""
    n = table.num_rows
    values = {
        "agent": const_strings(b"pi", np.ones(n, bool)),
        "cost_source": const_strings(b"recorded", valid_mask(table.column("cost_usd"))),
        "side_node": pa.Array.from_buffers(pa.bool_(), n, [None, pa.py_buffer(np.packbits(np.zeros(n, bool)))]),
        "root_session_id": table.column("session_id"),
    }
    for name, arr in values.items():
        i = table.schema.get_field_index(name)
        table = table.set_column(i, table.schema.field(i), arr)
    return table
