"""Calibrate the pointer tier's "maybe" bar (:mod:`crib_plugin.read.pointers`) on the coding set's dev split and on LoCoMo.

For each setting of the tier — how many pointers it fills from the fused and the vector ranking
in turn (``MAX_POINTERS``), the snippet's length (``SNIPPET_CHARS``) and the crowd margin of the
maybe gate (``MAYBE_MARGIN``) — it runs the coding set (one split, dev by default: tune there,
report test) and LoCoMo (the first ``--conversations`` conversations, ``--questions`` questions
each), and prints one row: coding hit of the entries and of entries ∪ pointers, precision of the
entries, silence (nothing at all), pointers and tokens (characters / 4) per block; LoCoMo evidence
recall of the entries and of entries ∪ pointers. The module's values are restored afterwards.

    python bench/pointer_bar.py [--max 8 …] [--snippet 64 …] [--margin 0.15 …] [--split dev]
                                [--conversations 3] [--questions 100] [--no-locomo]
"""

from __future__ import annotations

import argparse
import itertools
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from crib_eval import coding  # noqa: E402
from crib_plugin.read import pointers  # noqa: E402
from crib_plugin.text import snippet as snippets  # noqa: E402


def _floats(values: list[str] | None, default: float) -> list[float]:
    return [float(v) for v in values] if values else [default]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--max", action="append", help="MAX_POINTERS values (default: the module's)")
    parser.add_argument("--snippet", action="append", help="SNIPPET_CHARS values (default: the module's)")
    parser.add_argument("--margin", action="append", help="MAYBE_MARGIN values (default: the module's)")
    parser.add_argument("--split", choices=["dev", "test", "all"], default="dev", help="coding split (tune on dev)")
    parser.add_argument("--conversations", type=int, default=3, help="LoCoMo: the first N conversations")
    parser.add_argument("--questions", type=int, default=None, help="LoCoMo: the first N questions of each")
    parser.add_argument("--no-locomo", action="store_true", help="the coding set only")
    parser.add_argument("--cache", type=Path, default=Path(".state/eval"), help="where the stores are built and reused")
    parser.add_argument("--data", type=Path, default=None, help="the coding set's folder (default: the shipped one)")
    args = parser.parse_args(argv)
    saved = (pointers.MAX_POINTERS, snippets.SNIPPET_CHARS, pointers.MAYBE_MARGIN)
    grid = list(itertools.product(
        [int(v) for v in _floats(args.max, pointers.MAX_POINTERS)],
        [int(v) for v in _floats(args.snippet, snippets.SNIPPET_CHARS)],
        _floats(args.margin, pointers.MAYBE_MARGIN),
    ))
    locomo = None if args.no_locomo else _locomo_setup(args)
    print(f"| pointers at most | snippet | margin | coding {args.split}: hit % | hit ∪ pointers % | precision % | silence (nothing) % "
          "| pointers | tokens | LoCoMo evidence: entries % | entries ∪ pointers % | items |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    try:
        for following, chars, margin in grid:
            pointers.MAX_POINTERS, snippets.SNIPPET_CHARS, pointers.MAYBE_MARGIN = following, chars, margin
            report = coding.run(split=args.split, cache_dir=args.cache, data_dir=args.data)
            s = report.summary()
            row = (f"| {following} | {chars} | {margin:.2f} | {_pct(s.hit)} | {_pct(s.hit_pointers)} | {_pct(s.precision)} "
                   f"| {_pct(s.silence_all)} | {s.mean_pointers:.1f} | {s.tokens_mean:.0f} |")
            if locomo is not None:
                row += " " + _locomo_row(*locomo, args.questions)
            else:
                row += " – | – | – |"
            print(row, flush=True)
    finally:
        pointers.MAX_POINTERS, snippets.SNIPPET_CHARS, pointers.MAYBE_MARGIN = saved
    return 0


def _locomo_setup(args: argparse.Namespace) -> tuple[Any, Any]:
    from crib_eval import locomo

    path = locomo.default_data_path()
    conversations = locomo.load(path)[: args.conversations]
    return conversations, locomo.prepare_stores(conversations, path, args.cache)


def _locomo_row(conversations: Any, stores: Any, questions: int | None) -> str:
    from crib_eval import locomo

    report = locomo.evaluate(conversations, stores, limit_questions=questions)
    entries, union = report.blocks["per-entry cut"], report.blocks["per-entry cut ∪ pointers"]
    recall = lambda rows: 100 * sum(r for r, _ in rows) / len(rows)  # noqa: E731
    return f"{recall(entries):.1f} | {recall(union):.1f} | {sum(n for _, n in union) / len(union):.2f} |"


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{value:.1f}"


if __name__ == "__main__":
    raise SystemExit(main())
