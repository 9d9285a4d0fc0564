"""An example third-party crib plugin (entry point ``example`` in the ``crib`` group).

It shows both extension points a plugin package typically uses:

* a retrieval channel, ``keyword-tag``: entries that contain a ``#tag`` named in the prompt;
* an embedder registered as ``minilm``, which replaces crib's built-in offline model (plugins are
  called before crib's ``trylast`` built-ins, and the first registration of a name wins). The toy
  embedder hashes words into 64 dimensions, so its vectors are recognisable in the store as
  ``minilm:toy-hash:64``.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any, Callable, Sequence

import numpy as np

from crib_plugin import hookimpl
from crib_plugin.core.records import ChannelResult, Query
from crib_plugin.read.channels.base import ranked

TAG = re.compile(r"#([\w-]+)")
WORD = re.compile(r"\w+")


class KeywordTagChannel:
    """Entries containing any ``#tag`` that the prompt mentions, most tags matched first."""

    name = "keyword-tag"

    def search(self, memory: Any, query: Query, limit: int) -> ChannelResult:
        tags = sorted({f"#{t.lower()}" for t in TAG.findall(query.text)})
        if not tags:
            return ChannelResult(channel=self.name, note="no #tags in the prompt")
        scored = memory.store.like_search(tags, limit)
        return ChannelResult(channel=self.name, hits=ranked(self.name, scored))


class ToyEmbedder:
    """A deterministic hashed bag of words: same text, same vector; shared words, high cosine."""

    name = "minilm"
    model = "toy-hash"
    dim = 64
    default_floor = 0.2

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in WORD.findall(text.lower()):
                digest = hashlib.blake2b(word.encode("utf-8"), digest_size=4).digest()
                out[row, int.from_bytes(digest, "little") % self.dim] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        return out / norms

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed_documents([text])[0]


@hookimpl
def register_channels(register: Callable[[Any], None]) -> None:
    register(KeywordTagChannel())


@hookimpl
def register_embedders(register: Callable[[str, Callable[[], Any]], None]) -> None:
    register("minilm", ToyEmbedder)
