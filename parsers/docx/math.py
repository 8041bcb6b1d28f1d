"""Office Math (OMML, ``m:oMath``) as readable linear text.

The output follows the spirit of Word's own "linear format" (UnicodeMath), kept
simple enough to read and to embed: ``a^2+b^2=c^2``, ``(n π x)/(L)``,
``∑_(n=1)^∞ …``, ``√(x)``, matrices as ``[a, b; c, d]``. Unknown constructs
degrade to the text of their children, so no characters are lost.
"""

from __future__ import annotations

from lxml import etree

from chunkweave.parsers.docx.package import NS

M = f"{{{NS['m']}}}"
_MAX_DEPTH = 200
_COMBINING_HAT = "\u0302"
_COMBINING_OVERLINE = "\u0305"
_BOTTOM_BRACE = "\u23df"


def omml_to_text(node: etree._Element) -> str:
    """Return the linear text of an ``m:oMath`` / ``m:oMathPara`` element."""
    return " ".join(_join(node, 0).split())


def _child(node: etree._Element, tag: str) -> etree._Element | None:
    return node.find(f"{M}{tag}")


def _prop(node: etree._Element, pr: str, tag: str) -> str | None:
    el = node.find(f"{M}{pr}/{M}{tag}")
    return el.get(f"{M}val") if el is not None else None


def _arg(node: etree._Element | None, depth: int) -> str:
    return _join(node, depth) if node is not None else ""


def _group(text: str) -> str:
    # Single symbols need no brackets: "x^2" but "x^(n+1)".
    return text if len(text) <= 1 or text.isalnum() else f"({text})"


def _join(node: etree._Element | None, depth: int) -> str:
    if node is None:
        return ""
    if depth > _MAX_DEPTH:
        return "".join(node.itertext())
    return "".join(_render(child, depth + 1) for child in node)


def _render(el: etree._Element, depth: int) -> str:  # noqa: C901 - one branch per construct
    tag = etree.QName(el).localname if isinstance(el.tag, str) else ""
    ns = etree.QName(el).namespace if isinstance(el.tag, str) else ""
    if ns != NS["m"]:
        # Word runs inside math (w:r) carry plain text.
        return "".join(t.text or "" for t in el.iter(f"{{{NS['w']}}}t"))
    if tag == "r":
        return "".join(t.text or "" for t in el.iter(f"{M}t"))
    if tag in ("oMath", "e", "num", "den", "sub", "sup", "deg", "lim", "fName"):
        return _join(el, depth)
    if tag == "oMathPara":
        return "  ".join(_join(m, depth) for m in el.iter(f"{M}oMath"))
    if tag == "f":
        num = _arg(_child(el, "num"), depth)
        den = _arg(_child(el, "den"), depth)
        if _prop(el, "fPr", "type") == "noBar":
            return f"({num} over {den})"
        return f"{_group(num)}/{_group(den)}"
    if tag == "sSup":
        return f"{_arg(_child(el, 'e'), depth)}^{_group(_arg(_child(el, 'sup'), depth))}"
    if tag == "sSub":
        return f"{_arg(_child(el, 'e'), depth)}_{_group(_arg(_child(el, 'sub'), depth))}"
    if tag == "sSubSup":
        base = _arg(_child(el, "e"), depth)
        sub = _group(_arg(_child(el, "sub"), depth))
        sup = _group(_arg(_child(el, "sup"), depth))
        return f"{base}_{sub}^{sup}"
    if tag == "sPre":
        sub = _group(_arg(_child(el, "sub"), depth))
        sup = _group(_arg(_child(el, "sup"), depth))
        return f"_{sub}^{sup}{_arg(_child(el, 'e'), depth)}"
    if tag == "rad":
        deg = _arg(_child(el, "deg"), depth)
        body = _arg(_child(el, "e"), depth)
        return f"√({deg}&{body})" if deg else f"√({body})"
    if tag == "nary":
        op = _prop(el, "naryPr", "chr") or "∫"
        sub = _arg(_child(el, "sub"), depth)
        sup = _arg(_child(el, "sup"), depth)
        out = op
        if sub:
            out += f"_{_group(sub)}"
        if sup:
            out += f"^{_group(sup)}"
        return f"{out} {_arg(_child(el, 'e'), depth)}"
    if tag == "d":
        beg = _prop(el, "dPr", "begChr")
        end = _prop(el, "dPr", "endChr")
        sep = _prop(el, "dPr", "sepChr") or ","
        inner = sep.join(_join(e, depth) for e in el.findall(f"{M}e"))
        return f"{'(' if beg is None else beg}{inner}{')' if end is None else end}"
    if tag == "func":
        # Spaces keep "a_n cos x" from reading as one symbol; omml_to_text collapses them.
        return f" {_arg(_child(el, 'fName'), depth)} {_arg(_child(el, 'e'), depth)}"
    if tag in ("limLow", "limUpp"):
        mark = "_" if tag == "limLow" else "^"
        return f"{_arg(_child(el, 'e'), depth)}{mark}{_group(_arg(_child(el, 'lim'), depth))}"
    if tag == "acc":
        return f"{_arg(_child(el, 'e'), depth)}{_prop(el, 'accPr', 'chr') or _COMBINING_HAT}"
    if tag == "bar":
        return f"{_group(_arg(_child(el, 'e'), depth))}{_COMBINING_OVERLINE}"
    if tag == "groupChr":
        return f"{_arg(_child(el, 'e'), depth)}{_prop(el, 'groupChrPr', 'chr') or _BOTTOM_BRACE}"
    if tag == "eqArr":
        return "; ".join(_join(e, depth) for e in el.findall(f"{M}e"))
    if tag == "m":
        rows = [", ".join(_join(e, depth) for e in mr.findall(f"{M}e")) for mr in el]
        return "[" + "; ".join(r for r in rows if r) + "]"
    if tag.endswith("Pr") or tag == "ctrlPr":
        return ""
    # box, borderBox, phant and anything new: keep the content.
    return _join(el, depth)
