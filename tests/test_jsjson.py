"""JavaScript-compatible JSON: number format, string length, escaping, strict parsing.

Expected strings were produced once with Node.js 20 (``String(x)`` / ``JSON.stringify(x)``) and are
kept here as literals, so the tests do not need node.
"""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sessionlab._jsjson import js_len, js_number, js_parse, js_stringify, js_to_string, raw_decode

# (Python value, what JavaScript prints)
NUMBERS = [
    (1.0, "1"),
    (0.0, "0"),
    (-0.0, "0"),
    (1e21, "1e+21"),
    (1e20, "100000000000000000000"),
    (1e-7, "1e-7"),
    (-1e-7, "-1e-7"),
    (1e-6, "0.000001"),
    (0.00001, "0.00001"),
    (5e-324, "5e-324"),
    (1.5e-323, "1.5e-323"),
    (2**53 + 2.0, "9007199254740994"),
    (float(2**53), "9007199254740992"),
    (0.1 + 0.2, "0.30000000000000004"),
    (1.5e-7, "1.5e-7"),
    (123.456, "123.456"),
    (1e300, "1e+300"),
    (1.7976931348623157e308, "1.7976931348623157e+308"),
    (123456789012345680000.0, "123456789012345680000"),
    (1.2345e21, "1.2345e+21"),
    (0.000001234, "0.000001234"),
    (100.0, "100"),
    (-5.5, "-5.5"),
    (4.35, "4.35"),
    (1e16, "10000000000000000"),
    (math.nan, "null"),
    (math.inf, "null"),
    (-math.inf, "null"),
    # ints: exact up to 2**53, beyond that a JavaScript number is a double
    (0, "0"),
    (-17, "-17"),
    (2**53, "9007199254740992"),
    (2**60, "1152921504606847000"),
    (12345678901234567890, "12345678901234567000"),
    (10**400, "null"),
    (True, "true"),
    (False, "false"),
]


@pytest.mark.parametrize(("value", "expected"), NUMBERS, ids=[repr(v)[:24] for v, _ in NUMBERS])
def test_js_number(value, expected):
    assert js_number(value) == expected


@pytest.mark.parametrize(("value", "expected"), NUMBERS, ids=[repr(v)[:24] for v, _ in NUMBERS])
def test_js_stringify_number_matches_js_number(value, expected):
    assert js_stringify(value) == expected
    assert js_stringify([value]) == f"[{expected}]"


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_js_number_parses_back_to_the_same_double(x):
    assert float(js_number(x)) == x


LENGTHS = [
    ("", 0),
    ("abc", 3),
    ("é", 1),
    ("中文", 2),
    ("😀", 2),
    ("a😀b", 4),
    ("𝄞x", 3),
    ("😀😀", 4),
    ("\ud800", 1),  # a lone surrogate is one UTF-16 code unit
    ("\u2028", 1),
]


@pytest.mark.parametrize(("text", "expected"), LENGTHS)
def test_js_len(text, expected):
    assert js_len(text) == expected


STRINGS = [
    ("plain", '"plain"'),
    ("a/b", '"a/b"'),  # "/" is not escaped
    ('q"b\\', '"q\\"b\\\\"'),
    ("é中文😀", '"é中文😀"'),  # non-ASCII is not escaped
    ("\b\t\n\f\r", '"\\b\\t\\n\\f\\r"'),
    ("\x00\x01\x0b\x1f", '"\\u0000\\u0001\\u000b\\u001f"'),
    ("\x7f", '"\x7f"'),  # DEL is not a control character for JSON
    ("\u2028\u2029\ufeff", '"\u2028\u2029\ufeff"'),
    ("\ud800", '"\\ud800"'),  # lone surrogates: a lowercase \u escape
    ("a\udfffb", '"a\\udfffb"'),
    ("\udc00\ud800", '"\\udc00\\ud800"'),
]


@pytest.mark.parametrize(("text", "expected"), STRINGS)
def test_js_stringify_strings(text, expected):
    assert js_stringify(text) == expected


def test_js_stringify_all_ascii_matches_node():
    # JSON.stringify of the 128 ASCII characters, from node
    expected = (
        '"\\u0000\\u0001\\u0002\\u0003\\u0004\\u0005\\u0006\\u0007\\b\\t\\n\\u000b\\f\\r\\u000e\\u000f'
        "\\u0010\\u0011\\u0012\\u0013\\u0014\\u0015\\u0016\\u0017\\u0018\\u0019\\u001a\\u001b\\u001c"
        '\\u001d\\u001e\\u001f !\\"#$%&\'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\\\]^_`'
        'abcdefghijklmnopqrstuvwxyz{|}~\x7f"'
    )
    assert js_stringify("".join(map(chr, range(128)))) == expected


