"""Where settings come from: options, ``SANDCRAWLER_*`` variables, a TOML file and
defaults, in that order of precedence (``load``), and what ``config show`` prints
(``describe_settings``, secrets masked). Naming rules: docs/configuration.md."""

from __future__ import annotations

import os
import tomllib
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson
from pydantic import ValidationError

from sandcrawler.config.sections import (
    CONFIG_ENV,
    ENV_PREFIX,
    RENAMED,
    CoreSettings,
    xdg_dir,
)
from sandcrawler.core.errors import ConfigError

# --- where values come from ---------------------------------------------------------


def default_config_paths() -> list[Path]:
    user_file = xdg_dir("XDG_CONFIG_HOME", ".config") / "sandcrawler" / "config.toml"
    return [Path("sandcrawler.toml"), user_file]


def find_config_file() -> Path | None:
    explicit = os.environ.get(CONFIG_ENV)
    if explicit:
        path = Path(explicit).expanduser()
        if not path.is_file():
            raise ConfigError(f"configuration file {path} (from {CONFIG_ENV}) does not exist")
        return path
    for path in default_config_paths():
        if path.is_file():
            return path
    return None


def dotted(cls: type[CoreSettings], name: str) -> list[str]:
    """The path of a flat or dotted name: ``grobid_url`` -> ``[grobid, url]``."""
    name = RENAMED.get(name, name).replace("-", "_")
    if "." in name:
        return name.split(".")
    if name in cls.top_level():
        return [name]
    split = split_section(name, cls.sections())
    return list(split) if split else [name]


def split_section(name: str, sections: Mapping[str, Any]) -> tuple[str, str] | None:
    """``<section>_<key>`` split where a section's name ends: the longest section
    first, so ``grobid_serve_port`` is ``grobid_serve.port``, not ``grobid.serve_port``
    (other sections' names hold no ``_``: the first ``_`` splits them)."""
    for section in sorted(sections, key=len, reverse=True):
        if name.startswith(section + "_") and len(name) > len(section) + 1:
            return section, name[len(section) + 1:]
    return None


def nest(cls: type[CoreSettings], flat: Mapping[str, Any]) -> dict[str, Any]:
    """Flat or dotted names (options, top-level TOML keys) as nested tables."""
    out: dict[str, Any] = {}
    for name, value in flat.items():
        if isinstance(value, dict) and name in cls.sections():
            out.setdefault(name, {}).update(value)
            continue
        *parents, leaf = dotted(cls, name)
        table = out
        for parent in parents:
            table = table.setdefault(parent, {})
        table[leaf] = value
    return out


def read_config_file(cls: type[CoreSettings], path: Path) -> dict[str, Any]:
    """The file's tables, with flat and old names put where they belong. A
    top-level name matches a setting whatever its case (``ENV = "qa"`` is
    ``env``), as it did when pydantic-settings read the file."""
    try:
        with path.open("rb") as file:
            data = tomllib.load(file)
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        raise ConfigError(f"cannot read configuration file {path}: {e}") from e
    fields = {name.lower(): name for name in cls.model_fields}
    return nest(cls, {fields.get(key.lower(), key): value for key, value in data.items()})


def env_name(path: list[str]) -> str:
    return ENV_PREFIX + "_".join(path).upper()


def _leaves(cls: type[CoreSettings]) -> list[tuple[list[str], Any]]:
    """Every setting's path and field."""
    out: list[tuple[list[str], Any]] = []
    for name, field in cls.model_fields.items():
        section = cls.sections().get(name)
        if section is None:
            out.append(([name], field))
        else:
            out += [([name, key], f) for key, f in section.model_fields.items()]
    return out


def _is_complex(annotation: Any) -> bool:
    return typing.get_origin(annotation) in (dict, list)


#: what a variable sets: a setting's path -> (the variable's name, its value)
EnvValues = dict[tuple[str, ...], tuple[str, Any]]


def _env_values(cls: type[CoreSettings]) -> EnvValues:
    """Every setting the environment gives, dict and list settings decoded from
    JSON (a bad one is named in one line); the rest is left to the models'
    validation, as a TOML value is.

    Names are matched whatever their case (``sandcrawler_grobid_url`` too), as
    pydantic-settings matched them. After the prefix, a top-level setting's name
    is tried first (``SANDCRAWLER_DATA_DIR`` is ``data_dir``, never a section
    ``data``), then ``<SECTION>_<KEY>``, split where a section's name ends
    (``split_section``). A variable naming a section alone holds that section
    as a JSON object; the section's own variables win over it. An old name
    (``RENAMED``) gives way to its new one. Other ``SANDCRAWLER_*`` variables
    (``SANDCRAWLER_CONFIG``, the tests') are not settings; ``config_file`` only
    says which file was read.
    """
    prefix, top, sections = ENV_PREFIX.lower(), cls.top_level(), cls.sections()
    whole: EnvValues = {}
    old: EnvValues = {}
    own: EnvValues = {}
    for var, text in os.environ.items():
        name = var.lower()
        if not name.startswith(prefix):
            continue
        name = name[len(prefix):]
        if name in top:
            if name != "config_file":
                own[(name,)] = (var, text)
        elif name in RENAMED:
            old[tuple(RENAMED[name].split("."))] = (var, text)
        elif name in sections:
            keys = {key.lower(): key for key in sections[name].model_fields}
            for key, value in _section_json(var, text, name, list(keys)).items():
                whole[(name, keys.get(key.lower(), key))] = (var, value)
        elif (split := split_section(name, sections)) is not None:
            own[split] = (var, text)
    fields = {tuple(path): field for path, field in _leaves(cls)}
    for path, (var, text) in [*old.items(), *own.items()]:
        field = fields.get(path)
        if field is not None and _is_complex(field.annotation):
            try:
                decoded = orjson.loads(text)
            except orjson.JSONDecodeError:
                shape = "object" if typing.get_origin(field.annotation) is dict else "array"
                raise ConfigError(
                    f"{var}: {_clip(text)!r} is not JSON; expected a JSON {shape}, e.g. "
                    f"{_example(field.annotation)}") from None
            (own if path in own else old)[path] = (var, decoded)
    return {**whole, **old, **own}


