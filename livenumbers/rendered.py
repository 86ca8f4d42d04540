"""What rendering a page records: the numbers it cites, the claims it makes, the tables,
charts, works and routes it calls for, and its text."""
from __future__ import annotations

from dataclasses import dataclass, field

from .problems import Problem


@dataclass(frozen=True)
class Citation:
    key: str
    fmt: str          # the format printed: the page's, or a coarser one the lock recorded (printed.py)
    page: str
    line: int
    asked: str = ""   # the page's format, where the lock prints a coarser one

    @property
    def requested(self) -> str:
        return self.asked or self.fmt


@dataclass(frozen=True)
class Claim:
    expr: str
    page: str
    line: int
    holds: bool
    reads: tuple[tuple[str, str], ...] = ()   # (key, value as repr) of every number the claim reads

    def reads_text(self) -> str:
        """" (key = value, ...)": what the claim read, for a message saying why it failed."""
        return " (" + ", ".join(f"{k} = {v}" for k, v in self.reads) + ")" if self.reads else ""


@dataclass
class Rendered:
    page: str
    text: str
    citations: list[Citation] = field(default_factory=list)
    claims: list[Claim] = field(default_factory=list)
    routes: list[str] = field(default_factory=list)       # links into the source's route page, checked ("l6/3/2/alpha")
    works: list[str] = field(default_factory=list)        # bibliography keys cited, in order
    calls: list[str] = field(default_factory=list)        # its tables and charts, as called ("table('x', model='m')")
    problems: list[Problem] = field(default_factory=list)
