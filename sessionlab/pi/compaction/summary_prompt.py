"""pi's summarisation prompt (pi 1.6.0, ``core/compaction``), whose size a simulated compaction pays.

pi sends a summary request as its ``SUMMARIZATION_SYSTEM_PROMPT`` plus one user message,
``<conversation>\n{the messages, serialized}\n</conversation>\n\n`` followed by
``SUMMARIZATION_PROMPT`` (a later compaction adds the previous summary in ``<previous-summary>``
tags and asks with the slightly longer update prompt; the previous summary is part of the context
being summarised, so the replay counts it with the messages). :data:`SUMMARY_PROMPT_TOKENS` is the
fixed part, estimated the way pi estimates text (``ceil(chars / 4)`` per message): the one number
the simulation adds to the summarised tokens for a summary call's prompt.

The two prompt texts are pi's (MIT License, Copyright (c) 2025 Mario Zechner; the notice is at the end of this module),
quoted so their size is counted exactly.
"""

from __future__ import annotations

from ..._jsjson import js_len
from ..rules import CHARS_PER_TOKEN

SUMMARIZATION_SYSTEM_PROMPT = (
    'You are a context summarization assistant. Your task is to read a conversation between a user and '
    'an AI assistant, then produce a structured summary following the exact format specified.\n'
    '\n'
    'Do NOT continue the conversation. Do NOT respond to any questions in the conversation. ONLY output '
    'the structured summary.'
)

SUMMARIZATION_PROMPT = (
    'The messages above are a conversation to summarize. Create a structured context checkpoint summary '
    'that another LLM will use to continue the work.\n'
    '\n'
    'Use this EXACT format:\n'
    '\n'
    '## Goal\n'
    '[What is the user trying to accomplish? Can be multiple items if the session covers different '
    'tasks.]\n'
    '\n'
    '## Constraints & Preferences\n'
    '- [Any constraints, preferences, or requirements mentioned by user]\n'
    '- [Or "(none)" if none were mentioned]\n'
    '\n'
    '## Progress\n'
    '### Done\n'
    '- [x] [Completed tasks/changes]\n'
    '\n'
    '### In Progress\n'
    '- [ ] [Current work]\n'
    '\n'
    '### Blocked\n'
    '- [Issues preventing progress, if any]\n'
    '\n'
    '## Key Decisions\n'
    '- **[Decision]**: [Brief rationale]\n'
    '\n'
    '## Next Steps\n'
    '1. [Ordered list of what should happen next]\n'
    '\n'
    '## Critical Context\n'
    '- [Any data, examples, or references needed to continue]\n'
    '- [Or "(none)" if not applicable]\n'
    '\n'
    'Keep each section concise. Preserve exact file paths, function names, and error messages.'
)

#: the text around the serialized conversation in the user message
CONVERSATION_WRAPPER = "<conversation>\n" + "\n</conversation>\n\n"

#: estimated tokens of a summary call's prompt besides the summarised messages
SUMMARY_PROMPT_TOKENS: int = (-(-js_len(SUMMARIZATION_SYSTEM_PROMPT) // CHARS_PER_TOKEN)
                              - (-(js_len(CONVERSATION_WRAPPER) + js_len(SUMMARIZATION_PROMPT)) // CHARS_PER_TOKEN))


# pi's licence, for the two prompt texts above:
#
# MIT License
#
# Copyright (c) 2025 Mario Zechner
#
# Permission is hereby granted, free of charge, to any person obtaining a copy
# of this software and associated documentation files (the "Software"), to deal
# in the Software without restriction, including without limitation the rights
# to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
# copies of the Software, and to permit persons to whom the Software is
# furnished to do so, subject to the following conditions:
#
# The above copyright notice and this permission notice shall be included in all
# copies or substantial portions of the Software.
#
# THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
# IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
# FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
# AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
# LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
# OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
# SOFTWARE.
