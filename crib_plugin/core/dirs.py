"""Where a store's file lives on disk: the folder and its ``.gitignore``.

Lives in ``store/`` (not ``scopes``) because the SQLite backend creates the folder when it creates a
database; ``scopes`` (which picks *which* file) sits above ``memory`` and must not be imported by
the store layer.
"""

from __future__ import annotations

from pathlib import Path

STATE_DIR = Path(".state") / "crib"
GITIGNORE = "# crib's memory store: never committed\n*\n"


def prepare_store_dir(db: Path) -> None:
    """Create the store's folder; inside a ``.state/crib`` folder, add a ``.gitignore`` holding ``*``
    so the store (and crib's logs and session files beside it) is never committed.

    Only crib's own folder gets one: a ``CRIB_DB`` pointing into a user's folder is left alone.
    """
    folder = db.parent
    folder.mkdir(parents=True, exist_ok=True)
    if folder.name == STATE_DIR.name and folder.parent.name == STATE_DIR.parent.name:
        ignore = folder / ".gitignore"
        if not ignore.exists():
            try:
                ignore.write_text(GITIGNORE, encoding="utf-8")
            except OSError:  # a read-only folder still gets its store; git may show it
                pass
