"""Fit a logistic-regression gate on the features ``bench/gate_features.py`` recorded, and simulate it.

Training data: coding dev prompts, LoCoMo questions, the no-answer set (LoCoMo stores and the coding
store) and the coding queries. Coding dev is scored by leave-one-out (each dev prompt's score comes
from a model fitted without it); LoCoMo and the no-answer set in sample (thousands of rows, a
dozen weights). A prompt the learned gate opens shows what the real pipeline showed with the maybe
gate forced open (``*_forced`` columns); one it shuts shows nothing.

    python bench/gate_fit.py .state/gf_all.jsonl [--features top_gate,margin,…] [--l2 1.0] [--coding-weight 10]
    python bench/gate_fit.py .state/gf_all.jsonl --features … --test .state/gf_test.jsonl --threshold T   # once, at the end

Figures and the chosen model: docs/pointers.md, "Ninth pass: a learned gate".
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

DEFAULT = "top_gate,margin,cov,agree,spec_vec,facts_bear,task"


def fit(x: np.ndarray, y: np.ndarray, w: np.ndarray, l2: float, iters: int = 200) -> np.ndarray:
    """Weighted L2-regularised logistic regression by Newton's method; returns [bias, weights…]."""
    xb = np.hstack([np.ones((len(x), 1)), x])
    beta = np.zeros(xb.shape[1])
    reg = np.full(xb.shape[1], l2)
    reg[0] = 0.0
    w = w / w.sum() * len(w)
    for _ in range(iters):
        p = 1 / (1 + np.exp(-np.clip(xb @ beta, -30, 30)))
        grad = xb.T @ (w * (p - y)) + reg * beta
        hess = (xb * (w * p * (1 - p))[:, None]).T @ xb + np.diag(reg) + 1e-9 * np.eye(len(beta))
        step = np.linalg.solve(hess, grad)
        beta -= step
        if np.abs(step).max() < 1e-8:
            break
    return beta


def value(f: dict[str, float], name: str) -> float:
    """A recorded feature, ``question`` (1 − task), ``pos:x`` (max(x, 0)), or a product ``a*b``."""
    if "*" in name:
        out = 1.0
        for part in name.split("*"):
            out *= value(f, part)
        return out
    if name == "question":
        return 1.0 - f["task"]
    if name.startswith("pos:"):
        return max(0.0, value(f, name[4:]))
    return float(f[name])


def matrix(rows: list[dict[str, Any]], names: list[str]) -> np.ndarray:
    return np.array([[value(r["features"], n) for n in names] for r in rows], dtype=float)


def weights_of(rows: list[dict[str, Any]], coding_weight: float) -> np.ndarray:
    """Each source group gets equal total weight, coding dev ``coding_weight`` times more."""
    groups: dict[str, int] = {}
    for r in rows:
        groups[r["source"]] = groups.get(r["source"], 0) + 1
    return np.array([(coding_weight if r["source"].startswith("coding-dev") else 1.0) / groups[r["source"]] for r in rows])


def label(r: dict[str, Any]) -> float:
    return 1.0 if r["answerable"] else 0.0


def scores(rows: list[dict[str, Any]], names: list[str], l2: float, coding_weight: float, reachable: bool) -> np.ndarray:
    """Each row's score; coding dev rows by leave-one-out."""
    train = [r for r in rows if not reachable or not r["answerable"] or r.get("hit_forced", r.get("recall_forced", 1) > 0)]
    x_all = matrix(rows, names)
    mu, sd = x_all.mean(0), x_all.std(0) + 1e-9
    z = lambda m: (m - mu) / sd  # noqa: E731
    x, y, w = z(matrix(train, names)), np.array([label(r) for r in train]), weights_of(train, coding_weight)
    beta = fit(x, y, w, l2)
    out = np.hstack([np.ones((len(rows), 1)), z(x_all)]) @ beta
    index = {id(r): i for i, r in enumerate(train)}
    for i, r in enumerate(rows):
        if r["source"] == "coding-dev" and id(r) in index:
            keep = np.ones(len(train), bool)
            keep[index[id(r)]] = False
            b = fit(x[keep], y[keep], w[keep], l2)
            out[i] = np.concatenate([[1.0], z(x_all[i])]) @ b
    return out


