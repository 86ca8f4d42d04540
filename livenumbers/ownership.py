"""Which template constructs on a page are the engine's: it renders its own and leaves every
other one as written, for another plugin or for the reader.

A page may hold braces that are not the engine's: mkdocs-macros' variables and macros
(`{{ icebergVersion }}`, `{% if config.extra.x %}`), a GitHub Actions snippet in a code
block (`${{ github.sha }}`), a Jinja or Liquid template shown as an example. The engine
renders a construct only if it reads one of the page's function names (`num`, `table`,
the source's own, `models`) or a name one of its own statements bound (`{% for key in
models %}` ... `{{ text(key ~ ".name") }}`), or, with no other templating plugin after it,
a construct that reads no name at all (`{% set n = 3 %}`, `{{ "{%" }}`). Everything else is set aside
before Jinja sees the page and put back, byte for byte, after: `protect` and `restore`.

`{% raw %}...{% endraw %}` keeps what it encloses from the engine. With another templating
plugin after it (mkdocs-macros: `templated_after`), the engine leaves raw blocks and
comments as written, so that plugin reads them as their author meant; without one, it
renders them as Jinja does (the markers go, the text stays). And without one, a name that
looks like a misspelt page function (`{{ nmu("key") }}`) is a problem of the page, not text.
"""
from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field

import jinja2
from jinja2 import meta

SET_ASIDE = "\ue007"   # a construct set aside: SET_ASIDE, its index, SET_ASIDE, then its newlines

# Names Jinja gives a template itself: reading them alone makes nothing the engine's.
_JINJA = {"range", "dict", "lipsum", "cycler", "joiner", "namespace", "true", "false", "none",
          "True", "False", "None"}
# Statements the engine's pages use, and what closes or continues them.
_OPENERS = {"for": "endfor", "if": "endif", "set": "endset", "with": "endwith"}
_MIDDLES = {"else", "elif"}
_OPENING = re.compile(r"\{\{|\{%|\{#")
_CALL = re.compile(r"\s*([A-Za-z_]\w*)\s*(\()?")
_STATEMENT = re.compile(r"(\w+)")
_ENDRAW = re.compile(r"\{%-?\s*endraw\s*-?%\}")
_ENV = jinja2.Environment()


@dataclass
class Protected:
    """A page's text as the engine's Jinja reads it, and what was set aside."""
    text: str
    aside: list[str] = field(default_factory=list)
    misspelt: list[tuple[int, str]] = field(default_factory=list)   # (line, message)


def _end(source: str, start: int, closing: str) -> int:
    """The index just past the `closing` that ends the construct opened at `start` (outside
    string literals), or -1 if it never closes."""
    i, quote = start + 2, None
    while i < len(source):
        c = source[i]
        if quote:
            if c == "\\":
                i += 1
            elif c == quote:
                quote = None
        elif c in "\"'":
            quote = c
        elif source.startswith(closing, i):
            return i + len(closing)
        i += 1
    return -1


def _inner(construct: str) -> str:
    """`{{- expr -}}` -> "expr"."""
    body = construct[2:-2]
    return body.strip().removeprefix("-").removesuffix("-").strip()


def _reads(template: str) -> set[str] | None:
    """The names a piece of template reads, or None if Jinja cannot parse it."""
    try:
        return set(meta.find_undeclared_variables(_ENV.parse(template))) - _JINJA
    except jinja2.TemplateSyntaxError:
        return None


def _statement_reads(keyword: str, body: str) -> tuple[set[str] | None, set[str]]:
    """(names the statement reads, names it binds) for an opening statement."""
    closing = "" if keyword == "set" and "=" in body else f"{{% {_OPENERS[keyword]} %}}"
    reads = _reads(f"{{% {body} %}}{closing}")
    binds: set[str] = set()
    if keyword == "for":   # its target names, and the loop's own variable
        binds = set(re.findall(r"\w+", body.split(" in ", 1)[0].removeprefix("for"))) | {"loop"}
    elif keyword == "set":
        binds = set(re.findall(r"\w+", body.split("=", 1)[0].removeprefix("set")))
    return reads, binds