STRUCTURES = [
    ({}, "{}"),
    ([], "[]"),
    ({"b": 1, "a": [1.0, None, True, False, "x"]}, '{"b":1,"a":[1,null,true,false,"x"]}'),
    ({"z": {"y": {"x": 0.5}}}, '{"z":{"y":{"x":0.5}}}'),
    ((1, 2), "[1,2]"),
    ({"é/😀": "\ud83d"}, '{"é/😀":"\\ud83d"}'),
    ({"n": math.nan}, '{"n":null}'),
    ({"k": 1e21, "m": 1e-7}, '{"k":1e+21,"m":1e-7}'),
]


@pytest.mark.parametrize(("value", "expected"), STRUCTURES)
def test_js_stringify_structures(value, expected):
    assert js_stringify(value) == expected


def test_js_stringify_rejects_other_types():
    with pytest.raises(TypeError, match="set"):
        js_stringify({"a": {1, 2}})


@pytest.mark.parametrize("text", ["NaN", "Infinity", "-Infinity", '{"a":NaN}', "[1,Infinity]"])
def test_js_parse_rejects_nan_and_infinity(text):
    assert json.loads(text) is not None  # Python's json accepts them...
    with pytest.raises(ValueError, match="not valid JSON"):
        js_parse(text)  # ...JSON.parse does not


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a":[1,2.5,"x",null,true]}', {"a": [1, 2.5, "x", None, True]}),
        ('"\\ud83d\\ude00"', "😀"),
        (" [1] ", [1]),
        ("1e400", math.inf),  # JSON.parse gives Infinity too
    ],
)
def test_js_parse_accepts_json(text, expected):
    assert js_parse(text) == expected


@pytest.mark.parametrize("text", ["{'a':1}", "[1,]", "{}x", "", "// c\n{}"])
def test_js_parse_rejects_invalid_json(text):
    with pytest.raises(ValueError):
        js_parse(text)


def test_raw_decode_returns_value_and_end():
    assert raw_decode('{"a":1}{"b":2}') == ({"a": 1}, 7)
    assert raw_decode('{"a":1}{"b":2}', 7) == ({"b": 2}, 14)
    with pytest.raises(ValueError):
        raw_decode('{"a":NaN}')


_json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**53), 2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=5), children, max_size=4),
    max_leaves=20,
)


def _as_js(v):
    """A value as JavaScript holds it: every number a double."""
    if isinstance(v, bool) or v is None or isinstance(v, str):
        return v
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, list):
        return [_as_js(x) for x in v]
    return {k: _as_js(x) for k, x in v.items()}


@given(_json_values)
def test_js_stringify_parses_back(value):
    text = js_stringify(value)
    # Python parses "51560831784116990" as an int, JavaScript as the double it came from
    assert _as_js(js_parse(text)) == _as_js(value)
    assert js_stringify(js_parse(text)) == text  # stable: a second pass changes nothing


@given(
    st.recursive(
        st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(),
        lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(max_size=5), c, max_size=4),
        max_leaves=20,
    )
)
def test_js_stringify_equals_compact_json_dumps_without_floats(value):
    # without floats and surrogates, JSON.stringify is json.dumps with compact separators
    assert js_stringify(value) == json.dumps(value, separators=(",", ":"), ensure_ascii=False)


@given(st.text())
def test_js_len_is_utf16_length(text):
    assert js_len(text) == len(text.encode("utf-16-le", "surrogatepass")) // 2
    assert js_len(text) == len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)


@pytest.mark.parametrize(("value", "expected"), [
    ("text", "text"), (None, ""), (True, "true"), (False, "false"), (12, "12"), (1.5, "1.5"),
    (9007199254740993, "9007199254740992"), (10**400, "Infinity"), ([1, "a", None, [2, 3]], "1,a,,2,3"),
    ({"a": 1}, "[object Object]"),
])
def test_js_to_string_is_javascripts_string_conversion(value, expected):
    # String(v) as JavaScript writes it (Array.prototype.join's rule for null), e.g. for a text
    # part of a damaged file that holds a number
    assert js_to_string(value) == expected
