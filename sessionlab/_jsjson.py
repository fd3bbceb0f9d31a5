"""JSON the way JavaScript does it: ``JSON.stringify``, ``JSON.parse`` and string ``.length``.

pi writes its files with ``JSON.stringify`` and measures text with JavaScript string lengths
(UTF-16 code units). Reproducing its bytes and its token estimates exactly needs the same rules:

- compact separators, non-ASCII unescaped, ``/`` unescaped, lone surrogates as ``\\udxxx``;
- numbers in JavaScript's shortest form (``1.0`` -> ``1``, ``1e-7`` -> ``1e-7``,
  ``0.00001`` -> ``0.00001``, ``1e21`` -> ``1e+21``), ``NaN``/``Infinity`` -> ``null``;
- parsing rejects ``NaN``, ``Infinity`` and ``-Infinity``, which Python's ``json`` accepts.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from .errors import ArgumentTypeError, ArgumentValueError

__all__ = ["js_stringify", "js_len", "js_number", "js_parse", "js_to_string"]

_dumps_str = json.encoder.encode_basestring  # type: ignore[attr-defined]  # ensure_ascii=False variant
_SURROGATE = re.compile("[\ud800-\udfff]")


_JS_SPACE = (" \t\n\r\v\f\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
             "\u2028\u2029\u202f\u205f\u3000\ufeff")


def js_trim(s: str) -> str:
    """JavaScript ``s.trim()`` (its whitespace set, which has U+FEFF and lacks U+001C-U+001F)."""
    return s.strip(_JS_SPACE)


def js_len(s: str | None) -> int:
    """JavaScript ``s.length``: UTF-16 code units (a character outside the BMP counts 2); 0 for
    ``None`` (a field that is absent). The one definition every path measures text with."""
    if s is None:
        return 0
    if s.isascii():
        return len(s)
    return len(s.encode("utf-16-le", "surrogatepass")) // 2


def js_to_string(v: Any) -> str:
    """A JSON value as JavaScript's ``String(v)`` and ``Array.prototype.join`` write it: a string
    as it is, a number as :func:`js_number` (but ``Infinity``), ``true``/``false``, ``null`` as
    ``""`` (join's rule), an array's items joined by ``,``, an object as ``[object Object]``."""
    if isinstance(v, str):
        return v
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        s = js_number(v)
        return s if s != "null" else ("NaN" if isinstance(v, float) and v != v else
                                      "Infinity" if v > 0 else "-Infinity")
    if isinstance(v, list):
        return ",".join(js_to_string(x) for x in v)
    return "[object Object]"


def js_number(x: float | int) -> str:
    """Format a number as JavaScript's ``Number.prototype.toString`` / ``JSON.stringify`` does."""
    if isinstance(x, bool):
        return "true" if x else "false"
    if isinstance(x, int):
        if abs(x) <= 2**53:
            return str(x)
        try:  # a JavaScript number is a double: 2**60 prints as 1152921504606847000
            x = float(x)
        except OverflowError:
            return "null"  # Infinity in JavaScript
    if not math.isfinite(x):
        return "null"
    if x == 0:
        return "0"
    if x.is_integer() and abs(x) < 2**53:
        return str(int(x))
    sign = "-" if x < 0 else ""
    r = repr(abs(x))
    mant, _, exp_s = r.partition("e")
    exp = int(exp_s) if exp_s else 0
    ip, _, fp = mant.partition(".")
    if fp == "0":
        fp = ""
    all_digits = ip + fp
    e10 = exp - len(fp)
    stripped = all_digits.lstrip("0")
    trimmed = stripped.rstrip("0")
    e10 += len(stripped) - len(trimmed)
    digits = trimmed
    k = len(digits)
    n = k + e10  # value = 0.digits * 10**n
    if k <= n <= 21:
        out = digits + "0" * (n - k)
    elif 0 < n <= 21:
        out = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        out = "0." + "0" * (-n) + digits
    else:
        e = n - 1
        esign = "+" if e >= 0 else "-"
        head = digits[0] + ("." + digits[1:] if k > 1 else "")
        out = f"{head}e{esign}{abs(e)}"
    return sign + out


def _js_string(s: str) -> str:
    out = _dumps_str(s)
    if not out.isascii() and _SURROGATE.search(out):
        out = _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", out)
    return out


def js_stringify(obj: Any) -> str:
    """``JSON.stringify(obj)`` for JSON-like Python values (dict order is kept)."""
    parts: list[str] = []
    _emit(obj, parts.append)
    return "".join(parts)


def _emit(obj: Any, w: Any) -> None:
    if isinstance(obj, str):
        w(_js_string(obj))
    elif obj is None:
        w("null")
    elif obj is True:
        w("true")
    elif obj is False:
        w("false")
    elif isinstance(obj, int):
        w(js_number(obj))
    elif isinstance(obj, float):
        w(js_number(obj))
    elif isinstance(obj, dict):
        w("{")
        first = True
        for k, v in obj.items():
            if not first:
                w(",")
            first = False
            w(_js_string(str(k)))
            w(":")
            _emit(v, w)
        w("}")
    elif isinstance(obj, (list, tuple)):
        w("[")
        for i, v in enumerate(obj):
            if i:
                w(",")
            _emit(v, w)
        w("]")
    else:
        raise ArgumentTypeError("obj", f"obj must be JSON-serializable, not a {type(obj).__name__}")


def _reject_constant(name: str) -> Any:
    raise ArgumentValueError("text", f"{name} is not valid JSON")


_DECODER = json.JSONDecoder(parse_constant=_reject_constant)


def js_parse(text: str) -> Any:
    """``JSON.parse``: like :func:`json.loads` but rejects NaN and Infinity."""
    return _DECODER.decode(text)


def raw_decode(text: str, pos: int = 0) -> tuple[Any, int]:
    """Decode one JSON value starting at ``pos``; return it and the index after it."""
    return _DECODER.raw_decode(text, pos)
