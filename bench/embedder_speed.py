"""Embedding throughput of an embedder on the coding-agent memories (entries/s), and the cost of
its first query in a fresh process (import + model load + one query), as ``crib retrieve`` pays it.

    PYTHONPATH=$PWD python bench/embedder_speed.py --embedder e5
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

FIRST_QUERY = (
    "import time; t=time.perf_counter(); from crib_plugin.plugins.manager import registry; "
    "e=registry().make('embedders', {name!r}); e.embed_query('why is CI red on the macOS runner?'); "
    "print(time.perf_counter()-t)"
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--embedder", default="minilm")
    parser.add_argument("--runs", type=int, default=3, help="fresh processes for the first-query time")
    args = parser.parse_args()
    from crib_eval import coding
    from crib_plugin.plugins.manager import registry

    texts = [m.content for m in coding.load().memories]
    embedder = registry().make("embedders", args.embedder)
    embedder.embed_documents(texts[:4])  # load the model outside the timing
    started = time.perf_counter()
    for i in range(0, len(texts), 32):
        embedder.embed_documents(texts[i:i + 32])
    seconds = time.perf_counter() - started
    words = sum(len(t.split()) for t in texts) / len(texts)
    print(f"{args.embedder}: {len(texts)} entries ({words:.0f} words avg) in {seconds:.1f}s = {len(texts) / seconds:.1f} entries/s")
    firsts = []
    for _ in range(args.runs):
        out = subprocess.run([sys.executable, "-c", FIRST_QUERY.format(name=args.embedder)], capture_output=True, text=True, check=True)
        firsts.append(float(out.stdout.strip().splitlines()[-1]))
    print(f"{args.embedder}: first query in a fresh process (import, load, embed): median {sorted(firsts)[len(firsts) // 2]:.2f}s over {args.runs}")


if __name__ == "__main__":
    main()
