"""Errors a user can fix: a bad corpus, page, lock, weights file or chart.

Each one's message names the thing (file and line, page and line, tensor, key) and says
what to do. They are the engine's user errors (livenumbers.errors): the MkDocs events turn
them into a `PluginError` and the CLI prints them on one line; everything else is a bug
and keeps its traceback.
"""
from livenumbers.errors import UserError

__all__ = ["UserError"]
