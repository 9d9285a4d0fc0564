"""``crib doctor``'s ``hosts`` section: which agent hosts crib is wired into, and whether each works.

"Works" means what the host will do on the next prompt: run the installed prompt hook command with
that host's JSON and see it exit 0 with nothing or valid JSON on stdout, within 10 seconds.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from . import HOSTS, wired
from .files import crib_argv

PROBE_TIMEOUT = 10.0


def hook_works(host: str) -> tuple[bool, str]:
    """Run ``crib hook user-prompt-submit --host HOST`` as the host would; (works, what went wrong)."""
    event = json.dumps({"session_id": "crib-doctor", "prompt": "crib doctor probe", "cwd": str(Path.cwd())})
    try:
        done = subprocess.run([*crib_argv(), "hook", "user-prompt-submit", "--host", host], input=event,
                              capture_output=True, text=True, timeout=PROBE_TIMEOUT)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return False, str(exc)
    if done.returncode != 0:
        return False, f"exit {done.returncode}: {done.stderr.strip()[:200]}"
    if done.stdout.strip():
        try:
            json.loads(done.stdout)
        except ValueError:
            return False, "the hook printed something that is not JSON"
    return True, ""


def hosts_report(home: Path | None = None) -> dict[str, Any]:
    """``{"ok": …, "<host>": {"wired": …, "works": …}}``: not wired is fine; wired and broken is not."""
    report: dict[str, Any] = {}
    ok = True
    for host in HOSTS:
        row: dict[str, Any] = {"wired": wired(host, home)}
        if row["wired"]:
            row["works"], problem = hook_works(host)
            if problem:
                row["problem"] = problem
            ok = ok and row["works"]
        else:
            row["setup"] = f"crib setup {host}"
        report[host] = row
    report["ok"] = ok
    return report