def _section_json(var: str, text: str, section: str, keys: list[str]) -> dict[str, Any]:
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        value = None
    if not isinstance(value, dict):
        raise ConfigError(
            f"{var}: {_clip(text)!r} is not a JSON object; expected the [{section}] settings "
            f'as one, e.g. {{"{keys[0]}": …}}, or one variable each, e.g. '
            f"{env_name([section, keys[0]])}")
    return value


def _example(annotation: Any) -> str:
    if typing.get_origin(annotation) is dict:
        return '{"name": "value"}'
    return '["a", "b"]'


def _clip(value: object, limit: int = 60) -> str:
    text = str(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _merge(cls: type[CoreSettings], *layers: Mapping[str, Any]) -> dict[str, Any]:
    """Nested values, each layer over the ones before: a section's tables are
    merged key by key; a setting's value, a dict or list too, is replaced whole
    (a dict setting never becomes the union of the file's and the variable's)."""
    out: dict[str, Any] = {}
    sections = cls.sections()
    for layer in layers:
        for name, value in layer.items():
            if name in sections and isinstance(value, dict) and isinstance(out.get(name), dict):
                out[name] = {**out[name], **value}
            else:
                out[name] = value
    return out


def _problem(cls: type[CoreSettings], err: Any) -> str:
    """One validation error as ``setting: given VALUE: what is wrong``."""
    loc = [str(p) for p in err["loc"]]
    name = ".".join(loc) or "settings"
    if err["type"] == "extra_forbidden":
        section = cls.sections().get(loc[0]) if len(loc) > 1 else None
        known = sorted(section.model_fields if section else cls.model_fields)
        where = f"[{loc[0]}]" if section else "settings"
        return f"unknown setting {name} (known in {where}: {', '.join(known)})"
    given = err.get("input")
    shown = "" if isinstance(given, dict) else \
        f" (given {_clip(given)!r})" if isinstance(given, str) else f" (given {given!r})"
    return f"{name}{shown}: {err['msg']}"


def load(cls: type[CoreSettings], overrides: Mapping[str, Any] | None = None) -> CoreSettings:
    """Settings of class ``cls`` from ``overrides`` (flat or dotted names; None is
    "not given"), the environment, the file and defaults, in that order of
    precedence. Every problem is a ConfigError of one line."""
    given = nest(cls, {k: v for k, v in (overrides or {}).items() if v is not None})
    env: dict[str, Any] = {}
    for setting, (_var, value) in _env_values(cls).items():
        *parents, leaf = setting
        table = env
        for parent in parents:
            table = table.setdefault(parent, {})
        table[leaf] = value
    path = find_config_file()
    in_file = read_config_file(cls, path) if path else {}
    values = _merge(cls, in_file, env, given)
    values["config_file"] = path
    try:
        return cls(**values)
    except ValidationError as e:
        problems = "; ".join(_problem(cls, err) for err in e.errors())
        raise ConfigError(f"invalid configuration: {problems}") from None


# --- config show ------------------------------------------------------------------------


SECRET_WORDS = ("password", "secret", "token")


def mask_secret(name: str, value: Any) -> Any:
    """Hide passwords in URLs and values of secret-looking settings."""
    if value is None:
        return None
    text = str(value)
    if any(word in name for word in SECRET_WORDS):
        return "***" if text else text
    if "://" in text and "@" in text:
        scheme, rest = text.split("://", 1)
        creds, host = rest.rsplit("@", 1)
        if ":" in creds:
            user = creds.split(":", 1)[0]
            return f"{scheme}://{user}:***@{host}"
    return value


def describe_settings(
    settings: CoreSettings, overrides: Mapping[str, Any] | None = None
) -> list[dict[str, Any]]:
    """Each setting with its (masked) value and where it came from, for ``config show``."""
    cls = type(settings)
    given = nest(cls, {k: v for k, v in (overrides or {}).items() if v is not None})
    in_file = read_config_file(cls, settings.config_file) if settings.config_file else {}
    env = _env_values(cls)
    rows = []
    for path, field in _leaves(cls):
        if path == ["config_file"]:
            continue
        name = ".".join(path)
        var = env_name(path)
        if _lookup(given, path):
            source = "option"
        elif tuple(path) in env:
            source, var = "env", env[tuple(path)][0]
        elif _lookup(in_file, path):
            source = "file"
        else:
            source = "default"
        value: Any = settings
        for part in path:
            value = getattr(value, part)
        rows.append({"name": name, "section": path[0] if len(path) > 1 else "",
                     "value": mask_secret(name, value), "source": source, "env": var,
                     "description": field.description or ""})
    return rows


def _lookup(table: Mapping[str, Any], path: list[str]) -> bool:
    for part in path:
        if not isinstance(table, Mapping) or part not in table:
            return False
        table = table[part]
    return True
