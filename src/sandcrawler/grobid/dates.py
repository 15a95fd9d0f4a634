"""A raw date string to its year, month and day (``processDate``): rules, not
GROBID's date model. Read: ISO dates (``2001-09-16``, ``2001/9/16``, ``2001-09``),
month names and their abbreviations in English, French, German and Spanish
(``September 16th, 2001``, ``16 Sept. 2001``, ``Sep 2001``), day-first numeric
dates (``16.09.2001``, ``16/09/2001``; month-first when only the first number
can be a month: ``09/16/2001``), and a year alone."""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass

_MONTHS = {
    "january": 1, "february": 2, "march": 3, "april": 4, "may": 5, "june": 6, "july": 7,
    "august": 8, "september": 9, "october": 10, "november": 11, "december": 12,
    "janvier": 1, "février": 2, "fevrier": 2, "mars": 3, "avril": 4, "mai": 5, "juin": 6,
    "juillet": 7, "août": 8, "aout": 8, "septembre": 9, "octobre": 10, "novembre": 11,
    "décembre": 12, "decembre": 12, "januar": 1, "februar": 2, "märz": 3, "maerz": 3,
    "juni": 6, "juli": 7, "oktober": 10, "dezember": 12, "enero": 1, "febrero": 2,
    "marzo": 3, "abril": 4, "mayo": 5, "junio": 6, "julio": 7, "agosto": 8,
    "septiembre": 9, "setiembre": 9, "octubre": 10, "noviembre": 11, "diciembre": 12,
}
_ABBREVIATIONS = {"jan": 1, "feb": 2, "mar": 3, "apr": 4, "jun": 6, "jul": 7, "aug": 8,
                  "sep": 9, "sept": 9, "oct": 10, "nov": 11, "dec": 12, "déc": 12,
                  "fév": 2, "fev": 2, "avr": 4, "juil": 7, "okt": 10, "dez": 12, "ene": 1,
                  "abr": 4, "ago": 8, "dic": 12}
_ISO = re.compile(r"(?<!\d)(\d{4})[-/.](\d{1,2})(?:[-/.](\d{1,2}))?(?!\d)")
_NUMERIC = re.compile(r"(?<!\d)(\d{1,2})[-/.](\d{1,2})[-/.](\d{4})(?!\d)")
_YEAR = re.compile(r"(?<!\d)(1[5-9]\d\d|20\d\d|2100)(?!\d)")
_DAY = re.compile(r"(?<!\d)(\d{1,2})(?:st|nd|rd|th|er|\.)?(?!\d)", re.I)
_WORD = re.compile(r"[^\W\d_]+")


@dataclass(frozen=True, slots=True)
class Date:
    year: int
    month: int | None = None
    day: int | None = None

    def iso(self) -> str:
        """ISO 8601, as precise as the date is (``2001``, ``2001-09``, ``2001-09-16``)."""
        out = f"{self.year:04d}"
        if self.month:
            out += f"-{self.month:02d}"
            if self.day:
                out += f"-{self.day:02d}"
        return out


def _valid(year: int, month: int | None, day: int | None) -> Date | None:
    if month is not None and not 1 <= month <= 12:
        return None
    if day is not None and month is not None \
            and not 1 <= day <= calendar.monthrange(year, month)[1]:
        return None
    return Date(year, month, day if month else None)


def parse_date(text: str) -> Date | None:
    """The date ``text`` states, or None when it states none."""
    text = " ".join(text.split())
    if m := _ISO.search(text):
        iso_day = int(m.group(3)) if m.group(3) else None
        if (found := _valid(int(m.group(1)), int(m.group(2)), iso_day)) is not None:
            return found
    if m := _NUMERIC.search(text):
        first, second, numeric_year = int(m.group(1)), int(m.group(2)), int(m.group(3))
        d, mo = (second, first) if second > 12 >= first else (first, second)
        if (found := _valid(numeric_year, mo, d)) is not None:
            return found
    year_match = _YEAR.search(text)
    if not year_match:
        return None
    year = int(year_match.group(1))
    month: int | None = None
    for word in _WORD.findall(text.lower()):
        month = _MONTHS.get(word) or _ABBREVIATIONS.get(word)
        if month:
            break
    day: int | None = None
    if month:
        rest = text[:year_match.start()] + " " + text[year_match.end():]
        for m in _DAY.finditer(rest):
            if 1 <= int(m.group(1)) <= 31:
                day = int(m.group(1))
                break
    return _valid(year, month, day)
