"""What is wrong on a page, and where: a problem names its page and line, and a page's
problems travel together, so one failed build lists them all.

The line is the template's: Jinja maps the code it compiled back to the page's lines, and
`template_line` (inside a page function) and `error_line` (from an exception) read it.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass

from .errors import UserError


@dataclass(frozen=True)
class Problem:
    """One thing wrong on a page, found while rendering it."""
    page: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.page}:{self.line}: {self.message}"


class PageError(UserError, ValueError):
    """Pages that cannot be rendered. Carries every problem found (each `page:line:
    message`), so one failed build lists them all."""

    def __init__(self, problems: list[Problem]):
        self.problems = list(problems)
        pages = sorted({p.page for p in self.problems})
        if len(self.problems) == 1:
            text = str(self.problems[0])
        else:
            text = (f"{len(self.problems)} problems on {len(pages)} page(s); fix them all, then build again:\n"
                    + "\n".join(f"  {p}" for p in self.problems))
        super().__init__(text)


def template_line() -> tuple[str, int]:
    """The page and line of the template code now running (Jinja maps code lines back)."""
    frame = sys._getframe(1)
    while frame is not None:
        tmpl = frame.f_globals.get("__jinja_template__")
        if tmpl is not None:
            return tmpl.name or "?", tmpl.get_corresponding_lineno(frame.f_lineno)
        frame = frame.f_back
    return "?", 0


def error_line(exc: BaseException, page: str) -> int:
    """The template line an exception was raised from, found in its traceback. Jinja
    rewrites tracebacks so that template frames carry the page's name and line."""
    line, tb = 0, exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == page:
            line = tb.tb_lineno
        tb = tb.tb_next
    return line
