"""The one loader of registries' entries, and the one way a builder is called.

``load_object`` resolves the ``package.module:attribute`` paths that registries
hold, importing the module when the entry is used; a bad name is one
``ConfigError`` of one line. ``call_builder`` gives a builder exactly what its
keyword parameters name (a settings section, or a service), and nothing else
(docs/architecture.md, "One loader"). This module is imported by ``sandcrawler
--help``: it imports nothing heavy.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from sandcrawler.core.errors import ConfigError

T = TypeVar("T")

#: what an entry must look like, said by every bad-name error
EXPECTED = "expected 'package.module:attribute'"


V = TypeVar("V")


def entry(table: Mapping[str, V], name: str, what: str, hint: str = "") -> V:
    """``table[name]``, or the one ConfigError every registry gives for a name it does
    not hold: ``unknown <what> 'x' (known: a, b)``."""
    try:
        return table[name]
    except KeyError:
        known = ", ".join(sorted(table))
        raise ConfigError(f"unknown {what} {name!r} (known: {known}{hint})") from None


def load_object(path: str) -> Any:
    """The object ``package.module:attribute`` names, its module imported now.

    ConfigError when the name is malformed, its module does not exist or does
    not define the attribute. An import error raised *inside* a module that
    does exist (a missing third-party library) names that library."""
    module_name, sep, attribute = path.partition(":")
    if (not sep or not attribute.isidentifier()
            or not all(part.isidentifier() for part in module_name.split("."))):
        raise ConfigError(f"cannot load {path!r}: not a name of that form ({EXPECTED})")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as e:
        missing = e.name or ""
        if module_name == missing or module_name.startswith(missing + "."):
            raise ConfigError(f"cannot load {path!r}: no module {missing!r} "
                              f"({EXPECTED})") from None
        raise ConfigError(f"cannot load {path!r}: its module needs {missing!r}, which is "
                          "not installed") from e
    try:
        return getattr(module, attribute)
    except AttributeError:
        raise ConfigError(f"cannot load {path!r}: module {module_name!r} has no "
                          f"{attribute!r} ({EXPECTED})") from None


def call_builder(builder: Callable[..., T], offers: Mapping[str, Callable[[], object]],
                 /, *args: object) -> T:
    """``builder(*args, **needs)``: each keyword parameter of ``builder`` (one not
    filled by ``args``) is given ``offers[its name]()``, so only what it asks for
    is built. A parameter with a default that nothing offers keeps its default;
    one without is a ConfigError naming the builder and what is offered."""
    parameters = list(inspect.signature(builder).parameters.values())[len(args):]
    needs: dict[str, object] = {}
    for p in parameters:
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        offer = offers.get(p.name)
        if offer is not None:
            needs[p.name] = offer()
        elif p.default is p.empty:
            known = ", ".join(sorted(offers))
            raise ConfigError(f"{_name(builder)} asks for {p.name!r}, which is not offered "
                              f"to it (offered: {known})")
    return builder(*args, **needs)


def _name(builder: Callable[..., object]) -> str:
    module = getattr(builder, "__module__", "?")
    qualname = getattr(builder, "__qualname__", repr(builder))
    return f"{module}:{qualname}"
