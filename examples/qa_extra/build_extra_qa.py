"""Write ``extra_qa.jsonl`` from the hand-written questions below, checking evidence.

Usage: ``python examples/qa_extra/build_extra_qa.py [--corpus DIR] [--no-parse]``

The questions sit where the seeded draws of ``draw_units.py`` (``draws.json``: ids
``c``/``s``), ``draw_manual_cells.py`` (``draws_manual.json``: ``m``) and
``draw_more_units.py`` (``draws_more.json``: ``t``/``h``) put them: each row below names
the draw it was written for. Every evidence string must occur
verbatim (whitespace-normalised) in the document's PyMuPDF plain text; a question whose
evidence is not found stops the build. Whether chunkweave's own parse (an element's text
or one table cell) contains the evidence is only reported, never required: the set is
meant to measure the parser, not to follow it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

from draw_units import norm, page_texts  # noqa: E402

from chunkweave.storage.evaluate import QAItem, missing_in_parse, write_qa  # noqa: E402

BG = "background_lines_1.pdf"
CS = "column_span_2.pdf"
ACW = "anticlockwise_table_1.pdf"
EU = "eu-004.pdf"
TT = "twotables_2.pdf"
HEALTH = "health.pdf"
US18 = "us-018.pdf"
ROWSPAN = "row_span_1.pdf"
S0324 = "12s0324.pdf"
SPAN = "spanning_cells.pdf"
MULTI = "multiple_tables.pdf"
CW2 = "clockwise_table_2.pdf"
QMF = "027613.pdf"
FEDREG = "federal-register-2020-17221.pdf"
VHEAD = "vertical_header.pdf"
STAT = "268346.pdf"
CN67 = "issue-67-example.pdf"
KREP = "2125318_환경노동위원회_검토보고서.[2125318]탄중법 검토보고서(이수진의원안)_hwp.pdf"
KPAT = "특허_1020210175798.pdf"
PLATY = "189478.pdf"
PADAUK = "Padauk-features.pdf"
GERMAN = "PDFUA-Ref-2-05_BookChapter-german.pdf"
PV = "2023-06-20-PV.pdf"
KIDS = "pdkids.pdf"
MAINT = "maint-guide.ja.pdf"
PUFF = "020806.pdf"
PIARC = "125619.pdf"
ML = "issue-982-example.pdf"
CHELSEA = "chelsea_pdta.pdf"
ABY = "AbyssinicaSILFontFeatures.pdf"

# (draw, doc, kind, question, evidence). ``draw`` is "c<i>" for draws.json's cells[i] and
# "s<i>" for sections[i]. Kinds: "table" = the answer is one table cell, the question
# names the row by its key cell and the column by its header; "heading" = the question
# names the section's topic, which the evidence passage does not.
# Skipped draws (kept out, in draw order): c5, c16, c23 (the drawn row has no key cell:
# it is a header row), c20 (same cell as c15 after the uniqueness replacement); s11
# (a second "Austroads" bookmark on page 11: its title is found where s5's is, so its
# text is s5's); c29 (added 2026-12-03: the drawn cell "Total GMC Enrollment" is the
# label of a totals row, not a value a question can ask for).
# Issue 31 (draws_more.json, ids "t<i>" and "h<i>"): skipped t1, t5, t58 (find_tables
# merged a Scheherazade row with the next rows' settings), t10 (the cell carries a glyph
# of the Example column), t12, t50, t63 (two years' values in one 268346 cell), t36 (its
# key "plasmid" names two rows); h3 (title not found as printed: its text is the front
# matter), h8 (a table of contents), h13, h26 (lists of numerals and bibliographic fields).
QUESTIONS: list[tuple[str, str, str, str, str]] = [
    # --- table cells, draws c0..c25 in order --------------------------------------------
    (
        "c0",
        BG,
        "table",
        "On what date did the Red Ribbon Express (RRE-II) cover Delhi?",
        "1.12.2009",
    ),
    (
        "c1",
        BG,
        "table",
        "How many persons were tested for HIV in Gujarat during the RRE-II coverage?",
        "1,453",
    ),
    (
        "c2",
        CS,
        "table",
        "Which age/sex/physiological group is covered by the diet survey?",
        "All the individuals partaking meals in the HH",
    ),
    (
        "c3",
        ACW,
        "table",
        "How many adult women in Madhya Pradesh were covered for blood pressure in 2011-12?",
        "2150",
    ),
    (
        "c4",
        EU,
        "table",
        "What was the number of food outlets (thousands) in Portugal in 1996/7?",
        "27.3",
    ),
    (
        "c6",
        TT,
        "table",
        "What percentage of adult women in Madhya Pradesh have a 5-8 std. literacy status?",
        "24.1",
    ),
    (
        "c7",
        HEALTH,
        "table",
        "What is Jharkhand's revenue budget for medical & public health?",
        "8,185,079",
    ),
    (
        "c8",
        TT,
        "table",
        "What share of households in Maharashtra have a male head with 1-4 std. literacy?",
        "17.3",
    ),
    (
        "c9",
        US18,
        "table",
        "What is the projected number of public high school graduates in Kentucky in 2021–22?",
        "40,490",
    ),
    (
        "c10",
        ROWSPAN,
        "table",
        "Which plan name serves Mendocino county under the COHS plan type?",
        "Partnership Health Plan of CA",
    ),
    (
        "c11",
        ROWSPAN,
        "table",
        "Which county of the COHS plan type has a total of 7,360?",
        "Lassen",
    ),
    (
        "c12",
        ROWSPAN,
        "table",
        "Which GMC plan name in San Diego has a total of 264,639?",
        "Community Health Group",
    ),
    (
        "c13",
        TT,
        "table",
        "What percentage of adult women in Tamil Nadu are illiterate?",
        "29.9",
    ),
    (
        "c14",
        S0324,
        "table",
        "How many arrests for forcible rape were there in total in 2009?",
        "16,362",
    ),
    (
        "c15",
        BG,
        "table",
        "On which dates did the Red Ribbon Express (RRE-II) cover Maharashtra?",
        "4.01.2010 to 1.2.2010",
    ),
    (
        "c17",
        ACW,
        "table",
        "How many individuals in Gujarat had a nutritional assessment in 1988-90?",
        "5374",
    ),
    (
        "c18",
        US18,
        "table",
        "What is the projected number of public high school graduates in Maine in 2018–19?",
        "12,250",
    ),
    (
        "c19",
        SPAN,
        "table",
        "In the best practice scenario, how many volume servers are in server closets in 2009?",
        "1,386",
    ),
    (
        "c21",
        SPAN,
        "table",
        "In the improved operation scenario, how many volume servers are in server closets "
        "in 2007?",
        "1,505",
    ),
    (
        "c22",
        ACW,
        "table",
        "How many individuals in Orissa had a nutritional assessment in 1996-97?",
        "12024",
    ),
    (
        "c24",
        MULTI,
        "table",
        "In the first table, what is in the Hjdhshj row under the Ghfhbdhj column?",
        "Hjhjhh",
    ),
    (
        "c25",
        ACW,
        "table",
        "How many individuals in Kerala had a nutritional assessment in 1988-90?",
        "6633",
    ),
    # --- sections (heading-scoped), draws s0..s20 in order ------------------------------
    (
        "s0",
        MAINT,
        "heading",
        "watch ファイルは何を監視しますか？",
        "最初ソースを入手したサイトを監視します。",
    ),
    (
        "s1",
        PUFF,
        "heading",
        "What is PUFF-III's method of solution for the ENDF covariance data?",
        "PUFF-III processes the point covariance data into multigroup covariances.",
    ),
    (
        "s2",
        PUFF,
        "heading",
        "In the description of the program's function, which ENDF files does PUFF-III process?",
        "processes the uncertainty information in ENDF Files 31, 32 and 33",
    ),
    (
        "s3",
        PIARC,
        "heading",
        "In the note on numbering the stages of audit, should audits of existing roads share "
        "a guide with project audits?",
        "an audit of an existing road is so different from an audit of a project, that it "
        "should not be included in the same guide.",
    ),
    (
        "s4",
        ML,
        "heading",
        "In the automatically generated Wikipedia sample of the appendix, whose generals are "
        "mentioned?",
        "His generals were the powerful ruler of the Portugal",
    ),
    (
        "s5",
        PIARC,
        "heading",
        "How many road safety professionals did the forum described under Austroads attract?",
        "The forum attracted 180 road safety professionals from 14 countries.",
    ),
    (
        "s6",
        PIARC,
        "heading",
        "How does the Canadian Road Safety Audit Guide (version 4) define a road safety audit?",
        "is a formal and independent safety performance review of a road transportation project",
    ),
    (
        "s7",
        MAINT,
        "heading",
        "rules ファイルをカスタマイズして dh_python2 を使うには、dh をどう実行しますか？",
        "dh $@ --with python2 を使用します。",
    ),
    (
        "s8",
        PUFF,
        "heading",
        "When PUFF-III was tested, how much CPU time did the calculation take?",
        "and the CPU time required for the calculation is 32 seconds.",
    ),
    (
        "s9",
        MAINT,
        "heading",
        "相談する前に、パッケージ作成の詳細を学ぶよい方法は何ですか？",
        "小さなテストパッケージを作ることは、パッケージ作成の詳細を学ぶよい方法です。",
    ),
    (
        "s10",
        ML,
        "heading",
        "What input did the GRUV network take instead of notes or MIDI files?",
        "Nayebi and Vitelli took raw audio waveforms as input.",
    ),
    (
        "s12",
        ML,
        "heading",
        "Which dictionary definition of creativity does the introduction start from?",
        "the ability to use your imagination to produce new ideas, make things etc.",
    ),
    (
        "s13",
        CHELSEA,
        "heading",
        "Pour la sécurité du réseau, qu'a-t-on ajouté au plan d'action ?",
        "Nous avons donc ajouté au plan d’action l’identification des emplacements dangereux",
    ),
    (
        "s14",
        ML,
        "heading",
        "Which 2005 book by Cope is listed in the references?",
        "Computer models of musical creativity. MIT Press Cambridge, 2005.",
    ),
    (
        "s15",
        PIARC,
        "heading",
        "What is road safety audit, according to the Austroads definition?",
        "an independent, qualified team reports on the project’s crash potential and safety "
        "performance.",
    ),
    (
        "s16",
        ML,
        "heading",
        "When was the Emily Howell project started, and what was it based on?",
        "In 2003, Cope started a new project which was based on EMI",
    ),
    (
        "s17",
        ABY,
        "heading",
        "Which short manual of the Amharic language is among the font document's references?",
        "The Alone-Stokes Short Manual of the Amharic Language (with vocabularies).",
    ),
    (
        "s18",
        PIARC,
        "heading",
        "Who wrote the book Practical Road Safety Auditing (2001)?",
        "This book was written by Steve Proctor, Martin Belcher and Phil Cook",
    ),
    (
        "s19",
        PUFF,
        "heading",
        "Which Los Alamos code-system report is in the PUFF-III paper's references?",
        "Code System for Producing Pointwise and Multigroup Neutron and Photon Cross Sections "
        "from ENDF/B Data",
    ),
    (
        "s20",
        MAINT,
        "heading",
        "アップストリームのバグを修正したら、どのコマンドでパッチとして登録しますか？",
        "dquilt コマンドを使ってfix-gentoo-target.patch として登録しましょう",
    ),
    # --- table cells, draws c26..c39 in order (added 2026-12-03, before any scoring) ------
    (
        "c26",
        CW2,
        "table",
        "Among women with 3 children and no sons, what percentage currently use any "
        "contraceptive method?",
        "74.7",
    ),
    (
        "c27",
        CW2,
        "table",
        "What percentage of women in the fourth wealth index group use any modern contraceptive "
        "method?",
        "52.3",
    ),
    (
        "c28",
        HEALTH,
        "table",
        "What is Meghalaya's total budget for medical & public health and family welfare?",
        "3,971,614",
    ),
    (
        "c30",
        ACW,
        "table",
        "How many individuals in Tamil Nadu had a nutritional assessment in 1988-90?",
        "10217",
    ),
    (
        "c31",
        S0324,
        "table",
        "How many females were arrested for larceny-theft in 2009 (in thousands)?",
        "471.3",
    ),
    (
        "c32",
        BG,
        "table",
        "How many persons in total were tested for HIV by the Red Ribbon Express (RRE-II)?",
        "10,644",
    ),
    (
        "c33",
        EU,
        "table",
        "By how many percentage points did Austria's five-firm concentration ratio for food "
        "retailing change in recent years?",
        "+14",
    ),
    (
        "c34",
        US18,
        "table",
        "What is the projected number of public high school graduates in South Carolina in "
        "2012–13?",
        "39,960",
    ),
    (
        "c35",
        CW2,
        "table",
        "Among women with 3 children including one or more sons, what percentage currently use "
        "any contraceptive method?",
        "85.0",
    ),
    (
        "c36",
        ACW,
        "table",
        "How many adult men in Tamil Nadu were covered for fasting blood sugar in 2011-12?",
        "1119",
    ),
    (
        "c37",
        S0324,
        "table",
        "How many males were arrested for larceny-theft in 2009 (in thousands)?",
        "608.8",
    ),
    (
        "c38",
        EU,
        "table",
        "What is the source of Finland's five-firm concentration ratio for food retailing?",
        "Nielson, Finland, 1997",
    ),
    (
        "c39",
        EU,
        "table",
        "Over what period was the change in Sweden's five-firm food retailing concentration "
        "measured?",
        "1985-96",
    ),
    # --- table cells of the long manual 027613.pdf, draws m0..m23 of draws_manual.json -----
    # (draw_manual_cells.py; added 2026-12-03 before any scoring). Skipped: m1 (find_tables
    # merged the page-13 example's columns into one cell: no key or header to ask by).
    (
        "m0",
        QMF,
        "table",
        "In the QMF sample table Q.PARTS, which part does supplier 1400P supply for the GEAR "
        "product?",
        "OIL",
    ),
    (
        "m2",
        QMF,
        "table",
        "In the QMF sample table Q.SUPPLIER, what is the street address of supplier account 1300S?",
        "40025 EASTLAND",
    ),
    (
        "m3",
        QMF,
        "table",
        "In the QMF sample table Q.SUPPLIER, what is the zip code of supplier account 1200S?",
        "87050",
    ),
    (
        "m4",
        QMF,
        "table",
        "In the QMF sample table Q.PARTS, which part does supplier 1100P supply for the RELAY "
        "product?",
        "PLASTIC",
    ),
    (
        "m5",
        QMF,
        "table",
        "In the QMF sample table Q.INTERVIEW, what is the first name of the applicant with "
        "TEMPID 450?",
        "PAUL",
    ),
    (
        "m6",
        QMF,
        "table",
        "In the QMF sample table Q.PARTS, which part does supplier 1400P supply for the "
        "GENERATOR product?",
        "MAGNETS",
    ),
    (
        "m7",
        QMF,
        "table",
        "In the QMF sample table Q.INTERVIEW, what is the first name of the applicant with "
        "TEMPID 490?",
        "PIERRE",
    ),
    (
        "m8",
        QMF,
        "table",
        "In the QMF sample table Q.PARTS, what is the project number of the steel part supplier "
        "1100P supplies for the WRENCHSET?",
        "1520",
    ),
    (
        "m9",
        QMF,
        "table",
        "In the QMF sample table Q.PRODUCTS, what is the name of product number 450?",
        "CHISEL",
    ),
    (
        "m10",
        QMF,
        "table",
        "In the QMF sample table Q.PARTS, which part does supplier 1300S supply for the RELAY "
        "product?",
        "COPPER",
    ),
    (
        "m11",
        QMF,
        "table",
        "In the QMF sample table Q.PRODUCTS, what is the name of product number 330?",
        "HAMMER",
    ),
    (
        "m12",
        QMF,
        "table",
        "With QMF's LIST command, what do you enter to list the objects another user owns and "
        "shares with you?",
        "LIST objecttype (OWNER=userid",
    ),
    (
        "m13",
        QMF,
        "table",
        "In the QMF sample table Q.PARTS, which part does supplier 1400P supply for the MOTOR "
        "product?",
        "VALVES",
    ),
    (
        "m14",
        QMF,
        "table",
        "In QMF's table of TIME formats, what is the example time in JIS format?",
        "13:25:10",
    ),
    (
        "m15",
        QMF,
        "table",
        "In the QMF sample table Q.APPLICANT, what comment was made about applicant 470?",
        "EXPERIENCED SALESMAN",
    ),
    (
        "m16",
        QMF,
        "table",
        "In the QMF sample table Q.APPLICANT, what comment was made about applicant 420?",
        "OFFER SALES POSITION",
    ),
    (
        "m17",
        QMF,
        "table",
        "In the QMF sample table Q.SUPPLIER, in which city is supplier account 1400P located?",
        "JOLIET",
    ),
    (
        "m18",
        QMF,
        "table",
        "In the QMF sample table Q.INTERVIEW, what is the first name of the applicant with "
        "TEMPID 480?",
        "DIANE",
    ),
    (
        "m19",
        QMF,
        "table",
        "In the QMF sample table Q.INTERVIEW, what is the first name of the applicant with "
        "TEMPID 400?",
        "RICHARD",
    ),
    (
        "m20",
        QMF,
        "table",
        "In the QMF sample table Q.PRODUCTS, what is the name of product number 20?",
        "SWITCH",
    ),
    (
        "m21",
        QMF,
        "table",
        "In QMF's table of DATE formats, what is the example date in USA format?",
        "12/15/1998",
    ),
    (
        "m22",
        QMF,
        "table",
        "In the QMF sample table Q.APPLICANT, what comment was made about applicant 450?",
        "GOOD CLERICAL BACKGROUND",
    ),
    (
        "m23",
        QMF,
        "table",
        "In the QMF sample table Q.PARTS, which part does supplier 1200S supply for the "
        "GENERATOR product?",
        "WIRE",
    ),
    # --- issue 31: draws t0..t63 of draws_more.json (cells), in order --------------------
    (
        "t0",
        KPAT,
        "table",
        "개인 정보 표기 형식 표에서 휴대폰번호 표기 형식에 해당하는 정규 표현식은 무엇인가?",
        r"^\d{3}-\d{3,4}-\d{4}$",
    ),
    (
        "t2",
        VHEAD,
        "table",
        "How many registered voters does Hawes have in the August 2018 primary results?",
        "884",
    ),
    (
        "t3",
        CN67,
        "table",
        "东北电气2018年第一季度合并资产负债表中，其他流动资产的期初余额是多少？",
        "3,696,251.15",
    ),
    (
        "t4",
        PLATY,
        "table",
        "How many reads are planned for the 40 kb Fosmid clones in the platypus sequencing "
        "strategy?",
        "2.0M",
    ),
    (
        "t6",
        US18,
        "table",
        "How many public high school graduates are projected for New Mexico in 2020–21?",
        "20,130",
    ),
    (
        "t7",
        FEDREG,
        "table",
        "What is the FAA's estimated cost per airplane of the stabilizer wiring change?",
        "Up to $10,505",
    ),
    (
        "t8",
        CN67,
        "table",
        "东北电气2018年第一季度合并资产负债表中，未分配利润的期初余额是多少？",
        "-2,034,142,303.59",
    ),
    (
        "t9",
        CN67,
        "table",
        "东北电气2018年1-3月购买商品、接受劳务支付的现金比上年同期变动了百分之几？",
        "-62.81%",
    ),
    (
        "t11",
        KREP,
        "table",
        "광역탄소중립‧녹색성장위원회 위원 구성 현황에서 울산의 기타 민간위원은 누구인가?",
        "산림조합(1)",
    ),
    (
        "t13",
        FEDREG,
        "table",
        "What labor cost does the FAA estimate for the AOA sensor system test?",
        "40 work-hours × $85 per hour = $3,400",
    ),
    (
        "t14",
        PLATY,
        "table",
        "What sequence coverage would the Fosmid clones give in the platypus genome plan?",
        "0.4x",
    ),
    (
        "t15",
        PLATY,
        "table",
        "How many attempted reads does the platypus sequencing plan call for in total?",
        "38.7M",
    ),
    (
        "t16",
        PADAUK,
        "table",
        "What is the OpenType feature ID of Padauk's tear drop style washwe feature?",
        "cv02 or ss02",
    ),
    (
        "t17",
        KPAT,
        "table",
        "개인 정보 표기 형식 표에서 주민등록번호 표기 형식의 정규 표현식은 무엇인가?",
        r"^\d{6}-\d{7}$",
    ),
    (
        "t18",
        VHEAD,
        "table",
        "How many registered voters does Millen have in the August 2018 primary results?",
        "353",
    ),
    (
        "t19",
        PADAUK,
        "table",
        "Which OpenType feature ID turns on the Khamti variants in the Padauk font?",
        "cv06 or ss06",
    ),
    (
        "t20",
        VHEAD,
        "table",
        "How many votes did Jim Hines receive for governor in the county totals of the August "
        "2018 primary?",
        "317",
    ),
    (
        "t21",
        KREP,
        "table",
        "광역탄소중립‧녹색성장위원회 위원 구성 현황에서 광주의 시의원, 공공기관 등 위원 구성은?",
        "공공(11), 의원(4)",
    ),
    (
        "t22",
        US18,
        "table",
        "How many public high school graduates were projected for Indiana in 2012–13?",
        "65,990",
    ),
    (
        "t23",
        VHEAD,
        "table",
        "What is the poll book total for Caledonia in the August 2018 primary?",
        "393",
    ),
    (
        "t24",
        KREP,
        "table",
        "광역탄소중립‧녹색성장위원회 위원 구성 현황에서 전북의 시의원, 공공기관 등 위원은 "
        "몇 명인가?",
        "공공(4) 의원(3)",
    ),
    (
        "t25",
        KREP,
        "table",
        "광역탄소중립‧녹색성장위원회 위원 구성 현황에서 세종의 시의원, 공공기관 등 위원 구성은?",
        "공공(7), 의원(2)",
    ),
    (
        "t26",
        US18,
        "table",
        "How many public high school graduates are projected for Florida in 2016–17?",
        "163,780",
    ),
    (
        "t27",
        US18,
        "table",
        "How many public high school graduates are projected for the South region in 2017–18?",
        "1,174,920",
    ),
    (
        "t28",
        STAT,
        "table",
        "What were the 1997 sales, in millions of dollars, of gasoline stations?",
        "198,166",
    ),
    (
        "t29",
        PLATY,
        "table",
        "What sequence coverage do the 4 kb plasmid reads give in the platypus sequencing plan?",
        "5.8x",
    ),
    (
        "t30",
        KPAT,
        "table",
        "개인 정보 표기 형식 표에서 전화번호 표기 형식의 정규 표현식은 무엇인가?",
        r"^\d{2,3}-\d{3,4}-\d{4}$",
    ),
    (
        "t31",
        PLATY,
        "table",
        "What sequence coverage do the 8 kb plasmid reads give in the platypus sequencing plan?",
        "1.6x",
    ),
    (
        "t32",
        PADAUK,
        "table",
        "How do I set the Padauk font's language to Shan in XeTeX?",
        'Language set to Shan XeTeX: "Padauk/GR:language=shn" (Graphite) XeTeX: '
        '"Padauk/language=shn" (OpenType)',
    ),
    (
        "t33",
        US18,
        "table",
        "How many public high school graduates are projected for Illinois in 2015–16?",
        "130,450",
    ),
    (
        "t34",
        US18,
        "table",
        "How many public high school graduates did North Dakota have in 2008–09?",
        "7,232",
    ),
    (
        "t35",
        FEDREG,
        "table",
        "What labor cost does the FAA estimate for the stabilizer wiring change?",
        "Up to 79 work-hours × $85 per hour = Up to $6,715",
    ),
    (
        "t37",
        PLATY,
        "table",
        "How many attempted reads are planned for the 4 kb plasmids in the platypus genome "
        "project?",
        "28.0M",
    ),
    (
        "t38",
        STAT,
        "table",
        "What were the 1997 sales (mil. dol.) of motorcycle, boat, and other motor vehicle "
        "dealers?",
        "18,821",
    ),
    (
        "t39",
        US18,
        "table",
        "How many public high school graduates are projected for Texas in 2016–17?",
        "311,510",
    ),
    (
        "t40",
        PADAUK,
        "table",
        "What is the Graphite feature ID of the filled dots feature in Padauk?",
        "cv01 or fdot",
    ),
    (
        "t41",
        CN67,
        "table",
        "东北电气前10名无限售条件股东中，香港中央结算(代理人)有限公司持有的股份种类是什么？",
        "境外上市外资股",
    ),
    (
        "t42",
        CN67,
        "table",
        "东北电气2018年第一季度合并利润表中，本期销售费用是多少？",
        "764,036.62",
    ),
    (
        "t43",
        KREP,
        "table",
        "광역탄소중립‧녹색성장위원회 위원 구성 현황에서 인천의 기타 민간위원은 누구인가?",
        "탄중센터(1) 의료계(1) 언론(1)",
    ),
    (
        "t44",
        US18,
        "table",
        "How many public high school graduates did Montana have in 2006–07?",
        "10,122",
    ),
    (
        "t45",
        FEDREG,
        "table",
        "What is the estimated cost on U.S. operators of the stabilizer wiring change?",
        "Up to $766,865",
    ),
    (
        "t46",
        PLATY,
        "table",
        "What insert size do the BAC clones have in the platypus sequencing strategy?",
        "150 kb",
    ),
    (
        "t47",
        US18,
        "table",
        "How many public high school graduates are projected for Alabama in 2020–21?",
        "44,090",
    ),
    (
        "t48",
        CN67,
        "table",
        "东北电气2018年第一季度合并资产负债表中，预收款项的期初余额是多少？",
        "4,185,139.12",
    ),
    (
        "t49",
        VHEAD,
        "table",
        "How many registered voters does Mitchell have in the August 2018 primary results?",
        "327",
    ),
    (
        "t51",
        PLATY,
        "table",
        "What sequence coverage would the BAC clones give in the platypus genome plan?",
        "0.2x",
    ),
    (
        "t52",
        PADAUK,
        "table",
        "What is the Graphite feature ID for long U with Yayit and long UU with Hato in Padauk?",
        "ulon",
    ),
    (
        "t53",
        VHEAD,
        "table",
        "What is the poll book total for Alcona township in the August 2018 primary results?",
        "439",
    ),
    (
        "t54",
        CN67,
        "table",
        "东北电气2018年第一季度营业收入比上年同期增减了多少？",
        "-16.55%",
    ),
    (
        "t55",
        VHEAD,
        "table",
        "How many registered voters does Mikado have in the August 2018 primary results?",
        "781",
    ),
    (
        "t56",
        CN67,
        "table",
        "东北电气2018年1-3月销售商品、提供劳务收到的现金比上年同期变动了百分之几？",
        "-48.89%",
    ),
    (
        "t57",
        PLATY,
        "table",
        "What insert size do the Fosmid clones have in the platypus sequencing strategy?",
        "40 kb",
    ),
    (
        "t59",
        FEDREG,
        "table",
        "What is the estimated cost on U.S. operators of the AOA sensor system test?",
        "$248,200",
    ),
    (
        "t60",
        US18,
        "table",
        "How many public high school graduates are projected for Tennessee in 2020–21?",
        "61,870",
    ),
    (
        "t61",
        US18,
        "table",
        "How many public high school graduates did the South region have in 2008–09?",
        "1,068,270",
    ),
    (
        "t62",
        VHEAD,
        "table",
        "How many votes did Jim Stamas get for state senator (36th district) in the county "
        "totals of the August 2018 primary?",
        "1934",
    ),
    # --- issue 31: draws h0..h31 of draws_more.json (sections), in order -----------------
    (
        "h0",
        PV,
        "heading",
        "Selon la résolution DM-2023-001, combien de logements le projet de construction "
        "ajouterait-il?",
        "un agrandissement de l’arrière du bâtiment préservé, permettant l’ajout de 43 logements",
    ),
    (
        "h1",
        GERMAN,
        "heading",
        "Mit welchen Programmen befasst sich der Praxisteil laut dem konzeptionellen Ansatz "
        "des Buches?",
        "Vorarbeit und PDF-Ausgabe mit Adobe InDesign, Microsoft Office und LibreOffice",
    ),
    (
        "h2",
        FEDREG,
        "heading",
        "What must be done if the verification after installing the flight control computer "
        "operational program software does not show the approved part number?",
        "before further flight, do corrective actions until the approved software part "
        "number is installed",
    ),
    (
        "h4",
        PLATY,
        "heading",
        "According to the overview of the platypus proposal, what was the platypus first "
        "thought to be?",
        "initially thought to be a skilled taxidermist’s hoax",
    ),
    (
        "h5",
        KPAT,
        "heading",
        "도면의 간단한 설명에 따르면 도 8은 무엇을 나타내는가?",
        "전자 단말 장치의 동작 방법을 도시한 순서도이다",
    ),
    (
        "h6",
        GERMAN,
        "heading",
        "Welche Haltung ist laut dem Abschnitt über Aufklärung und das Mitnehmen aller "
        "Beteiligten eher kontraproduktiv?",
        "»Du musst jetzt alles barrierefrei machen, das steht so im Gesetz,",
    ),
    (
        "h7",
        KPAT,
        "heading",
        "발명을 실시하기 위한 구체적인 내용에서 구성요소들의 기능은 어떤 소자들로 구현될 수 "
        "있다고 하는가?",
        "전자회로, 집적회로, ASIC(Application Specific Integrated Circuit) 등 공지된 다양한 소자들",
    ),
    (
        "h9",
        GERMAN,
        "heading",
        "Was muss bei der Erstellung barrierefreier PDFs auf Basis gescannter Dokumente "
        "zuerst mit den Papierdokumenten geschehen?",
        "Um Dokumente, die nur in Papierform vorliegen, digital zur Verfügung zu stellen, "
        "müssen diese natürlich zuerst einmal digitalisiert werden.",
    ),
    (
        "h10",
        KIDS,
        "heading",
        "In the story of Hiawatha, what did the people learn to grow?",
        "the people learned to raise corn and beans",
    ),
    (
        "h11",
        GERMAN,
        "heading",
        "Was ist laut dem Abschnitt über Zuständigkeiten meist die Folge, wenn niemand die "
        "Aufgabe übernimmt?",
        "dass die Erstellung barrierefreier PDFs an externe Dienstleister vergeben wird",
    ),
    (
        "h12",
        GERMAN,
        "heading",
        "Wann gelingt es laut dem Abschnitt „Barrierefreiheit braucht Unterstützung“, das "
        "Thema im Unternehmen zu verankern?",
        "wenn Barrierefreiheit Teil der Unternehmensphilosophie ist",
    ),
    (
        "h14",
        KPAT,
        "heading",
        "배경 기술에 따르면 기존에는 이미지 개체에 포함된 개인 정보를 어떻게 처리했는가?",
        "사용자가 직접 이미지 개체에 포함된 개인 정보를 식별하여",
    ),
    (
        "h15",
        KIDS,
        "heading",
        "According to the poem Life's Mirror, what happens when you give your best to the world?",
        "And the best will come back to you.",
    ),
    (
        "h16",
        KIDS,
        "heading",
        "In the story of Gooloo the magpie, what was the big grinding stone called?",
        "the big stone was called a dayoorl",
    ),
    (
        "h17",
        FEDREG,
        "heading",
        "Which MMEL items do the MEL provisions for an inoperative flight control system "
        "correspond to?",
        "items 22–10–01B, 22–10–02, 22–10–03, 22–11–01, 22–11–02",
    ),
    (
        "h18",
        FEDREG,
        "heading",
        "Is a special flight permit needed for the operational readiness flight the proposed "
        "AD requires?",
        "A special flight permit is not required to accomplish",
    ),
    (
        "h19",
        FEDREG,
        "heading",
        "Who may approve alternative methods of compliance with this Boeing 737 AD?",
        "The Manager, Seattle ACO Branch, FAA, has the authority to approve",
    ),
    (
        "h20",
        PLATY,
        "heading",
        "How many WGS reads per species would be generated to discover platypus and echidna SNPs?",
        "by generating ~ 10,000 WGS reads for each species",
    ),
    (
        "h21",
        PLATY,
        "heading",
        "Why should a female platypus be the one chosen for sequencing?",
        "the X chromosome is present in two copies in a female platypus",
    ),
    (
        "h22",
        PLATY,
        "heading",
        "In its conclusion, what role does the platypus proposal give monotremes relative to "
        "other mammals?",
        "monotremes provide an invaluable outgroup to therian mammals",
    ),
    (
        "h23",
        GERMAN,
        "heading",
        "Auf welchem Workshop beruhen die meisten Inhalte zu den Vorüberlegungen und "
        "Rahmenkriterien?",
        "»Organization-wide creation of accessible PDF/UA documents – The shortest route to "
        "100 % PDF/UA«",
    ),
    (
        "h24",
        PLATY,
        "heading",
        "Among the unique features of the monotreme genome, how many chromosomes does the "
        "platypus karyotype have?",
        "The platypus karyotype consists of 52 chromosomes in both sexes",
    ),
    (
        "h25",
        FEDREG,
        "heading",
        "How does the proposed rule define confidential business information?",
        "commercial or financial information that is both customarily and actually treated "
        "as private by its owner",
    ),
    (
        "h27",
        KIDS,
        "heading",
        "What does the name of the Wailuku river mean in Hawaiian?",
        'means literally "destroying water."',
    ),
    (
        "h28",
        KIDS,
        "heading",
        "In The King of the Kites, how did the mouse and the frog agree to settle their quarrel?",
        "At last they agreed to refer the decision to a council.",
    ),
    (
        "h29",
        PLATY,
        "heading",
        "Where does the monotreme fossil record come from, according to the section on "
        "monotreme relationships and phylogeny?",
        "comes almost exclusively from Australia and New Guinea",
    ),
    (
        "h30",
        PLATY,
        "heading",
        "Which 2002 paper cited in the platypus proposal's references is about echidna IgM?",
        "provides insights into the time of divergence of extant mammals",
    ),
    (
        "h31",
        GERMAN,
        "heading",
        "Wie sollte laut der Einleitung ein barrierefreies PDF nicht entstehen?",
        "und nicht wie heutzutage noch oft als nachgelagerter Prozess",
    ),
]


def document_text(path: Path) -> str:
    """Return the document's PyMuPDF plain text, pages joined, whitespace normalised."""
    return " ".join(page_texts(path))


