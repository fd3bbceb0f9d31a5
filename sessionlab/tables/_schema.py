"""The columns of every table, declared once as data: name, Arrow type and meaning.

This module is the single place table column names and types live. Loaders build their Arrow
schemas from it and the public functions render their docstrings' column lists from it, so code,
schema and documentation cannot drift apart.

Conventions shared by all tables:

- ``session_id`` + ``entry_id`` join every table; ``session_id`` is the header id (null for a file
  without a valid header, which then has a ``missing_header`` issue).
- Entry columns are snake_case whatever the file's dialect; ``type`` and ``role`` keep their on-disk
  spelling (``toolResult``, ``thinking_level_change``).
- A value of the wrong JSON type for its column (a string where a number belongs...) is null.
- Character counts are JavaScript string lengths (UTF-16 code units), as pi measures text.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

__all__ = [
    "Column",
    "ENTRY_COLUMNS",
    "SESSION_COLUMNS",
    "BLOCK_COLUMNS",
    "ISSUE_COLUMNS",
    "LABEL_COLUMNS",
    "ENTRY_SCHEMA",
    "SESSION_SCHEMA",
    "BLOCK_SCHEMA",
    "ISSUE_SCHEMA",
    "TIMESTAMP",
    "columns_doc",
    "schema_of",
    "PI_TYPES",
]

TIMESTAMP = pa.timestamp("ms", tz="UTC")

#: the entry types of pi's files (pi 1.6's included) that the fast paths read; the C scanner's
#: ``ENTRY_TYPES`` must be the same (checked when :mod:`._native` is imported)
PI_TYPES = frozenset({"message", "thinking_level_change", "model_change", "compaction", "branch_summary",
                      "custom", "custom_message", "label", "session_info", "usage", "context_edit"})


@dataclass(frozen=True, slots=True)
class Column:
    """One column: its ``name``, Arrow ``type`` and a one-line ``doc``."""

    name: str
    type: pa.DataType
    doc: str


_S, _I32, _I64, _F64, _B = pa.string(), pa.int32(), pa.int64(), pa.float64(), pa.bool_()

ENTRY_COLUMNS: tuple[Column, ...] = (
    Column("session_id", _S, "Session id from the file's header."),
    Column("file", _S, "Path of the session file, as found."),
    Column("line_no", _I32, "1-based line of the entry in its file."),
    Column("entry_id", _S, "Entry id (v1 files get pi's counter ids 00000001... on migration)."),
    Column("parent_id", _S, "Parent entry id; null for a root."),
    Column("entry_index", _I32, "0-based position of the entry among its file's entries."),
    Column("parent_index", _I32, "entry_index of the parent in the same file (the later entry when an id "
           "repeats, as pi's index; never a seed leaf record); null for a root or a missing parent. "
           "The ids mapped to rows once, at load."),
    Column("type", _S, "Entry type as written (message, compaction, label...)."),
    Column("timestamp", TIMESTAMP, "Entry timestamp (ISO-8601 parsed to UTC; naive means UTC; sub-ms "
           "digits truncated; unparseable is null)."),
    Column("role", _S, "Message role (user, assistant, toolResult, bashExecution, custom...) of "
           "message entries."),
    Column("provider", _S, "Provider of an assistant message, a model_change or a usage entry."),
    Column("model", _S, "Model of an assistant message or a usage entry, or modelId of a model_change."),
    Column("api", _S, "API of an assistant message."),
    Column("stop_reason", _S, "stopReason of an assistant message."),
    Column("input_tokens", _I64, "usage.input of an assistant message, a usage entry, or the summary call "
           "a compaction or branch_summary records (see usage_kind)."),
    Column("output_tokens", _I64, "usage.output of the same usage."),
    Column("cache_read_tokens", _I64, "usage.cacheRead of the same usage."),
    Column("cache_write_tokens", _I64, "usage.cacheWrite of the same usage."),
    Column("total_tokens", _I64, "usage.totalTokens as written (missing in old files)."),
    Column("context_tokens", _I64, "pi's calculateContextTokens(usage): totalTokens if non-zero, else "
           "the sum of the four parts."),
    Column("cost_usd", _F64, "usage.cost.total of the same usage, USD."),
    Column("est_tokens", _I64, "pi's estimateTokens of the message the entry gives the context: "
           "message entries, custom_message (role custom), branch_summary and compaction (their "
           "summary); for a context_edit that replaces, the estimate of its target's message with the "
           "replacement content; null for other types. Under the table's rules (see table_rules)."),
    Column("tool_name", _S, "toolName of a toolResult message."),
    Column("tool_call_count", _I32, "Number of toolCall blocks of an assistant message."),
    Column("is_error", _B, "isError of a toolResult message."),
    Column("error_message", _S, "errorMessage of an assistant message."),
    Column("thinking_level", _S, "thinkingLevel of a thinking_level_change."),
    Column("first_kept_entry_id", _S, "firstKeptEntryId of a compaction."),
    Column("tokens_before", _I64, "tokensBefore of a compaction."),
    Column("from_id", _S, "fromId of a branch_summary."),
    Column("target_id", _S, "targetId of a label or a context_edit (or of a seed leaf record)."),
    Column("label", _S, "label of a label entry (null or empty clears the label)."),
    Column("custom_type", _S, "customType of a custom or custom_message entry, or of a custom-role "
           "message."),
    Column("summary_chars", _I64, "Length of the summary of a compaction or branch_summary."),
    Column("retained_tail_messages", _I32, "Number of messages a compaction carries in the seed's "
           "retained_tail, or in a v4 file's retainedTail that its harness sends (failed assistants left "
           "out); null without one. On a context_edit that replaces the content of such a compaction, the "
           "three retained_tail columns describe the tail with the replacement applied."),
    Column("retained_tail_est_tokens", _I64, "Sum of pi's per-message estimates of those messages."),
    Column("retained_tail_context_tokens", _I64, "pi's estimateContextTokens of those messages alone when "
           "one of them is a valid assistant with usage (its usage plus the estimates after it); else null."),
    Column("name", _S, "name of a session_info entry."),
    Column("response_model", _S, "responseModel of an assistant message: the model that answered, when "
           "the provider reports one (it can differ from the model asked, in model)."),
    Column("reasoning_tokens", _I64, "usage.reasoning: the reasoning part of output_tokens, where reported."),
    Column("cache_write_1h_tokens", _I64, "usage.cacheWrite1h: the part of cache_write_tokens written with a "
           "1-hour lifetime, where reported."),
    Column("usage_kind", _S, "What the row's usage paid for: 'message' for an assistant call; for spend "
           "that is not a message the usage entry's kind (e.g. 'title', 'summary', 'import'; 'usage' when "
           "it has none), 'compaction' or 'branch_summary' for the summary call those entries record. "
           "Null without usage. The token and cost columns hold each such spend once."),
    Column("image_count", _I32, "Image blocks in the content of a message or custom_message entry."),
    Column("edit_action", _S, "'replace' or 'remove' for a context_edit entry (the target in target_id)."),
    Column("system_est_tokens", _I64, "pi 1.6's estimate of the current system message: at a system "
           "message, all system messages from the compaction in effect down to it replayed into one (pi-ai's "
           "getCurrentSystemMessage); at a compaction, its systemMessage. Null elsewhere."),
    Column("system_json", _S, "pi 1.6's system message as JSON in pi's spelling (camelCase; a seed file's "
           "snake_case is respelt): the message of a system-message entry, the systemMessage of a compaction "
           "that carries one; null elsewhere. What the analyses replay when an edit removes one."),
    Column("never_in_context", _B, "True for an entry its agent never sends to the model, on any branch: in "
           "pi's v4 harness files, assistant messages that stopped with error, aborted or deferred. Null "
           "otherwise."),
    # Claude Code and Codex
    Column("cost_source", _S, "Where cost_usd comes from: 'recorded' (written in the file: pi, old "
           "Claude Code costUSD), 'priced' (computed from the tokens with the genai-prices table), "
           "'fallback' (a Codex call in a rollout that names no model, priced as gpt-5, its releases' "
           "default, as ccusage does), 'unknown' (a call whose model has no price: cost_usd is null, "
           "never a silent zero); null for rows without usage."),
    Column("agent", _S, "Agent that wrote the file: 'pi', 'claude-code' or 'codex'."),
    Column("side_node", _B, "A node kept in the tree that is not part of the conversation (Claude Code "
           "progress, attachments and system notes, Codex turn contexts): it never counts as a leaf."),
    Column("is_sidechain", _B, "Claude Code isSidechain (subagent and /btw transcripts)."),
    Column("message_id", _S, "Claude Code message.id of an assistant line (one id per API response; "
           "its streaming lines share it)."),
    Column("request_id", _S, "Claude Code requestId of an assistant line."),
    Column("tokens_after", _I64, "The agent's own post-compaction token figure of a compaction "
           "(Claude Code compactMetadata.postTokens)."),
    Column("root_session_id", _S, "Top session of a spawn tree: the spawning session for a Claude Code "
           "subagent file, the parent thread for a Codex sub-agent thread, else session_id."),
    Column("subagent_type", _S, "The subagent_type the spawning Task/Agent call asked for, on every row of "
           "a Claude Code subagent file; null elsewhere."),
)

SESSION_COLUMNS: tuple[Column, ...] = (
    Column("session_id", _S, "Header id."),
    Column("file", _S, "Path of the session file."),
    Column("version", _I32, "Format version as written (1 when absent; 4 for pi's v4 harness files)."),
    Column("dialect", _S, "'pi' (camelCase) or 'seed' (snake_case)."),
    Column("cwd", _S, "Working directory from the header."),
    Column("parent_session", _S, "Header parentSession (the parent file's path after a fork)."),
    Column("header_timestamp", TIMESTAMP, "Header timestamp."),
    Column("name", _S, "pi 1.6's session name: the latest session_info's name, trimmed; an empty one "
           "clears it (v4: the pi.session.name value)."),
    Column("first_timestamp", TIMESTAMP, "Earliest entry timestamp."),
    Column("last_timestamp", TIMESTAMP, "Latest entry timestamp."),
    Column("entry_count", _I64, "Number of entries."),
    Column("message_count", _I64, "Number of message entries."),
    Column("leaf_id", _S, "The current leaf, pi's leaf after loading: the last conversation entry in file "
           "order (a seed leaf record moves it to its target; v4: the tip of branch main, else the tip set "
           "last)."),
    Column("leaf_count", _I64, "Leaves: conversation entries that are no conversation entry's parent "
           "(leaf records and side nodes excluded; v4: the number of distinct branch tips)."),
    Column("fork_count", _I64, "Fork points: conversation entries with two or more conversation children."),
    Column("call_count", _I64, "Calls: assistant messages sent to the model, by the agent's rule (every "
           "assistant message of a pi file; in Claude Code and Codex files those carrying usage)."),
    Column("compaction_count", _I64, "Number of compaction entries."),
    Column("branch_summary_count", _I64, "Number of branch_summary entries."),
    Column("input_tokens", _I64, "Sum of input_tokens over every usage of the file (all branches; calls and "
           "other spend, see usage_kind)."),
    Column("output_tokens", _I64, "Sum of output_tokens."),
    Column("cache_read_tokens", _I64, "Sum of cache_read_tokens."),
    Column("cache_write_tokens", _I64, "Sum of cache_write_tokens."),
    Column("total_tokens", _I64, "Sum of context_tokens (totalTokens, or the parts when missing)."),
    Column("cost_usd", _F64, "Sum of cost_usd, USD (pi's footer total)."),
    Column("issue_count", _I64, "Number of line issues found in the file."),
    Column("loader", _S, "Which path loaded the file: 'native' (the C scanner), 'msgspec' (the Python "
           "fast path), 'objects' (the tolerant object-model path, for damaged or unusual files) or 'agent' "
           "(the Claude Code or Codex reader)."),
    Column("agent", _S, "Agent that wrote the file: 'pi', 'claude-code' or 'codex' (detected per file)."),
    Column("agent_version", _S, "The agent's version where the file has it (Claude Code version, Codex "
           "cli_version)."),
    Column("parent_session_id", _S, "The session this one was spawned or forked from: the spawning "
           "session of a Claude Code subagent, a Codex parent_thread_id or forked_from_id, a Claude "
           "Code forkedFrom.sessionId."),
    Column("parent_tool_call_id", _S, "The tool call that spawned this session (Claude Code Task/Agent "
           "tool_use id), where known."),
)

BLOCK_COLUMNS: tuple[Column, ...] = (
    Column("session_id", _S, "Header id."),
    Column("entry_id", _S, "Entry holding the block (a message or custom_message entry)."),
    Column("role", _S, "Message role (custom for custom_message entries)."),
    Column("block_index", _I32, "0-based position in the content list (a string content is one "
           "text block at index 0)."),
    Column("block_type", _S, "text, thinking, image, toolCall, toolResult (a Claude Code tool_result or "
           "Codex tool output), or the unknown type as written."),
    Column("tool_name", _S, "name of a toolCall block."),
    Column("tool_call_id", _S, "id of a toolCall block (joins the toolResult's tool call)."),
    Column("chars", _I64, "Characters pi's estimate counts for the block in its message: text, "
           "thinking, tool name + JSON arguments; 4800 for an image in a toolResult or custom "
           "message, 0 in a user message."),
)

ISSUE_COLUMNS: tuple[Column, ...] = (
    Column("file", _S, "Path of the file."),
    Column("line", _I32, "1-based line number."),
    Column("kind", _S, "Issue kind (see sessionlab.pi.io.reader; 'read_error' when the file failed)."),
    Column("message", _S, "What is wrong."),
    Column("excerpt", _S, "The start of the line."),
    Column("entry_id", _S, "Entry concerned, when known."),
)


LABEL_COLUMNS: tuple[Column, ...] = (
    Column("session_id", _S, "Header id."),
    Column("file", _S, "Path of the session file."),
    Column("target_id", _S, "The labelled entry."),
    Column("label", _S, "Its label in effect: the last label entry's, when non-empty (pi's getLabel)."),
)


def schema_of(columns: tuple[Column, ...]) -> pa.Schema:
    """The Arrow schema of a column list."""
    return pa.schema([pa.field(c.name, c.type) for c in columns])


ENTRY_SCHEMA = schema_of(ENTRY_COLUMNS)
SESSION_SCHEMA = schema_of(SESSION_COLUMNS)
BLOCK_SCHEMA = schema_of(BLOCK_COLUMNS)
ISSUE_SCHEMA = schema_of(ISSUE_COLUMNS)


def columns_doc(columns: tuple[Column, ...], indent: int = 8) -> str:
    """Google-style lines ``name (type): doc`` for a docstring's column list."""
    pad = " " * indent
    return "\n".join(f"{pad}{c.name} ({c.type}): {c.doc}" for c in columns)