def protect(source: str, names: set[str], templated_after: bool) -> Protected:
    """`source` with every construct that is not the engine's set aside (its lines kept)."""
    page = Protected("")
    out: list[str] = []
    bound: set[str] = set()
    stack: list[tuple[str, bool]] = []   # open statements: (keyword, the engine's?)
    pos = 0

    def keep(construct: str) -> None:
        out.append(construct)

    def set_aside(construct: str) -> None:
        out.append(f"{SET_ASIDE}{len(page.aside)}{SET_ASIDE}" + "\n" * construct.count("\n"))
        page.aside.append(construct)

    def ours(read: set[str] | None, own_when_nameless: bool) -> bool:
        if read is None:
            return False
        return bool(read & (names | bound)) or (not read and own_when_nameless)

    while (m := _OPENING.search(source, pos)) is not None:
        start, kind = m.start(), m.group(0)
        out.append(source[pos:start])
        end = _end(source, start, {"{{": "}}", "{%": "%}", "{#": "#}"}[kind])
        if end < 0:   # never closed: text, not a construct (kept from Jinja all the same)
            set_aside(kind)
            pos = start + 2
            continue
        construct = source[start:end]
        if kind == "{#":
            (set_aside if templated_after else keep)(construct)
        elif kind == "{{":
            inner = _inner(construct)
            call = _CALL.match(inner)
            if call and call.group(1) in names:
                keep(construct)   # the common case, told without parsing
            elif ours(_reads("{{ " + inner + " }}"), not templated_after):
                keep(construct)
            else:
                if call and (call.group(2) or call.end() == len(inner)) and not templated_after:
                    _check_spelling(call.group(1), bool(call.group(2)), names,
                                    source.count("\n", 0, start) + 1, page.misspelt)
                set_aside(construct)
        else:
            body = _inner(construct)
            keyword = m2.group(1) if (m2 := _STATEMENT.match(body)) else ""
            if keyword == "raw":
                close = _ENDRAW.search(source, end)
                end = close.end() if close else len(source)
                (set_aside if templated_after else keep)(source[start:end])
            elif keyword in _OPENERS:
                reads, binds = _statement_reads(keyword, body)
                mine = ours(reads, not templated_after)
                if not (keyword == "set" and "=" in body):   # `{% set x = ... %}` has no closing statement
                    stack.append((keyword, mine))
                if mine:
                    bound |= binds
                (keep if mine else set_aside)(construct)
            elif keyword in _MIDDLES or keyword.startswith("end"):
                opener = stack[-1] if stack else None
                closes = opener is not None and _OPENERS[opener[0]] == keyword
                mine = opener is not None and opener[1] and (keyword in _MIDDLES or closes)
                if closes:
                    stack.pop()
                (keep if mine else set_aside)(construct)
            else:   # include, import, macro, block, extends, filter, call...: never the engine's
                set_aside(construct)
        pos = end
    out.append(source[pos:])
    page.text = "".join(out)
    return page


def _check_spelling(name: str, called: bool, names: set[str], line: int, misspelt: list[tuple[int, str]]) -> None:
    """A name close to a page function's, where no other plugin could own it, is a slip."""
    close = difflib.get_close_matches(name, sorted(names), n=3, cutoff=0.6)
    if close:
        hint = f"; did you mean {', '.join(repr(c) for c in close)}?"
        misspelt.append((line, f"unknown function {name!r}{hint}" if called else f"{name!r} is undefined{hint}"))


def restore(text: str, aside: list[str]) -> str:
    """The rendered text with every construct set aside put back as written."""
    if not aside:
        return text

    def back(m: re.Match) -> str:
        return aside[int(m.group(1))]

    # The newlines that kept each construct's lines are its own: they go with it.
    return re.sub(f"{SET_ASIDE}(\\d+){SET_ASIDE}(\n*)",
                  lambda m: back(m) + m.group(2)[aside[int(m.group(1))].count("\n"):], text)
