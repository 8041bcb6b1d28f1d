"""The language of a document, detected offline from its text, for the chunks' ``language``.

:func:`detect_language` uses langdetect (a port of Google's language-detection; its
55 language profiles ship inside the package, nothing is downloaded), seeded so the
same text always gets the same answer. It reads at most :data:`SAMPLE_CHARS`
characters spread over the text; text mostly in Hangul, kana or Han is told apart by
its script alone (:func:`_cjk_script`). Codes are ISO 639-1 (``en``, ``de``, ``ja``); both
Chinese profiles are ``zh``. Without langdetect installed, or on text with no
letters, the language is ``None`` (stored as no value).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache, lru_cache
from typing import Any

#: Characters of a document read to detect its language (spread over its chunks).
SAMPLE_CHARS = 3000

#: Languages whose chunks get the trigram keyword field (Weaviate's ``text_cjk``):
#: Chinese and Japanese are written without spaces, Korean glues particles to words.
CJK = frozenset({"zh", "ja", "ko"})

#: Languages written without spaces between words: the ``word`` tokenizer sees a
#: whole run of them as one token, so BM25 needs another tokenisation there.
SPACELESS = frozenset({"zh", "ja", "th", "lo", "km", "my"})


@cache
def _factory() -> Any:
    try:
        from langdetect import DetectorFactory
        from langdetect.detector_factory import init_factory
    except ImportError:
        return None
    DetectorFactory.seed = 0  # langdetect samples at random: fixed seed, fixed answer
    init_factory()
    from langdetect import detector_factory

    return detector_factory._factory


def _cjk_script(text: str) -> str | None:
    """Return ``ko``, ``ja`` or ``zh`` when most letters of ``text`` are of those scripts.

    langdetect reads short Han-only text (a table of figures) as Korean at times;
    the script decides it without statistics: Hangul is Korean, kana Japanese,
    Han alone Chinese.
    """
    hangul = kana = han = letters = 0
    for ch in text:
        if not ch.isalpha():
            continue
        letters += 1
        code = ord(ch)
        if 0xAC00 <= code <= 0xD7AF or 0x1100 <= code <= 0x11FF or 0x3130 <= code <= 0x318F:
            hangul += 1
        elif 0x3040 <= code <= 0x30FF:
            kana += 1
        elif 0x4E00 <= code <= 0x9FFF or 0x3400 <= code <= 0x4DBF:
            han += 1
    if not letters or (hangul + kana + han) * 2 < letters:
        return None
    if hangul >= kana and hangul * 5 >= han:
        return "ko"
    return "ja" if kana * 10 >= han else "zh"


@lru_cache(maxsize=4096)
def detect_language(text: str) -> str | None:
    """Return the ISO 639-1 code of the language of ``text`` (``None``: unknown)."""
    sample = text[:SAMPLE_CHARS]
    if not any(ch.isalpha() for ch in sample):
        return None
    cjk = _cjk_script(sample)
    if cjk is not None:
        return cjk
    factory = _factory()
    if factory is None:
        return None
    from langdetect.lang_detect_exception import LangDetectException

    detector = factory.create()
    detector.append(sample)
    try:
        code = str(detector.detect())
    except LangDetectException:
        return None
    return "zh" if code.startswith("zh-") else code


def document_language(texts: Sequence[str]) -> str | None:
    """Return the language of a document from its chunks' ``texts`` (a spread sample)."""
    if not texts:
        return None
    share = max(SAMPLE_CHARS // len(texts), 200)
    sample: list[str] = []
    size = 0
    step = max(1, len(texts) * share // SAMPLE_CHARS)
    for text in texts[::step]:
        sample.append(text[:share])
        size += len(sample[-1])
        if size >= SAMPLE_CHARS:
            break
    return detect_language("\n".join(sample))
