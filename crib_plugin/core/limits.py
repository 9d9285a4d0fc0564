"""Hard limits that keep every input's cost bounded, and the checks that enforce them.

crib treats prompts and stored text as hostile: a pasted log, a 10 MB line or a 5 MB "memory"
must neither hang the agent nor make every later prompt slow. The limits, all documented in the
README ("Limits and hostile input"):

* **Entries** hold at most :data:`MAX_ENTRY_CHARS` characters; a longer write or import line is
  refused with one clear line (nothing is split or truncated silently). Metadata must be a JSON
  object of at most :data:`MAX_METADATA_CHARS` characters once serialised, nested at most
  :data:`MAX_METADATA_DEPTH` deep, holding only finite numbers.
* **Prompts**: retrieval considers at most :data:`MAX_PROMPT_CHARS` characters — the head and the
  tail of a longer prompt (a pasted log usually ends with the question), see :func:`bound_prompt`.
* **Query terms**: at most :data:`MAX_TERMS` distinct terms, each of at most :data:`MAX_TERM_CHARS`
  characters (longer runs — base64, minified code — match nothing useful and cost the most).
* **Stored text read back on the prompt path** (reranking, relevance checks) is cut to
  :data:`MAX_SCAN_CHARS` characters, so an oversized entry left by an older version cannot slow
  every retrieval.
* **Hook stdin** is read up to :data:`MAX_HOOK_STDIN_BYTES` bytes and decoded with replacement.
* **Imports** read regular files only (a FIFO or a device could block or never end), a JSONL line
  of at most :data:`MAX_IMPORT_LINE_BYTES`, at most :data:`MAX_IMPORT_BYTES` in all, and a folder
  walk of at most :data:`MAX_IMPORT_WALK` paths yielding at most :data:`MAX_IMPORT_FILES` files.
* **Integers** given on a command line or to a tool (ids, limits, budgets) fit SQLite's 64-bit
  range (:data:`MAX_INT`); a JSON document's integers are parsed by :func:`parse_json`, which turns
  every way a document can fail (syntax, a 5,000-digit number, nesting past Python's stack) into
  one :class:`InputError`.
"""

from __future__ import annotations

import json
import math
from typing import Any

from .errors import InputError

MAX_ENTRY_CHARS = 100_000
MAX_METADATA_CHARS = 16_384
MAX_METADATA_DEPTH = 16
MAX_PROMPT_CHARS = 16_000
PROMPT_TAIL_CHARS = 4_000  # of MAX_PROMPT_CHARS, taken from the end of a longer prompt
MAX_TERMS = 128
MAX_TERM_CHARS = 64
MAX_SCAN_CHARS = 8_000
MAX_HOOK_STDIN_BYTES = 16 * 1024 * 1024
MAX_IMPORT_LINE_BYTES = 2 * 1024 * 1024  # an entry at the character limit, \u-escaped, plus metadata
MAX_IMPORT_BYTES = 1024 * 1024 * 1024
MAX_IMPORT_FILES = 20_000
MAX_IMPORT_WALK = 100_000
MAX_INT = 2**63 - 1  # SQLite's INTEGER (and PostgreSQL's bigint)


def parse_json(text: str | bytes, what: str) -> Any:
    """``json.loads(text)``, every failure one :class:`InputError` naming ``what``: invalid JSON, a
    number of more digits than Python converts (``ValueError``), nesting past the stack."""
    try:
        return json.loads(text)
    except RecursionError:
        raise InputError(f"{what}: JSON nested too deeply") from None
    except json.JSONDecodeError as exc:
        raise InputError(f"{what}: not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})") from None
    except ValueError as exc:  # e.g. "Exceeds the limit (4300 digits) for integer string conversion"
        raise InputError(f"{what}: not valid JSON ({str(exc).split(';')[0]})") from None


def bound_prompt(text: str, limit: int = MAX_PROMPT_CHARS) -> str:
    """``text`` itself when short enough, else its first ``limit - PROMPT_TAIL_CHARS`` characters
    and its last ``PROMPT_TAIL_CHARS``, joined by a newline: O(limit) work for any prompt after this."""
    if len(text) > limit:
        tail = min(PROMPT_TAIL_CHARS, limit // 2)
        text = text[: limit - tail] + "\n" + text[len(text) - tail :]
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates (e.g. a "\ud800" JSON escape): SQLite cannot bind them
        text = text.encode("utf-8", "replace").decode("utf-8")
    return text


def check_entry(content: str) -> None:
    """Refuse (InputError) an entry longer than :data:`MAX_ENTRY_CHARS` or holding a NUL or a lone
    surrogate (neither survives as UTF-8 text in the store or on the way back out)."""
    if not isinstance(content, str):
        raise InputError(f"entry content must be text, not {type(content).__name__}")
    if len(content) > MAX_ENTRY_CHARS:
        raise InputError(
            f"entry of {len(content):,} characters exceeds the {MAX_ENTRY_CHARS:,}-character limit; "
            "split it into smaller memories"
        )
    if "\x00" in content:
        raise InputError("entry contains a NUL character; remove it (binary data is not a memory)")
    try:
        content.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InputError(f"entry is not valid Unicode text (lone surrogate at position {exc.start})") from None


def check_metadata(metadata: Any) -> None:
    """Refuse (InputError) metadata that is not a JSON object of bounded size and depth, or that
    holds NaN/Infinity or values JSON cannot carry."""
    if not isinstance(metadata, dict):
        raise InputError("metadata must be a JSON object")
    _check_depth(metadata, 1)
    try:
        text = json.dumps(metadata, allow_nan=False, ensure_ascii=False)
    except (TypeError, ValueError) as exc:
        raise InputError(f"metadata cannot be stored as JSON ({exc})") from None
    if len(text) > MAX_METADATA_CHARS:
        raise InputError(f"metadata of {len(text):,} characters exceeds the {MAX_METADATA_CHARS:,}-character limit")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise InputError("metadata is not valid Unicode text (lone surrogate)") from None


def _check_depth(value: Any, depth: int) -> None:
    """Refuse nesting past :data:`MAX_METADATA_DEPTH` (checked before recursing deeper), non-string
    keys and non-finite floats."""
    if depth > MAX_METADATA_DEPTH:
        raise InputError(f"metadata is nested more than {MAX_METADATA_DEPTH} levels deep")
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise InputError("metadata keys must be strings")
            _check_depth(item, depth + 1)
    elif isinstance(value, (list, tuple)):
        for item in value:
            _check_depth(item, depth + 1)
    elif isinstance(value, float) and not math.isfinite(value):
        raise InputError("metadata holds NaN or Infinity, which JSON cannot store")


def decode_input(data: bytes, what: str = "input") -> str:
    """Strict UTF-8 for text that will be stored: InputError naming the first bad byte's offset."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{what} is not valid UTF-8 (invalid byte at offset {exc.start}); convert it first") from None
