"""The session layer against pi's own results on every sample file and leaf."""

from __future__ import annotations

import pytest

from sessionlab import message_to_dict, open_session
from sessionlab.pi.context import (
    SessionContextBuildOptions,
    build_session_context,
    iso_to_ms,
    merge_context_build_options,
)
from sessionlab.pi.model import (
    AssistantMessage,
    CompactionEntry,
    CustomEntry,
    CustomMessage,
    MessageEntry,
    ModelChangeEntry,
    ThinkingLevelChangeEntry,
    UserMessage,
)
from sessionlab.pi.tokens import estimate_context_tokens, estimate_tokens
from tests._pi_expected import PI, leaf_cases, valid_expected

_SESSIONS: dict = {}


def _session(exp: dict):
    if exp["file"] not in _SESSIONS:
        _SESSIONS[exp["file"]] = open_session(PI / exp["file"], on_bad_lines="skip")
    return _SESSIONS[exp["file"]]


@pytest.mark.parametrize("stem,exp", valid_expected(), ids=[s for s, _ in valid_expected()])
def test_session_level_values_match_pi(stem, exp):
    s = _session(exp)
    st = s.storage
    assert st.get_leaf_id() == exp["defaultLeafId"]
    assert dict(st.labels_by_id) == exp["labels"]
    assert s.get_session_name() == exp["sessionName"]
    assert len(st.entries) == exp["entryCount"]
    assert st.get_session_stats().entries_by_type == exp["entryTypeCounts"]


CASES = leaf_cases()


@pytest.mark.parametrize("case,exp,leaf", CASES, ids=[c for c, _, _ in CASES])
def test_branch_and_context_match_pi(case, exp, leaf):
    s = _session(exp)
    assert [e.id for e in s.get_branch(leaf["leafId"])] == leaf["branchIds"]
    ctx = s.build_context(leaf_id=leaf["leafId"], rules="pi-0.58")
    want = leaf["context"]
    assert [message_to_dict(m) for m in ctx.messages] == want["messages"]
    assert len(ctx.messages) == want["messageCount"]
    assert ctx.thinking_level == want["thinkingLevel"]
    model = None if ctx.model is None else {"provider": ctx.model.provider, "modelId": ctx.model.model_id}
    assert model == want["model"]
    assert [estimate_tokens(m, rules="pi-0.58") for m in ctx.messages] == leaf["compaction"]["perMessageEstimatedTokens"]
    est = estimate_context_tokens(ctx.messages, rules="pi-0.58")
    ce = leaf["compaction"]["contextEstimate"]
    assert (est.tokens, est.usage_tokens, est.trailing_tokens, est.last_usage_index) == (
        ce["tokens"], ce["usageTokens"], ce["trailingTokens"], ce["lastUsageIndex"])


def test_current_leaf_report_is_the_default_leaf():
    for _, exp in valid_expected():
        s = _session(exp)
        ctx = s.build_context(rules="pi-0.58")
        assert len(ctx.messages) == exp["current"]["context"]["messageCount"]


def _user(eid, parent, text):
    return MessageEntry(id=eid, parent_id=parent, timestamp="2026-01-01T00:00:00.000Z",
                        message=UserMessage(content=text, timestamp=0))


def _asst(eid, parent, provider="p", model="m"):
    return MessageEntry(id=eid, parent_id=parent, timestamp="2026-01-01T00:00:01.000Z",
                        message=AssistantMessage(content=(), provider=provider, model=model, stop_reason="stop"))


def test_only_the_last_compaction_counts_and_older_ones_inside_the_kept_range_are_silent():
    path = [
        _user("u1", None, "one"), _asst("a1", "u1"),
        CompactionEntry(id="c1", parent_id="a1", summary="S1", first_kept_entry_id="u1", tokens_before=10),
        _user("u2", "c1", "two"), _asst("a2", "u2"),
        CompactionEntry(id="c2", parent_id="a2", summary="S2", first_kept_entry_id="u1", tokens_before=20),
        _user("u3", "c2", "three"),
    ]
    msgs = build_session_context(path).messages
    assert [m.role for m in msgs] == ["compactionSummary", "user", "assistant", "user", "assistant", "user"]
    assert msgs[0].summary == "S2" and msgs[0].tokens_before == 20


def test_first_kept_not_on_path_keeps_nothing_before_the_compaction():
    path = [_user("u1", None, "one"),
            CompactionEntry(id="c1", parent_id="u1", summary="S", first_kept_entry_id="zz", tokens_before=1),
            _user("u2", "c1", "two")]
    assert [m.role for m in build_session_context(path).messages] == ["compactionSummary", "user"]


def test_retained_tail_replaces_first_kept():
    tail = (UserMessage(content="kept", timestamp=1),)
    path = [_user("u1", None, "one"), _asst("a1", "u1"),
            CompactionEntry(id="c1", parent_id="a1", summary="S", first_kept_entry_id="u1", tokens_before=1,
                            retained_tail=tail),
            _user("u2", "c1", "after")]
    msgs = build_session_context(path).messages
    assert [getattr(m, "content", None) for m in msgs[1:]] == ["kept", "after"]


def test_settings_are_derived_over_the_whole_path_even_before_a_compaction():
    path = [ThinkingLevelChangeEntry(id="t", thinking_level="high"),
            ModelChangeEntry(id="m", parent_id="t", provider="openai", model_id="gpt"),
            _user("u1", "m", "x"),
            CompactionEntry(id="c", parent_id="u1", summary="S", first_kept_entry_id=None, tokens_before=1)]
    ctx = build_session_context(path)
    assert ctx.thinking_level == "high"
    assert (ctx.model.provider, ctx.model.model_id) == ("openai", "gpt")
    assert [m.role for m in ctx.messages] == ["compactionSummary"]


def test_transforms_and_projectors_and_their_merge():
    path = [_user("u1", None, "x"), CustomEntry(id="c", parent_id="u1", custom_type="note", data={"t": "hi"})]

    def project(entry, index, entries):
        return [CustomMessage(custom_type="note", content=entry.data["t"], display=False)]

    def drop_users(entries):
        return [e for e in entries if not isinstance(e, MessageEntry)]

    base = SessionContextBuildOptions(entry_projectors={"note": project})
    assert [m.role for m in build_session_context(path).messages] == ["user"]
    assert [m.role for m in build_session_context(path, base).messages] == ["user", "custom"]
    merged = merge_context_build_options(base, SessionContextBuildOptions(entry_transforms=(drop_users,)))
    assert [m.content for m in build_session_context(path, merged).messages] == ["hi"]


@pytest.mark.parametrize("ts,ms", [
    ("2026-01-15T10:00:01.000Z", 1768471201000),
    ("1970-01-01T00:00:00.001Z", 1),
    ("1969-12-31T23:59:59.999Z", -1),
    ("2026-01-15T11:00:01.000+01:00", 1768471201000),
    ("not a date", None),
])
def test_iso_to_ms_is_javascript_date_parse(ts, ms):
    assert iso_to_ms(ts) == ms