def simulate(rows: list[dict[str, Any]], s: np.ndarray, t: float) -> dict[str, float]:
    """Coding dev hit ∪ pointers / silence / tokens, LoCoMo entries ∪ pointers, no-answer silence at threshold ``t``."""
    opened = (s >= t) | np.array(["time window" in r.get("reason", "") for r in rows])  # the window stays a rule
    dev = [(r, o) for r, o in zip(rows, opened) if r["source"] == "coding-dev"]
    ans = [(r, o) for r, o in dev if r["answerable"]]
    na = [(r, o) for r, o in dev if not r["answerable"]]
    loc = [(r, o) for r, o in zip(rows, opened) if r["source"] == "locomo"]
    nas = [(r, o) for r, o in zip(rows, opened) if r["source"].startswith("noanswer")]
    return {
        "dev_hit": 100 * sum(o and r["hit_forced"] for r, o in ans) / len(ans),
        "dev_sil": 100 * sum(not (o and r["tokens_forced"] > 0) for r, o in na) / len(na),
        "dev_tok": sum(r["tokens_forced"] if o else 0 for r, o in dev) / len(dev),
        "locomo": 100 * sum(r["recall_forced"] if o else 0 for r, o in loc) / len(loc),
        "noans": 100 * sum(not (o and r["shown_forced"]) for r, o in nas) / len(nas),
        "noans_coding": 100 * sum(not (o and r["shown_forced"]) for r, o in nas if r["source"] == "noanswer-coding")
        / max(1, sum(1 for r, _ in nas if r["source"] == "noanswer-coding")),
    }


def today(rows: list[dict[str, Any]]) -> dict[str, float]:
    """The hand gate's figures from the same records (shown normally)."""
    dev = [r for r in rows if r["source"] == "coding-dev"]
    ans = [r for r in dev if r["answerable"]]
    na = [r for r in dev if not r["answerable"]]
    loc = [r for r in rows if r["source"] == "locomo"]
    nas = [r for r in rows if r["source"].startswith("noanswer")]
    return {
        "dev_hit": 100 * sum(r["hit"] for r in ans) / len(ans),
        "dev_sil": 100 * sum(not r["shown"] for r in na) / len(na),
        "dev_tok": sum(r["tokens"] for r in dev) / len(dev),
        "locomo": 100 * sum(r["recall"] for r in loc) / len(loc),
        "noans": 100 * sum(not r["shown"] for r in nas) / len(nas),
        "noans_coding": 100 * sum(not r["shown"] for r in nas if r["source"] == "noanswer-coding")
        / max(1, sum(1 for r in nas if r["source"] == "noanswer-coding")),
    }


