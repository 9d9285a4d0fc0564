"""The terminal route (docs/install.md): a wheel built from the repository carries the licence and
the templates, and installed into a fresh environment gives a working ``crib list``; an editable
install leaves nothing of crib in site-packages but its pointer to the checkout.

The fresh venvs see the test interpreter's packages (``--system-site-packages``: pip too, so they
are made ``--without-pip``) and crib is installed with ``--no-deps``, so the checks take seconds
rather than a full dependency download; what they prove is the wheel's own contents and its
``crib`` entry point, from outside this checkout. Where the build backend (hatchling, in the test
extra) is importable the builds skip pip's isolated build environment, a download per build.
"""

from __future__ import annotations

import os
import site
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TEMPLATES = ("memory.md.j2", "memory_context.md.j2", "_items.md.j2")


def pip(*args: str, python: Path | str = sys.executable) -> subprocess.CompletedProcess[str]:
    """``pip`` run by ``python``, using the build backend in place (no isolated build env) where it sees one."""
    backend = "import hatchling, editables" if "-e" in args else "import hatchling"  # an editable build needs both
    has_backend = subprocess.run([str(python), "-c", backend], capture_output=True).returncode == 0
    isolation = ["--no-build-isolation"] if has_backend else []
    done = subprocess.run([str(python), "-m", "pip", "--disable-pip-version-check", *args[:1], *isolation, *args[1:]],
                          capture_output=True, text=True, timeout=600)
    if done.returncode != 0 and "hatchling" in done.stderr and ("No matching distribution" in done.stderr or "Could not find" in done.stderr):
        pytest.skip(f"the build backend cannot be fetched here: {done.stderr.strip().splitlines()[-1]}")
    assert done.returncode == 0, done.stderr[-3000:]
    return done


def fresh_venv(path: Path) -> tuple[Path, Path]:
    """A venv seeing this interpreter's packages: (its python, its site-packages). Made without
    pip (seconds of ensurepip) when this interpreter's pip is visible from it.

    ``--system-site-packages`` alone shows the *base* interpreter's packages: when the tests run in
    a venv (the README's set-up) that is a bare Python without crib's dependencies. So a ``.pth``
    file adds this interpreter's own site-packages, after the new venv's, wherever it runs from."""
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(path)], check=True, timeout=300)
    python = path / "bin" / "python"
    purelib = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                  capture_output=True, text=True, check=True).stdout.strip())
    ours = [p for p in site.getsitepackages() if Path(p) != purelib]
    (purelib / "_crib_test_parent_site.pth").write_text("".join(f"{p}\n" for p in ours), encoding="utf-8")
    if subprocess.run([str(python), "-m", "pip", "--version"], capture_output=True).returncode != 0:
        subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--clear", str(path)], check=True, timeout=300)
        (purelib / "_crib_test_parent_site.pth").write_text("".join(f"{p}\n" for p in ours), encoding="utf-8")
    return python, purelib


@pytest.mark.slow
def test_a_built_wheel_carries_licence_and_templates_and_its_crib_lists(tmp_path: Path) -> None:
    pip("wheel", "--no-deps", "-q", "-w", str(tmp_path / "dist"), str(ROOT))
    (wheel,) = (tmp_path / "dist").glob("crib_plugin-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names), names
    assert {f"crib_plugin/output/templates/{name}" for name in TEMPLATES} <= set(names), names
    assert {"crib_plugin/hosts/probes.txt", "crib_plugin/hosts/mcp_manifest.json"} <= set(names)  # the MCP front answers from it
    assert "crib_plugin/hosts/frameworks/hermes_plugin/plugin.yaml" in names  # what hermes_setup copies into Hermes
    assert not any(n.startswith(("tests/", "bench/")) for n in names)

    python, _ = fresh_venv(tmp_path / "venv")
    pip("install", "-q", "--no-deps", "--force-reinstall", str(wheel), python=python)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    where = subprocess.run([str(python), "-c", "import crib_plugin; print(crib_plugin.__file__)"], capture_output=True, text=True,
                           env=env, cwd=outside, check=True).stdout
    assert str(tmp_path / "venv") in where, f"crib came from {where}, not the installed wheel"
    crib = tmp_path / "venv" / "bin" / "crib"
    assert subprocess.run([str(crib), "write", "type=decision Chose SQLite for storage."], capture_output=True, text=True,
                          env=env, cwd=outside, check=True).returncode == 0
    listed = subprocess.run([str(crib), "list"], capture_output=True, text=True, env=env, cwd=outside, check=True)
    assert "Chose SQLite for storage" in listed.stdout


@pytest.mark.slow
def test_an_editable_install_puts_no_crib_plugin_folder_in_site_packages(tmp_path: Path) -> None:
    """A folder there (a build's force-include did it once) outlives the checkout: moved or deleted,
    it shadows the package as an empty namespace and every ``crib`` dies with ModuleNotFoundError."""
    python, site_dir = fresh_venv(tmp_path / "venv")
    pip("install", "-q", "--no-deps", "-e", str(ROOT), python=python)
    assert not (site_dir / "crib_plugin").exists(), sorted(p.name for p in (site_dir / "crib_plugin").rglob("*"))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    where = subprocess.run([str(python), "-c", "import crib_plugin.output.render as r; print(r.TEMPLATE_DIRS[0])"],
                           capture_output=True, text=True, env=env, cwd=tmp_path, check=True).stdout.strip()
    assert Path(where) == ROOT / "crib_plugin" / "output" / "templates" and Path(where).is_dir()
