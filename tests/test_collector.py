"""A load pauses the cyclic garbage collector (``_file.paused_collector``) and, when it resumes it,
hands what the pause made to the collector's oldest generation, so that no walk of a load's
results follows at once; cycles made in the pause are still collected, and objects the caller
froze stay frozen."""

from __future__ import annotations

import gc

import pytest

from sessionlab.tables._file import paused_collector


@pytest.fixture
def collector():
    was = gc.isenabled()
    gc.enable()
    yield
    gc.unfreeze()
    if not was:
        gc.disable()


class _Node:
    pass


def test_what_a_pause_made_is_old_and_still_collected(collector):
    with paused_collector():
        assert not gc.isenabled()
        a, b = _Node(), _Node()
        a.other, b.other = b, a  # (a cycle: reference counting never frees it)
    assert gc.isenabled()
    assert any(o is a for o in gc.get_objects(generation=2))
    assert not any(o is a for o in gc.get_objects(generation=0))
    n = len(gc.get_objects(generation=0))
    assert n < 1000  # (nothing the pause made is young)
    ids = {id(a), id(b)}
    del a, b
    gc.collect()
    assert not any(id(o) in ids and isinstance(o, _Node) for o in gc.get_objects())


def test_objects_the_caller_froze_stay_frozen(collector):
    keep = [_Node() for _ in range(10)]
    gc.freeze()
    frozen = gc.get_freeze_count()
    with paused_collector():
        made = _Node()
    assert gc.get_freeze_count() == frozen
    assert gc.isenabled() and keep and made


def test_a_nested_pause_resumes_once(collector):
    with paused_collector():
        with paused_collector():
            pass
        assert not gc.isenabled()
    assert gc.isenabled()
