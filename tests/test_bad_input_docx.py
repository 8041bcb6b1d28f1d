"""Hostile and broken DOCX files, built here, are refused safely and quickly."""

from __future__ import annotations

import re
import time
import zipfile
import zlib
from pathlib import Path

import docx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chunkweave.parsers import parse_document
from chunkweave.parsers.errors import (
    CorruptDocumentError,
    EncryptedDocumentError,
    ParseError,
    UnsafeDocumentError,
)
from tests.docx_builders import patch_declared_size

W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"


def _valid_docx(tmp_path: Path) -> Path:
    d = docx.Document()
    d.add_paragraph("hello")
    path = tmp_path / "base.docx"
    d.save(str(path))
    return path


def _with_document_xml(tmp_path: Path, xml: bytes, name: str = "bad.docx") -> Path:
    base = zipfile.ZipFile(_valid_docx(tmp_path))
    out = tmp_path / name
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for item in base.namelist():
            data = xml if item == "word/document.xml" else base.read(item)
            z.writestr(item, data)
    base.close()
    return out


def _refused(path: Path, error: type[ParseError]) -> ParseError:
    start = time.perf_counter()
    with pytest.raises(error) as info:
        parse_document(path)
    assert time.perf_counter() - start < 10, "refusal must be quick"
    assert str(path) in str(info.value)
    return info.value


def test_billion_laughs_is_refused(tmp_path: Path) -> None:
    entities = '<!ENTITY l0 "lol">' + "".join(
        f'<!ENTITY l{i} "{f"&l{i - 1};" * 10}">' for i in range(1, 10)
    )
    xml = (
        f'<?xml version="1.0"?><!DOCTYPE w:document [{entities}]>'
        f'<w:document xmlns:w="{W}"><w:body><w:p><w:r><w:t>&l9;</w:t></w:r></w:p>'
        "</w:body></w:document>"
    ).encode()
    err = _refused(_with_document_xml(tmp_path, xml), UnsafeDocumentError)
    assert "DTD" in err.reason