def auc(pos: np.ndarray, neg: np.ndarray) -> float:
    if not len(pos) or not len(neg):
        return float("nan")
    return float(((pos[:, None] > neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum()) / (len(pos) * len(neg)))


def held_out(rows: list[dict[str, Any]], args: argparse.Namespace) -> int:
    """Fit on every training row (no leave-one-out), score the test records once at the fixed threshold."""
    names = args.features.split(",")
    test = [json.loads(line) for line in args.test.open(encoding="utf-8")]
    x_all = matrix(rows, names)
    mu, sd = x_all.mean(0), x_all.std(0) + 1e-9
    y = np.array([label(r) for r in rows])
    beta = fit((x_all - mu) / sd, y, weights_of(rows, args.coding_weight), args.l2)
    for r in test:
        r["source"] = "coding-dev"  # simulate() reads the coding rows under this name
    s = np.hstack([np.ones((len(test), 1)), (matrix(test, names) - mu) / sd]) @ beta
    ans = [r for r in test if r["answerable"]]
    na = [r for r in test if not r["answerable"]]
    opened = (s >= args.threshold) | np.array(["time window" in r.get("reason", "") for r in test])
    hit = 100 * sum(bool(o and r["hit_forced"]) for r, o in zip(test, opened) if r["answerable"]) / len(ans)
    sil = 100 * sum(not (o and r["tokens_forced"] > 0) for r, o in zip(test, opened) if not r["answerable"]) / len(na)
    tok = sum(r["tokens_forced"] if o else 0 for r, o in zip(test, opened)) / len(test)
    print(f"test, today: hit ∪ pointers {100 * sum(r['hit'] for r in ans) / len(ans):.1f}, silence (nothing) "
          f"{100 * sum(not r['shown'] for r in na) / len(na):.1f}, tokens {sum(r['tokens'] for r in test) / len(test):.0f}")
    print(f"test, learned gate (t = {args.threshold}): hit ∪ pointers {hit:.1f}, silence (nothing) {sil:.1f}, tokens {tok:.0f}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("records", type=Path)
    parser.add_argument("--features", default=DEFAULT)
    parser.add_argument("--l2", type=float, default=1.0)
    parser.add_argument("--coding-weight", type=float, default=10.0)
    parser.add_argument("--reachable", action="store_true", help="train positives only where opening reaches the answer")
    parser.add_argument("--min-noanswer", type=float, default=94.0, help="print thresholds with no-answer silence at least this")
    parser.add_argument("--coef", action="store_true", help="print the full-data fit's weights (standardised)")
    parser.add_argument("--test", type=Path, help="coding test records (gate_features.py --test): the one held-out evaluation")
    parser.add_argument("--threshold", type=float, help="with --test: the threshold fixed on dev")
    args = parser.parse_args()
    rows = [json.loads(line) for line in args.records.open(encoding="utf-8")]
    if args.test is not None:
        return held_out(rows, args)
    rows = [r for r in rows if r["source"] != "coding-test"]  # never here
    names = args.features.split(",")
    s = scores(rows, names, args.l2, args.coding_weight, args.reachable)
    base = today(rows)
    dev = np.array([r["source"] == "coding-dev" for r in rows])
    ans = np.array([bool(r["answerable"]) for r in rows])
    shut_ans = np.array([r["source"] == "coding-dev" and r["answerable"] and not r["shown"] for r in rows])
    print(f"features {names} l2 {args.l2} coding weight {args.coding_weight} reachable {args.reachable}")
    print(f"AUC coding dev (LOO) {auc(s[dev & ans], s[dev & ~ans]):.3f}; locomo vs noanswer-locomo "
          f"{auc(s[np.array([r['source'] == 'locomo' for r in rows])], s[np.array([r['source'] == 'noanswer-locomo' for r in rows])]):.3f}")
    print("today: " + " ".join(f"{k} {v:.1f}" for k, v in base.items()))
    na_dev = np.sort(s[dev & ~ans])[::-1]
    print("dev no-answer scores (top 5):", " ".join(f"{v:.2f}" for v in na_dev[:5]),
          "| dev answerable shut today:", " ".join(f"{v:.2f}" for v in np.sort(s[shut_ans])[::-1]))
    negatives = s[~ans]
    cands = np.unique(np.round(np.quantile(negatives, np.linspace(0.90, 0.999, 60)), 3))
    print("| t | dev hit∪p | dev silence | dev tokens | LoCoMo e∪p | noanswer all | noanswer coding |")
    for t in cands:
        m = simulate(rows, s, float(t))
        if m["noans"] < args.min_noanswer:
            continue
        print(f"| {t:.2f} | {m['dev_hit']:.1f} | {m['dev_sil']:.1f} | {m['dev_tok']:.0f} | {m['locomo']:.1f} | {m['noans']:.1f} | {m['noans_coding']:.1f} |")
    if args.coef:
        x_all = matrix(rows, names)
        mu, sd = x_all.mean(0), x_all.std(0) + 1e-9
        beta = fit((x_all - mu) / sd, ans.astype(float), weights_of(rows, args.coding_weight), args.l2)
        raw = beta[1:] / sd
        print("bias", beta[0] - float((raw * mu).sum()), {n: round(float(v), 3) for n, v in zip(names, raw)})
    return 0


if __name__ == "__main__":
    sys.exit(main())
