"""Import what users already have: crib's JSONL, Claude Code memory files, folders of markdown notes.

Claude Code keeps memory in markdown: ``CLAUDE.md`` at the project root or in ``.claude/``,
``CLAUDE.local.md`` (personal, not committed) and ``~/.claude/CLAUDE.md`` (the user's, for every
project — import that one with ``--global``). A folder of notes (Obsidian, a docs wiki, ADRs) is
the same shape. Each is split into self-contained memories, because one memory should hold one
fact and be understood without the file around it:

* a bullet (with its indented continuation and sub-bullets) is one memory; so is a paragraph;
* each memory is prefixed with its heading path (``Testing > Database: …``) so it keeps its context;
* a fenced code block is never split: it joins the bullet or paragraph it follows (``Run:``
  then the command), or stands alone;
* YAML-style front matter is read for ``date``/``created``/``created_at`` (the memories' date),
  ``type`` and ``tags``; the rest of the front matter is not stored as text;
* the type is inferred only where it is obvious — a ``Decision:``/``Error:``/``Correction:``/
  ``Preference:`` prefix, or a heading named like ``Decisions`` / ``Errors`` / ``Corrections`` /
  ``Preferences`` — and is ``note`` otherwise;
* Claude Code's ``@path`` import lines and HTML comments are not memories and are skipped.

Each record's metadata says where it came from (``source``, ``source_path``, ``heading``), which
``crib show`` prints; importing the same file twice stores nothing new (identical entries are
deduplicated).
"""

from __future__ import annotations

import io
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Iterable, Iterator

from ..core.errors import InputError
from ..core.limits import MAX_IMPORT_BYTES, MAX_IMPORT_FILES, MAX_IMPORT_LINE_BYTES, MAX_IMPORT_WALK, decode_input, parse_json
from ..core.records import ENTRY_TYPES

FORMATS = ("jsonl", "claude", "markdown")
MARKDOWN_SUFFIXES = (".md", ".markdown", ".mdx")
CLAUDE_NAMES = ("claude.md", "claude.local.md")
SKIP_DIRS = {".git", ".state", "node_modules", ".venv", "venv", "__pycache__", ".obsidian", ".trash"}

_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_BULLET = re.compile(r"^(\s*)([-*+]|\d+[.)])\s+(.*)$")
_FENCE = re.compile(r"^\s*(```+|~~~+)")
_IMPORT_LINE = re.compile(r"^\s*@\S+\s*$")
_PREFIX_TYPES = {
    "decision": "decision", "decided": "decision",
    "error": "error", "bug": "error", "fix": "error",
    "correction": "correction",
    "preference": "preference",
}
_HEADING_TYPES = {
    "decisions": "decision", "decision log": "decision", "architecture decisions": "decision",
    "errors": "error", "known errors": "error", "errors and fixes": "error", "troubleshooting": "error",
    "corrections": "correction",
    "preferences": "preference", "user preferences": "preference", "my preferences": "preference",
}
_DATE_KEYS = ("created_at", "created", "date", "updated")


@dataclass
class Unit:
    """One memory being assembled: its lines and the heading path above it."""

    heading: list[str]
    lines: list[str] = field(default_factory=list)
    kind: str = "paragraph"  # paragraph | bullet | code

    def text(self) -> str:
        return "\n".join(self.lines).strip()


def detect_format(path: Path, fmt: str | None = None) -> str:
    """``--format`` when given; else by name: a folder or ``.md`` → markdown (``CLAUDE.md``,
    ``CLAUDE.local.md`` or a file under ``.claude/`` → claude); anything else → jsonl."""
    if fmt:
        if fmt not in FORMATS:
            raise InputError(f"unknown import format {fmt!r} (use {', '.join(FORMATS)})")
        return fmt
    if str(path) == "-":
        return "jsonl"
    if path.is_dir():
        return "markdown"
    if path.name.lower() in CLAUDE_NAMES or ".claude" in path.parts:
        return "claude" if path.suffix.lower() in MARKDOWN_SUFFIXES else "jsonl"
    if path.suffix.lower() in MARKDOWN_SUFFIXES:
        return "markdown"
    return "jsonl"


