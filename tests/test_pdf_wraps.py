"""PDF items cut in two by the page's boxes (a hanging marker, a wrapped title); running titles."""

from __future__ import annotations

from chunkweave.parsers.elements import Element
from chunkweave.parsers.pdf.headings import OutlineIndex
from chunkweave.parsers.pdf.wraps import join_hanging_markers, join_wrapped_headings


def _el(type_: str, text: str, bbox: tuple[float, float, float, float], page: int = 3, **kw):
    return Element(type=type_, text=text, page=page, bbox=bbox, order=0, **kw)


def test_a_marker_in_its_own_box_joins_the_text_on_its_line() -> None:
    marker = _el("list_item", "[0044]", (9, 492, 34, 503), level=1)
    text = _el("paragraph", "For example, when n is 3, the store holds", (64, 494, 532, 518))
    after = _el("list_item", "[0045] The next paragraph", (9, 527, 532, 553), level=1)
    out = join_hanging_markers([marker, text, after])
    assert [e.text for e in out] == [
        "[0044] For example, when n is 3, the store holds",
        "[0045] The next paragraph",
    ]
    assert out[0].type == "list_item" and out[0].bbox == (9, 492, 532, 518)
    # Listed after the line it numbers (the page's own order), it still leads it.
    later = join_hanging_markers([text, marker, after])
    assert [e.text for e in later] == [e.text for e in out]


def test_a_bullet_alone_gives_its_text_the_list_item_without_the_glyph() -> None:
    out = join_hanging_markers(
        [
            _el("paragraph", "•", (50, 100, 55, 110)),
            _el("paragraph", "Keep it", (62, 100, 200, 110)),
        ]
    )
    assert [(e.type, e.text) for e in out] == [("list_item", "Keep it")]


def test_a_marker_is_not_joined_to_text_off_its_line_or_far_away() -> None:
    marker = _el("list_item", "[0073]", (9, 717, 34, 728))
    below = _el("paragraph", "Text further down the page", (64, 754, 532, 777))
    far = _el("paragraph", "Across the page", (400, 717, 532, 728))
    assert len(join_hanging_markers([marker, below])) == 2
    assert len(join_hanging_markers([marker, far])) == 2
    # A bare number is no marker: a page number or a table value may sit there.
    number = _el("paragraph", "12", (9, 717, 20, 728))
    assert len(join_hanging_markers([number, _el("paragraph", "x", (30, 717, 90, 728))])) == 2
    # Nor is a sentence: "[0044]" joins, "See [4]" does not.
    ref = _el("paragraph", "See [4]", (9, 717, 40, 728))
    assert len(join_hanging_markers([ref, _el("paragraph", "x", (45, 717, 90, 728))])) == 2


_TOC = [
    [1, "No. 1017. Retail Trade—Establishments, Employees, and Payroll: 1998 and 1999", 3],
    [
        1,
        "No. 1018. Retail Trade—Establishments, Sales, Payroll, and Employees by Kind of "
        "Business: 1997",
        3,
    ],
]


def test_a_heading_wrapped_onto_its_own_block_is_joined_when_the_outline_says_so() -> None:
    outline = OutlineIndex.from_toc(_TOC)
    first = _el(
        "heading",
        "No. 1017. Retail Trade—Establishments, Employees, and Payroll:",
        (27, 18, 309, 25),
        level=1,
    )
    second = _el("heading", "1998 and 1999", (72, 26, 137, 33), level=1)
    body = _el("paragraph", "[1,113.1 represents 1,113,100]", (27, 40, 369, 52))
    out = join_wrapped_headings([first, second, body], outline.continued_by)
    assert [e.text for e in out] == [
        "No. 1017. Retail Trade—Establishments, Employees, and Payroll: 1998 and 1999",
        body.text,
    ]
    assert out[0].bbox == (27, 18, 309, 33)
    # Three lines join one at a time; a plain paragraph line may be the wrap too.
    parts = [
        _el("heading", "No. 1018. Retail Trade—Establishments, Sales,", (27, 18, 309, 25), level=1),
        _el("paragraph", "Payroll, and Employees by Kind of", (40, 26, 290, 33)),
        _el("heading", "Business: 1997", (80, 34, 200, 41), level=1),
    ]
    assert [e.text for e in join_wrapped_headings(parts, outline.continued_by)] == [_TOC[1][1]]


