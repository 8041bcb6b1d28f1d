"""Write ``corpus_qa.jsonl`` from the hand-written questions below, checking evidence.

Usage: ``python examples/qa/build_corpus_qa.py [--corpus DIR]``

Every evidence string must occur verbatim (whitespace-normalised) in the document
as chunkweave parses it: in an element's text, or in one table cell. A question
whose evidence is not found stops the build with the reason, so the file never
drifts silently from what the parsers produce.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from chunkweave.storage.evaluate import QAItem, missing_in_parse, write_qa  # noqa: E402

REDP = "redp5110_sampled.pdf"
RINTRO = "R-intro.pdf"
OTSL = "2305.03393v1-pg9.pdf"
LP = "layout-parser-paper-with-table.pdf"
PXC = "interface-config-guide-p93.pdf"
WT = "word_tables.docx"
WSAMPLE = "word_sample.docx"
HB1 = "handbook-1p.docx"
MP = "multi_page.pdf"

# (doc, kind, question, evidence). Kinds: "table" = the answer is a table cell;
# "heading" = the evidence passage does not name the topic the question asks
# about, which only its section heading does; "text" = ordinary passage lookup.
QUESTIONS: list[tuple[str, str, str, str]] = [
    # --- table cells -----------------------------------------------------------------
    (
        REDP,
        "table",
        "What does the USER_NAME column of the FUNCTION_USAGE view contain?",
        "Name of the user profile that has a usage setting for this function.",
    ),
    (
        REDP,
        "table",
        "What is the data type of the FUNCTION_ID column in FUNCTION_USAGE?",
        "VARCHAR(30)",
    ),
    (
        REDP,
        "table",
        "Which special register holds the authorization ID that initiated the connection?",
        "The authorization ID that initiated the connection.",
    ),
    (
        REDP,
        "table",
        "What value does the CURRENT_USER special register hold?",
        "The effective user of the thread including adopted authority.",
    ),
    (
        REDP,
        "table",
        "Which built-in global variable gives the port the client uses to talk to the server?",
        "Port used by the current client to communicate with the server",
    ),
    (REDP, "table", "What is the data type of the ROUTINE_TYPE global variable?", "CHAR(1)"),
    (
        REDP,
        "table",
        "Which global variable holds the version identifier of the running package?",
        "Version identifier of the currently running package",
    ),
    (
        REDP,
        "table",
        "Does the MODIFY PLAN CACHE PROPERTIES procedure check authority?",
        "MODIFY PLAN CACHE PROPERTIES procedure (currently does not check authority)",
    ),
    (
        REDP,
        "table",
        "Which authorities allow Visual Explain within Run SQL scripts?",
        "Visual Explain within Run SQL scripts",
    ),
    (
        RINTRO,
        "table",
        "What additional arguments does the log-normal distribution take in R?",
        "meanlog, sdlog",
    ),
    (
        RINTRO,
        "table",
        "What are the additional arguments of the hypergeometric distribution functions?",
        "m, n, k",
    ),
    (
        RINTRO,
        "table",
        "What is the R name of the Weibull distribution and its arguments?",
        "weibull",
    ),
    (RINTRO, "table", "Which parameter does the Poisson distribution take in R?", "lambda"),
    (RINTRO, "table", "What is the R name for the negative binomial distribution?", "nbinom"),
    (
        OTSL,
        "table",
        "What inference time did the model with 6 encoder and 6 decoder layers have?",
        "2.73 5.39",
    ),
    (
        OTSL,
        "table",
        "What TEDs score on complex tables did 4 encoder and 2 decoder layers reach?",
        "0.92 0.903",
    ),
    (
        LP,
        "table",
        "Which LayoutParser model zoo dataset covers layouts of modern scientific documents?",
        "Layouts of modern scientific documents",
    ),
    (
        WT,
        "table",
        "Which merged cell spans rows 4 and 5 of the fifth column?",
        "Merged Cell 4.4 5.4",
    ),
    # --- meaning carried by the section heading ---------------------------------------
    (
        RINTRO,
        "heading",
        "Why is the section on variable scope in R more technical?",
        "The discussion in this section is somewhat more technical than in other parts of "
        "this document.",
    ),
    (
        RINTRO,
        "heading",
        "What convention helps when working with data frames for many different problems?",
        "A useful convention that allows you to work with many "
        "different problems comfortably together in the same working directory is",
    ),
    (
        RINTRO,
        "heading",
        "How reliable is the documentation of the recycling rule for mixed "
        "vector and array arithmetic?",
        "The precise rule affecting element by element mixed "
        "calculations with vectors and arrays is somewhat quirky and hard to find in the "
        "references.",
    ),
    (
        RINTRO,
        "heading",
        "How do you define a new binary operator in R?",
        "Had we given the bslash() function a different name, namely one of the form",
    ),
    (
        RINTRO,
        "heading",
        "When changing the length of an object, can an empty object still have a mode?",
        "An “empty” object may still have a mode.",
    ),
    (
        RINTRO,
        "heading",
        "How can ordered factors be created, and how do they differ from factor?",
        "The ordered() function creates such ordered factors but is otherwise identical to factor.",
    ),
    (
        RINTRO,
        "heading",
        "How do you load a dataset that comes from another R package?",
        "To access data from a particular package, use the package argument, for example",
    ),
    (
        RINTRO,
        "heading",
        "What does an R for loop iterate over?",
        "where name is the loop variable. expr 1 is a vector expression,",
    ),
    (
        REDP,
        "heading",
        "Who is one of the authors of the Redpaper on row and column access control?",
        "Jim Bainbridge is a senior DB2 consultant",
    ),
    (
        REDP,
        "heading",
        "Which VERIFY_GROUP_FOR_USER call returns 0 for user JANE?",
        "VERIFY_GROUP_FOR_USER (CURRENT_USER, 'JUDY', 'TONY')",
    ),
    (
        REDP,
        "heading",
        "Why is the current state of IBM i security disturbing?",
        "Even more disturbing is that many IBM i clients remain in this state",
    ),
    (
        REDP,
        "heading",
        "What CL commands work with function usage IDs?",
        "Work Function Usage (WRKFCNUSG)",
    ),
    (
        OTSL,
        "heading",
        "Which model configuration was picked for the quantitative results?",
        "We picked the model parameter configuration that produced the best prediction "
        "quality (enc=6, dec=6, heads=8)",
    ),
    (
        PXC,
        "heading",
        "Which guidelines apply to a PXC configuration based on faceplate ports?",
        "Only unused faceplate ports (not associated with an interface or SAP) can be "
        "referenced within a PXC ID configuration.",
    ),
    # --- ordinary passages ------------------------------------------------------------
    (
        RINTRO,
        "text",
        "How do you remove objects from the R workspace?",
        "To remove objects the function rm is available:",
    ),
    (
        RINTRO,
        "text",
        "What happens to any operation on an NA value?",
        "In general any operation on an NA becomes an NA.",
    ),
    (
        RINTRO,
        "text",
        "What is the relation between solving linear equations and matrix multiplication?",
        "Solving linear equations is the inverse of matrix multiplication.",
    ),
    (
        RINTRO,
        "text",
        "What does the function table() compute from factors?",
        "The function table() allows frequency tables to be calculated from equal length factors.",
    ),
    (
        RINTRO,
        "text",
        "Are assignments made inside an R function kept after it exits?",
        "Note that any ordinary assignments done within the function are local and temporary "
        "and are lost after exit from the function.",
    ),
    (
        RINTRO,
        "text",
        "What does the edit command do on a data frame?",
        "When invoked on a data frame or matrix, edit brings up a separate spreadsheet-like "
        "environment for editing.",
    ),
    (
        RINTRO,
        "text",
        "How many datasets are supplied with R in package datasets?",
        "Around 100 datasets are supplied with R (in package datasets)",
    ),
    (
        REDP,
        "text",
        "In the column mask example, what can a teller see of a tax identification number?",
        "a teller can see only the last four digits of a tax identification number.",
    ),
    (
        REDP,
        "text",
        "Who can grant the QIBM_DB_SECADM function usage?",
        "QIBM_DB_SECADM function usage can be granted only by a user with *SECADM special "
        "authority and can be given to a user or a group.",
    ),
    (
        REDP,
        "text",
        "Who is the Redpaper on RCAC intended for?",
        "This paper is intended for database engineers, data-centric application developers, "
        "and security officers",
    ),
    (
        REDP,
        "text",
        "How many data breaches has the Identity Theft Resource Center reported since 2005?",
        "almost 5000 data breaches have occurred since 2005",
    ),
    (
        REDP,
        "text",
        "What must happen after creating the row permission and column masks?",
        "Now that you have created the row permission and the two column masks, RCAC must be "
        "activated.",
    ),
    (
        OTSL,
        "text",
        "On which CPU were the inference timings measured?",
        "AMD EPYC 7763 CPU @2.45 GHz",
    ),
    (
        OTSL,
        "text",
        "Which data set was used for hyper parameter optimization?",
        "We have chosen the PubTabNet data set to perform HPO",
    ),
    (
        PXC,
        "text",
        "What MTU is recommended for a faceplate port looped back for PXC use?",
        "The recommendation is that the MTU value be configured to the maximum value.",
    ),
    (
        LP,
        "text",
        "What does a LayoutParser layout model produce from a document image?",
        "generates a list of rectangular boxes for the target content regions",
    ),
    # --- added later: more table cells and heading-dependent passages -------------------
    (REDP, "table", "What data type does the USAGE column of FUNCTION_USAGE have?", "VARCHAR(7)"),
    (
        REDP,
        "table",
        "What does the USER or SESSION_USER special register hold?",
        "The effective user of the thread excluding adopted authority.",
    ),
    (
        REDP,
        "table",
        "Which global variable returns the host name of the current client?",
        "Host name of the current client as returned by the system",
    ),
    (
        RINTRO,
        "table",
        "Which additional arguments does the uniform distribution take in R?",
        "min, max",
    ),
    (RINTRO, "table", "What is the R name of the chi-squared distribution?", "chisq"),
    (RINTRO, "table", "What is the R name of the Wilcoxon distribution?", "wilcox"),
    (
        OTSL,
        "table",
        "What mAP (0.75) did the model with 2 encoder and 4 decoder layers reach?",
        "0.859 0.834",
    ),
    (
        OTSL,
        "table",
        "What TEDs score on simple tables did 4 encoder and 4 decoder layers achieve?",
        "0.938 0.952",
    ),
    (
        WT,
        "table",
        "Which cell is in the last row of the fifth column of the table with all kinds of spans?",
        "Cell 8.4",
    ),
    (
        RINTRO,
        "heading",
        "What example data does the section on tapply() and ragged arrays continue with?",
        "suppose we have the incomes of the same tax accountants in another vector",
    ),
    (
        RINTRO,
        "heading",
        "What is the first of the more advanced examples of writing R functions?",
        "consider finding the efficiency factors for a block design",
    ),
    (
        RINTRO,
        "heading",
        "What form do if statements take in R?",
        "The language has available a conditional construction of the form",
    ),
    # --- added 2026-12-01 (seeded draw, see README) ----------------------------------
    # Where each question comes from was drawn at random (seed 20261201), not chosen.
    (
        HB1,
        "heading",
        "In the introduction of the trustee handbook, are the Practice Tips mandatory?",
        "Standing trustees are encouraged to follow Practice Tips identified in this Handbook "
        "but these are not considered mandatory.",
    ),
    (
        PXC,
        "heading",
        "How does internal PXC cross-connect the traffic?",
        "the egress path is cross-connected to the ingress path in the MAC chip, without the "
        "need to consume a faceplate port",
    ),
    (
        MP,
        "heading",
        "Which other word processing software was notable during the rise of personal "
        "computers in the 1980s?",
        "Other notable software from this era included WordPerfect, which was popular among "
        "legal professionals",
    ),
    (
        RINTRO,
        "heading",
        "How can the R command-line editor be turned off?",
        "It can be disabled (useful for usage with ESS1) using the startup option --no-readline.",
    ),
    (
        RINTRO,
        "heading",
        "In the example on determinants of 2 by 2 single-digit matrices, how many are singular?",
        "It is also perhaps surprising that about 1 in 20 such matrices is singular.",
    ),
    (
        MP,
        "heading",
        "Which of the key features that changed word processing was introduced in the 1980s?",
        "Undo/Redo: Introduced in the 1980s, the ability to undo mistakes and redo actions made "
        "experimentation and error correction much easier.",
    ),
    (
        RINTRO,
        "heading",
        "Does the way R handles filepaths depend on the operating system?",
        "Some aspects of this are allowed to depend on the OS, and do, even down to the version "
        "of the OS.",
    ),
    (
        WSAMPLE,
        "heading",
        "What can you do once you are swimming in the lake?",
        "You can relax and look around",
    ),
    (
        RINTRO,
        "heading",
        "When constructing a list in R, what happens if the component names are omitted?",
        "If these names are omitted, the components are numbered only.",
    ),
    (
        MP,
        "heading",
        "What cultural impact did word processors have on the need for publishing equipment?",
        "Writers no longer needed expensive publishing equipment or training in typesetting to "
        "create polished work.",
    ),
    (
        REDP,
        "heading",
        "Why is existing row and column control built on views hard to scale?",
        "scaling a view-based security solution can be difficult as the amount of data grows and "
        "the number of users increases.",
    ),
    (
        REDP,
        "heading",
        "What does the DB2 for i Center of Excellence offer for Query/400?",
        "Query/400 modernization for better reporting and analysis capabilities",
    ),
    (
        REDP,
        "heading",
        "What is the first of the two security fundamentals?",
        "First, and most important, is the definition of a company's security policy.",
    ),
    (
        RINTRO,
        "heading",
        "What measurement unit does the mar figure-margin graphics parameter use?",
        "Similar to mai, except the measurement unit is text lines.",
    ),
    (
        REDP,
        "heading",
        "How does the DB2 for i Center of Excellence build confident, satisfied clients?",
        "No one else has the vast consulting experiences, skills sharing and renown service "
        "offerings to do what we can do for you.",
    ),
    (
        MP,
        "heading",
        "In a glimpse into the future of word processors, where might users write and edit?",
        "users may be able to write and edit in 3D spaces, collaborating in virtual environments",
    ),
    (
        MP,
        "heading",
        "Which advancements improved document creation in the pre-digital era of word processing?",
        "advancements such as carbon paper (for copies) and the electric typewriter (introduced "
        "by IBM in 1935)",
    ),
    (
        MP,
        "heading",
        "In the post-digital era, what made word processing more accessible for people with "
        "disabilities?",
        "Speech-to-text capabilities have made word processing more accessible, particularly for "
        "those with disabilities.",
    ),
    (
        WT,
        "table",
        "In the table with horizontal spans in inner columns, which cell is in the Cell 1.0 row "
        "under Header 0.3?",
        "Cell 1.3",
    ),
    (
        WSAMPLE,
        "table",
        "In the table of things a duck could eat, which food is listed for leaves?",
        "Ash, Elm, Maple",
    ),
    (
        WSAMPLE,
        "table",
        "In the table of things a duck could eat, which food is listed for berries?",
        "Blueberry, Strawberry, Cranberry",
    ),
    (
        OTSL,
        "table",
        "What mAP (0.75) did the model with 4 encoder and 4 decoder layers reach?",
        "0.853 0.843",
    ),
    (
        LP,
        "table",
        "What do the LayoutParser model zoo notes say the TableBank dataset covers?",
        "Table region on modern scientific and business document",
    ),
    (
        LP,
        "table",
        "What do the LayoutParser model zoo notes say about the HJDataset?",
        "Layouts of history Japanese documents",
    ),
    (
        OTSL,
        "table",
        "What TEDs score on all tables did 2 encoder and 4 decoder layers reach?",
        "0.915 0.931",
    ),
    (
        WSAMPLE,
        "table",
        "How many calories per portion do berries have in the table of things a duck could eat?",
        "150",
    ),
    (
        REDP,
        "table",
        "What is the data type of the PACKAGE_VERSION global variable?",
        "VARCHAR(64)",
    ),
    (
        WSAMPLE,
        "table",
        "In the table of things a duck could eat, which food is listed for grain?",
        "Corn, Buckwheat, Barley",
    ),
    (
        LP,
        "table",
        "Which documents does the PRImA dataset of the LayoutParser model zoo cover?",
        "Layouts of scanned modern magazines and scientific reports",
    ),
    (
        OTSL,
        "table",
        "What TEDs score on all tables did the model with 4 encoder and 2 decoder layers reach?",
        "0.942 0.931",
    ),
    (
        WSAMPLE,
        "table",
        "How many calories per portion does grain have in the table of things a duck could eat?",
        "200",
    ),
    (
        REDP,
        "table",
        "What data type does the USER_NAME column of the FUNCTION_USAGE view have?",
        "VARCHAR(10)",
    ),
    (
        OTSL,
        "table",
        "What mAP (0.75) did 4 encoder layers and 2 decoder layers reach?",
        "0.857 0.824",
    ),
    (
        WT,
        "table",
        "In the table with horizontal spans in inner columns, which cell is in the Cell 2.0 row "
        "under Header 0.3?",
        "Cell 2.3",
    ),
    (
        REDP,
        "table",
        "What does the FUNCTION_ID column of the FUNCTION_USAGE view describe?",
        "ID of the function.",
    ),
    (
        LP,
        "table",
        "What do the LayoutParser model zoo notes say the Newspaper dataset contains?",
        "Layouts of scanned US newspapers from the 20th century",
    ),
]


def main() -> int:
    """Check every evidence string against the parsed documents, then write the file."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=ROOT.parent / "shared" / "corpus")
    ap.add_argument("--out", type=Path, default=Path(__file__).with_name("corpus_qa.jsonl"))
    args = ap.parse_args()
    items = [
        QAItem(question=question, evidence=evidence, doc=doc, kind=kind)
        for doc, kind, question, evidence in QUESTIONS
    ]
    missing = missing_in_parse(items, args.corpus)
    if missing:
        for item in missing:
            print(f"evidence not found in {item.doc}: {item.evidence!r}", file=sys.stderr)
        return 1
    print(f"wrote {write_qa(args.out, items)} questions to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
