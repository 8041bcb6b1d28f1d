"""Write ``corpus_qa.jsonl`` from the hand-written questions below, checking evidence.

Usage: ``python examples/qa/build_corpus_qa.py [--corpus DIR]``

Every evidence string must occur verbatim (whitespace-normalised) in the document
as chunkweave parses it: in an element's text, or in one table cell. A question
whose evidence is not found stops the build with the reason, so the file never
drifts silently from what the parsers produce.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from parsers import parse_document  # noqa: E402

REDP = "redp5110_sampled.pdf"
RINTRO = "R-intro.pdf"
OTSL = "2305.03393v1-pg9.pdf"
LP = "layout-parser-paper-with-table.pdf"
PXC = "interface-config-guide-p93.pdf"
WT = "word_tables.docx"

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
]

_WS = re.compile(r"\s+")


def _norm(text: str) -> str:
    return _WS.sub(" ", text).strip()


def main() -> int:
    """Check every evidence string against the parsed documents, then write the file."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=ROOT.parent / "shared" / "corpus")
    ap.add_argument("--out", type=Path, default=Path(__file__).with_name("corpus_qa.jsonl"))
    args = ap.parse_args()
    haystacks: dict[str, list[str]] = {}
    for name in sorted({q[0] for q in QUESTIONS}):
        doc = parse_document(args.corpus / name)
        texts = [_norm(e.text) for e in doc.elements]
        texts += [_norm(cell) for e in doc.elements for row in e.rows or () for cell in row]
        haystacks[name] = texts
    missing = [
        (doc, evidence)
        for doc, _, _, evidence in QUESTIONS
        if not any(_norm(evidence) in text for text in haystacks[doc])
    ]
    if missing:
        for doc, evidence in missing:
            print(f"evidence not found in {doc}: {evidence!r}", file=sys.stderr)
        return 1
    with open(args.out, "w", encoding="utf-8") as fh:
        for doc, kind, question, evidence in QUESTIONS:
            record = {"question": question, "evidence": evidence, "doc": doc, "kind": kind}
            fh.write(json.dumps(record, ensure_ascii=False) + "\n")
    print(f"wrote {len(QUESTIONS)} questions to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
