"""Timestamps as pi reads them: ISO-8601 strings to Unix milliseconds (the base every layer uses)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

__all__ = ["iso_to_ms"]


def iso_to_ms(ts: str | None) -> int | None:
    """JavaScript ``Date.parse`` of an ISO-8601 timestamp, in Unix milliseconds (``None`` if invalid).

    A timestamp without an offset is read as UTC (JavaScript would use local time; pi always
    writes ``Z``).
    """
    if not isinstance(ts, str):
        return None
    try:
        dt = datetime.fromisoformat(ts)
    except ValueError:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return (dt - _EPOCH) // timedelta(milliseconds=1)


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
