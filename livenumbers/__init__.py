"""livenumbers: a site generator's engine for write-ups whose numbers are computed when the
site is built, locked, and gated.

A write-up gives it a `Source` (livenumbers/source.py: its results, their keys, its tables,
charts and files); the engine renders the pages' live markup (markup.py, with its tables
and charts in figures.py, its words in page_language.py and its works in references.py),
keeps the numbers lock (lock.py), fails a build whose numbers moved (gate.py), rewrites the
lock when told to (accepting.py), caches what it computed
(cache.py), writes the site for builders that run no plugin (render.py), finds keys to cite
(finder.py) and helps the author under `mkdocs serve` (authoring.py). It runs as a MkDocs
plugin (plugin.py) or from a site's build hooks (events.py), and from the command line
(`python -m livenumbers`). It knows nothing of what the numbers mean.
"""
