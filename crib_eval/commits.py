"""Silence on real text no one here wrote: public repositories' commit subjects as prompts.

``data/noanswer_commits.jsonl`` (made by ``bench/noanswer_commits.py``; each line names its
repository, commit and licence — MIT, BSD-3-Clause, Apache-2.0) holds 40 commit subjects from each
of four public projects in the coding set's stacks (a Rust CLI, a Python HTTP library, Terraform
for EKS, a TypeScript library). They are real task prompts, and none of the coding set's memories
— a different team's projects — answers them. Each runs through ``Memory.retrieve`` on the coding
set's store (the hook's path, ``CRIB_NOW`` fixed): a prompt passes when nothing is injected.
The split is by repository (two dev, two test; :mod:`.splits`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .coding_metrics import CHARS_PER_TOKEN
from .splits import dev_keys

DATA_FILE = Path(__file__).resolve().parent / "data" / "noanswer_commits.jsonl"


@dataclass
class CommitsReport:
    """Per prompt: the repository, the block's entries and pointers, its size."""

    split: str
    rows: list[dict[str, Any]] = field(default_factory=list)

    def table(self, *, offenders: int = 0) -> str:
        n = len(self.rows)
        silent = sum(1 for r in self.rows if not r["entries"])
        nothing = sum(1 for r in self.rows if not r["chars"])
        tokens = sum(r["chars"] for r in self.rows) / CHARS_PER_TOKEN / max(1, n)
        lines = [f"Real-text no-answer set (commit subjects, {self.split} split): {n} prompts on the coding store", "",
                 "| repository | n | silence % (no entry) | silence % (nothing: no entry, pointer or fact) |", "|---|---|---|---|"]
        for repo in sorted({r["repo"] for r in self.rows}):
            group = [r for r in self.rows if r["repo"] == repo]
            lines.append(f"| {repo} | {len(group)} | {100 * sum(not r['entries'] for r in group) / len(group):.1f} "
                         f"| {100 * sum(not r['chars'] for r in group) / len(group):.1f} |")
        lines.append(f"| **all** | {n} | {100 * silent / max(1, n):.1f} | {100 * nothing / max(1, n):.1f} |")
        lines += ["", f"Mean block: {tokens:.0f} tokens (characters / {CHARS_PER_TOKEN}, 0 when silent)."]
        worst = [r for r in self.rows if r["chars"]][:offenders]
        for r in worst:
            lines.append(f"- {r['prompt']!r} ({r['repo']}): {len(r['entries'])} entries, {len(r['pointers'])} pointers — "
                         + "; ".join(c[:80] for c in r["contents"][:3]))
        return "\n".join(lines)


def load(split: str = "all", path: Path = DATA_FILE) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    if split == "all":
        return rows
    dev = dev_keys("commits", [r["repo"] for r in rows])
    return [r for r in rows if (r["repo"] in dev) == (split == "dev")]


def run(*, split: str = "all", cache_dir: Path = Path(".state/eval"), rebuild: bool = False, progress: Any = None) -> CommitsReport:
    """Every commit subject of ``split`` through ``retrieve`` on the coding set's store."""
    from . import coding
    from .noanswer_inject import inject, open_memory

    data = coding.load(coding.DATA_DIR)
    db, _ = coding.prepare_store(data, cache_dir, rebuild=rebuild, progress=progress)
    report = CommitsReport(split)
    with coding.fixed_now(data.now), open_memory(db) as memory:
        for row in load(split):
            injection = inject(memory, row["prompt"], "coding")
            report.rows.append({**row, "entries": injection.entry_ids, "pointers": injection.pointer_ids,
                                "chars": injection.block_chars, "contents": injection.contents})
    return report
