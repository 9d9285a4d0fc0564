"""Derive the real-text no-answer set from public repositories' commit subjects.

    python bench/noanswer_commits.py OWNER/NAME=GITDIR:LICENCE ... > crib_eval/data/noanswer_commits.jsonl

For each repository (a clone or bare git directory), its non-merge commit subjects are read with
``git log --format=%H%x09%s``; release and dependency-bump subjects are skipped (they are not tasks
a user would type), a trailing ``(#123)`` is removed, subjects under 20 or over 120 characters are
skipped, and 40 are kept per repository in a fixed order (the SHA-256 of the subject). Each line
records the repository, the commit and its licence, so every prompt can be traced to its author.
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys

PER_REPO = 40
SKIP = re.compile(r"^(v?\d+\.\d+|release|bump |chore\(release\)|chore\(deps|update dependencies|merge |revert )|\d+\.\d+\.\d+$", re.I)


def subjects(git_dir: str) -> list[tuple[str, str]]:
    out = subprocess.run(["git", "-C", git_dir, "log", "--no-merges", "--format=%H%x09%s"], check=True,
                         capture_output=True, text=True).stdout
    found: dict[str, str] = {}
    for line in out.splitlines():
        commit, _, subject = line.partition("\t")
        subject = re.sub(r"\s*\(#\d+\)\s*$", "", subject).strip()
        if SKIP.search(subject) or not 20 <= len(subject) <= 120:
            continue
        found.setdefault(subject, commit)
    return [(s, c) for s, c in found.items()]


def main(argv: list[str]) -> None:
    for spec in argv:
        repo, _, rest = spec.partition("=")
        git_dir, _, licence = rest.rpartition(":")
        chosen = sorted(subjects(git_dir), key=lambda sc: hashlib.sha256(sc[0].encode()).hexdigest())[:PER_REPO]
        for subject, commit in chosen:
            print(json.dumps({"prompt": subject, "repo": repo, "commit": commit, "licence": licence}, ensure_ascii=False))


if __name__ == "__main__":
    main(sys.argv[1:])
