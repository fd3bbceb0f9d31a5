"""Reading and writing session files in pi's and the seed's JSONL dialects."""

from .dialects import (
    Dialect,
    detect_dialect,
    entry_from_dict,
    entry_to_dict,
    header_from_dict,
    header_to_dict,
    message_from_dict,
    message_to_dict,
)
from .reader import LineIssue, OnBadLines, SessionFile, parse_session_bytes, read_session
from .writer import SessionWriter, to_line, write_session

__all__ = [
    "Dialect", "detect_dialect", "entry_from_dict", "entry_to_dict", "header_from_dict",
    "header_to_dict", "message_from_dict", "message_to_dict", "LineIssue", "OnBadLines",
    "SessionFile", "parse_session_bytes", "read_session", "SessionWriter", "to_line",
    "write_session",
]
