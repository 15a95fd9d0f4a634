"""Settings from defaults, a TOML file, and SANDCRAWLER_* variables; `config show`."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from sandcrawler.app.services import Services
from sandcrawler.app.settings import load_settings
from sandcrawler.citations.registry import choose_parser
from sandcrawler.config import mask_secret
from sandcrawler.core.errors import ConfigError
from tests.helpers.cli import invoke, run_cli


def test_defaults(isolated_env: Path) -> None:
    s = load_settings()
    assert s.config_file is None
    assert s.data_dir == isolated_env / "data"
    assert s.database.url == f"sqlite:///{isolated_env / 'data' / 'sandcrawler.sqlite3'}"
    assert s.grobid.url is None and choose_parser(s.citation.parser, s.grobid.url).name == "crf"
    assert Services(s).topic("grobid-refs") == "sandcrawler-dev.grobid-refs"


def test_file_tables_and_env_precedence(isolated_env: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    (isolated_env / "sandcrawler.toml").write_text(
        'env = "qa"\n[grobid]\nurl = "http://grobid:8070/"\nconcurrency = 8\n'
        '[database]\nurl = "postgresql://u:pw@db/sc"\n'
    )
    s = load_settings()
    assert s.config_file == Path("sandcrawler.toml")
    assert (s.env, s.grobid.url, s.grobid.concurrency) == ("qa", "http://grobid:8070", 8)
    assert choose_parser(s.citation.parser, s.grobid.url).name == "grobid"
    monkeypatch.setenv("SANDCRAWLER_GROBID_CONCURRENCY", "2")
    assert load_settings().grobid.concurrency == 2
    assert load_settings(grobid_concurrency=3).grobid.concurrency == 3
    assert load_settings({"grobid.concurrency": 4}).grobid.concurrency == 4


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        ("[grobid]\nurll = 'x'\n", "unknown setting grobid.urll (known in [grobid]: "),
        ("grobid_concurrency = 0\n", "grobid.concurrency (given 0): Input should be greater than"),
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
    assert result.stderr.startswith("Error: invalid configuration: grobid.timeout (given 'soon'):")
    assert len(result.stderr.splitlines()) == 1


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
    lines = {line.split()[0]: line for line in result.stdout.splitlines()[1:] if line.strip()}
    assert "[env]" in lines["database.url"] and "u:***@db" in lines["database.url"]
    assert "[file]" in lines["grobid.url"]
    assert "[default]" in lines["env"]
    as_json = orjson.loads(invoke(["--config", str(cfg), "config", "show", "--json"]).stdout)
    assert as_json["grobid"]["url"] == "http://grobid:8070"


def test_http_routes_from_a_toml_table_and_from_json(isolated_env: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """The docs/fileset.md example: a dict setting as a TOML table, and as JSON."""
    (isolated_env / "sandcrawler.toml").write_text(
        '[http.routes]\n"https://zenodo.org" = "http://127.0.0.1:8080"\n'
        '[dataverse]\nhosts = ["dv.example.edu"]\n')
    s = load_settings()
    assert s.http.routes == {"https://zenodo.org": "http://127.0.0.1:8080"}
    assert s.dataverse.hosts == ["dv.example.edu"]  # type: ignore[attr-defined]
    monkeypatch.setenv("SANDCRAWLER_HTTP_ROUTES", '{"https://figshare.com/": "http://[::1]:9"}')
    assert load_settings().http.routes == {"https://figshare.com": "http://[::1]:9"}


@pytest.mark.parametrize(("name", "value", "message"), [
    ("SANDCRAWLER_HTTP_ROUTES", "{bad", "SANDCRAWLER_HTTP_ROUTES: '{bad' is not JSON; expected "
     "a JSON object"),
    ("SANDCRAWLER_DATAVERSE_HOSTS", "[1,", "SANDCRAWLER_DATAVERSE_HOSTS: '[1,' is not JSON; "
     "expected a JSON array"),
    ("SANDCRAWLER_HTTP_ROUTES", '{"zenodo.org": "x"}', "'zenodo.org' is not an origin"),
    ("SANDCRAWLER_GROBID_URLL", "x", "unknown setting grobid.urll (known in [grobid]: "),
    ("SANDCRAWLER_CITATION_PARSER", "magic", "citation.parser (given 'magic'): not one of"),
])
def test_bad_environment_is_one_line(name: str, value: str, message: str) -> None:
    result = run_cli(["config", "show"], env={name: value})
    err = result.stderr.decode()
    assert result.returncode == 1
    assert message in err
    assert len(err.splitlines()) == 1 and "Traceback" not in err


def test_old_names_still_work(monkeypatch: pytest.MonkeyPatch) -> None:
    """fetch_* became [http]; the old variables and flat names keep working."""
    monkeypatch.setenv("SANDCRAWLER_FETCH_TIMEOUT", "7")
    assert load_settings().http.timeout == 7
    assert load_settings(fetch_max_mb=3).http.max_mb == 3
    monkeypatch.setenv("SANDCRAWLER_HTTP_TIMEOUT", "9")
    assert load_settings().http.timeout == 9  # the new name wins


def test_missing_config_option_names_the_option() -> None:
    """Issue 14 C5: a missing --config FILE was reported as coming from SANDCRAWLER_CONFIG."""
    result = run_cli(["--config", "/nonexistent/sc.toml", "config", "show"])
    err = result.stderr.decode()
    assert result.returncode == 2
    assert "Invalid value for '--config'" in err and "SANDCRAWLER_CONFIG" not in err


def test_variables_are_matched_whatever_their_case(monkeypatch: pytest.MonkeyPatch) -> None:
    """As pydantic-settings matched them; `config show` names the variable that gave it."""
    monkeypatch.setenv("sandcrawler_grobid_url", "http://grobid:8070/")
    monkeypatch.setenv("Sandcrawler_Env", "qa")
    s = load_settings()
    assert (s.grobid.url, s.env) == ("http://grobid:8070", "qa")
    lines = {line.split()[0]: line for line in invoke(["config", "show"]).stdout.splitlines()[1:]
             if line.strip()}
    assert lines["grobid.url"].endswith("[env]  sandcrawler_grobid_url")
    assert lines["env"].endswith("[env]  Sandcrawler_Env")


@pytest.mark.parametrize(("name", "value", "setting", "expected"), [
    ("SANDCRAWLER_BATCH_SIZE", "30", "batch_size", 30),
    ("SANDCRAWLER_DATA_DIR", "/srv/sc", "data_dir", Path("/srv/sc")),
    ("SANDCRAWLER_CRAWL_ROBOTS", "false", "crawl.robots", False),
    ("SANDCRAWLER_STORE_FSYNC", "0", "store.fsync", False),
    ("SANDCRAWLER_HTTP_TIMEOUT", "1e1", "http.timeout", 10.0),
    ("SANDCRAWLER_GROBID_URL", "", "grobid.url", ""),  # an empty value is a value
    ("SANDCRAWLER_PDFTABLE_VERSION", "2", "pdftable.version", 2),
    ("SANDCRAWLER_ZENODO_HOSTS", '["z.example"]', "zenodo.hosts", ["z.example"]),
])
def test_variables_are_validated_like_file_values(
        monkeypatch: pytest.MonkeyPatch, name: str, value: str, setting: str,
        expected: object) -> None:
    monkeypatch.setenv(name, value)
    found: object = load_settings()
    for part in setting.split("."):
        found = getattr(found, part)
    assert found == expected


@pytest.mark.parametrize(("name", "value", "message"), [
    ("SANDCRAWLER_BATCH_SIZE", "", "batch_size (given ''): Input should be a valid integer"),
    ("SANDCRAWLER_GROBID_RETRIES", "", "grobid.retries (given ''): Input should be a valid "
     "integer"),
    ("SANDCRAWLER_CRAWL_ROBOTS", "maybe", "crawl.robots (given 'maybe'): Input should be a "
     "valid boolean"),
    ("SANDCRAWLER_HTTP_ROUTES", "", "SANDCRAWLER_HTTP_ROUTES: '' is not JSON"),
    ("SANDCRAWLER_GROBID", "[1]", "SANDCRAWLER_GROBID: '[1]' is not a JSON object; expected "
     "the [grobid] settings"),
])
def test_bad_variable_is_one_config_error(monkeypatch: pytest.MonkeyPatch, name: str,
                                          value: str, message: str) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(ConfigError, match=re.escape(message)) as caught:
        load_settings()
    assert len(str(caught.value).splitlines()) == 1


def test_a_section_as_one_json_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    """SANDCRAWLER_GROBID holds the whole [grobid] table; its own variables win over it."""
    monkeypatch.setenv("SANDCRAWLER_GROBID", '{"url": "http://a:1", "timeout": 5}')
    monkeypatch.setenv("SANDCRAWLER_GROBID_URL", "http://b:2")
    s = load_settings()
    assert (s.grobid.url, s.grobid.timeout) == ("http://b:2", 5.0)


def test_a_dict_setting_is_replaced_whole(isolated_env: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """By the environment and by an option: never the union with the file's."""
    (isolated_env / "sandcrawler.toml").write_text(
        '[http]\ntimeout = 5\n[http.routes]\n"https://b.example" = "http://127.0.0.1:2"\n')
    routes = {"https://a.example": "http://127.0.0.1:1"}
    assert load_settings({"http.routes": routes}).http.routes == routes
    monkeypatch.setenv("SANDCRAWLER_HTTP_ROUTES", orjson.dumps(routes).decode())
    s = load_settings()
    assert (s.http.routes, s.http.timeout) == (routes, 5.0)  # the section's other keys stay