def test_external_entity_is_refused_and_not_read(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOPSECRET")
    xml = (
        f'<?xml version="1.0"?><!DOCTYPE w:document [<!ENTITY x SYSTEM "file://{secret}">]>'
        f'<w:document xmlns:w="{W}"><w:body><w:p><w:r><w:t>&x;</w:t></w:r></w:p>'
        "</w:body></w:document>"
    ).encode()
    err = _refused(_with_document_xml(tmp_path, xml), UnsafeDocumentError)
    assert "TOPSECRET" not in str(err)


def test_utf16_encoded_dtd_is_refused_after_parse(tmp_path: Path) -> None:
    xml = (
        '<?xml version="1.0" encoding="UTF-16"?><!DOCTYPE w:document [<!ENTITY a "b">]>'
        f'<w:document xmlns:w="{W}"><w:body><w:p><w:r><w:t>&a;</w:t></w:r></w:p>'
        "</w:body></w:document>"
    ).encode("utf-16")
    _refused(_with_document_xml(tmp_path, xml), UnsafeDocumentError)


def test_zip_bomb_declared_size_is_refused_before_reading(tmp_path: Path) -> None:
    # ~300 MiB of zeros compresses to ~300 KiB: over the 128 MiB part bound.
    path = tmp_path / "bomb.docx"
    base = zipfile.ZipFile(_valid_docx(tmp_path))
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for item in base.namelist():
            z.writestr(item, base.read(item))
        with z.open("word/media/zeros.bin", "w", force_zip64=True) as fh:
            block = bytes(1 << 20)
            for _ in range(300):
                fh.write(block)
    base.close()
    err = _refused(path, UnsafeDocumentError)
    assert "zip bomb" in err.reason


def test_zip_bomb_with_lying_declared_size_is_refused(tmp_path: Path) -> None:
    # The directory claims 1 KiB; the stream inflates to 64 MiB. Reading stops at
    # the declared size and the CRC check fails: refused, without inflating it all.
    xml = (
        f'<w:document xmlns:w="{W}"><w:body><w:p><w:r><w:t>'.encode()
        + b"a" * (64 << 20)
        + b"</w:t></w:r></w:p></w:body></w:document>"
    )
    path = _with_document_xml(tmp_path, xml)
    patch_declared_size(path, "word/document.xml", 1024)
    _refused(path, (UnsafeDocumentError, CorruptDocumentError))  # type: ignore[arg-type]


def test_too_many_zip_entries_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "many.docx"
    base = zipfile.ZipFile(_valid_docx(tmp_path))
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
        for item in base.namelist():
            z.writestr(item, base.read(item))
        for i in range(10_050):
            z.writestr(f"junk/{i}", b"")
    base.close()
    err = _refused(path, UnsafeDocumentError)
    assert "entries" in err.reason


def test_absurd_xml_nesting_is_refused(tmp_path: Path) -> None:
    depth = 5_000
    xml = (
        f'<w:document xmlns:w="{W}"><w:body>'
        + "<w:sdt><w:sdtContent>" * depth
        + "</w:sdtContent></w:sdt>" * depth
        + "</w:body></w:document>"
    ).encode()
    err = _refused(_with_document_xml(tmp_path, xml), UnsafeDocumentError)
    assert "deep" in err.reason


def test_tables_nested_past_the_xml_depth_bound_are_refused(tmp_path: Path) -> None:
    # Deeper than MAX_NESTING is flattened (tests/test_docx_edge.py); 120 tables
    # are 360+ XML levels, past libxml2's depth limit: still refused as hostile.
    depth = 120
    xml = (
        f'<w:document xmlns:w="{W}"><w:body>'
        + "<w:tbl><w:tr><w:tc>" * depth
        + "<w:p><w:r><w:t>x</w:t></w:r></w:p>"
        + "</w:tc><w:tc><w:p/></w:tc></w:tr></w:tbl>" * depth
        + "</w:body></w:document>"
    ).encode()
    _refused(_with_document_xml(tmp_path, xml), UnsafeDocumentError)


def test_truncated_docx_is_corrupt(tmp_path: Path) -> None:
    data = _valid_docx(tmp_path).read_bytes()
    path = tmp_path / "truncated.docx"
    path.write_bytes(data[: len(data) // 2])
    _refused(path, CorruptDocumentError)


def test_malformed_document_xml_is_corrupt(tmp_path: Path) -> None:
    path = _with_document_xml(tmp_path, b"<w:document><w:body><w:p>")
    _refused(path, CorruptDocumentError)


def test_damaged_entry_data_is_corrupt(tmp_path: Path) -> None:
    path = _valid_docx(tmp_path)
    data = bytearray(path.read_bytes())
    info = zipfile.ZipFile(path).getinfo("word/document.xml")
    start = info.header_offset + 30 + len(info.filename) + len(info.extra)
    for i in range(start, start + min(info.compress_size, 64)):
        data[i] ^= 0xFF
    path.write_bytes(bytes(data))
    _refused(path, CorruptDocumentError)


def test_encrypted_docx_in_ole2_container(tmp_path: Path) -> None:
    # What Word writes for a password-protected DOCX: an OLE2 compound file whose
    # directory names an EncryptionInfo and an EncryptedPackage stream.
    header = bytes.fromhex("d0cf11e0a1b11ae1") + bytes(504)
    directory = "EncryptionInfo".encode("utf-16-le") + bytes(50)
    directory += "EncryptedPackage".encode("utf-16-le") + bytes(50)
    path = tmp_path / "locked.docx"
    path.write_bytes(header + bytes(512) + directory + bytes(2048))
    err = _refused(path, EncryptedDocumentError)
    assert "password" in err.reason


def test_zlib_compressed_junk_with_docx_name_is_not_docx(tmp_path: Path) -> None:
    path = tmp_path / "junk.docx"
    path.write_bytes(zlib.compress(b"not a zip" * 100))
    from chunkweave.parsers.errors import UnsupportedFormatError

    _refused(path, UnsupportedFormatError)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_mutated_docx_never_escapes_as_an_untyped_error(
    tmp_path: Path, corpus: Path, data: st.DataObject
) -> None:
    # Change bytes anywhere in a real package: the result is elements or a ParseError.
    raw = bytearray((corpus / "word_sample.docx").read_bytes())
    for _ in range(data.draw(st.integers(1, 8))):
        raw[data.draw(st.integers(0, len(raw) - 1))] = data.draw(st.integers(0, 255))
    path = tmp_path / "mutated.docx"
    path.write_bytes(bytes(raw))
    try:
        doc = parse_document(path)
    except ParseError as err:
        assert str(path) in str(err)
    else:
        assert doc.elements


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_odd_attribute_values_never_escape_as_an_untyped_error(
    tmp_path: Path, corpus: Path, data: st.DataObject
) -> None:
    # Well-formed XML with nonsense in w:val / w:id attributes (spans, levels, ids).
    src = zipfile.ZipFile(corpus / "word_tables.docx")
    parts = {n: src.read(n) for n in src.namelist()}
    src.close()
    xml = parts["word/document.xml"].decode()
    values = list(re.finditer(r'w:(val|id)="[^"]*"', xml))
    for _ in range(data.draw(st.integers(1, 20))):
        m = values[data.draw(st.integers(0, len(values) - 1))]
        junk = data.draw(st.sampled_from(["", "-1", "x", "99999999", "1e9", "0", "restart"]))
        xml = xml[: m.start()] + f'w:{m.group(1)}="{junk}"' + xml[m.end() :]
        values = list(re.finditer(r'w:(val|id)="[^"]*"', xml))
    parts["word/document.xml"] = xml.encode()
    path = tmp_path / "odd.docx"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as out:
        for name, blob in parts.items():
            out.writestr(name, blob)
    try:
        doc = parse_document(path)
    except ParseError as err:
        assert str(path) in str(err)
    else:
        assert all(e.rows is None or len(e.rows[0]) <= 1000 for e in doc.elements)
