"""The default embedder: all-MiniLM-L6-v2 as int8 ONNX, run with onnxruntime + tokenizers.

Offline, CPU only, no torch and no model hub: the model folder ships inside the
package (``storage/models/all-MiniLM-L6-v2-int8``, made by
``scripts/export_minilm_onnx.py``). The ONNX graph already mean-pools and
L2-normalises, so its output is the sentence vector.
"""

from __future__ import annotations

import ctypes
import json
import os
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import onnxruntime as ort
from tokenizers import Encoding, Tokenizer
from tokenizers.models import WordPiece
from tokenizers.normalizers import BertNormalizer
from tokenizers.pre_tokenizers import BertPreTokenizer

from chunkweave.storage.embedders.errors import EmbedderConfigError, TextTooLongError

MODEL_DIR = Path(__file__).resolve().parents[1] / "models" / "all-MiniLM-L6-v2-int8"
# One sequence per onnxruntime call. Measured with bench/embed.py on ~190-token chunks:
# batch 1 gave 18 chunks per CPU-second at 218 MB peak RSS, batch 16 gave 14 at 636 MB,
# batch 32 gave 10 at 723 MB (int8 activations of one sequence stay in cache). Batch 1
# also makes a text's vector independent of its batch mates (see MiniLMEmbedder).
DEFAULT_BATCH_SIZE = 1
_REQUIRED_FILES = ("model.onnx", "tokenizer.json", "config.json")


@dataclass(frozen=True)
class _Runtime:
    """One loaded model: the ONNX session, the tokenizer and the folder's config facts."""

    session: ort.InferenceSession
    tokenizer: Tokenizer
    name: str
    dimension: int
    max_tokens: int
    input_names: frozenset[str]


_CACHE: dict[tuple[str, int, bool], _Runtime] = {}
_LOCK = threading.Lock()


def _forget_inherited_runtimes() -> None:
    """In a forked child, start over with an empty cache and a fresh lock.

    onnxruntime's thread pools do not survive ``fork``, so the child must build its
    own sessions. The inherited ones must also never be destroyed: their destructor
    joins pool threads that do not exist in the child and hangs forever (seen with
    multiprocessing's fork pool). So they are leaked on purpose, one reference each.
    """
    global _LOCK
    for runtime in _CACHE.values():
        ctypes.pythonapi.Py_IncRef(ctypes.py_object(runtime))
    _CACHE.clear()
    _LOCK = threading.Lock()  # the parent may have held it while forking


os.register_at_fork(after_in_child=_forget_inherited_runtimes)


def _session_options(intra_op_threads: int, memory_arena: bool) -> ort.SessionOptions:
    """Options for a small CPU worker.

    - ``intra_op_threads`` 0 lets onnxruntime use one thread per physical core; a
      worker running N processes on N cores should pass 1.
    - ``memory_arena``: the CPU arena keeps the peak of the largest batch for the
      life of the process (measured 2 GB after 64 x 256 tokens), which a long-running
      worker cannot afford; with one sequence per call that peak is small and the
      arena saves ~20% CPU, so callers turn it on only then.
    - Spinning is off: idle pool threads busy-wait otherwise, stealing the few cores
      from sibling worker processes.
    """
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = intra_op_threads
    opts.inter_op_num_threads = 1
    opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    opts.enable_cpu_mem_arena = memory_arena
    opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
    opts.log_severity_level = 3  # errors only: the int8 graph's optimiser notes are noise
    return opts


def _load(model_dir: Path, intra_op_threads: int, memory_arena: bool) -> _Runtime:
    missing = [f for f in _REQUIRED_FILES if not (model_dir / f).is_file()]
    if missing:
        raise EmbedderConfigError(f"MiniLM model folder {model_dir} lacks {', '.join(missing)}")
    try:
        facts = json.loads((model_dir / "config.json").read_text(encoding="utf-8"))
        name, dimension = str(facts["name"]), int(facts["dimension"])
        max_tokens = int(facts["max_tokens"])
    except (ValueError, KeyError, TypeError) as exc:
        raise EmbedderConfigError(f"{model_dir / 'config.json'}: unreadable ({exc})") from exc
    tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    # Truncation stays off so ``count`` sees the real length and an over-long text is
    # refused, never cut; padding is done per batch in ``_feeds``.
    tokenizer.no_truncation()
    tokenizer.no_padding()
    session = ort.InferenceSession(
        str(model_dir / "model.onnx"),
        sess_options=_session_options(intra_op_threads, memory_arena),
        providers=["CPUExecutionProvider"],
    )
    out_shape = session.get_outputs()[0].shape
    if out_shape[-1] != dimension:
        raise EmbedderConfigError(
            f"{model_dir / 'model.onnx'}: output width {out_shape[-1]} != dimension {dimension}"
        )
    return _Runtime(
        session=session,
        tokenizer=tokenizer,
        name=name,
        dimension=dimension,
        max_tokens=max_tokens,
        input_names=frozenset(i.name for i in session.get_inputs()),
    )


