"""pi's version migrations (v1 -> v2 -> v3), done in memory on the parsed objects.

Same result as pi's ``migrateToCurrentVersion`` except for the v1 ids: pi draws random ids on
every load; we number entries in file order (``00000001``, ``00000002``...), the scheme pi's
expected results use, so two loads of one file agree. The file itself is never rewritten here.
"""

from __future__ import annotations

CURRENT_VERSION = 3

__all__ = ["CURRENT_VERSION", "migrate_objects", "v1_entry_id"]


def v1_entry_id(n: int) -> str:
    """Id given to the ``n``-th entry (from 1) of a v1 file."""
    return f"{n:08x}"


def migrate_objects(header: dict, objs: list[dict], version: int, pi_visible: list[bool]) -> tuple[dict, list[dict]]:
    """Return migrated copies of the header and the entry objects (inputs are not changed).

    ``pi_visible[i]`` is False for objects pi itself would not have parsed (recovered from a line
    with glued objects); pi's v1 ``firstKeptEntryIndex`` counts only the lines it parsed.
    """
    header = dict(header)
    objs = [dict(o) for o in objs]
    if version < 2:
        ids: list[str] = []
        visible: list[str] = []  # pi's array of parsed entries (header is index 0)
        hidden = 0
        for i in range(len(objs)):
            if pi_visible[i]:
                eid = v1_entry_id(len(visible) + 1)
            else:
                hidden += 1
                eid = f"{0x80000000 + hidden:08x}"
            ids.append(eid)
            if pi_visible[i]:
                visible.append(eid)
        prev = None
        for o, eid in zip(objs, ids):
            # pi adds id and parentId as new keys at the end of each object
            o["id"] = eid
            o["parentId"] = prev
            prev = eid
            if o.get("type") == "compaction" and "firstKeptEntryIndex" in o:
                k = o.pop("firstKeptEntryIndex")
                if isinstance(k, int) and not isinstance(k, bool) and 1 <= k <= len(visible):
                    o["firstKeptEntryId"] = visible[k - 1]
        header["version"] = 2
    if version < 3:
        for o in objs:
            msg = o.get("message")
            if o.get("type") == "message" and isinstance(msg, dict) and msg.get("role") == "hookMessage":
                o["message"] = {**msg, "role": "custom"}
        header["version"] = CURRENT_VERSION
    return header, objs
