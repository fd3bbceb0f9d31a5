"""The Arrow helpers that build arrays from Python values without importing pandas give what
``pa.array`` gives, for every type the loaders hand them."""

from __future__ import annotations

import pyarrow as pa
import pytest
from hypothesis import given, settings
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
@settings(deadline=None)  # (the first pa.array of a process imports pandas: a third of a second)
@given(data=st.data())
def test_from_pylist_equals_pa_array(typ, data):
    values = data.draw(st.lists(VALUES[typ], max_size=30))
    got = from_pylist(values, typ)
    assert got.type == typ
    assert got.equals(pa.array(values, typ))


WITHOUT_PANDAS = r"""
import sys
import numpy as np
import pyarrow as pa
from sessionlab._arrow import without_pandas

without_pandas()
a = pa.array(["x", None], pa.string())
b = pa.array(np.arange(3))
c = pa.array([1.5, None], pa.float64())
assert "pandas" not in sys.modules, "a conversion imported pandas"
assert a.to_pylist() == ["x", None] and b.to_pylist() == [0, 1, 2] and c.to_pylist() == [1.5, None]
df = pa.table({"a": a}).to_pandas()  # (still there when asked for)
assert "pandas" in sys.modules and df["a"].tolist()[0] == "x"
print("ok")
"""

ALREADY = r"""
import pandas as pd
import pyarrow as pa
from sessionlab._arrow import without_pandas

without_pandas()  # (pandas imported already: nothing changes)
assert pa.array(pd.Series([1, None], dtype="Int64")).to_pylist() == [1, None]
print("ok")
"""


@pytest.mark.parametrize("code", [WITHOUT_PANDAS, ALREADY], ids=["fresh", "pandas-imported"])
def test_without_pandas_converts_without_importing_it_and_to_pandas_still_works(code):
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"