def load_runtime(
    model_dir: Path = MODEL_DIR, intra_op_threads: int = 0, memory_arena: bool = False
) -> _Runtime:
    """Return the process-wide runtime for ``model_dir``, loading it on first use.

    Keyed by resolved path and session options. A forked child (Celery prefork)
    starts with an empty cache (see ``_forget_inherited_runtimes``).
    """
    key = (str(model_dir.resolve()), intra_op_threads, memory_arena)
    with _LOCK:
        runtime = _CACHE.get(key)
        if runtime is None:
            runtime = _CACHE[key] = _load(model_dir, intra_op_threads, memory_arena)
        return runtime


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 (384-d, reads 256 word pieces), int8, on CPU.

    ``embed_documents`` runs the model on ``batch_size`` texts at a time (texts of
    similar length go together to cut padding; the output keeps the input order).
    A text longer than ``max_tokens`` raises :class:`TextTooLongError`: nothing is
    ever truncated. Vectors are unit length. Queries and passages are embedded
    alike (MiniLM uses no prefixes).

    With the default ``batch_size`` 1 a text's vector depends on that text only.
    With larger batches it also depends on its batch mates (cosine to the
    one-by-one vector 0.99 on average, down to 0.97 for an empty text): dynamic
    int8 quantisation picks one activation scale per batch tensor.
    """

    def __init__(
        self,
        model_dir: Path = MODEL_DIR,
        *,
        batch_size: int = DEFAULT_BATCH_SIZE,
        intra_op_threads: int = 0,
    ) -> None:
        if batch_size < 1:
            raise EmbedderConfigError(f"batch_size must be >= 1, got {batch_size}")
        if intra_op_threads < 0:
            raise EmbedderConfigError(f"intra_op_threads must be >= 0, got {intra_op_threads}")
        # Arena only for one-sequence calls: its retained peak is then one sequence.
        self._options = (Path(model_dir), intra_op_threads, batch_size == 1)
        self._rt = load_runtime(*self._options)
        self._pid = os.getpid()
        self.name: str = self._rt.name
        self.dimension: int = self._rt.dimension
        self.max_tokens: int = self._rt.max_tokens
        self.batch_size = batch_size

    @property
    def _runtime(self) -> _Runtime:
        # An instance inherited over fork must not touch the parent's session.
        if self._pid != os.getpid():
            self._rt = load_runtime(*self._options)
            self._pid = os.getpid()
        return self._rt

    def count(self, text: str) -> int:
        """Word pieces of ``text`` including [CLS] and [SEP] (``chunking.TokenCounter``)."""
        return len(self._runtime.tokenizer.encode(text).ids)

    @property
    def additive(self) -> bool:
        """Whether counts add up over whitespace (``chunking.TokenCounter.additive``).

        True for BERT WordPiece: it always splits at whitespace and normalises single
        characters, so ``count(a + " " + b) == count(a) + count(b) - count("")``.
        """
        return _splits_on_bert_whitespace(self._runtime.tokenizer)

    def count_many(self, texts: Sequence[str]) -> list[int]:
        """``[self.count(t) for t in texts]``, computed in one pass (``chunking.TokenCounter``).

        For a BERT tokenizer (``BertNormalizer`` + ``BertPreTokenizer``, as shipped)
        each text is cut at BERT's whitespace and every distinct word of the batch is
        tokenised once; a text's count is the specials plus its words' pieces. That
        is exact, not an estimate: BERT always splits at that whitespace and its
        normaliser acts on single characters, so no piece spans two words. Any other
        tokenizer is run on the whole texts in a batch.
        """
        rt = self._runtime
        if not texts:
            return []
        if not _splits_on_bert_whitespace(rt.tokenizer):
            return [len(enc.ids) for enc in rt.tokenizer.encode_batch(list(texts))]
        specials = len(rt.tokenizer.encode("").ids)
        # str.split cuts at BERT's whitespace and at a few characters BERT keeps
        # inside a word; one scan of the whole batch tells whether any is present,
        # and only then does each text go through the (slower) exact pattern.
        if _SPLIT_NOT_BERT.search("".join(texts)) is None:
            words_of = [text.split() for text in texts]
        else:
            words_of = [_BERT_WORD.findall(text) for text in texts]
        distinct = list(dict.fromkeys([w for words in words_of for w in words]))
        pieces = dict(zip(distinct, _pieces_per_word(rt.tokenizer, distinct), strict=True))
        get = pieces.__getitem__
        return [specials + sum(map(get, words)) for words in words_of]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """One unit vector per text, in input order; raises TextTooLongError first."""
        return self.embed_array(texts).tolist()

    def embed_query(self, text: str) -> list[float]:
        """Embed one search query (same vector space as the documents)."""
        return self.embed_array([text])[0].tolist()

    def embed_array(self, texts: Sequence[str]) -> np.ndarray[Any, np.dtype[np.float32]]:
        """Like ``embed_documents`` but returns a ``(len(texts), dimension)`` float32 array."""
        rt = self._runtime
        encodings = rt.tokenizer.encode_batch(list(texts)) if texts else []
        for index, enc in enumerate(encodings):
            if len(enc.ids) > self.max_tokens:
                raise TextTooLongError(self.name, index, len(enc.ids), self.max_tokens)
        out = np.empty((len(encodings), self.dimension), dtype=np.float32)
        order = sorted(range(len(encodings)), key=lambda i: len(encodings[i].ids))
        for start in range(0, len(order), self.batch_size):
            rows = order[start : start + self.batch_size]
            feeds = _feeds([encodings[i] for i in rows], rt.input_names)
            out[rows] = rt.session.run(None, feeds)[0]
        return out


# A run of characters BERT does not treat as whitespace (its whitespace: space, tab,
# CR, LF and the Unicode "Zs" separators). Other control characters are deleted by
# the normaliser without splitting, so they stay inside a word here too.
_BERT_WORD = re.compile(r"[^ \t\n\r\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000]+")
# The characters ``str.split`` treats as whitespace but BERT does not.
_SPLIT_NOT_BERT = re.compile("[\x0b\x0c\x1c-\x1f\x85\u2028\u2029]")


def _splits_on_bert_whitespace(tokenizer: Tokenizer) -> bool:
    """Tell whether ``tokenizer`` normalises per character and splits at whitespace."""
    normalizer = tokenizer.normalizer
    return isinstance(tokenizer.pre_tokenizer, BertPreTokenizer) and (
        normalizer is None or isinstance(normalizer, BertNormalizer)
    )


# A lowercased printable-ASCII word, as BERT pre-tokenises it: runs of letters and
# digits, and every other character (all ASCII punctuation to BERT) on its own.
_ASCII_PRETOKEN = re.compile(r"[a-z0-9]+|[^a-z0-9]")


def _pieces_per_word(tokenizer: Tokenizer, words: list[str]) -> list[int]:
    """Word pieces of each whitespace-free word (exact, as ``encode`` counts them).

    Printable-ASCII words take a fast path when the normaliser lowercases and the
    model is WordPiece: each pre-token is one piece when it is a single character
    (itself or ``[UNK]``) or in the vocabulary, else the model splits it (memoised
    per pre-token). Words holding an added token's text (``[CLS]`` ...) and all
    other words go through :func:`_encoded_pieces`. Chunking counts every distinct
    word of a document here, so this is its main cost: the fast path is ~3x cheaper.
    """
    normalizer = tokenizer.normalizer
    if not (
        isinstance(tokenizer.model, WordPiece)
        and isinstance(normalizer, BertNormalizer)
        and normalizer.lowercase
    ):
        return _encoded_pieces(tokenizer, words)
    added = sorted({t.content.lower() for t in tokenizer.get_added_tokens_decoder().values()})
    special = re.compile("|".join(map(re.escape, added))) if added else None
    token_id, split = tokenizer.token_to_id, tokenizer.model.tokenize
    memo: dict[str, int] = {}
    counts = [0] * len(words)
    slow: list[int] = []
    # One search of the whole batch spares the per-word searches in the common case
    # of no added token's text anywhere (a match across two words only makes it
    # search each word, as without the shortcut).
    if special is not None and special.search(" ".join(words).lower()) is None:
        special = None
    for index, word in enumerate(words):
        lower = word.lower()
        if not (word.isascii() and word.isprintable()) or (special and special.search(lower)):
            slow.append(index)
            continue
        total = 0
        for pre in (lower,) if lower.isalnum() else _ASCII_PRETOKEN.findall(lower):
            n = memo.get(pre)
            if n is None:
                n = memo[pre] = 1 if len(pre) == 1 or token_id(pre) is not None else len(split(pre))
            total += n
        counts[index] = total
    for index, n in zip(slow, _encoded_pieces(tokenizer, [words[i] for i in slow]), strict=True):
        counts[index] = n
    return counts


def _encoded_pieces(tokenizer: Tokenizer, words: list[str]) -> list[int]:
    """Word pieces of each whitespace-free word, from one encode of them all.

    One call on the space-joined words costs half of a batch of tiny encodes; each
    piece is credited to the word its start offset falls in (a word the normaliser
    deletes entirely gets 0).
    """
    if not words:
        return []
    starts = np.cumsum([0] + [len(w) + 1 for w in words[:-1]])
    encoding = tokenizer.encode(" ".join(words), add_special_tokens=False)
    if not encoding.offsets:
        return [0] * len(words)
    offsets = np.fromiter((o[0] for o in encoding.offsets), dtype=np.int64)
    owners = np.searchsorted(starts, offsets, side="right") - 1
    return [int(n) for n in np.bincount(owners, minlength=len(words))]


def _feeds(batch: list[Encoding], input_names: frozenset[str]) -> dict[str, np.ndarray[Any, Any]]:
    """Pad a batch to its longest member; the attention mask hides the padding."""
    width = max(len(enc.ids) for enc in batch)
    ids = np.zeros((len(batch), width), dtype=np.int64)
    mask = np.zeros_like(ids)
    types = np.zeros_like(ids)
    for row, enc in enumerate(batch):
        n = len(enc.ids)
        ids[row, :n] = enc.ids
        mask[row, :n] = enc.attention_mask
        types[row, :n] = enc.type_ids
    feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
    return {k: v for k, v in feeds.items() if k in input_names}
