"""Reading the evaluation sets' JSONL files: one object a line, a bad line named by file and number."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def read_objects(path: Path, error: type[Exception] = ValueError) -> list[dict[str, Any]]:
    """The JSON objects of ``path`` (blank lines skipped); ``error`` names the first bad line."""
    rows: list[dict[str, Any]] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise error(f"{path.name}:{number}: not JSON ({exc})") from exc
        if not isinstance(row, dict):
            raise error(f"{path.name}:{number}: expected a JSON object")
        rows.append(row)
    return rows
