"""The coding-agent evaluation set: its records, loading from JSONL, validation and fingerprint.

Split from :mod:`crib_eval.coding` (which re-exports these names and runs the set).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from crib_plugin.core.cues import with_cue
from crib_plugin.core.errors import ConfigError

DATA_DIR = Path(__file__).resolve().parent / "data" / "coding"

KINDS = ("task", "question", "paraphrase", "identifier", "time", "stale", "preference", "noanswer")

MEMORY_TYPES = ("note", "decision", "correction", "error", "preference")

SPLITS = ("dev", "test")

BUILD_VERSION = "1"  # bump when the way memories become entries changes

CHANNELS = ("fts", "vector", "facts")

Progress = Callable[[str], None]


class CodingDataError(ConfigError):
    """The coding evaluation's data is malformed (unknown key, kind, split, broken supersede link)."""


@dataclass(frozen=True)
class CodingMemory:
    """One memory of the coding agent, with its stable key and what it supersedes (if anything)."""

    key: str
    project: str
    type: str
    created_at: str
    content: str
    supersedes: str | None = None
    when: str | None = None
    """The recall cue the agent wrote with the memory (:mod:`crib_plugin.core.cues`). The set's cues were
    written blind — from each memory alone, as the skill asks, never looking at the prompts."""

    def record(self, entry_types: Sequence[str]) -> dict[str, Any]:
        """The import record; a type crib does not know (``preference``) is stored as a ``note``."""
        kind = self.type if self.type in entry_types else "note"
        metadata = with_cue({"project": self.project}, self.when)
        return {"content": self.content, "type": kind, "created_at": self.created_at, "metadata": metadata}


@dataclass(frozen=True)
class CodingPrompt:
    """A prompt with its labels."""

    id: str
    prompt: str
    kind: str
    relevant: tuple[str, ...]
    acceptable: tuple[str, ...]
    split: str
    domain: str = ""  # noanswer only: "on" (a project task no memory covers) or "off"

    @property
    def answerable(self) -> bool:
        return bool(self.relevant)


@dataclass
class CodingSet:
    """Memories, prompts and the set's metadata (its fixed "now")."""

    memories: list[CodingMemory]
    prompts: list[CodingPrompt]
    meta: dict[str, Any]

    @property
    def now(self) -> str:
        return str(self.meta["now"])

    def without_cues(self) -> "CodingSet":
        """The same set as an agent that never wrote recall cues would have stored it."""
        from dataclasses import replace

        return CodingSet([replace(m, when=None) for m in self.memories], self.prompts, self.meta)

    def by_key(self) -> dict[str, CodingMemory]:
        return {m.key: m for m in self.memories}

    def current_of(self) -> dict[str, str]:
        """For every superseded key, the key of the newest memory of its chain (what is true now)."""
        successor = {m.supersedes: m.key for m in self.memories if m.supersedes}
        heads: dict[str, str] = {}
        for key in successor:
            head, seen = key, set()
            while head in successor and head not in seen:
                seen.add(head)
                head = successor[head]
            heads[key] = head
        return heads


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    from .jsonl import read_objects

    return read_objects(path, CodingDataError)


def data_files(data_dir: Path = DATA_DIR) -> list[Path]:
    """The files that make up the set (memories, prompts, meta), in a stable order."""
    return [*sorted(data_dir.glob("memories-*.jsonl")), data_dir / "prompts.jsonl", data_dir / "meta.json"]


def load(data_dir: Path = DATA_DIR) -> CodingSet:
    """Read and validate the set; raises :class:`CodingDataError` on any inconsistency."""
    meta_path = data_dir / "meta.json"
    if not meta_path.exists():
        raise CodingDataError(f"coding evaluation data not found in {data_dir}")
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    memories = [
        CodingMemory(
            str(r["key"]), str(r["project"]), str(r["type"]), str(r["created_at"]), str(r["content"]),
            r.get("supersedes") or None, str(r["when"]) if r.get("when") else None,
        )
        for path in sorted(data_dir.glob("memories-*.jsonl"))
        for r in _read_jsonl(path)
    ]
    prompts = [
        CodingPrompt(
            str(r.get("id") or f"p{n:03d}"), str(r["prompt"]), str(r["kind"]), tuple(r.get("relevant") or ()),
            tuple(r.get("acceptable") or ()), str(r.get("split") or ""), str(r.get("domain") or ""),
        )
        for n, r in enumerate(_read_jsonl(data_dir / "prompts.jsonl"), start=1)
    ]
    data = CodingSet(memories, prompts, meta)
    validate(data)
    return data


def validate(data: CodingSet) -> None:
    """Keys unique, types/kinds/splits known, labels and supersede links point at existing memories."""
    keys: set[str] = set()
    for m in data.memories:
        if m.key in keys:
            raise CodingDataError(f"duplicate memory key {m.key}")
        keys.add(m.key)
        if m.type not in MEMORY_TYPES:
            raise CodingDataError(f"{m.key}: type {m.type!r} not in {MEMORY_TYPES}")
        if not m.content.strip():
            raise CodingDataError(f"{m.key}: empty content")
    by_key = data.by_key()
    for m in data.memories:
        if m.supersedes is not None:
            old = by_key.get(m.supersedes)
            if old is None:
                raise CodingDataError(f"{m.key} supersedes unknown key {m.supersedes}")
            if old.created_at >= m.created_at:
                raise CodingDataError(f"{m.key} supersedes {old.key}, which is not older")
    superseded = [m.supersedes for m in data.memories if m.supersedes]
    if len(superseded) != len(set(superseded)):
        raise CodingDataError("a memory is superseded twice (chains must be linear)")
    ids: set[str] = set()
    for p in data.prompts:
        if p.id in ids:
            raise CodingDataError(f"duplicate prompt id {p.id}")
        ids.add(p.id)
        if p.kind not in KINDS:
            raise CodingDataError(f"{p.id}: kind {p.kind!r} not in {KINDS}")
        if p.split not in SPLITS:
            raise CodingDataError(f"{p.id}: split {p.split!r} not in {SPLITS}")
        for key in (*p.relevant, *p.acceptable):
            if key not in keys:
                raise CodingDataError(f"{p.id}: unknown memory key {key}")
        if set(p.relevant) & set(p.acceptable):
            raise CodingDataError(f"{p.id}: a key is both relevant and acceptable")
        if (p.kind == "noanswer") == bool(p.relevant):
            raise CodingDataError(f"{p.id}: noanswer prompts, and only they, have no relevant memory")
        if p.kind == "noanswer" and p.domain not in ("on", "off"):
            raise CodingDataError(f"{p.id}: a noanswer prompt needs domain 'on' or 'off'")
    if "now" not in data.meta:
        raise CodingDataError("meta.json has no 'now'")


def fingerprint(data_dir: Path = DATA_DIR) -> str:
    """Hash of the data files and of crib's own source (outside ``evaluation/``): what the store depends on."""
    digest = hashlib.sha256()
    for path in data_files(data_dir):
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    package = Path(__file__).resolve().parent.parent / "crib_plugin"
    for path in sorted(package.rglob("*.py")):
        if "evaluation" in path.relative_to(package).parts:
            continue
        digest.update(str(path.relative_to(package)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:12]
