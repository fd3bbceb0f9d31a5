"""The Arrow helpers that build arrays from Python values without importing pandas give what
``pa.array`` gives, for every type the loaders hand them."""

from __future__ import annotations

import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sessionlab._arrow import from_pylist

VALUES = {
    pa.string(): st.one_of(st.none(), st.text()),
    pa.int32(): st.one_of(st.none(), st.integers(-2**31, 2**31 - 1)),
    pa.int64(): st.one_of(st.none(), st.integers(-2**63, 2**63 - 1)),
    pa.float64(): st.one_of(st.none(), st.floats(allow_nan=False), st.integers(-2**53, 2**53)),
    pa.bool_(): st.one_of(st.none(), st.booleans()),
}


@pytest.mark.parametrize("typ", list(VALUES), ids=str)
@given(data=st.data())
def test_from_pylist_equals_pa_array(typ, data):
    values = data.draw(st.lists(VALUES[typ], max_size=30))
    got = from_pylist(values, typ)
    assert got.type == typ
    assert got.equals(pa.array(values, typ))
