"""Evidence for and against PDF heading candidates: text rules, outline rules, page passes."""

from __future__ import annotations

from chunkweave.parsers.elements import Element
from chunkweave.parsers.pdf.headings import (
    HeadingModel,
    OutlineIndex,
    demote_figure_labels,
    demote_label_runs,
    keys_match,
    match_key,
)
from chunkweave.parsers.pdf.headings.filters import (
    is_date,
    is_name_list,
    is_toc_entry,
    plausible_heading_text,
)


def _el(kind: str, text: str, level: int | None = None) -> Element:
    return Element(type=kind, text=text, level=level, page=1, order=0)


def _types(elements: list[Element]) -> list[str]:
    return [e.type for e in elements]


def test_toc_entries_have_leaders_and_page_numbers() -> None:
    assert is_toc_entry("2 Simple manipulations; numbers and vectors . . 8")
    assert is_toc_entry("3 Objects, their modes and attributes. . . . . . . 14")
    assert is_toc_entry("Preface........ix")
    assert is_toc_entry("Introduction … 3")
    assert not is_toc_entry("2.3.1 Results")
    assert not is_toc_entry("Version 2.0")


def test_dates_and_name_lists() -> None:
    assert is_date("DECEMBER 12, 2022") and is_date("January 3, 2024") and is_date("01-17-2023")
    assert not is_date("March of the Penguins")
    assert is_name_list("W. N. Venables, D. M. Smith and the R Core Team")
    assert is_name_list("Ledell Wu, Sergey Edunov, Danqi Chen‡, Wen-tau Yih")
    assert not is_name_list("Related Work")
    assert not is_name_list("Grouping, loops and conditional execution")
    assert not is_name_list("Results and Discussion of 3 Models")


def test_plausible_heading_text() -> None:
    assert plausible_heading_text("Quasi-likelihood models", first_page=False)
    assert not plausible_heading_text("A", first_page=False)
    assert not plausible_heading_text("For more information:", first_page=False)
    assert not plausible_heading_text("Appendix D Function index . . . . 102", first_page=False)
    # Author lines are front matter on the first page only.
    names = "Alice Smith, Bob Jones and Carol Lee"
    assert not plausible_heading_text(names, first_page=True)
    assert plausible_heading_text(names, first_page=False)


def test_lone_letter_is_a_number_only_before_a_capital_or_a_dotted_number() -> None:
    assert match_key("1.3 R and statistics") == match_key("R and statistics") == "randstatistics"
    assert match_key("4.1 A specific example") == match_key("A specific example")
    assert match_key("Appendix C The command-line editor") == match_key("C The command-line editor")
    assert match_key("A.1 Proofs") == "proofs"
    assert keys_match(match_key("2.3.59-1 Command Code Input"), match_key("Command Code Input"))


def _outline_model(**kw: object) -> HeadingModel:
    args: dict[str, object] = {
        "body_size": 10.0,
        "style_levels": {},
        "outline_levels": {(10.0, True): 1, (14.0, True): 2},
        "title_style": None,
        "has_outline": True,
    }
    args.update(kw)
    return HeadingModel(**args)  # type: ignore[arg-type]


def test_outline_documents_need_more_than_body_size_bold() -> None:
    model = _outline_model()
    outline = OutlineIndex.from_toc([[1, "Program Scope", 7], [1, "Background", 7]])
    # Listed in the outline: a heading even in body-size bold.
    assert model.resolve("Program Scope", (10.0, True), 7, False, outline) == ("heading", 1)
    # Not listed, body-size bold: a label or table header, not a heading.
    assert model.resolve("LINE POSITION DESCRIPTION", (10.0, True), 7, False, outline) is None
    # Not listed but numbered, or in a display size: still a heading.
    assert model.resolve("2.3.59.9 Exhibits", (10.0, True), 9, False, outline) == ("heading", 1)
    assert model.resolve("The gaussian family", (14.0, True), 9, False, outline) == (
        "heading",
        2,
    )


def test_runs_of_unnumbered_same_level_headings_become_paragraphs() -> None:
    page = [
        _el("heading", "Implement roles", 4),
        _el("figure", ""),
        _el("heading", "Leverage row permissions", 4),
        _el("heading", "Protect columns", 4),
        _el("heading", "Security", 2),
        _el("paragraph", "Body text."),
    ]
    out = list(demote_label_runs(page))
    assert _types(out) == ["paragraph", "figure", "paragraph", "paragraph", "heading", "paragraph"]
    assert out[0].level is None and out[4].level == 2


def test_short_runs_and_numbered_headings_are_kept() -> None:
    two = [_el("heading", "Abstract", 1), _el("heading", "Introduction", 1)]
    numbered = [_el("heading", f"{i} Part", 1) for i in range(1, 5)]
    assert _types(list(demote_label_runs(two))) == ["heading", "heading"]
    assert _types(list(demote_label_runs(numbered))) == ["heading"] * 4


def test_bold_labels_inside_a_figure_become_paragraphs() -> None:
    long_body = "The statement shown in the figure below defines the rules. " * 3
    page = [
        _el("paragraph", long_body),
        _el("heading", "CREATE PERMISSION", 6),
        _el("paragraph", "Names the permission"),
        _el("heading", "FOR ROWS", 5),
        _el("paragraph", "Specifies a condition"),
        _el("caption", "Figure 3-1 CREATE PERMISSION statement"),
        _el("heading", "Column mask", 4),
    ]
    out = list(demote_figure_labels(page))
    assert _types(out) == [
        "paragraph",
        "paragraph",
        "paragraph",
        "paragraph",
        "paragraph",
        "caption",
        "heading",
    ]


def test_heading_right_above_a_lone_figure_is_kept() -> None:
    page = [
        _el("paragraph", "Long body text that introduces the figure. " * 3),
        _el("heading", "Architecture", 2),
        _el("figure", ""),
        _el("caption", "Figure 2: Overview of the system"),
    ]
    assert _types(list(demote_figure_labels(page)))[1] == "heading"
    table_caption = [
        *page[:2],
        _el("paragraph", "a"),
        _el("paragraph", "b"),
        _el("caption", "Table 1"),
    ]
    assert _types(list(demote_figure_labels(table_caption)))[1] == "heading"


def test_text_drawn_twice_keys_as_one_copy() -> None:
    assert match_key("Table of Contents Table of Contents") == match_key("Table of Contents")
    assert match_key("Bora Bora") == "borabora"  # too short to be a doubled title


def test_unlisted_headings_need_display_size_or_numbering_only_with_an_outline() -> None:
    assert not _outline_model().may_be_unlisted("mfrow=c(2, 4)", (11.0, False))
    assert _outline_model().may_be_unlisted("2.1 Vectors", (10.0, True))
    assert _outline_model().may_be_unlisted("Poisson models", (13.0, True))
    assert _outline_model(has_outline=False).may_be_unlisted("Display", (10.0, True))


def test_outline_listed_headings_are_never_demoted() -> None:
    page = [_el("heading", t, 1) for t in ("Background", "Authority", "Program Controls")]
    assert _types(list(demote_label_runs(page))) == ["paragraph"] * 3
    kept = demote_label_runs(page, listed=lambda el: el.text == "Authority")
    assert _types(list(kept)) == ["heading"] * 3
