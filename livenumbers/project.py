"""A project as MkDocs itself loads it, and the engine's settings read from it: one reader for
the plugin, a site's build hooks and every command (`accept`, `check`, `numbers`, `render`).

MkDocs' own loader reads mkdocs.yml (`load`): every tag Material documents (its emoji's
`!!python/name:`), `!ENV`, `INHERIT`, and the file `-f`/`--config` names. The engine's options
are the plugin's (`plugins: - live-numbers: {...}`) or, for a site that runs the engine from
build hooks, `extra.live_numbers`, both checked by one schema (`config.Options`); the source
is made from `source:` with `options:` alone. `settings` turns them into the one
`gate.Settings` every part of the engine reads.
"""
from __future__ import annotations

import os
from pathlib import Path

from . import config, gate, i18n, registration
from .config import ConfigError

# Plugins that render a page's Jinja themselves: the engine renders its own calls before
# them (its on_page_markdown runs first) and leaves theirs, raw blocks and comments to them.
TEMPLATING_PLUGINS = ("macros",)


def load(config_file: Path):
    """mkdocs.yml as `mkdocs build -f config_file` loads it (a `MkDocsConfig`)."""
    from mkdocs import exceptions
    from mkdocs.config import load_config

    if not Path(config_file).is_file():
        raise ConfigError(f"{config_file}: not found (run from the project's folder, or pass --config)")
    try:
        return load_config(str(config_file))
    except (exceptions.ConfigurationError, exceptions.Abort) as exc:
        raise ConfigError(f"{config_file}: {exc}") from exc


def options(mkdocs_config) -> config.Options:
    """The engine's options in a loaded mkdocs.yml: the live-numbers plugin's, or `extra.live_numbers`."""
    from .plugin import LiveNumbersPlugin

    for plugin in mkdocs_config.plugins.values():
        if isinstance(plugin, LiveNumbersPlugin):
            return plugin.config
    where = mkdocs_config.config_file_path
    raw = (mkdocs_config.extra or {}).get(config.EXTRA)
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: the engine is not configured: list it under `plugins:` (`- {config.PLUGIN}:` "
                          f"with its `source:`), or give a site's hooks `extra: {{{config.EXTRA}: {{source: ...}}}}`")
    opts = config.Options(config_file_path=where)
    opts.load_dict(raw)
    errors, warnings = opts.validate()
    # An unknown key is a mistake here as in the plugin's block (`seeds:` meant under `options:`).
    wrong = [f"{key}: {error}" for key, error in errors + warnings]
    if wrong:
        raise ConfigError(f"{where}: extra.{config.EXTRA}: " + "; ".join(wrong))
    return opts


def settings(mkdocs_config) -> gate.Settings:
    """The engine's settings for a loaded mkdocs.yml: its docs, lock, bibliography,
    catalogues, registered blocks, editions and cache, and the source its options make. The
    cache folder is `.cache` beside mkdocs.yml, or the one LIVE_NUMBERS_CACHE names (an
    environment variable, so a notebook's kernel the build starts finds the same one)."""
    opts = options(mkdocs_config)
    config_file = Path(mkdocs_config.config_file_path).resolve()
    if not opts.source:
        raise ConfigError(f"{config_file}: the live-numbers options name no `source:` (module:callable)")
    root, docs = config_file.parent, Path(mkdocs_config.docs_dir).resolve()
    source = config.load_source(opts.source, docs, dict(opts.options), root)
    languages = i18n.languages_of(mkdocs_config, every_page=opts.every_edition)
    return gate.Settings(docs_dir=docs, lock=docs / opts.lock,
                         cache_dir=(root / os.environ.get("LIVE_NUMBERS_CACHE", ".cache")).resolve(), source=source,
                         bibliography=docs / opts.bibliography, languages=languages,
                         translations=docs / opts.translations, registered=registration.declared(opts.registered),
                         config_file=config_file, exclude=tuple(opts.exclude),
                         templated_after=any(name in mkdocs_config.plugins for name in TEMPLATING_PLUGINS))


def settings_at(config_file: Path) -> gate.Settings:
    """`settings` of the mkdocs.yml at `config_file`, loaded by MkDocs."""
    return settings(load(config_file))