def missing_evidence(corpus: Path) -> list[tuple[str, str]]:
    """Return ``(doc, evidence)`` for every question whose evidence is not in its text."""
    texts = {doc: document_text(corpus / doc) for doc in sorted({q[1] for q in QUESTIONS})}
    return [(q[1], q[4]) for q in QUESTIONS if norm(q[4]) not in texts[q[1]]]


def items() -> list[QAItem]:
    """Return the questions as QA items, in order (the draw id stays here only)."""
    return [
        QAItem(question=question, evidence=evidence, doc=doc, kind=kind)
        for _, doc, kind, question, evidence in QUESTIONS
    ]


def parse_report(corpus: Path) -> list[tuple[str, str, str]]:
    """Return ``(draw, doc, evidence)`` for evidence chunkweave's parse does not contain."""
    asked = items()
    lost = set(missing_in_parse(asked, corpus))
    return [
        (draw, doc, evidence)
        for (draw, doc, _, _, evidence), item in zip(QUESTIONS, asked, strict=True)
        if item in lost
    ]


def main() -> int:
    """Check the evidence against the documents' text, report the parse, write the file."""
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=ROOT.parent / "shared" / "corpus-extra")
    ap.add_argument("--out", type=Path, default=HERE / "extra_qa.jsonl")
    ap.add_argument("--no-parse", action="store_true", help="skip the chunkweave parse report")
    args = ap.parse_args()
    missing = missing_evidence(args.corpus)
    if missing:
        for doc, evidence in missing:
            print(f"evidence not in the text of {doc}: {evidence!r}", file=sys.stderr)
        return 1
    print(f"wrote {write_qa(args.out, items())} questions to {args.out}")
    if not args.no_parse:
        lost = parse_report(args.corpus)
        print(f"chunkweave's parse contains {len(QUESTIONS) - len(lost)}/{len(QUESTIONS)}")
        for draw, doc, evidence in lost:
            print(f"  not in the parse: {draw} {doc}: {evidence!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
