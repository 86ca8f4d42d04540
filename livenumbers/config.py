"""The engine's options, read from a project's mkdocs.yml, and the source they name.

A write-up configures the engine in one place, whichever way MkDocs runs it:

    plugins:                                  # the plugin (livenumbers/plugin.py)
      - live-numbers:
          source: my_writeup.numbers:Source   # module:callable(docs_dir, options) -> Source
          lock: numbers.lock.json             # in docs/ (the default)
          bibliography: references.bib        # in docs/ (the default): the works pages cite
          options: {corpus: data.csv}         # handed to the callable
          registered:                         # settings fixed in advance (optional;
            file: study.yml                   # livenumbers/registration.py): a file
            blocks: [calibration]             # in docs/ and its registered blocks

    extra:                                    # or the same keys, for a site that runs
      live_numbers: {...}                     # the engine from build hooks (hooks/)

`mkdocs.yml` is read without MkDocs (for `render` and the command line): tags such as
`!ENV [NAME, default]` are kept as they are written, so the file can be written back.
"""
from __future__ import annotations

import importlib
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import yaml

from .errors import UserError

PLUGIN = "live-numbers"       # the plugin's name in mkdocs.yml (its entry point, pyproject.toml)
EXTRA = "live_numbers"        # ... or its options under extra:, for a site that runs it from hooks
LOCK_FILE = "numbers.lock.json"
TRANSLATIONS = "locales"      # in docs/: one catalogue per language besides the default (fr.yml)


class ConfigError(UserError, ValueError):
    pass


@dataclass(frozen=True)
class Tagged:
    """A YAML value written with a tag (`!ENV [SITE_URL, "..."]`), kept as written."""
    tag: str
    value: Any


class _Loader(yaml.SafeLoader):
    pass


class _Dumper(yaml.SafeDumper):
    pass


def _tagged(loader: yaml.Loader, suffix: str, node: yaml.Node) -> Tagged:
    construct = (loader.construct_sequence if isinstance(node, yaml.SequenceNode)
                 else loader.construct_mapping if isinstance(node, yaml.MappingNode) else loader.construct_scalar)
    return Tagged("!" + suffix, construct(node))


def _represent(dumper: yaml.Dumper, t: Tagged) -> yaml.Node:
    if isinstance(t.value, list):
        return dumper.represent_sequence(t.tag, t.value, flow_style=True)
    if isinstance(t.value, dict):
        return dumper.represent_mapping(t.tag, t.value)
    return dumper.represent_scalar(t.tag, str(t.value))


_Loader.add_multi_constructor("!", _tagged)
_Dumper.add_representer(Tagged, _represent)


def read(config_file: Path) -> dict:
    """mkdocs.yml as data, its tags kept (`Tagged`)."""
    try:
        return read_text(config_file.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise ConfigError(f"{config_file}: not found (run from the project's folder, or pass --config)") from exc
    except ConfigError as exc:
        raise ConfigError(f"{config_file}: {exc}") from exc


def read_text(text: str) -> dict:
    """YAML text as data, its tags kept (`Tagged`)."""
    try:
        return yaml.load(text, Loader=_Loader) or {}
    except yaml.YAMLError as exc:
        raise ConfigError(f"not valid YAML ({exc})") from exc


def write(raw: dict) -> str:
    """Data read by `read` as YAML again (comments are not kept)."""
    return yaml.dump(raw, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=120)


def options(raw: dict) -> dict:
    """The engine's options in a parsed mkdocs.yml: the plugin's, or `extra.live_numbers`."""
    for entry in raw.get("plugins") or []:
        if isinstance(entry, dict) and PLUGIN in entry:
            return dict(entry[PLUGIN] or {})
    return dict((raw.get("extra") or {}).get(EXTRA) or {})


def load_source(spec: str, docs_dir: Path, opts: dict, project: Path | None = None):
    """`module:callable` -> the source it makes for `docs_dir` (callable(docs_dir, options)).
    The module is looked for beside the project's mkdocs.yml (`project`, by default docs_dir's
    parent) first, as a write-up's own code is: `mkdocs build -f other/mkdocs.yml` from
    anywhere finds it."""
    folder = str(Path(project or Path(docs_dir).parent).resolve())
    if folder not in sys.path:
        sys.path.insert(0, folder)
    module, _, attr = str(spec).partition(":")
    try:
        make: Callable = getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError, ValueError) as exc:
        raise ConfigError(f"live numbers: cannot import the source {spec!r} ({exc}); "
                          "write it as module:callable, importable from the project") from exc
    return make(docs_dir, opts)


def without_engine(raw: dict) -> dict:
    """mkdocs.yml for a builder that runs no engine: no `hooks:`, no live-numbers plugin
    and no `extra.live_numbers`, and the builder's anchor check off
    (`validation.anchors: ignore`): a source's route links (`instrument.md#l6/3/2/alpha`)
    are routes its page's script reads, which that check cannot see; `render` checked
    each against the source's data, and the engine's own build checks the other anchors."""
    out = {k: v for k, v in raw.items() if k != "hooks"}
    plugins = [p for p in out.get("plugins") or [] if not (p == PLUGIN or (isinstance(p, dict) and PLUGIN in p))]
    if "plugins" in out:
        out["plugins"] = plugins
    extra = {k: v for k, v in (out.get("extra") or {}).items() if k != EXTRA}
    if extra:
        out["extra"] = extra
    else:
        out.pop("extra", None)
    validation = dict(out.get("validation") or {})
    validation["anchors"] = "ignore"
    out["validation"] = validation
    return out
