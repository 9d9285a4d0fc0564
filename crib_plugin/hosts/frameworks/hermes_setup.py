"""Installing crib into Hermes agent, and bringing Hermes' own memory files into crib on request.

    python -m crib_plugin.hosts.frameworks.hermes_setup [--hermes-home DIR] [--import-memories]

copies crib's memory-provider plugin (``plugin.yaml`` + ``__init__.py``) to
``$HERMES_HOME/plugins/crib/`` — where Hermes finds user-installed memory providers — and prints the
two settings that turn it on. It writes nothing else of Hermes': ``config.yaml`` is the user's to
change. ``--import-memories`` copies the entries of Hermes' ``memories/MEMORY.md`` (as notes) and
``USER.md`` (as preferences) into crib's global store; the files themselves are only read, and
importing twice stores nothing twice.

This module does not import Hermes: it runs wherever crib is installed.
"""

from __future__ import annotations

import argparse
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from ...core.errors import CribError, InputError
from ...scopes import open_scope

PLUGIN_FILES = ("plugin.yaml", "__init__.py")
SOURCE = Path(__file__).resolve().parent / "hermes_plugin"
ENTRY_DELIMITER = "\n§\n"  # how Hermes separates the entries of MEMORY.md and USER.md
BUILTIN = (("MEMORY.md", "note"), ("USER.md", "preference"))
ENABLE = """Turn it on:

  hermes config set memory.provider crib   # crib as Hermes' memory provider
  hermes plugins enable crib-scrub          # crib's scrubber on every reply (transform_llm_output)
"""

def hermes_home(given: str | os.PathLike[str] | None = None) -> Path:
    """Hermes' home: ``given``, else ``HERMES_HOME``, else ``~/.hermes``."""
    return Path(given or os.environ.get("HERMES_HOME") or Path.home() / ".hermes").expanduser()


def install(home: Path) -> Path:
    """Copy the plugin to ``home/plugins/crib`` (replacing an older copy of crib's); its directory."""
    target = home / "plugins" / "crib"
    if target.exists() and not (target / "plugin.yaml").read_text(errors="replace").startswith("name: crib"):
        raise InputError(f"{target} holds another plugin; move it away first")
    target.mkdir(parents=True, exist_ok=True)
    for name in PLUGIN_FILES:
        shutil.copyfile(SOURCE / name, target / name)
    return target


@dataclass(frozen=True)
class Imported:
    file: str
    entries: int
    ids: tuple[int, ...]


def builtin_entries(path: Path) -> list[str]:
    """The entries of one of Hermes' memory files (empty when it does not exist)."""
    if not path.is_file():
        return []
    return [part.strip() for part in path.read_text(encoding="utf-8", errors="replace").split(ENTRY_DELIMITER) if part.strip()]


def import_builtin(home: Path) -> list[Imported]:
    """Store the entries of ``home/memories/MEMORY.md`` and ``USER.md`` in crib's global store
    (``on_store``: cleaned, redacted, never twice). The files are read, never written."""
    found = [(name, kind, builtin_entries(home / "memories" / name)) for name, kind in BUILTIN]
    if not any(entries for _name, _kind, entries in found):
        return []
    done: list[Imported] = []
    with open_scope("global") as memory:
        pm = memory.pm
        for name, kind, entries in found:
            ids = tuple(int(pm.hook.on_store(text=text, type=kind, metadata={"source": f"hermes:{name}"},
                                             memory=memory, created_at=None)) for text in entries)
            done.append(Imported(name, len(entries), ids))
    return done


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m crib_plugin.hosts.frameworks.hermes_setup",
                                     description="Install crib as Hermes agent's memory provider.")
    parser.add_argument("--hermes-home", help="Hermes' home (default: $HERMES_HOME, else ~/.hermes)")
    parser.add_argument("--import-memories", action="store_true",
                        help="also copy Hermes' MEMORY.md and USER.md entries into crib's global store")
    args = parser.parse_args(argv)
    home = hermes_home(args.hermes_home)
    try:
        target = install(home)
        print(f"crib: installed the Hermes memory provider in {target}")
        for done in import_builtin(home) if args.import_memories else []:
            print(f"crib: imported {done.entries} entries of {done.file} into the global store")
    except (CribError, OSError) as exc:
        print(f"crib: {exc}")
        return 1
    print(ENABLE)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
