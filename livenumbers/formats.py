"""Numbers as a page prints them: formats, their tolerances, and keys a reader can trust.

A format says how a number is printed and, with it, how far it may move before the
printed value could change: the lock's default tolerance is half the last printed unit.
Formats: pct:N, pp:N, fixed:N, ratio:N, sci:N (N a digit), int, ord, text, yesno, each
optionally followed by ~TOL (a figure that is noise, locked to within TOL); and below:B, a
figure that is rounding noise printed as the bound B it stays under on every machine
(livenumbers/printed.py); and about:N, a count rounded to N zeros ("about 1,350"), what
accept prints where a count's last digit is not the same on every machine.

The flat namespace a page cites is the source's (livenumbers/source.py); `nested` gives
the same values as nested dicts for claims (`model.stat == 0`).
"""
from __future__ import annotations

import difflib
import functools
import re
from typing import Any

from .errors import UserError


class NumberError(UserError, KeyError):
    """An unknown key or a bad format; the page renderer adds page and line."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0])


def nested(flat: dict[str, Any]) -> dict:
    """`a.b.c` keys -> {"a": {"b": {"c": ...}}}, for expressions over the results (the
    displayed rows' keys are not in it: claims speak of statistics, not of one row)."""
    root: dict = {}
    for key, value in flat.items():
        node = root
        *parts, last = key.split(".")
        for part in parts:
            node = node.setdefault(part, {})
        node[last] = value
    return root


# Text from the results (a sentence, a word, a model's name) lands in Markdown, not HTML:
# escaping <, & and quotes is not enough, since "[x](javascript:...)", "*x*", "x{ onclick=..}"
# (attr_list) or a "|" in a table cell are markup too. Every such character is written as a
# numeric character reference, which Markdown passes through and the browser shows as written.
_MD_TEXT = str.maketrans({c: f"&#{ord(c)};" for c in "&<>\"'\\`*_{}[]()#+-.!|~=:"})


def md_text(value: Any) -> str:
    """`value` as text that shows exactly as written in a Markdown page (or its HTML)."""
    return str(value).translate(_MD_TEXT)


# -- formats ------------------------------------------------------------------------------

_NUMBER = r"\d+(?:\.\d*)?(?:e-?\d+)?"
_FORMAT = re.compile(rf"^(?:(pct|pp|fixed|ratio|sci|about):(\d)|(int|ord|text|yesno))(?:~({_NUMBER}))?$|^below:({_NUMBER})$")


@functools.lru_cache(maxsize=256)   # thousands of citations, a few dozen formats
def parse_format(fmt: str) -> tuple[str, int, float | None]:
    """"pct:1" -> ("pct", 1, None). A suffix "~TOL" ("sci:1~1e-5") locks the number only
    to within TOL: for figures that are rounding noise (float32 against float64), which
    differ from one CPU to the next while what they say (agreement within TOL) holds."""
    m = _FORMAT.match(fmt) if isinstance(fmt, str) else None
    if not m or (m.group(5) and not float(m.group(5)) > 0):
        raise NumberError(
            f"bad format {fmt!r}: use pct:N, pp:N, fixed:N, ratio:N, sci:N (N a digit), int, ord, text or yesno, "
            f"optionally followed by ~TOLERANCE (sci:1~1e-5), or below:BOUND (below:1e-5){_format_hint(fmt)}"
        )
    if m.group(5):
        return ("below", 0, float(m.group(5)))
    noise = float(m.group(4)) if m.group(4) else None
    return (m.group(1), int(m.group(2)), noise) if m.group(1) else (m.group(3), 0, noise)


_DIGIT_KINDS = ("pct", "pp", "fixed", "ratio", "sci", "about")
_PLAIN_KINDS = ("int", "ord", "text", "yesno")
_KIND_WORDS = {"percent": "pct", "percentage": "pct", "float": "fixed", "decimal": "fixed", "number": "fixed",
               "integer": "int", "count": "int", "bool": "yesno", "boolean": "yesno", "str": "text", "string": "text",
               "times": "ratio", "x": "ratio", "exp": "sci", "scientific": "sci", "points": "pp",
               "ordinal": "ord", "nth": "ord"}


def _format_hint(fmt: Any) -> str:
    """"; did you mean 'pct:1'?" for a format that is close to a real one."""
    if not isinstance(fmt, str):
        return ""
    head, _, rest = fmt.partition("~")
    kind, _, digits = head.partition(":")
    kind = kind.strip().lower()
    kind = _KIND_WORDS.get(kind) or (difflib.get_close_matches(kind, _DIGIT_KINDS + _PLAIN_KINDS, n=1, cutoff=0.5) or [""])[0]
    if not kind:
        return ""
    digits = digits if digits.isdigit() and len(digits) == 1 else "1"
    guess = f"{kind}:{digits}" if kind in _DIGIT_KINDS else kind
    return f"; did you mean {guess + ('~' + rest if rest else '')!r}?" if guess != fmt else ""


def default_format(value: Any) -> str:
    if isinstance(value, str):
        return "text"
    if isinstance(value, bool):
        return "yesno"
    return "int" if isinstance(value, int) else "fixed:3"


def format_value(key: str, value: Any, fmt: str, language: str = "en") -> str:
    """`value` as `fmt` prints it in `language`: English as written here, any other
    language by Babel's rules for it ("26,5 %", "23 341")."""
    if not isinstance(value, (bool, int, float, str)):
        return _format(key, value, fmt, language)
    # The gate formats every citation again on each build (`mkdocs serve`: each save); the
    # value's type and exact repr, not ==, tell values apart (1, 1.0, True; 0.0, -0.0).
    memo = (key, type(value), repr(value), fmt, language)
    if memo not in _PRINTED:
        if len(_PRINTED) > 1 << 16:
            _PRINTED.clear()
        _PRINTED[memo] = _format(key, value, fmt, language)
    return _PRINTED[memo]


_PRINTED: dict[tuple, str] = {}


def _format(key: str, value: Any, fmt: str, language: str) -> str:
    kind, digits, bound = parse_format(fmt)
    if kind == "text":
        return str(value)
    if isinstance(value, str):
        raise NumberError(f"{key!r} is text ({value!r}); cite it with format 'text'")
    if kind == "below":
        if not float(value) < bound:
            raise NumberError(f"{key!r} = {value!r} is not below its bound {bound:g} (format {fmt!r})")
        return format_value(key, bound, "sci:0", language)
    if kind in ("int", "ord", "about") and float(value) != int(value):
        raise NumberError(f"{key!r} = {value!r} is not a whole number; format {kind!r} would hide that")
    if kind == "about":   # a count to the nearest 10^digits (half up: counts are never negative)
        rounded = int((int(value) + 5 * 10 ** (digits - 1)) // 10 ** digits * 10 ** digits) if digits else int(value)
        number = format_value(key, rounded, "int", language)
        return f"{_WORDS.get(language, {}).get('about', 'about')} {number}"
    if language != "en":
        return _localized(value, kind, digits, language)
    if kind == "yesno":
        return "yes" if value else "no"
    if kind in ("int", "ord"):
        return f"{int(value)}" if kind == "int" else ordinal(int(value))
    if kind == "pct":
        return f"{value * 100:.{digits}f}%"
    if kind == "pp":  # a difference of two shares: percentage points
        return f"{value * 100:.{digits}f} pp"
    if kind == "fixed":
        return f"{value:.{digits}f}"
    if kind == "ratio":
        return f"{value:.{digits}f}×"
    return f"{value:.{digits}e}"  # sci


# What Babel has no pattern for: yes and no, ordinals, and a unit's typography. French
# sets % off by a narrow no-break space (U+202F, Babel's CLDR data has U+00A0), writes
# percentage points as "points" after a no-break space ("point" below 2), a minus as U+2212
# (never on a zero: "−0,00" reads as a number below zero) (CLDR's fr has the
# hyphen-minus) and scientific notation as "1,3 × 10⁻⁸"; "×" stays against its number, as in
# "0,63×".
_WORDS = {"fr": {"yes": "oui", "no": "non", "pp": "\u00a0points", "pp below 2": "\u00a0point", "about": "environ"}}
# "10⁻⁴" alone for a mantissa of 1, the mantissa alone for a power of 10⁰.
_TYPOGRAPHY = {"fr": {"minus": "\u2212", "times ten": "\u00a0×\u00a010"}}
_SUPERSCRIPT = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")


def _localized(value: Any, kind: str, digits: int, language: str) -> str:
    """Babel's rendering of the number English prints: rounded once, as the English page
    rounds it (Python's float formatting), so a number is the same number in every
    language; Babel, given the digits exactly, rounds nothing again."""
    from decimal import Decimal

    from babel import numbers as babel

    words = _WORDS.get(language, {})
    typography = _TYPOGRAPHY.get(language, {})
    if kind == "yesno":
        return words.get("yes" if value else "no", "yes" if value else "no")
    if kind == "int":
        text = babel.format_decimal(int(value), locale=language)
    elif kind == "ord":
        return ordinal(int(value), language)
    elif kind == "sci" and "times ten" in typography:   # "1,3 × 10⁻⁸": the mantissa a decimal, the power raised
        mantissa, exponent = f"{value:.{digits}e}".split("e")
        number = _localized(float(mantissa), "fixed", digits, language)
        power = str(int(exponent)).translate(_SUPERSCRIPT)
        text = number if power == "⁰" else "10" + power if mantissa == "1" else number + typography["times ten"] + power
    elif kind == "sci":
        text = babel.format_scientific(Decimal(f"{value:.{digits}e}"), format="0" + ("." + "0" * digits if digits else "") + "E00", locale=language)
    else:
        fraction = "." + "0" * digits if digits else ""
        scaled = value * 100 if kind in ("pct", "pp") else value
        exact = Decimal(f"{scaled:.{digits}f}")
        exact = abs(exact) if exact == 0 and typography else exact   # no "−0,0"
        if kind == "pct":
            # The language's own pattern ("#,##0 %"), with `digits` decimals after its last digit.
            pattern = babel.Locale.parse(language).percent_formats[None].pattern
            text = babel.format_percent(exact / 100, format=pattern.replace("0", "0" + fraction, 1), locale=language)
            text = text.replace("\u00a0%", "\u202f%") if language == "fr" else text
        else:
            text = babel.format_decimal(exact, format="#,##0" + fraction, locale=language)
            unit = "pp below 2" if kind == "pp" and abs(exact) < 2 and "pp below 2" in words else kind
            text += words.get(unit, {"pp": " pp", "ratio": "×"}.get(kind, ""))
    return typography["minus"] + text[1:] if text.startswith("-") and "minus" in typography else text


def long_date(iso: str, language: str) -> str:
    """An ISO date as `language` writes it in full ("3 décembre 2026": Babel's long form)."""
    import datetime

    from babel.dates import format_date

    return format_date(datetime.date.fromisoformat(str(iso)), format="long", locale=language)


def ordinal(n: int, language: str = "en") -> str:
    """4 -> "4th", 32 -> "32nd", 11 -> "11th"; in French 1 -> "1ᵉʳ", 4 -> "4ᵉ"."""
    if language == "fr":
        return f"{n}ᵉʳ" if n == 1 else f"{n}ᵉ"
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


@functools.lru_cache(maxsize=16384)   # every citation, on every build
def tolerance(fmt: str, value: Any) -> float:
    """Half the last printed unit: a move below it cannot change what the reader sees
    by more than rounding. Text, yes/no and whole numbers must match exactly. A "~TOL"
    format is locked to within TOL instead (see parse_format)."""
    kind, digits, noise = parse_format(fmt)
    if noise is not None:   # ~TOL, or below:B (anywhere under the bound)
        return noise
    if kind in ("text", "yesno", "int", "ord"):
        return 0.0
    if kind == "about":
        return 0.5 * 10**digits
    if kind in ("pct", "pp"):
        return 0.5 * 10 ** -(digits + 2)
    if kind == "sci":  # the last printed digit's unit: 10^(exponent as printed - digits)
        exponent = int(f"{float(value):.{digits}e}".split("e")[1])
        return 0.5 * 10 ** (exponent - digits) if value else 0.0
    return 0.5 * 10**-digits


def did_you_mean(word: str, candidates: list[str], n: int = 3, cutoff: float = 0.6) -> str:
    """"; did you mean 'a', 'b'?" for the closest of `candidates` to `word`, or ""."""
    close = difflib.get_close_matches(word, candidates, n=n, cutoff=cutoff)
    return f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""


def did_you_mean_key(numbers: dict[str, Any], key: str) -> str:
    """The closest existing keys: those the namespace itself suggests (a source's keys
    that are not listed, `suggest(key)`), then among keys of the same first part, then
    among all (difflib is slow over thousands of keys; most slips keep the first part)."""
    suggested = numbers.suggest(key) if hasattr(numbers, "suggest") else []
    if suggested:
        return f"; did you mean {', '.join(repr(k) for k in suggested)}?"
    keys = list(dict.keys(numbers))
    head = key.split(".", 1)[0] + "."
    same = [k for k in keys if k.startswith(head)]
    return (did_you_mean(key, same) if same else "") or did_you_mean(key, keys)


def lookup(numbers: dict[str, Any], key: str) -> Any:
    if key not in numbers:
        raise NumberError(f"unknown number {key!r}{did_you_mean_key(numbers, key)}")
    return numbers[key]
