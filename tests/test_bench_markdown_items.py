"""Peers' Markdown and HTML tables read as the benchmarks' items."""

from __future__ import annotations

from bench.markdown_items import html_table_rows, markdown_items, pipe_table_rows


def test_markdown_items_headings_tables_code() -> None:
    md = (
        "# Top\n\nIntro para\nsame para\n\n## Sub\n\n"
        "| h1 | h2 |\n| --- | --- |\n| a \\| b | c |\n\n"
        "```\n# a comment, not a heading\n```\n"
    )
    items = markdown_items(md, page=3)
    kinds = [(i.kind, i.level) for i in items]
    assert kinds == [
        ("heading", 1),
        ("text", None),
        ("heading", 2),
        ("table", None),
        ("text", None),
    ]
    assert items[1].text == "Intro para same para"
    assert items[3].rows == (("h1", "h2"), ("a | b", "c"))
    assert all(i.page == 3 for i in items)


def test_pipe_and_html_table_rows() -> None:
    assert pipe_table_rows(["|a|b|", "|:-|-:|", "|1|2|"]) == (("a", "b"), ("1", "2"))
    markup = "<table><tr><th>A</th><th>B</th></tr><tr><td>1</td><td> 2 <b>x</b></td></tr></table>"
    assert html_table_rows(markup) == (("A", "B"), ("1", "2 x"))