# -- JSONL --------------------------------------------------------------------------------------


def jsonl_records(lines: Iterable[str | bytes]) -> list[dict[str, Any]]:
    """crib's export format, one JSON object a line; a bad line (invalid UTF-8, not JSON, a number
    of thousands of digits, nested too deeply) names its number and writes nothing."""
    records = []
    for number, raw in enumerate(lines, start=1):
        line = decode_input(raw, f"line {number}") if isinstance(raw, bytes) else raw
        if not line.strip():
            continue
        records.append(parse_json(line, f"line {number}"))
    return records


def bounded_lines(handle: BinaryIO, what: str) -> Iterator[bytes]:
    """The lines of ``handle``, each at most :data:`MAX_IMPORT_LINE_BYTES` and all together at most
    :data:`MAX_IMPORT_BYTES` (InputError past either): ``/dev/zero`` on stdin, a line without end,
    or an endless producer never fills the memory."""
    total = 0
    number = 0
    while True:
        line = handle.readline(MAX_IMPORT_LINE_BYTES + 1)
        if not line:
            return
        number += 1
        total += len(line)
        if len(line) > MAX_IMPORT_LINE_BYTES:
            raise InputError(f"{what}: line {number} is longer than {MAX_IMPORT_LINE_BYTES:,} bytes; not a crib record")
        if total > MAX_IMPORT_BYTES:
            raise InputError(f"{what} holds more than {MAX_IMPORT_BYTES:,} bytes; split it into smaller files")
        yield line


def _read_bounded(handle: BinaryIO, what: str) -> bytes:
    """All of ``handle`` when it holds at most :data:`MAX_IMPORT_BYTES`, else InputError."""
    data = handle.read(MAX_IMPORT_BYTES + 1)
    if len(data) > MAX_IMPORT_BYTES:
        raise InputError(f"{what} holds more than {MAX_IMPORT_BYTES:,} bytes; split it into smaller files")
    return data


def _regular_file(path: Path) -> None:
    """InputError unless ``path`` is a regular file: a FIFO would block until a writer comes, a
    device (``/dev/zero``) never ends, a socket cannot be read as a file."""
    try:
        mode = path.stat().st_mode
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from None
    if not stat.S_ISREG(mode):
        raise InputError(f"{path} is not a regular file (a FIFO, device or socket); "
                         "give a file or a folder, or `-` to read stdin")


# -- markdown -----------------------------------------------------------------------------------


def front_matter(text: str) -> tuple[dict[str, str], str]:
    """Split ``---`` front matter (simple ``key: value`` lines) from the body."""
    if not text.startswith("---"):
        return {}, text
    lines = text.splitlines()
    if lines[0].strip() != "---":
        return {}, text
    for end in range(1, len(lines)):
        if lines[end].strip() in ("---", "..."):
            meta: dict[str, str] = {}
            for line in lines[1:end]:
                if ":" in line and not line.startswith((" ", "\t", "-")):
                    key, value = line.split(":", 1)
                    meta[key.strip().lower()] = value.strip().strip("'\"")
            return meta, "\n".join(lines[end + 1:])
    return {}, text


def _strip_comments(text: str) -> str:
    return re.sub(r"<!--.*?-->", "", text, flags=re.DOTALL)


def split_markdown(text: str) -> list[Unit]:
    """The body's bullets, paragraphs and code blocks, each with its heading path."""
    splitter = _MarkdownSplitter()
    for line in _strip_comments(text).splitlines():
        splitter.feed(line)
    return splitter.finish()


