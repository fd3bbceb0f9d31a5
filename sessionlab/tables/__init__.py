"""Session files as Arrow tables, one module per grain.

- :func:`load`: one read of many files, a :class:`Corpus` that gives every table below;
- :func:`entries_table` / :func:`entries_df`: one row per entry;
- :func:`sessions_table` / :func:`sessions_df`: one row per session file;
- :func:`blocks_table` / :func:`blocks_df`: one row per content block;
- :func:`issues_table` / :func:`issues_df`: the line issues of a load;
- :func:`to_parquet` / :func:`read_parquet`: a Parquet dataset of a table or a source, and back;
- :meth:`Corpus.follow` / :func:`watch`: a corpus kept current while agents write to its files
  (a :class:`Follower`, see :mod:`._follow`);
- :func:`load_files` / :func:`refresh`: the per-file results of a load (cached, see
  :mod:`._cache`) and of a reload, with the :class:`Changes` in between; :func:`clear_cache`.

Column names, types and meanings live in :mod:`sessionlab.tables._schema`. The session and call
facts (what is a call, leaves, fork points, the current leaf, the name) have one owner,
:mod:`._facts`, whose :func:`call_mask`, :func:`leaf_mask`, :func:`fork_mask` and
:func:`file_facts` the other packages use.
"""

from ._cache import Changes, clear_cache
from ._conventions import df_variant as df_variant
from ._conventions import returns as returns
from ._follow import Follower
from ._load import LoadResult, default_roots, default_sessions_dir, find_files, load_files, refresh
from ._pi16 import table_rules

# the package's own interface for the other packages (not sessionlab's public API)
from ._pi16 import table_rules_for as table_rules_for
from ._schema import BLOCK_SCHEMA, ENTRY_SCHEMA, ISSUE_SCHEMA, SESSION_SCHEMA
from ._schema import TIMESTAMP as TIMESTAMP
from ._schema import Column as Column
from ._schema import columns_doc as columns_doc
from ._schema import schema_of as schema_of
from .blocks import blocks_df, blocks_table
from .corpus import Corpus, as_entries, load, watch
from .entries import entries_df, entries_table
from .issues import issues_df, issues_table
from .sessions import sessions_df, sessions_table

__all__ = [
    "load", "Corpus", "as_entries", "watch", "Follower",
    "entries_table", "entries_df", "sessions_table", "sessions_df", "blocks_table", "blocks_df",
    "issues_table", "issues_df", "to_parquet", "read_parquet", "find_files", "default_sessions_dir", "table_rules",
    "load_files", "refresh", "LoadResult", "Changes", "clear_cache",
    "default_roots",
    "ENTRY_SCHEMA", "SESSION_SCHEMA", "BLOCK_SCHEMA", "ISSUE_SCHEMA",
]


_FACTS = ("call_mask", "current_leaf_rows", "file_facts", "fork_mask", "leaf_mask")


def __getattr__(name: str):
    # Parquet (pyarrow.parquet) is imported when first asked for, not by every load; so are the
    # facts (the package's interface to its facts module), which a first entries table does not need
    if name in ("to_parquet", "read_parquet"):
        from . import parquet
        return getattr(parquet, name)
    if name in _FACTS:
        from . import _facts
        return getattr(_facts, name)
    raise AttributeError(f"module 'sessionlab.tables' has no attribute {name!r}")

