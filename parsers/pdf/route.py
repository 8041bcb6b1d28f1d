"""``auto`` mode's choice, once per document: the heuristics, or the layout model.

:mod:`chunkweave.parsers.pdf.calibrate` runs the layout model on a sample of the
document's pages and counts, per block class, where its classes and the
heuristics' agree (:class:`ClassAgreement`). :func:`decide_document` turns those
counts into the document's route:

- the heuristics keep the document unless the sample shows, beyond sampling
  noise, that they disagree with the model on more than :data:`TOLERANCE` of the
  decisive blocks. "Beyond sampling noise" is the one-sided lower confidence bound
  (:data:`CONFIDENCE_Z`, Wilson score interval) of the disagreeing share: a sample
  of few blocks with one disagreement proves little, many blocks with the same
  share do;
- with a trusted PDF outline the heading classes are not decisive: the outline is
  the author's own list of sections and beats both, so only furniture, lists,
  tables and captions can send such a document to the model; and the outline
  arbitrates the arbiter: when the model route loses, beyond the same margin, the
  headings the outline backs on the sample (:func:`outline_headings_lost`), the
  model is wrong about this document and the heuristics keep it.

No threshold here names a document: the tolerance is the share of blocks the
heuristics may get wrong (the model being the arbiter), the confidence a
standard one.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

#: What a page got (``heuristic``: the MuPDF blocks; ``model``: the layout model's boxes).
Decision = Literal["heuristic", "model"]

#: The block classes compared, in the model's names.
CLASSES: tuple[str, ...] = (
    "title",
    "section-header",
    "page-header",
    "page-footer",
    "list-item",
    "table",
    "caption",
)
#: Classes a trusted outline settles (see the module docstring).
HEADING_CLASSES = frozenset({"title", "section-header"})
#: Share of the decisive blocks on which the heuristics may disagree with the model:
#: the conventional 5%, the same level as the confidence bound (not tuned on a set).
TOLERANCE = 0.05
#: z of the one-sided confidence bound on the disagreeing share (95%).
CONFIDENCE_Z = 1.645


@dataclass(frozen=True)
class ClassAgreement:
    """How the model and the heuristics labelled one block class on the sample.

    ``model``: the model's boxes of the class; ``model_agreed``: those the
    heuristics gave the same class (by most of the box's lines). ``heuristic`` and
    ``heuristic_agreed``: the same for the heuristics' elements of the class.
    """

    label: str
    model: int = 0
    model_agreed: int = 0
    heuristic: int = 0
    heuristic_agreed: int = 0

    @property
    def blocks(self) -> int:
        """Blocks either side put in the class."""
        return self.model + self.heuristic

    @property
    def disagreeing(self) -> int:
        """Blocks one side put in the class and the other did not."""
        return self.blocks - self.model_agreed - self.heuristic_agreed

    @property
    def agreement(self) -> float | None:
        """Share of the class's blocks both sides agree on (None when neither saw one)."""
        return None if not self.blocks else 1 - self.disagreeing / self.blocks

    def __add__(self, other: ClassAgreement) -> ClassAgreement:
        return ClassAgreement(
            self.label,
            self.model + other.model,
            self.model_agreed + other.model_agreed,
            self.heuristic + other.heuristic,
            self.heuristic_agreed + other.heuristic_agreed,
        )


def wilson_lower(failures: int, trials: int, z: float = CONFIDENCE_Z) -> float:
    """Lower bound of the Wilson score interval of ``failures / trials`` (0 when no trials)."""
    if trials <= 0:
        return 0.0
    p = failures / trials
    denom = 1 + z * z / trials
    centre = p + z * z / (2 * trials)
    spread = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials))
    return max(0.0, (centre - spread) / denom)


def decisive(classes: Iterable[ClassAgreement], outline_trusted: bool) -> list[ClassAgreement]:
    """Return the classes that decide the route (not the headings under a trusted outline)."""
    return [c for c in classes if not (outline_trusted and c.label in HEADING_CLASSES)]


def outline_headings_lost(classes: Iterable[ClassAgreement]) -> tuple[int, int]:
    """Return how many of the heuristics' headings the model route loses, and of how many.

    Under a trusted outline the heuristics' headings are the outline's (or numbered
    or display-size ones it lacks); a heading the model route makes into something
    else, typically by merging it into a neighbouring box, contradicts the outline.
    """
    heads = [c for c in classes if c.label in HEADING_CLASSES]
    return sum(c.heuristic - c.heuristic_agreed for c in heads), sum(c.heuristic for c in heads)


def decide_document(
    classes: Sequence[ClassAgreement], outline_trusted: bool
) -> tuple[Decision, str]:
    """Return the document's route and a short reason, from the sample's agreement."""
    if outline_trusted:
        lost, heads = outline_headings_lost(classes)
        if wilson_lower(lost, heads) > TOLERANCE:
            return "heuristic", (
                f"the model route loses {lost} of the {heads} outline-backed headings "
                f"(lower bound {wilson_lower(lost, heads):.2f} > tolerance {TOLERANCE:.2f}): "
                "it contradicts the outline"
            )
    counted = decisive(classes, outline_trusted)
    blocks = sum(c.blocks for c in counted)
    wrong = sum(c.disagreeing for c in counted)
    if blocks == 0:
        return "heuristic", "no decisive blocks in the sample"
    bound = wilson_lower(wrong, blocks)
    detail = f"{wrong} of {blocks} decisive blocks disagree, lower bound {bound:.2f}"
    if bound > TOLERANCE:
        return "model", f"{detail} > tolerance {TOLERANCE:.2f}"
    return "heuristic", f"{detail} <= tolerance {TOLERANCE:.2f}"
