"""The public API's conventions, as two small helpers every table-returning function uses.

- :func:`returns` declares the columns a function's table has (a tuple of
  :class:`~._schema.Column`, as in :mod:`._schema`): it keeps them on the function as
  ``fn.columns`` and writes them into its docstring where it says ``{columns}``;
- :func:`df_variant` makes the ``*_df`` twin of a function returning an Arrow table: the same
  arguments, the pandas view (Arrow-backed dtypes) of the same table.

``tests/test_api_conventions.py`` holds every public function to them.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from ._schema import Column, columns_doc

__all__ = ["returns", "df_variant"]

F = TypeVar("F", bound=Callable[..., Any])


def returns(columns: tuple[Column, ...], *, indent: int = 8) -> Callable[[F], F]:
    """Declare the columns of the table ``fn`` returns (see the module doc)."""

    def mark(fn: F) -> F:
        fn.columns = columns  # type: ignore[attr-defined]
        if fn.__doc__ and "{columns}" in fn.__doc__:
            fn.__doc__ = fn.__doc__.replace("{columns}", columns_doc(columns, indent))
        return fn

    return mark


def df_variant(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn``'s pandas twin, named ``<fn>_df`` (see the module doc)."""
    from .corpus import to_pandas

    @functools.wraps(fn)
    def twin(*args: Any, **kwargs: Any) -> Any:
        return to_pandas(fn(*args, **kwargs))

    twin.__name__ = twin.__qualname__ = f"{fn.__name__}_df"
    twin.__doc__ = (f":func:`{fn.__name__}` as a pandas DataFrame with Arrow-backed dtypes (same arguments, "
                    f"same columns).")
    return twin
