"""Deterministic dev/test splits by conversation: tune on dev, report test.

A conversation's split is fixed by the hash of its set's name and its id, ranked: the first half
of the ranking (rounded up) is dev, the rest test — so every set has both, whatever its size, and
no choice of ours decides which conversations are held out.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

SPLITS = ("dev", "test", "all")


def rank_key(set_name: str, key: str) -> str:
    return hashlib.sha256(f"{set_name}/{key}".encode()).hexdigest()


def dev_keys(set_name: str, keys: Sequence[str]) -> set[str]:
    """The keys in the dev half of ``keys``."""
    ordered = sorted(dict.fromkeys(keys), key=lambda k: rank_key(set_name, k))
    return set(ordered[: (len(ordered) + 1) // 2])


def split_of(set_name: str, key: str, keys: Sequence[str]) -> str:
    return "dev" if key in dev_keys(set_name, keys) else "test"


def split_conversations(set_name: str, conversations: Sequence[Any], split: str) -> list[Any]:
    """The conversations (or, for a set of one conversation, its questions) in ``split``.

    A set with several conversations splits by conversation (``sample_id``); a set that is one
    store (one archive, many dialogues) splits its questions by their ``key``.
    """
    from dataclasses import replace

    if split == "all":
        return list(conversations)
    if len(conversations) > 1:
        keys = [c.sample_id for c in conversations]
        dev = dev_keys(set_name, keys)
        return [c for c in conversations if (c.sample_id in dev) == (split == "dev")]
    chosen = []
    for conv in conversations:
        questions = conv.questions
        dev = dev_keys(set_name, [q.key for q in questions])
        chosen.append(replace(conv, questions=[q for q in questions if (q.key in dev) == (split == "dev")]))
    return chosen
