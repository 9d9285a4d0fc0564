"""Regenerate tests/data/minilm_reference.json with the real all-MiniLM-L6-v2 (sentence-transformers
+ torch), the yardstick for crib's numpy forward pass.

crib itself never imports torch, so run this in a throwaway virtualenv, once, offline:

    python -m venv /tmp/stvenv && /tmp/stvenv/bin/pip install torch sentence-transformers
    crib init        # or anything that calls ensure_minilm(): fills the model cache
    HF_HUB_OFFLINE=1 /tmp/stvenv/bin/python bench/make_minilm_reference.py \
        --model-dir ~/.cache/crib/models/all-MiniLM-L6-v2

Each text is encoded on its own (batch of one, so no padding is involved), exactly as
sentence-transformers does for this model: truncation at 256 tokens, mean pooling, L2 norm.
Not part of the package, and never imported by it.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

LONG_ENGLISH = " ".join(
    f"Sentence {i}: the memory store keeps decisions, corrections and errors so that an agent "
    "can recall why a choice was made weeks later without rereading every transcript."
    for i in range(1, 16)
)  # ≈ 450 tokens: checks truncation at 256 (the shipped tokenizer.json would cut at 128)

MID_ENGLISH = " ".join(
    f"Point {i} of the plan covers retries, write-ahead logging and short transactions."
    for i in range(1, 13)
)  # ≈ 190 tokens: between 128 and 256, where the tokenizer.json trap would bite

TEXTS = [
    "a",
    "",
    "Hello world",
    "Which database did we choose for the memory store?",
    "Chose SQLite with the sqlite-vec extension because it is one file and needs no server.",
    "The user prefers tabs over spaces and wants type hints everywhere.",
    "ERROR: connection refused (errno 111) while calling Ollama at 127.0.0.1:11434",
    "def add(a: int, b: int) -> int:\n    return a + b  # simple helper\n",
    "SELECT id, content FROM entries WHERE created_at > '2026-01-01' ORDER BY id DESC LIMIT 10;",
    "Café naïve résumé — déjà vu, Straße, Ærøskøbing, Ελληνικά, русский текст.",
    "我们决定使用 SQLite 作为记忆存储，因为它只是一个文件。",
    "東京で会議があります。明日の午後三時です。",
    "한국어 문장도 처리할 수 있어야 합니다.",
    "emoji test 🚀🔥 memory ✨ and symbols ∑ ∫ √ ≠ ≤ ≥",
    "   leading and trailing whitespace   \n\t",
    "UPPERCASE TEXT SHOULD BE LOWERCASED BY THE TOKENIZER",
    "https://example.com/path?query=1&other=two#fragment and an email someone@example.org",
    "1234567890 3.14159 2026-11-22T10:00:00Z $1,000,000",
    "supercalifragilisticexpialidocious antidisestablishmentarianism pneumonoultramicroscopic",
    MID_ENGLISH,
    LONG_ENGLISH,
    "x" * 2000,  # one 2000-character "word": WordPiece gives up and emits [UNK]
    "记忆存储" * 120,  # ≈ 480 CJK tokens: truncation on characters tokenized one by one
]


def default_model_dir() -> Path:
    """Where crib caches the model (same rule as crib_plugin.models.weights, without importing crib)."""
    root = os.environ.get("CRIB_MODEL_DIR")
    if root:
        base = Path(root).expanduser()
    else:
        xdg = os.environ.get("XDG_CACHE_HOME")
        base = (Path(xdg).expanduser() if xdg else Path.home() / ".cache") / "crib" / "models"
    return base / "all-MiniLM-L6-v2"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model-dir", type=Path, default=default_model_dir())
    parser.add_argument(
        "--out",
        type=Path,
        default=Path(__file__).resolve().parent.parent / "tests" / "data" / "minilm_reference.json",
    )
    args = parser.parse_args()

    import sentence_transformers
    import torch
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(args.model_dir.expanduser()), device="cpu")
    assert model.max_seq_length == 256, model.max_seq_length
    rows = []
    for text in TEXTS:
        vector = model.encode([text], batch_size=1, convert_to_numpy=True)[0]
        n_tokens = int(
            model.tokenizer([text], truncation=True, max_length=256, return_length=True)["length"][
                0
            ]
        )
        rows.append(
            {
                "text": text,
                "n_tokens": int(n_tokens),
                "vector": [round(float(v), 7) for v in vector],
            }
        )
    payload = {
        "model": "all-MiniLM-L6-v2",
        "model_sha256": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
        "made_with": {
            "sentence_transformers": sentence_transformers.__version__,
            "torch": torch.__version__,
        },
        "note": "each text encoded alone by SentenceTransformer.encode; vectors rounded to 7 decimals",
        "entries": rows,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(payload, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {len(rows)} reference vectors to {args.out}")


if __name__ == "__main__":
    main()
