"""Settings from defaults, a TOML file, and SANDCRAWLER_* variables; `config show`."""

from __future__ import annotations

import re
from pathlib import Path

import orjson
import pytest

from sandcrawler.config import load_settings, mask_secret
from sandcrawler.errors import ConfigError
from tests.conftest import invoke


def test_defaults(isolated_env: Path) -> None:
    s = load_settings()
    assert s.config_file is None
    assert s.data_dir == isolated_env / "data"
    assert s.database_url == f"sqlite:///{isolated_env / 'data' / 'sandcrawler.sqlite3'}"
    assert s.grobid_url is None and s.effective_citation_parser == "crf"
    assert s.topic("grobid-refs") == "sandcrawler-dev.grobid-refs"


def test_file_tables_and_env_precedence(isolated_env: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    (isolated_env / "sandcrawler.toml").write_text(
        'env = "qa"\n[grobid]\nurl = "http://grobid:8070/"\nconcurrency = 8\n'
        '[database]\nurl = "postgresql://u:pw@db/sc"\n'
    )
    s = load_settings()
    assert s.config_file == Path("sandcrawler.toml")
    assert (s.env, s.grobid_url, s.grobid_concurrency) == ("qa", "http://grobid:8070", 8)
    assert s.effective_citation_parser == "grobid"
    monkeypatch.setenv("SANDCRAWLER_GROBID_CONCURRENCY", "2")
    assert load_settings().grobid_concurrency == 2
    assert load_settings(grobid_concurrency=3).grobid_concurrency == 3


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        ("[grobid]\nurll = 'x'\n", "unknown setting(s) in sandcrawler.toml: grobid_urll"),
        ("grobid_concurrency = 0\n", "grobid_concurrency: Input should be greater than"),
        ("env = \n", "cannot read configuration file"),
    ],
)
def test_bad_file(isolated_env: Path, toml: str, message: str) -> None:
    (isolated_env / "sandcrawler.toml").write_text(toml)
    with pytest.raises(ConfigError, match=re.escape(message)):
        load_settings()


def test_missing_explicit_file(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SANDCRAWLER_CONFIG", "/nonexistent/sc.toml")
    with pytest.raises(ConfigError, match="does not exist"):
        load_settings()


def test_bad_env_value_is_clear(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SANDCRAWLER_GROBID_TIMEOUT", "soon")
    result = invoke(["config", "show"])
    assert result.exit_code == 1
    assert result.stderr.startswith("Error: invalid configuration: grobid_timeout:")


@pytest.mark.parametrize(
    ("name", "value", "shown"),
    [
        ("database_url", "postgresql://user:hunter2@db/sc", "postgresql://user:***@db/sc"),
        ("database_url", "sqlite:///x.db", "sqlite:///x.db"),
        ("s3_secret_key", "abc", "***"),
        ("grobid_url", "http://u:p@grobid", "http://u:***@grobid"),
    ],
)
def test_mask_secret(name: str, value: str, shown: str) -> None:
    assert mask_secret(name, value) == shown


def test_config_show(isolated_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SANDCRAWLER_DATABASE_URL", "postgresql://u:hunter2@db/sc")
    cfg = isolated_env / "elsewhere.toml"
    cfg.write_text('[grobid]\nurl = "http://grobid:8070"\n')
    result = invoke(["--config", str(cfg), "config", "show"])
    assert result.exit_code == 0
    assert "hunter2" not in result.stdout
    lines = {line.split()[0]: line for line in result.stdout.splitlines()[1:]}
    assert lines["database_url"].endswith("[env]") and "u:***@db" in lines["database_url"]
    assert lines["grobid_url"].endswith("[file]")
    assert lines["env"].endswith("[default]")
    as_json = orjson.loads(invoke(["--config", str(cfg), "config", "show", "--json"]).stdout)
    assert as_json["grobid_url"] == "http://grobid:8070"