@dataclass
class _MarkdownSplitter:
    """Line-by-line state of :func:`split_markdown`: the heading path, the unit being built, and an
    open code fence (with the unit it joins when it closes)."""

    units: list[Unit] = field(default_factory=list)
    headings: list[tuple[int, str]] = field(default_factory=list)
    current: Unit | None = None
    fence: str | None = None
    code: Unit | None = None
    host: Unit | None = None  # the unit a code block joins when it closes

    def here(self) -> list[str]:
        return [h for _, h in self.headings]

    def close(self) -> None:
        if self.current is not None and self.current.text():
            self.units.append(self.current)
        self.current = None

    def feed(self, line: str) -> None:
        if self.fence is not None:  # inside a code block: everything belongs to it until the fence closes
            self._code_line(line)
            return
        opened = _FENCE.match(line)
        if opened:
            self._open_fence(line, opened.group(1)[:3])
            return
        heading = _HEADING.match(line)
        if heading:
            self.close()
            level = len(heading.group(1))
            self.headings = [(lvl, title) for lvl, title in self.headings if lvl < level]
            self.headings.append((level, heading.group(2).strip()))
            return
        if not line.strip():
            if self.current is not None and self.current.kind == "paragraph":
                self.close()
            return
        if not _IMPORT_LINE.match(line):
            self._text_line(line)

    def _code_line(self, line: str) -> None:
        assert self.code is not None and self.fence is not None
        self.code.lines.append(line)
        if line.strip().startswith(self.fence):
            self.fence = None
            self._end_code()

    def _end_code(self) -> None:
        assert self.code is not None
        if self.host is not None:
            self.host.lines.extend(self.code.lines)
        else:
            self.units.append(self.code)
        self.code = self.host = None

    def _open_fence(self, line: str, fence: str) -> None:
        self.fence = fence
        here = self.here()
        self.code = Unit(here, [line], kind="code")
        current, units = self.current, self.units
        # a code block joins the unit that introduces it ("Run:", even across a blank line)
        # or the bullet it is indented under; otherwise it stands alone
        if current is not None and (current.text().endswith(":") or (current.kind == "bullet" and line[:1] in " \t")):
            self.host = current
        elif current is None and units and units[-1].heading == here and units[-1].text().endswith(":"):
            self.host = units[-1]
        else:
            self.close()
            self.host = None

    def _text_line(self, line: str) -> None:
        bullet = _BULLET.match(line)
        if bullet and not bullet.group(1):  # a top-level bullet starts a new memory
            self.close()
            self.current = Unit(self.here(), [bullet.group(3)], kind="bullet")
        elif self.current is None:
            self.current = Unit(self.here(), [line.strip()], kind="paragraph")
        elif self.current.kind == "bullet" and not line.startswith((" ", "\t")) and not bullet:
            self.close()  # an unindented line after a bullet list is a new paragraph
            self.current = Unit(self.here(), [line.strip()], kind="paragraph")
        else:
            _continue(self.current, line, nested=bool(bullet))

    def finish(self) -> list[Unit]:
        if self.fence is not None and self.code is not None:  # an unclosed fence: keep what there is
            self._end_code()
        self.close()
        return self.units


def _continue(unit: Unit, line: str, *, nested: bool) -> None:
    """Add a continuation line: soft-wrapped prose joins the line before with a space; a nested
    bullet, a table row or anything after a code block keeps its own line."""
    previous = unit.lines[-1] if unit.lines else ""
    table = line.lstrip().startswith("|") or previous.lstrip().startswith("|")
    if nested or table or previous.rstrip().endswith(("```", "~~~")) or not previous.strip():
        unit.lines.append(line.rstrip() if unit.kind == "bullet" else line.strip())
    else:
        unit.lines[-1] = f"{previous.rstrip()} {line.strip()}"


def infer_type(text: str, heading: list[str], known: Iterable[str], default: str = "note") -> str:
    """A type only when it is obvious (a ``Decision:`` prefix, a ``Decisions`` heading)."""
    allowed = set(known)
    first = re.match(r"^\**([A-Za-z]+)\**\s*:", text)
    if first:
        kind = _PREFIX_TYPES.get(first.group(1).lower())
        if kind in allowed:
            return kind
    for title in reversed(heading):
        kind = _HEADING_TYPES.get(title.strip().lower())
        if kind in allowed:
            return kind
    return default if default in allowed else "note"


