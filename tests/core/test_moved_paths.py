"""Old import paths of moved modules: they still import, warn once, and give the
new module's very objects (one class identity, whichever path imported it)."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

from sandcrawler.core.moved import BECAME_PACKAGES, MOVED, MOVED_PACKAGES, SPLIT, new_name


@pytest.mark.parametrize("old", sorted(MOVED))
def test_every_moved_module_imports_from_its_old_path_with_a_warning(old: str) -> None:
    new = importlib.import_module(new_name(f"sandcrawler.{old}") or "")
    sys.modules.pop(f"sandcrawler.{old}", None)
    with pytest.warns(DeprecationWarning, match=f"sandcrawler.{old} moved to {new.__name__}"):
        stand_in = importlib.import_module(f"sandcrawler.{old}")
    public = [n for n in vars(new) if not n.startswith("_")]
    assert public and all(getattr(stand_in, n) is getattr(new, n) for n in public)


def test_an_old_package_s_submodules_and_from_imports_still_work() -> None:
    assert MOVED_PACKAGES == {"models": "records"}
    script = ("import warnings\nwarnings.simplefilter('error', DeprecationWarning)\n"
              "try:\n    from sandcrawler.models.statuses import FetchStatus\n"
              "except DeprecationWarning as w:\n    print('warned:', w)\n"
              "warnings.simplefilter('ignore')\n"
              "from sandcrawler.models.statuses import FetchStatus\n"
              "from sandcrawler.records.statuses import FetchStatus as New\n"
              "from sandcrawler.kafka import topic_name\n"
              "from sandcrawler.kafka.client import topic_name as new_topic_name\n"
              "print(FetchStatus is New, topic_name is new_topic_name)\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert "warned: sandcrawler.models moved to sandcrawler.records" in done.stdout
    assert done.stdout.strip().endswith("True True")


def test_names_that_never_existed_still_fail() -> None:
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("sandcrawler.no_such_module")
    assert new_name("sandcrawler.cli") is None and new_name("json") is None
    with pytest.raises(ImportError):
        exec("from sandcrawler.kafka import no_such_name", {})


@pytest.mark.parametrize("old", sorted(BECAME_PACKAGES))
def test_a_module_that_became_a_package_still_gives_its_names(old: str) -> None:
    package = importlib.import_module(f"sandcrawler.{old}")
    target = importlib.import_module(f"sandcrawler.{BECAME_PACKAGES[old][0]}")
    name = next(n for n in vars(target) if not n.startswith("_") and callable(vars(target)[n])
                and getattr(vars(target)[n], "__module__", "") == target.__name__
                and n not in vars(package))  # a name the package does not hold itself
    with pytest.warns(DeprecationWarning, match=f"moved to {target.__name__}"):
        assert getattr(package, name) is getattr(target, name)


@pytest.mark.parametrize("old", sorted(SPLIT))
def test_a_module_split_in_several_gives_each_name_from_where_it_went(old: str) -> None:
    sys.modules.pop(f"sandcrawler.{old}", None)
    with pytest.warns(DeprecationWarning, match=f"sandcrawler.{old} moved to"):
        stand_in = importlib.import_module(f"sandcrawler.{old}")
    for new in SPLIT[old]:
        module = importlib.import_module(f"sandcrawler.{new}")
        own = [n for n, v in vars(module).items()
               if not n.startswith("_") and getattr(v, "__module__", None) == module.__name__]
        assert own and all(getattr(stand_in, n) is getattr(module, n) for n in own)
