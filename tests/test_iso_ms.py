"""The readers' millisecond timestamps: the arithmetic path equals the datetime definition."""

from hypothesis import given, settings
from hypothesis import strategies as st

from sessionlab.agents._chain import _FAST_MS_END, iso_ms, iso_ms_plain

DAY = 86_400_000


@settings(max_examples=3000, deadline=None)
@given(st.one_of(st.integers(0, _FAST_MS_END + DAY), st.integers(1_600_000_000_000, 1_900_000_000_000),
                 st.integers(-10 * DAY, 10**14), st.floats(-1e13, 1e13, allow_nan=False),
                 st.integers(0, _FAST_MS_END // 1000).map(lambda s: s * 1000.0)))
def test_iso_ms_equals_datetime(ms):
    assert iso_ms(ms) == iso_ms_plain(ms)


def test_iso_ms_edges():
    assert iso_ms(0) == "1970-01-01T00:00:00.000Z"
    assert iso_ms(DAY - 1) == "1970-01-01T23:59:59.999Z"
    assert iso_ms(1_700_000_000_123) == "2023-11-14T22:13:20.123Z"
    assert iso_ms(_FAST_MS_END - 1) == "2099-12-31T23:59:59.999Z"
    assert iso_ms(_FAST_MS_END) == "2100-01-01T00:00:00.000Z"
    assert iso_ms(-1) == "1969-12-31T23:59:59.999Z"
    assert [iso_ms(v) for v in (None, True, "1700000000000", 1.5)] == [None, None, None, "1970-01-01T00:00:00.001Z"]
