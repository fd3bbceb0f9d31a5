"""Measure redaction's false positives on the repository's ordinary sessions (data/ and tests/data/).

These files hold no real secret, so whatever the secret detectors flag in them is a false positive.
The privacy rules (home paths, user names, host names, emails, private IPs) are counted apart: they
replace what they are meant to. The figures go into docs/redaction.md.

    python tools/redaction_false_positives.py [--show N]
"""

from __future__ import annotations

import argparse
import re
import time
from collections import Counter
from pathlib import Path

from sessionlab.redaction import redact

ROOT = Path(__file__).resolve().parent.parent
PRIVACY = {"home-path", "user", "host", "email", "private-ip", "public-ip"}


def measure(folder: Path, show: int) -> None:
    t = time.perf_counter()
    r = redact(folder)
    seconds = time.perf_counter() - t
    rows = r.redactions.to_pylist()
    secret = [x for x in rows if x["kind"] not in PRIVACY]
    values = r.texts.num_rows
    flagged_values = {(x["file"], x["line_no"], x["column"]) for x in secret if x["source"] == "file"}
    chars = sum(len(t) for t in r.texts["text"].to_pylist())
    print(f"{folder.relative_to(ROOT)}: {len(r.sessions)} sessions, {values:,} text values, "
          f"{chars / 1e6:.1f} M characters, {seconds:.1f} s")
    print(f"  secret detectors: {len(flagged_values):,} text values flagged ({len(flagged_values) / values:.3%}), "
          f"{len({x['placeholder'] for x in secret}):,} distinct values")
    for kind, n in Counter(x["placeholder"].rsplit("-", 1)[0][10:] for x in secret).most_common():
        print(f"    {kind}: {n} occurrences")
    privacy = Counter(x["kind"] for x in rows if x["kind"] in PRIVACY)
    print(f"  privacy rules (meant to replace): {dict(privacy)}")
    if show:
        seen: Counter[str] = Counter()
        for text in r.texts["text"].to_pylist():
            for m in re.finditer(r"\[REDACTED-([a-z0-9-]+?)-\d+\]", text):
                if m.group(1) not in PRIVACY and seen[m.group(1)] < show:
                    seen[m.group(1)] += 1
                    print(f"    e.g. {m.group(1)}: {text[max(0, m.start() - 60):m.end() + 20]!r}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--show", type=int, default=0, help="print this many examples of each kind flagged")
    args = ap.parse_args()
    for folder in (ROOT / "data", ROOT / "tests" / "data"):
        measure(folder, args.show)


if __name__ == "__main__":
    main()
