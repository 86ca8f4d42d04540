"""Errors a user can fix: a bad corpus, page, lock, weights file or chart.

Each one's message names the thing (file and line, page and line, tensor, key) and
says what to do. The MkDocs hooks turn a `UserError` into a `PluginError` and the CLI
prints it on one line; everything else is a bug and keeps its traceback.
"""


class UserError(Exception):
    """Base of every error whose message is meant for the person running the build."""
