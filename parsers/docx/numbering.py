"""Automatic numbering of a DOCX (``word/numbering.xml``), rendered as Word shows it.

Numbered headings and lists keep their numbers outside the text ("1.2.1" lives in
numbering.xml, the paragraph only says "Section 1.2.3"), so the reader must run
the counters itself. :class:`Numbering` does so in document order:

- counters belong to the abstract numbering definition, so paragraphs with
  different ``numId`` values that share one definition continue each other, unless
  a ``w:num`` overrides the start value (then its first use restarts the level);
- using level L resets the counters of the levels below it (``w:lvlRestart`` is
  not modelled);
- a level that is shown (``%N`` in ``w:lvlText``) but was never used counts as its
  start value from then on, which is what Word displays for "2.1.1" right after "2".
"""

from __future__ import annotations

from dataclasses import dataclass, field

from lxml import etree

from chunkweave.parsers.docx.package import NS

W = f"{{{NS['w']}}}"


@dataclass(frozen=True)
class Level:
    """One level of a numbering definition."""

    start: int = 1
    fmt: str = "decimal"
    text: str = ""
    legal: bool = False


@dataclass
class _Counters:
    values: dict[int, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Marker:
    """The rendered number (``"1.2."``, ``"a)"``) or bullet of a numbered paragraph."""

    text: str
    bullet: bool


class Numbering:
    """Numbering definitions plus the running counters for one pass over a document."""

    def __init__(self, root: etree._Element | None, style_num: dict[str, str] | None = None):
        self._abstract: dict[str, dict[int, Level]] = {}
        self._num_abstract: dict[str, str] = {}
        self._num_overrides: dict[str, dict[int, Level | int]] = {}
        self._counters: dict[str, _Counters] = {}
        self._restarted: set[str] = set()
        if root is None:
            return
        links: dict[str, str] = {}
        for absn in root.iter(f"{W}abstractNum"):
            aid = absn.get(f"{W}abstractNumId", "")
            self._abstract[aid] = {
                int(lvl.get(f"{W}ilvl", "0")): _level(lvl) for lvl in absn.iter(f"{W}lvl")
            }
            link = absn.find(f"{W}numStyleLink")
            if link is not None and style_num:
                target_num = style_num.get(link.get(f"{W}val", ""))
                if target_num is not None:
                    links[aid] = target_num
        for num in root.iter(f"{W}num"):
            nid = num.get(f"{W}numId", "")
            ref = num.find(f"{W}abstractNumId")
            if ref is None:
                continue
            self._num_abstract[nid] = ref.get(f"{W}val", "")
            overrides: dict[int, Level | int] = {}
            for ov in num.iter(f"{W}lvlOverride"):
                ilvl = int(ov.get(f"{W}ilvl", "0"))
                lvl = ov.find(f"{W}lvl")
                start = ov.find(f"{W}startOverride")
                if lvl is not None:
                    overrides[ilvl] = _level(lvl)
                elif start is not None:
                    overrides[ilvl] = int(start.get(f"{W}val", "1"))
            if overrides:
                self._num_overrides[nid] = overrides
        # A definition that only links to a numbering style borrows that style's levels.
        for aid, target_num in links.items():
            target_abs = self._num_abstract.get(target_num)
            if target_abs is not None and target_abs in self._abstract:
                self._abstract[aid] = self._abstract[target_abs]

    def next_marker(self, num_id: str, ilvl: int) -> Marker | None:
        """Advance the counters for a paragraph numbered ``(num_id, ilvl)`` and render it.

        Returns ``None`` when the numbering is unknown or switched off (``numId`` 0).
        """
        aid = self._num_abstract.get(num_id)
        if aid is None or aid not in self._abstract:
            return None
        levels = dict(self._abstract[aid])
        overrides = self._num_overrides.get(num_id, {})
        for ilvl_o, ov in overrides.items():
            if isinstance(ov, Level):
                levels[ilvl_o] = ov
            elif ilvl_o in levels:
                base = levels[ilvl_o]
                levels[ilvl_o] = Level(ov, base.fmt, base.text, base.legal)
        counters = self._counters.setdefault(aid, _Counters()).values
        if overrides and num_id not in self._restarted:
            # First use of an instance with start overrides: it restarts the list.
            self._restarted.add(num_id)
            counters.clear()
        level = levels.get(ilvl, Level())
        counters[ilvl] = counters[ilvl] + 1 if ilvl in counters else level.start
        for deeper in [k for k in counters if k > ilvl]:
            del counters[deeper]
        if level.fmt == "bullet":
            return Marker(text=level.text, bullet=True)
        if level.fmt == "none" or not level.text:
            return Marker(text="", bullet=False)
        rendered = level.text
        for k in range(9):
            token = f"%{k + 1}"
            if token not in rendered:
                continue
            lvl_k = levels.get(k, Level())
            if k not in counters:
                counters[k] = lvl_k.start
            fmt = "decimal" if level.legal else lvl_k.fmt
            rendered = rendered.replace(token, format_number(counters[k], fmt))
        return Marker(text=rendered, bullet=False)


def _level(lvl: etree._Element) -> Level:
    def val(tag: str, default: str) -> str:
        el = lvl.find(f"{W}{tag}")
        return el.get(f"{W}val", default) if el is not None else default

    try:
        start = int(val("start", "1"))
    except ValueError:
        start = 1
    return Level(
        start=start,
        fmt=val("numFmt", "decimal"),
        text=val("lvlText", ""),
        legal=lvl.find(f"{W}isLgl") is not None,
    )


_ROMAN = (
    (1000, "m"),
    (900, "cm"),
    (500, "d"),
    (400, "cd"),
    (100, "c"),
    (90, "xc"),
    (50, "l"),
    (40, "xl"),
    (10, "x"),
    (9, "ix"),
    (5, "v"),
    (4, "iv"),
    (1, "i"),
)


def format_number(n: int, fmt: str) -> str:
    """Render counter ``n`` in Word number format ``fmt`` (unknown formats: decimal)."""
    if fmt in ("lowerLetter", "upperLetter") and n > 0:
        # Word repeats the letter: a..z, aa..zz, aaa...
        letter = chr(ord("a") + (n - 1) % 26) * ((n - 1) // 26 + 1)
        return letter.upper() if fmt == "upperLetter" else letter
    if fmt in ("lowerRoman", "upperRoman") and 0 < n < 4000:
        out = []
        for value, numeral in _ROMAN:
            while n >= value:
                out.append(numeral)
                n -= value
        roman = "".join(out)
        return roman.upper() if fmt == "upperRoman" else roman
    if fmt == "decimalZero":
        return f"{n:02d}"
    return str(n)
