"""Errors a person can fix: a bad page, lock, key or setting.

Each one's message names the thing (file and line, page and line, key) and says what to
do. The MkDocs events turn a `UserError` (a source's own user errors included: they
derive from it) into a `PluginError`, and the command line prints it on one line;
everything else is a bug and keeps its traceback.
"""


class UserError(Exception):
    """Base of every error whose message is meant for the person running the build."""
