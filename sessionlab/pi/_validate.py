"""Argument checks at the public boundary: one helper per kind of check, reused everywhere.

Each check raises an error of the package's tree that names the argument and says what is allowed
(:class:`~sessionlab.errors.ArgumentTypeError` is a ``TypeError``,
:class:`~sessionlab.errors.ArgumentValueError` a ``ValueError``), so a mistake fails where it is
made instead of deep inside, or never (a wrong value silently stored).

:func:`check_json` is what keeps memory and file equal: a value JSON cannot hold as it is would be
changed by the writer (NaN becomes ``null``, ``10**30`` becomes ``1e+30``, the key ``1`` becomes
``"1"``), so it is refused with the path of the field.
"""

from __future__ import annotations

import math
import typing
from collections.abc import Iterable, Sequence
from typing import Any

from ..errors import ArgumentTypeError, ArgumentValueError, OptionError, UnstorableValueError
from .model import content as C
from .model import entries as E
from .model import messages as M

__all__ = [
    "THINKING_LEVELS",
    "MESSAGE_TYPES",
    "ENTRY_CLASSES",
    "CONTENT_TYPES",
    "check_type",
    "check_str",
    "check_choice",
    "check_int",
    "check_names",
    "check_json",
    "check_content",
    "check_entries",
]

THINKING_LEVELS: tuple[str, ...] = ("off", "minimal", "low", "medium", "high", "xhigh", "max")
"""pi's thinking levels (``ThinkingLevel`` in pi's session manager; pi 1.6 added ``max``)."""

# every class of the model's unions: a type added to ``Message`` or ``SessionEntry`` is accepted
MESSAGE_TYPES: tuple[type, ...] = typing.get_args(M.Message)
ENTRY_CLASSES: tuple[type, ...] = typing.get_args(E.SessionEntry)
CONTENT_TYPES: tuple[type, ...] = typing.get_args(C.ContentBlock)

_MAX_SAFE_INT = 2**53 - 1  # beyond this a JavaScript reader (pi) gets another number


def _names(types: tuple[type, ...]) -> str:
    names = ["None" if t is type(None) else t.__name__ for t in types]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]


def check_type(value: Any, types: type | tuple[type, ...], argument: str, *, optional: bool = False) -> Any:
    """``value`` if it is an instance of ``types`` (or ``None`` when ``optional``), else
    :class:`ArgumentTypeError`. ``bool`` is not accepted where ``int`` is asked for."""
    ts = types if isinstance(types, tuple) else (types,)
    if value is None and optional:
        return value
    if isinstance(value, ts) and not (isinstance(value, bool) and bool not in ts and int in ts):
        return value
    allowed = _names(ts + ((type(None),) if optional else ()))
    raise ArgumentTypeError(argument, f"{argument} must be {allowed}, not {type(value).__name__} ({_short(value)})")


def check_str(value: Any, argument: str, *, optional: bool = False, nonempty: bool = False) -> str | None:
    """A string (``None`` too when ``optional``); ``nonempty`` refuses ``""``."""
    check_type(value, str, argument, optional=optional)
    if nonempty and value == "":
        raise ArgumentValueError(argument, f"{argument} must not be empty")
    return value


def check_choice(value: Any, choices: Sequence[Any], argument: str) -> Any:
    """``value`` if it is one of ``choices`` (same type and value), else an error listing them."""
    if any(type(value) is type(c) and value == c for c in choices):
        return value
    allowed = ", ".join(repr(c) for c in choices)
    if all(isinstance(c, str) for c in choices) and not isinstance(value, str):
        raise ArgumentTypeError(argument, f"{argument} must be one of {allowed}, not {type(value).__name__} "
                                          f"({_short(value)})")
    raise OptionError(f"{argument} must be one of {allowed}, not {_short(value)}", argument)


def check_int(value: Any, argument: str, *, optional: bool = False, minimum: int | None = None) -> int | None:
    """An ``int`` (not a bool), at least ``minimum`` when given."""
    check_type(value, int, argument, optional=optional)
    if value is not None and minimum is not None and value < minimum:
        raise ArgumentValueError(argument, f"{argument} must be at least {minimum}, not {value}")
    return value


def check_names(value: Any, argument: str) -> tuple[str, ...]:
    """A list or tuple of strings (a lone string is refused: it is not a list of names)."""
    if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple)):
        raise ArgumentTypeError(argument, f"{argument} must be a list of strings, not {type(value).__name__} "
                                          f"({_short(value)})")
    for i, v in enumerate(value):
        check_type(v, str, f"{argument}[{i}]")
    return tuple(value)


def check_content(value: Any, argument: str) -> str | tuple:
    """Message content: a string, or a list/tuple of content blocks (returned as a tuple)."""
    check_type(value, (str, list, tuple), argument)
    if isinstance(value, str):
        return value
    for i, b in enumerate(value):
        check_type(b, CONTENT_TYPES, f"{argument}[{i}]")
    return tuple(value)


def check_entries(value: Any, argument: str) -> list[E.SessionEntry]:
    """A list of session entries from any iterable of them (a generator too)."""
    if isinstance(value, (str, bytes, dict)) or not isinstance(value, Iterable):
        raise ArgumentTypeError(argument, f"{argument} must be a list of session entries, not "
                                          f"{type(value).__name__} ({_short(value)})")
    out = list(value)
    for i, e in enumerate(out):
        check_type(e, ENTRY_CLASSES, f"{argument}[{i}]")
    return out


def check_json(value: Any, argument: str) -> None:
    """Refuse what JSON (as pi reads it) cannot hold as it is; ``argument`` names the field.

    Allowed: ``None``, bools, strings, finite floats, integers of at most 2**53 - 1 in size, lists and
    tuples of these, dicts with string keys. The path of the first bad value is in the error
    (``details['scores'][2]``).
    """
    stack: list[tuple[Any, str]] = [(value, argument)]
    while stack:  # (a loop, not recursion: deeply nested values must not overflow the stack)
        v, path = stack.pop()
        if v is None or isinstance(v, (str, bool)):
            continue
        if isinstance(v, int):
            if abs(v) > _MAX_SAFE_INT:
                raise UnstorableValueError(path, f"{path} = {_short(v)} is an integer beyond 2**53 - 1: a JSON "
                                                 "reader such as pi would read another number; store it as a string")
        elif isinstance(v, float):
            if not math.isfinite(v):
                raise UnstorableValueError(path, f"{path} = {v!r} cannot be stored in JSON (it would be written "
                                                 "as null)")
        elif isinstance(v, dict):
            for k, item in v.items():
                if not isinstance(k, str):
                    raise UnstorableValueError(path, f"{path} has the key {k!r} ({type(k).__name__}); JSON keys "
                                                     "are strings, so it would come back as a different key")
                stack.append((item, f"{path}[{k!r}]"))
        elif isinstance(v, (list, tuple)):
            stack.extend((item, f"{path}[{i}]") for i, item in enumerate(v))
        else:
            raise UnstorableValueError(path, f"{path} is a {type(v).__name__}, which JSON cannot hold; use "
                                             "dicts, lists, strings, numbers, booleans and None")


def _short(value: Any) -> str:
    try:
        r = repr(value)
    except Exception:  # a broken __repr__ must not hide the real error
        r = f"<{type(value).__name__}>"
    return r if len(r) <= 60 else r[:57] + "..."
