"""Strict Open XML (ISO/IEC 29500 Strict) read as transitional OOXML.

Word's "Strict Open XML Document" keeps the transitional vocabulary but moves it
to namespaces under ``http://purl.oclc.org/ooxml/`` (``.../wordprocessingml/main``
for ``http://schemas.openxmlformats.org/wordprocessingml/2006/main``) and renames
the relationship types the same way. The packaging namespaces (OPC relationships,
content types, core properties) are shared by both flavours.

The mapping is one rule: ``http://purl.oclc.org/ooxml/<area>/<rest>`` is
``http://schemas.openxmlformats.org/<area>/2006/<rest>``. It holds for every
namespace and relationship type the reader uses (wordprocessingml, math, drawingml,
relationships); namespaces outside ``purl.oclc.org/ooxml`` are left alone.

Word also writes the content of DrawingML text boxes in Strict files as
``wne:txbxContent`` (the Word 2006 ``wordml`` namespace, since Strict has no
``w:txbxContent`` inside ``wps:txbx``); it is renamed to ``w:txbxContent``.

Value spellings that differ in Strict (``true``/``false`` for on/off, ``start``/
``end`` for justification, measures with units) are already accepted by the
readers of this package, which treat unknown values as unset.
"""

from __future__ import annotations

from lxml import etree

STRICT_PREFIX = "http://purl.oclc.org/ooxml/"
_TRANSITIONAL_PREFIX = "http://schemas.openxmlformats.org/"
_WNE_TXBX = "{http://schemas.microsoft.com/office/word/2006/wordml}txbxContent"
_W_TXBX = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}txbxContent"
#: Bytes that appear in any part written in Strict (a cheap test before walking a tree).
STRICT_MARKER = STRICT_PREFIX.encode()


def transitional_uri(uri: str) -> str:
    """Return the transitional spelling of a Strict namespace or relationship type URI.

    Any other URI is returned unchanged.
    """
    if not uri.startswith(STRICT_PREFIX):
        return uri
    area, _, rest = uri[len(STRICT_PREFIX) :].partition("/")
    if not rest:
        return uri
    return f"{_TRANSITIONAL_PREFIX}{area}/2006/{rest}"


def _clark(name: str) -> str:
    # "{ns}local" -> "{transitional ns}local"; names without a namespace stay.
    if not name.startswith("{" + STRICT_PREFIX):
        return name
    ns, _, local = name[1:].partition("}")
    return f"{{{transitional_uri(ns)}}}{local}"


def to_transitional(root: etree._Element) -> etree._Element:
    """Rename, in place, every Strict element and attribute of ``root``'s tree.

    Returns ``root``. Text and attribute values are untouched, except that a
    relationship's ``Type`` (an attribute value naming a URI) is mapped too.
    """
    for el in root.iter():
        tag = el.tag
        if not isinstance(tag, str):  # comments and processing instructions
            continue
        if tag.startswith("{" + STRICT_PREFIX):
            el.tag = _clark(tag)
        elif tag == _WNE_TXBX:
            el.tag = _W_TXBX
        strict_keys = [k for k in el.attrib if k.startswith("{" + STRICT_PREFIX)]
        for key in strict_keys:
            value = el.attrib.pop(key)
            el.set(_clark(key), value)
        rel_type = el.get("Type")
        if rel_type is not None and rel_type.startswith(STRICT_PREFIX):
            el.set("Type", transitional_uri(rel_type))
    return root
