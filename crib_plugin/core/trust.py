"""Which settings a repository's own ``.crib.toml`` may set, and which files the user trusted.

crib runs on every prompt with the user's rights in whatever repository is open, including one
just cloned. Its ``.crib.toml`` is the repository author's, not the user's, so — as Claude Code
treats a project's settings and Codex a project's hooks — it may tune retrieval (budget, channels,
models' names, deadlines) but not, unless the user trusted that file:

* name code crib would load or run (``templates``, ``vec_extension``, ``load_plugins``,
  ``cache_dir`` — compiled templates —, ``model_dir``, ``python``);
* name another store (``db``, ``global_db``) or a server crib would send prompts to (``ollama_host``);
* turn on a record of the user's prompts (``log``) or a path outside its own folder;
* weaken redaction (``redact = false``) or move "now" (``now``: the date every write is stored with).

Such a key is ignored with one line on stderr (never on a hook's stdout). The user trusts a file
either in their own ``config.toml`` (``trust = ["~/src/repo", …]``: that folder's ``.crib.toml``,
whatever it holds) or with ``crib trust``, which records the file's path and the SHA-256 of its
bytes in ``trusted-projects.json`` beside the user config: an edited file is untrusted again.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path
from typing import Any, Mapping

from .config_files import user_config_file

TRUST_KEY = "trust"
"""The user file's list of folders whose ``.crib.toml`` is trusted whatever it holds."""
TRUST_FILE = "trusted-projects.json"

#: Keys a project file may set only when trusted, each with why.
RESTRICTED: dict[str, str] = {
    "templates": "loads templates from a folder",
    "vec_extension": "loads a shared library",
    "load_plugins": "chooses which plugins' code runs",
    "cache_dir": "loads compiled templates from a folder",
    "model_dir": "loads model files from a folder",
    "python": "names an interpreter",
    "db": "names another store",
    "global_db": "names another store",
    "ollama_host": "names a server prompts are sent to",
    "log": "records prompts to a file",
    "now": "changes the date writes are stored with",
    "host": "changes which agent the audit names",
    "codex_bin": "names a program crib setup runs",
}
#: Keys a project file may set: they tune retrieval and name nothing outside it. A key in none of
#: these sets (a setting added later and not classified) is refused, like the RESTRICTED ones.
TUNES = frozenset({
    "embedder", "embedding_model", "extractor", "extraction_model", "rerank", "rerank_model",
    "rerank_deadline", "cue_model", "judge", "judge_model", "judge_deadline", "deep_model", "deep_calls",
    "deep_tokens", "deep_seconds", "deep_wave", "deep_manifest", "ollama_timeout", "channel", "budget",
    "thread", "projects", "log_prompts", "plugin_cache", "hook_timeout", "session_ttl_days", "parallel",
    "progress", "busy_timeout", "embed_budget", "write_vectors", "extract_budget", "ollama_keep_alive",
    "write_models", "trace_plugins",
})
#: Paths a project file may set inside its own folder only.
INSIDE_ONLY = frozenset({"error_log", "locomo"})
#: Boolean keys a project file may turn on but not off.
ONLY_ON = frozenset({"redact"})

_warned: set[tuple[str, tuple[str, ...]]] = set()


def trust_store() -> Path:
    """``trusted-projects.json`` beside the user's ``config.toml`` (platformdirs' config dir)."""
    return user_config_file().parent / TRUST_FILE


def digest(file: Path) -> str:
    """SHA-256 of the file's bytes ("" when it cannot be read)."""
    try:
        return hashlib.sha256(file.read_bytes()).hexdigest()
    except OSError:
        return ""


def trusted_files() -> dict[str, str]:
    """Path → SHA-256 of every file ``crib trust`` recorded ({} when none or unreadable)."""
    try:
        data = json.loads(trust_store().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {str(k): str(v) for k, v in data.items() if isinstance(v, str)}


def _save(entries: Mapping[str, str]) -> None:
    store = trust_store()
    store.parent.mkdir(parents=True, exist_ok=True)
    tmp = store.with_name(store.name + f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(dict(sorted(entries.items())), indent=1) + "\n", encoding="utf-8")
    os.replace(tmp, store)


def trust(file: Path) -> str:
    """Record ``file`` (its resolved path and the hash of its current bytes) as trusted; the hash."""
    key, value = str(file.resolve()), digest(file)
    entries = trusted_files()
    entries[key] = value
    _save(entries)
    return value


def revoke(file: Path) -> bool:
    """Forget ``file``'s trust; whether it was trusted."""
    entries = trusted_files()
    found = entries.pop(str(file.resolve()), None) is not None
    if found:
        _save(entries)
    return found


def _folders(user_table: Mapping[str, Any]) -> list[Path]:
    value = user_table.get(TRUST_KEY, [])
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        return []
    return [Path(v).expanduser().resolve() for v in value if isinstance(v, str) and v.strip()]


def is_trusted(file: Path, user_table: Mapping[str, Any]) -> bool:
    """Whether the user trusted this project file: its folder is in their ``trust`` list, or
    ``crib trust`` recorded it with the hash of exactly these bytes."""
    resolved = file.resolve()
    if resolved.parent in _folders(user_table):
        return True
    recorded = trusted_files().get(str(resolved))
    return recorded is not None and recorded == digest(file)


def _inside(raw: str, folder: Path) -> bool:
    try:
        target = Path(raw).expanduser()
        target = (target if target.is_absolute() else folder / target).resolve()
        return target == folder or folder in target.parents
    except (OSError, RuntimeError, ValueError):
        return False


def _refused(key: str, value: Any, folder: Path) -> bool:
    if key in TUNES:
        return False
    if key in INSIDE_ONLY:
        return not (isinstance(value, str) and "://" not in value and _inside(value, folder))
    if key in ONLY_ON:
        return not (value is True or (isinstance(value, (str, int)) and str(value).strip().lower() in ("1", "true", "yes", "on")))
    return True


def screen(file: Path, table: Mapping[str, Any], user_table: Mapping[str, Any]) -> dict[str, Any]:
    """``table`` (a project file's settings) without the keys it may not set untrusted; the first
    time a process drops some from a file, one line on stderr names them."""
    folder = file.parent.resolve()
    refused = tuple(sorted(k for k, v in table.items() if _refused(k, v, folder)))
    if not refused or is_trusted(file, user_table):
        return dict(table)
    mark = (f"{folder / file.name}:{digest(file)}", refused)
    if mark not in _warned:
        _warned.add(mark)
        try:
            sys.stderr.write(f"crib: ignoring {', '.join(refused)} in {folder / file.name}: a project file is not trusted "
                             f"to set them (run `crib trust` in {folder} to allow)\n")
            sys.stderr.flush()
        except (OSError, ValueError):
            pass
    return {k: v for k, v in table.items() if k not in refused}
