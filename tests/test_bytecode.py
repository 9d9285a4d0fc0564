"""``crib init`` writes crib's bytecode even under PYTHONDONTWRITEBYTECODE; ``crib doctor`` reports it."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from crib_plugin.hosts.bytecode import compile_package, stale, status


@pytest.fixture
def package(tmp_path: Path) -> Path:
    root = tmp_path / "pkg"
    (root / "sub").mkdir(parents=True)
    (root / "__init__.py").write_text("")
    (root / "mod.py").write_text("X = 1\n")
    (root / "sub" / "deep.py").write_text("Y = 2\n")
    return root


def test_stale_until_compiled_then_stale_again_after_an_edit(package: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert {p.name for p in stale(package)} == {"__init__.py", "mod.py", "deep.py"}
    monkeypatch.setattr(sys, "dont_write_bytecode", True)  # what PYTHONDONTWRITEBYTECODE sets
    assert compile_package(package)
    assert stale(package) == []
    later = time.time() + 10
    os.utime(package / "mod.py", (later, later))
    assert [p.name for p in stale(package)] == ["mod.py"]
    report = status(package)
    assert report == {"current": False, "stale_modules": 1, "ok": True, "hint": report["hint"]}
    assert "crib init" in str(report["hint"])


def test_a_module_that_does_not_compile_is_reported(package: Path) -> None:
    (package / "broken.py").write_text("def (:\n")
    assert not compile_package(package)


def test_init_compiles_and_doctor_says_current(crib: Any) -> None:
    assert crib("init", "--no-model").returncode == 0
    report = json.loads(crib("doctor").stdout)
    assert report["bytecode"]["current"] is True and report["bytecode"]["stale_modules"] == 0
