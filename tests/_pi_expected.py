"""Helpers to load pi's expected results (tests/data/pi/expected)."""

from __future__ import annotations

import json
from pathlib import Path

PI = Path(__file__).parent / "data" / "pi"
EXPECTED = sorted((PI / "expected").glob("*__*.json"))


def load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def valid_expected() -> list[tuple[str, dict]]:
    out = []
    for p in EXPECTED:
        exp = load(p)
        if exp["valid"]:
            out.append((p.stem, exp))
    return out


def leaf_cases() -> list[tuple[str, dict, dict]]:
    return [(f"{stem}:{leaf['leafId']}", exp, leaf) for stem, exp in valid_expected() for leaf in exp["leaves"]]