def test_unrelated_variables_are_not_settings(isolated_env: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """SANDCRAWLER_* names that are no setting are left alone; config_file only says
    which file was read."""
    monkeypatch.setenv("SANDCRAWLER_TEST_SOMETHING", "1")
    monkeypatch.setenv("SANDCRAWLER_CONFIG_FILE", "/elsewhere.toml")
    (isolated_env / "sandcrawler.toml").write_text('ENV = "qa"\n')  # top-level names: any case
    s = load_settings()
    assert (s.config_file, s.env) == (Path("sandcrawler.toml"), "qa")


def test_reading_the_settings_imports_little() -> None:
    """Every command reads the settings (issue 23, start-up): no settings library
    (pydantic-settings imported asyncio, argparse and dotenv), and of the platform
    modules' dependencies only what defining their helpers needs, not the fileset
    records with their captures and files."""
    code = ("import sys\nfrom sandcrawler.app.settings import load_settings\n"
            "load_settings()\nprint('\\n'.join(sys.modules))\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60,
                            check=True)
    modules = set(result.stdout.decode().split())
    assert "sandcrawler.fileset.platforms.zenodo" in modules  # the sections were read
    assert not modules & {"pydantic_settings", "asyncio", "argparse", "dotenv",
                          "sandcrawler.records.fileset", "sandcrawler.records.capture",
                          "sandcrawler.records.ingest", "sandcrawler.web.http.fetch"}
