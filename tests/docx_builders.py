"""DOCX files the tests build or tamper with beyond what python-docx writes."""

from __future__ import annotations

import zipfile
from pathlib import Path


def add_footnotes_part(path: Path, text: str) -> None:
    """Add a footnotes part holding footnote 1 with ``text`` to the DOCX at ``path``."""
    # python-docx cannot write footnotes: add the part and its relationship.
    w = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
    part = (
        f'<w:footnotes xmlns:w="{w}"><w:footnote w:type="separator" w:id="-1"><w:p><w:r>'
        f'<w:separator/></w:r></w:p></w:footnote><w:footnote w:id="1"><w:p><w:r><w:t>{text}'
        "</w:t></w:r></w:p></w:footnote></w:footnotes>"
    )
    rel = (
        '<Relationship Id="rIdFn" Target="footnotes.xml" Type="http://schemas.openxmlformats.org/'
        'officeDocument/2006/relationships/footnotes"/>'
    )
    src = zipfile.ZipFile(path)
    items = {n: src.read(n) for n in src.namelist()}
    src.close()
    rels = items["word/_rels/document.xml.rels"].decode()
    items["word/_rels/document.xml.rels"] = rels.replace(
        "</Relationships>", rel + "</Relationships>"
    ).encode()
    items["word/footnotes.xml"] = part.encode()
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as out:
        for name, data in items.items():
            out.writestr(name, data)


def patch_declared_size(path: Path, name: str, size: int) -> None:
    """Rewrite the uncompressed size a zip declares for ``name`` (local and central headers)."""
    data = bytearray(path.read_bytes())
    encoded = name.encode()
    # Local header: uncompressed size at offset 22; central directory: offset 24.
    for sig, off in ((b"PK\x03\x04", 22), (b"PK\x01\x02", 24)):
        start = 0
        while (i := data.find(sig, start)) >= 0:
            start = i + 4
            name_at = i + (30 if sig == b"PK\x03\x04" else 46)
            if data[name_at : name_at + len(encoded)] == encoded:
                data[i + off : i + off + 4] = size.to_bytes(4, "little")
    path.write_bytes(bytes(data))