def markdown_records(text: str, *, source: str, source_path: str) -> list[dict[str, Any]]:
    """One markdown file → import records (``content``, ``type``, ``created_at``, ``metadata``)."""
    meta, body = front_matter(text)
    created = next((meta[k] for k in _DATE_KEYS if meta.get(k)), None)
    default_type = (meta.get("type") or "note").lower()
    tags = [t.strip() for t in meta.get("tags", "").strip("[]").split(",") if t.strip()]
    records = []
    for unit in split_markdown(body):
        text_ = unit.text()
        if not text_:
            continue
        heading = [h for h in unit.heading if h]
        content = f"{' > '.join(heading)}: {text_}" if heading else text_
        metadata: dict[str, Any] = {"source": source, "source_path": source_path}
        if heading:
            metadata["heading"] = " > ".join(heading)
        if tags:
            metadata["tags"] = tags
        record: dict[str, Any] = {
            "content": content,
            "type": infer_type(text_, heading, ENTRY_TYPES, default_type),
            "metadata": metadata,
        }
        if created:
            record["created_at"] = created
        records.append(record)
    return records


def markdown_files(folder: Path) -> Iterator[Path]:
    """Markdown files under ``folder``, sorted, skipping VCS, virtualenv and crib's own folders.

    The walk is bounded (:data:`MAX_IMPORT_WALK` paths looked at, :data:`MAX_IMPORT_FILES` files
    found: ``crib import /`` says so instead of walking the whole disk), follows no symbolic link,
    and skips what cannot be read or vanishes while it runs (``/proc``)."""
    found: list[Path] = []
    seen = 0
    for root, dirs, files in os.walk(folder, onerror=lambda _exc: None):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
        seen += len(dirs) + len(files)
        if seen > MAX_IMPORT_WALK:
            raise InputError(f"{folder} holds more than {MAX_IMPORT_WALK:,} files and folders; import a smaller folder")
        for name in files:
            path = Path(root) / name
            if path.suffix.lower() in MARKDOWN_SUFFIXES and path.is_file():
                found.append(path)
                if len(found) > MAX_IMPORT_FILES:
                    raise InputError(f"{folder} holds more than {MAX_IMPORT_FILES:,} markdown files; import a smaller folder")
    yield from sorted(found)


def read_records(path: Path, fmt: str | None = None, stdin: Any = None) -> tuple[str, list[dict[str, Any]]]:
    """The records to import from ``path`` (``-``: stdin) and the format they were read as; every
    read is bounded (:func:`bounded_lines`, :func:`_read_bounded`) and only regular files are opened."""
    kind = detect_format(path, fmt)
    if str(path) == "-":
        source = getattr(stdin, "buffer", stdin) if stdin is not None else io.BytesIO()
        if isinstance(source, io.TextIOBase):  # a text stream (tests): its bytes
            source = io.BytesIO(source.read(MAX_IMPORT_BYTES + 1).encode("utf-8", "surrogateescape"))
        if kind == "jsonl":
            return kind, jsonl_records(bounded_lines(source, "stdin"))
        return kind, markdown_records(decode_input(_read_bounded(source, "stdin"), "stdin"), source=kind, source_path="-")
    if not path.exists():
        raise InputError(f"no such file or folder: {path}")
    if kind == "jsonl":
        if path.is_dir():
            raise InputError(f"{path} is a folder: give a JSONL file, or --format markdown")
        _regular_file(path)
        with path.open("rb") as handle:
            return kind, jsonl_records(bounded_lines(handle, str(path)))
    files = list(markdown_files(path)) if path.is_dir() else [path]
    records: list[dict[str, Any]] = []
    for file in files:
        _regular_file(file)
        try:
            with file.open("rb") as handle:
                text = decode_input(_read_bounded(handle, str(file)), str(file))
        except OSError as exc:
            raise InputError(f"cannot read {file}: {exc.strerror or exc}") from None
        source = "claude" if kind == "claude" or file.name.lower() in CLAUDE_NAMES else "markdown"
        records.extend(markdown_records(text, source=source, source_path=str(file.resolve())))
    return kind, records
