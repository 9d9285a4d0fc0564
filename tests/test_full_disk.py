"""A full disk and a read-only folder, for real: a small tmpfs, filled up or remounted read-only.

Reads go on — ``retrieve``, ``search``, ``list``, ``show``, ``stats``, ``log``, ``export`` — because
read commands open the store read-only and, when SQLite cannot grow its WAL index on a full disk
while the write-ahead log holds nothing, read the file as it is. A write says the disk is full and
stores nothing; once space is freed, nothing was lost. Needs root (``mount``): skipped elsewhere.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Iterator

import pytest

pytestmark = pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="mounting a tmpfs needs root")

ROOT = Path(__file__).resolve().parent.parent
READS = [["list"], ["show", "1"], ["stats"], ["log"], ["search", "sqlite"], ["export"]]


def crib(*args: str, db: Path, stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "CRIB_DB": str(db), "CRIB_GLOBAL_DB": str(db.parent / "none" / "g.db"),
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    return subprocess.run([sys.executable, "-m", "crib_plugin", *args], input=stdin, capture_output=True, text=True,
                          env=env, cwd=db.parent, timeout=120)


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    mount = tmp_path / "disk"
    mount.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mount)], capture_output=True).returncode != 0:
        pytest.skip("cannot mount a tmpfs here")
    try:
        db = mount / "crib.db"
        for i in range(5):
            assert crib("write", f"type=decision Chose SQLite for storage, reason {i}.", db=db).returncode == 0
        yield db
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True)


def _fill(folder: Path) -> Path:
    filler = folder / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT)
    try:
        while True:
            os.write(fd, b"\0" * 4096)
    except OSError:
        pass
    finally:
        os.close(fd)
    assert os.statvfs(folder).f_bavail == 0
    return filler


def _reads_work(db: Path) -> None:
    for args in READS:
        done = crib(*args, db=db)
        assert done.returncode == 0, (args, done.stderr)
        assert "Traceback" not in done.stderr and "disk I/O error" not in done.stderr, (args, done.stderr)
    assert "Chose SQLite" in crib("list", db=db).stdout
    assert "Chose SQLite" in crib("retrieve", db=db, stdin="what did we choose for storage, sqlite?").stdout


def test_a_full_disk_stops_writes_with_one_line_and_no_read(small_disk: Path) -> None:
    filler = _fill(small_disk.parent)
    _reads_work(small_disk)
    refused = crib("write", "type=note one more note", db=small_disk)
    assert refused.returncode == 1 and "full" in refused.stderr and "nothing was stored" in refused.stderr, refused.stderr
    filler.unlink()
    assert crib("stats", "--json", db=small_disk).stdout.count('"entries"') >= 1
    assert crib("write", "type=note one more note", db=small_disk).returncode == 0
    assert len(crib("export", db=small_disk).stdout.splitlines()) == 6  # nothing lost


def test_a_read_only_folder_still_answers_every_read(small_disk: Path) -> None:
    folder = small_disk.parent
    assert subprocess.run(["mount", "-o", "remount,ro", str(folder)], capture_output=True).returncode == 0
    _reads_work(small_disk)
    refused = crib("write", "type=note one more note", db=small_disk)
    assert refused.returncode == 1 and "read-only" in refused.stderr, refused.stderr
