"""Where crib's settings files live and how they are read: the project ``.crib.toml``, the user
``config.toml`` (``platformdirs.user_config_dir("crib")``), parsed once per modification time.

``platformdirs`` (off Linux) and the TOML parser (when a file exists) are imported where they are
needed, so the per-prompt path pays two ``stat`` calls and nothing more when neither file exists.
"""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path
from typing import AbstractSet, Any

from .config_values import Spec, path
from .errors import ConfigError

#: The TOML parser: the standard library's from Python 3.11, the tomli backport before.
TOML_MODULE = "tomllib" if sys.version_info >= (3, 11) else "tomli"

PROJECT_FILE = ".crib.toml"
USER_FILE = "config.toml"


def user_config_file() -> Path:
    """``platformdirs.user_config_dir("crib")/config.toml`` (``~/.config/crib/config.toml`` on Linux).

    On Linux the XDG rule platformdirs applies is spelled out here; ``tests/test_config.py`` checks
    the two agree.
    """
    if sys.platform.startswith("linux"):
        xdg = (os.environ.get("XDG_CONFIG_HOME") or "").strip()
        return (Path(xdg).expanduser() if xdg else Path.home() / ".config") / "crib" / USER_FILE
    # deferred: platform-specific: off Linux only; every prompt would pay 2.5 ms (4 % of `import numpy`)
    import platformdirs

    return Path(platformdirs.user_config_dir("crib")) / USER_FILE


def project_config_file(project_dir: Path | str | None = None) -> Path:
    """``.crib.toml`` in ``project_dir`` (default: the current directory)."""
    return Path(project_dir or ".") / PROJECT_FILE


_parsed: dict[str, tuple[int, dict[str, Any]]] = {}


def read_toml(file: Path, known: AbstractSet[str]) -> dict[str, Any]:
    """The table in ``file`` ({} when it does not exist), parsed once per modification time;
    a key outside ``known`` (the declared settings' keys) raises :class:`ConfigError`."""
    try:
        mtime = file.stat().st_mtime_ns
    except OSError:
        return {}
    cached = _parsed.get(str(file))
    if cached is not None and cached[0] == mtime:
        return cached[1]
    # deferred: only when a settings file exists (most prompts have none): tomllib costs 2.5 ms (4 % of
    # `import numpy`); which module it is depends on the Python version (TOML_MODULE)
    tomllib = importlib.import_module(TOML_MODULE)
    try:
        with file.open("rb") as fh:
            data = tomllib.load(fh)
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{file}: not a valid TOML file: {exc}") from exc
    unknown = sorted(set(data) - known)
    if unknown:
        raise ConfigError(f"{file}: unknown setting {', '.join(unknown)} (known: {', '.join(sorted(known))})")
    _parsed[str(file)] = (mtime, data)
    return data


def toml_raw(value: Any, spec: Spec, file: Path) -> str:
    """A TOML value as the string its environment variable would hold."""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, (int, float, str)):
        raw = str(value).strip()
        if spec.parse is path and raw and not path(raw).is_absolute():  # a URL counts as absolute
            raw = str(file.parent.absolute() / raw)
        return raw
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return ",".join(value)
    raise ConfigError(f"{file}: {spec.key} must be a string, number, boolean or list of strings")