def test_stacked_headings_stay_apart_without_the_outline_saying_they_are_one() -> None:
    outline = OutlineIndex.from_toc([[1, "Methods", 3], [2, "Data collection", 3]])
    a = _el("heading", "Methods", (27, 18, 309, 25), level=1)
    b = _el("heading", "Data collection", (27, 26, 200, 33), level=2)
    assert len(join_wrapped_headings([a, b], outline.continued_by)) == 2
    # The outline's entry, but the second line is not below the first: no join.
    toc = OutlineIndex.from_toc([[1, "Retail Trade Establishments and Employees", 3]])
    head = _el("heading", "Retail Trade Establishments", (27, 18, 309, 25), level=1)
    far = _el("paragraph", "and Employees", (27, 80, 200, 87))
    assert len(join_wrapped_headings([head, far], toc.continued_by)) == 2
    near = _el("paragraph", "and Employees", (27, 26, 200, 33))
    assert len(join_wrapped_headings([head, near], toc.continued_by)) == 1


def test_without_an_outline_only_a_tight_line_of_the_same_heading_level_joins() -> None:
    first = _el(
        "heading", "Retail Trade—Establishments, Employees, and", (27, 18, 309, 25), level=2
    )
    tight = _el("heading", "Payroll by State", (72, 26, 200, 33), level=2)
    (one,) = join_wrapped_headings([first, tight], None)
    assert one.text == "Retail Trade—Establishments, Employees, and Payroll by State"
    # A paragraph below, another level, a numbered heading, or a looser gap: apart.
    para = tight.model_copy(update={"type": "paragraph", "level": None})
    deeper = tight.model_copy(update={"level": 3})
    numbered = tight.model_copy(update={"text": "2.1 Payroll by State"})
    loose = tight.model_copy(update={"bbox": (72, 30, 200, 37)})  # 5 pt under a 7 pt line
    for below in (para, deeper, numbered, loose):
        assert len(join_wrapped_headings([first, below], None)) == 2, below


def test_without_an_outline_a_chapter_label_or_a_smaller_line_stays_apart() -> None:
    label = _el("heading", "Chapter 2", (72, 156, 190, 186), level=1)
    title = _el("heading", "Building the package", (72, 190, 300, 214), level=1)
    assert len(join_wrapped_headings([label, title], None)) == 2
    big = _el("heading", "Annual Report of the", (72, 156, 400, 186), level=1)
    small = _el("heading", "Board", (72, 190, 130, 208), level=1)  # 18 under a 30 pt line
    assert len(join_wrapped_headings([big, small], None)) == 2
    same = small.model_copy(update={"bbox": (72, 190, 130, 218)})
    assert len(join_wrapped_headings([big, same], None)) == 1


def test_a_heading_repeated_on_consecutive_pages_is_a_running_title() -> None:
    from chunkweave.parsers.pdf.headings import demote_running_titles

    box = (72.0, 72.0, 300.0, 84.0)
    els = [_el("heading", "Action plan 2021-2026", box, page=p, level=2) for p in (26, 27, 28, 29)]
    els += [_el("heading", "Exercises", box, page=p, level=2) for p in (10, 40, 70, 100)]
    els += [_el("heading", "Summary", box, page=p, level=2) for p in (5, 6)]
    listed = [_el("heading", "Listed", box, page=p, level=1) for p in (50, 51, 52)]
    out = list(demote_running_titles([*els, *listed], lambda el: el.text == "Listed"))
    kinds = {(e.text, e.page): e.type for e in out}
    assert {kinds[("Action plan 2021-2026", p)] for p in (26, 27, 28, 29)} == {"paragraph"}
    # Chapter-closing titles far apart, two pages only, or the outline's: headings.
    assert {kinds[("Exercises", p)] for p in (10, 40, 70, 100)} == {"heading"}
    assert {kinds[("Summary", p)] for p in (5, 6)} == {"heading"}
    assert {kinds[("Listed", p)] for p in (50, 51, 52)} == {"heading"}
