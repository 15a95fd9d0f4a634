"""The product ships no test stand-ins: they are the separate ``sandcrawler-testkit``
distribution (``testkit/``), and nothing in ``src/sandcrawler`` imports it."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.helpers.paths import REPO

# seconds per test: real processes
pytestmark = pytest.mark.slow

ROOT = REPO
PRODUCT = ROOT / "src" / "sandcrawler"
KIT_NAMES = ("sandcrawler_testkit", "sandcrawler.testing")


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def test_product_does_not_import_the_kit() -> None:
    offenders = {
        str(path.relative_to(ROOT)): sorted(
            name for name in imported_modules(path)
            if any(name == kit or name.startswith(kit + ".") for kit in KIT_NAMES))
        for path in sorted(PRODUCT.rglob("*.py"))
    }
    assert {path: names for path, names in offenders.items() if names} == {}
    assert not (PRODUCT / "testing").exists()


def build_wheel(project: Path, members: list[str], out: Path) -> list[str]:
    """Copy ``members`` of ``project`` to a scratch directory (no build/ or egg-info
    left over from earlier builds), build its wheel there, and list the wheel."""
    scratch = out / "src"
    for name in members:
        source = project / name
        if source.is_dir():
            shutil.copytree(source, scratch / name,
                            ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        else:
            scratch.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, scratch / name)
    wheels = out / "wheels"
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "--disable-pip-version-check",
         str(scratch), "-w", str(wheels)],
        capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr
    (wheel,) = wheels.glob("*.whl")
    with zipfile.ZipFile(wheel) as zf:
        return zf.namelist()


@pytest.mark.slow
def test_product_wheel_has_no_kit(tmp_path: Path) -> None:
    names = build_wheel(ROOT, ["pyproject.toml", "README.md", "src"], tmp_path)
    assert "sandcrawler/cli/__init__.py" in names
    assert "sandcrawler/citations/crf/citations.crfmodel" in names
    assert {name.split("/")[0] for name in names} == {
        "sandcrawler", "sandcrawler-0.1.0.dist-info"}
    assert not [name for name in names
                if name.startswith(("sandcrawler/testing/", "sandcrawler_testkit/"))]


@pytest.mark.slow
def test_kit_wheel_has_the_kit(tmp_path: Path) -> None:
    names = build_wheel(ROOT / "testkit", ["pyproject.toml", "README.md", "src"], tmp_path)
    assert {name.split("/")[0] for name in names} == {
        "sandcrawler_testkit", "sandcrawler_testkit-0.1.0.dist-info"}
    assert "sandcrawler_testkit/platforms.py" in names
    # the recorded platform answers and their sources ship with the kit
    data = ROOT / "testkit" / "src"
    recorded = sorted(path.relative_to(data).as_posix()
                      for path in (data / "sandcrawler_testkit" / "data").rglob("*")
                      if path.is_file())
    assert "sandcrawler_testkit/data/platforms/SOURCES.md" in recorded
    assert len(recorded) > 10
    assert set(recorded) <= set(names)
