"""The engine's options, and a project's mkdocs.yml as written (for `render`'s plain copy).

A write-up configures the engine in one place, whichever way MkDocs runs it:

    plugins:                                  # the plugin (livenumbers/plugin.py)
      - live-numbers:
          source: my_writeup.numbers:Source   # module:callable(docs_dir, options) -> Source
          options: {corpus: data.csv}         # handed to the callable, and nothing else is
          lock: numbers.lock.json             # in docs/ (the default)
          bibliography: references.bib        # in docs/ (the default): the works pages cite
          translations: locales               # in docs/: fr.yml etc., the tables' and charts' words
          registered:                         # settings fixed in advance (optional;
            file: study.yml                   # livenumbers/registration.py): a file
            blocks: [calibration]             # in docs/ and its registered blocks
          exclude: [drafts/*]                 # pages (in docs/) the engine leaves alone
          every_edition: false                # true: every page in every language, even where
                                              # mkdocs-static-i18n would fall back to the default's

    extra:                                    # or the same keys, for a site that runs
      live_numbers: {...}                     # the engine from build hooks (hooks/)

`Options` is that schema, for both; livenumbers/project.py reads it from the configuration
MkDocs itself loads. `read` reads mkdocs.yml as written, without MkDocs: tags such as
`!ENV [NAME, default]` and Material's `!!python/name:...` are kept as they are written (and
`INHERIT` merged), so `render` can write the file back for a builder that runs no engine.
"""
from __future__ import annotations

import importlib
import logging
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import yaml
from mkdocs.config import base
from mkdocs.config import config_options as c

from . import loaded
from .errors import UserError
from .references import REFERENCES_FILE

log = logging.getLogger("mkdocs.plugins.live_numbers.config")

PLUGIN = "live-numbers"       # the plugin's name in mkdocs.yml (its entry point, pyproject.toml)
EXTRA = "live_numbers"        # ... or its options under extra:, for a site that runs it from hooks
LOCK_FILE = "numbers.lock.json"
TRANSLATIONS = "locales"      # in docs/: one catalogue per language besides the default (fr.yml)


class ConfigError(UserError, ValueError):
    pass


class Options(base.Config):
    """The engine's options (the module docstring), as the plugin and `extra.live_numbers` give them."""
    source = c.Type(str)                              # module:callable(docs_dir, options) -> Source
    options = c.Type(dict, default={})                # handed to the callable
    lock = c.Type(str, default=LOCK_FILE)
    bibliography = c.Type(str, default=REFERENCES_FILE)   # BibTeX, in docs/; cite("key") names its entries
    translations = c.Type(str, default=TRANSLATIONS)  # in docs/: fr.yml etc., the tables' and charts' words
    registered = c.Type(dict, default={})   # {file, blocks}: settings blocks fixed in advance (registration.py)
    exclude = c.ListOfItems(c.Type(str), default=[])   # pages (fnmatch patterns, from docs/) left alone
    every_edition = c.Type(bool, default=False)   # every page in every language, whatever i18n's fallback says


@dataclass(frozen=True)
class Tagged:
    """A YAML value written with a tag (`!ENV [SITE_URL, "..."]`), kept as written."""
    tag: str
    value: Any


class _Loader(yaml.SafeLoader):
    pass


class _Dumper(yaml.SafeDumper):
    pass


def _construct(loader: yaml.Loader, node: yaml.Node) -> Any:
    return (loader.construct_sequence if isinstance(node, yaml.SequenceNode)
            else loader.construct_mapping if isinstance(node, yaml.MappingNode) else loader.construct_scalar)(node)


def _tagged(loader: yaml.Loader, suffix: str, node: yaml.Node) -> Tagged:
    return Tagged("!" + suffix, _construct(loader, node))


PYTHON_TAG = "tag:yaml.org,2002:python/"   # `!!python/name:material.extensions.emoji.twemoji`


def _python_tagged(loader: yaml.Loader, suffix: str, node: yaml.Node) -> Tagged:
    return Tagged(PYTHON_TAG + suffix, _construct(loader, node))


def _represent(dumper: yaml.Dumper, t: Tagged) -> yaml.Node:
    if isinstance(t.value, list):
        return dumper.represent_sequence(t.tag, t.value, flow_style=True)
    if isinstance(t.value, dict):
        return dumper.represent_mapping(t.tag, t.value)
    return dumper.represent_scalar(t.tag, str(t.value))


_Loader.add_multi_constructor("!", _tagged)
_Loader.add_multi_constructor(PYTHON_TAG, _python_tagged)
_Dumper.add_representer(Tagged, _represent)


def read(config_file: Path) -> dict:
    """mkdocs.yml as data, its tags kept (`Tagged`), and the file its `INHERIT` names merged
    under it (as MkDocs merges them: the child's keys win, mappings merged deeply)."""
    try:
        raw = read_text(config_file.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise ConfigError(f"{config_file}: not found (run from the project's folder, or pass --config)") from exc
    except ConfigError as exc:
        raise ConfigError(f"{config_file}: {exc}") from exc
    parent = raw.pop("INHERIT", None)
    return _merged(read(config_file.parent / str(parent)), raw) if parent else raw


def _merged(base: dict, child: dict) -> dict:
    """`child` over `base`, mappings merged key by key, anything else replaced."""
    out = dict(base)
    for key, value in child.items():
        out[key] = _merged(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


def read_text(text: str) -> dict:
    """YAML text as data, its tags kept (`Tagged`)."""
    try:
        return yaml.load(text, Loader=_Loader) or {}
    except yaml.YAMLError as exc:
        raise ConfigError(f"not valid YAML ({exc})") from exc


def write(raw: dict) -> str:
    """Data read by `read` as YAML again (comments are not kept)."""
    return yaml.dump(raw, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=120)


def load_source(spec: str, docs_dir: Path, opts: dict, project: Path):
    """`module:callable` -> the source it makes for `docs_dir` (callable(docs_dir, options),
    `options` the engine's `options:` and nothing else). The module is looked for beside the
    project's mkdocs.yml (the folder `project`) first, as a write-up's own code is: `mkdocs
    build -f other/mkdocs.yml` from anywhere finds it. If the project's code changed on disk
    since this process loaded it (`mkdocs serve`), it is loaded again (livenumbers/loaded.py)."""
    folder = str(Path(project).resolve())
    if folder not in sys.path:
        sys.path.insert(0, folder)
    code = loaded.of(project)
    changed = code.changed()
    if changed:
        log.info("the project's code changed on disk (%s): loaded again", ", ".join(p.name for p in changed))
        code.forget()
    module, _, attr = str(spec).partition(":")
    loaded.claim(project, module)
    try:
        make: Callable = getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError, ValueError) as exc:
        raise ConfigError(f"live numbers: cannot import the source {spec!r} ({exc}); "
                          "write it as module:callable, importable from the project") from exc
    code.note()
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
