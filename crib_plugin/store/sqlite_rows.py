"""Row helpers shared by the SQLite store's mixins: entry columns, row → Entry, hashes, thread keys.

A leaf of ``store/``: the mixins (``sqlite_entries``, ``sqlite_fulltext``, ``sqlite_vectors``,
``sqlite_queue``, ``sqlite_admin``) and the write path import these without importing the store
class, so no mixin module imports ``sqlite.py`` back.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import re
from pathlib import Path
from typing import Any, Sequence

from ..core.config import setting_value
from ..core.errors import ExtensionError
from ..core.records import Entry

TYPE_WEIGHT = 0.2  # BM25 weight of the entry type column
CONTEXT_WEIGHT = 0.5  # BM25 weight of the thread-neighbour context column
CONTEXT_CHARS = 1000  # each neighbour's share of an entry's context
# The pending_embeddings "space" of entries whose fact extraction was deferred (model down or
# slower than CRIB_EXTRACT_BUDGET); `crib reindex` drains it. One queue table, two kinds of work.
EXTRACT_QUEUE = "extract"


ENTRY_COLUMNS = "id, type, content, created_at, metadata, content_hash, project"
# An entry row as ``crib migrate`` copies it: every stored column but the indexes built from them.
ENTRY_ROW = "id, type, content, created_at, metadata, content_hash, thread, context, superseded_by, project"


def content_hash(content: str) -> str:
    """sha256 of the whitespace-normalised content; finds duplicates cheaply."""
    return hashlib.sha256(" ".join(content.split()).encode("utf-8")).hexdigest()


def vec_extension_path() -> str:
    """Where the sqlite-vec loadable extension is, without importing the ``sqlite_vec`` module.

    Importing ``sqlite_vec`` pulls in ``numpy.typing`` (≈60 ms), which the per-prompt hook cannot
    afford; the extension file sits beside the package's ``__init__``. ``CRIB_VEC_EXTENSION``
    overrides it.
    """
    override = setting_value("vec_extension")
    if override:
        return override
    spec = importlib.util.find_spec("sqlite_vec")
    if spec is None or not spec.submodule_search_locations:
        raise ExtensionError("sqlite-vec is not installed (pip install sqlite-vec)")
    return str(Path(next(iter(spec.submodule_search_locations))) / "vec0")


def row_to_entry(row: Sequence[Any]) -> Entry:
    """An :class:`Entry` from a row of :data:`ENTRY_COLUMNS` (bad metadata JSON reads as ``{}``)."""
    try:
        metadata = json.loads(row[4]) if row[4] else {}
    except json.JSONDecodeError:
        metadata = {}
    return Entry(
        id=int(row[0]),
        type=str(row[1]),
        content=str(row[2]),
        created_at=str(row[3]),
        metadata=metadata,
        content_hash=str(row[5]),
        project=None if len(row) < 7 or row[6] is None else str(row[6]),
    )



def space_table(key: str) -> str:
    """The vec0 table name for an embedder identity (a slug, at most 60 characters)."""
    slug = re.sub(r"[^a-z0-9]+", "_", key.lower()).strip("_")
    return f"vec_{slug}"[:60]
