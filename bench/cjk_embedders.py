"""CJK retrieval per embedder on tests/test_e5.py's small mixed store (12 memories in four
languages): the five CJK prompts (and three Chinese prompts about English memories), scored as
the embedder's own top-1, crib search's top-1 and what crib retrieve injects.

    PYTHONPATH=$PWD python bench/cjk_embedders.py --embedder e5 --embedder minilm
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]  # this checkout's crib, and the test store it scores

from test_e5 import CJK_QUERIES, STORE  # noqa: E402  (importable only once tests/ is on sys.path)

CROSS_LINGUAL = {"计费服务用的是哪个数据库？": "pg", "周五可以上线吗？": "deploy", "模型的权重文件放在哪里？": "weights"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--embedder", action="append", default=[])
    args = parser.parse_args()
    from crib_plugin import Memory
    from crib_plugin.core.config import Settings

    keys = list(STORE)
    for name in args.embedder or ["minilm"]:
        db = Path(tempfile.mkdtemp()) / "crib.db"
        with Memory(db, settings=Settings(db=db, embedder=name)) as memory:
            for text in STORE.values():
                memory.write(text)
            embedder = memory.embedder()
            docs = embedder.embed_documents(list(STORE.values()))
            for label, queries in (("CJK", CJK_QUERIES), ("zh→en", CROSS_LINGUAL)):
                vec = sum(keys[int(np.argmax(docs @ embedder.embed_query(q)))] == k for q, k in queries.items())
                top = sum(bool(h := memory.search(q, 1)) and h[0].entry.content == STORE[k] for q, k in queries.items())
                inj = sum(STORE[k] in memory.retrieve(q) for q, k in queries.items())
                n = len(queries)
                print(f"{name:7s} {label:6s} embedder top-1 {vec}/{n}, crib search top-1 {top}/{n}, crib retrieve injects {inj}/{n}")


if __name__ == "__main__":
    main()
