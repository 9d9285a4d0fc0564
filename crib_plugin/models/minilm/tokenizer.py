"""Text → token ids for MiniLM: a small Python WordPiece for ASCII text, the Rust ``tokenizers`` otherwise.

Split from :mod:`crib_plugin.models.minilm` (the embedder). Padding is off and truncation is at
256 tokens, as in the reference model (see that module's docstring for why it matters for parity).
"""

from __future__ import annotations

import re
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from ...core.errors import ModelError

if TYPE_CHECKING:  # pragma: no cover
    from tokenizers import Tokenizer


MAX_TOKENS = 256  # sentence-transformers' max_seq_length for this model


class TextEncoder:
    """Text → token ids exactly as the reference tokenizer makes them (at most 256 ids).

    ASCII text, which is most prompts and code, is tokenized here in Python from
    ``vocab.txt``: loading that takes ~3 ms, while loading the Rust ``tokenizers`` library and
    its ``tokenizer.json`` takes 25–80 ms, the largest part of a cold ``crib retrieve``. The
    rules for ASCII are short (drop control characters, lowercase, split on spaces and
    punctuation, the five special tokens, greedy WordPiece) and tests check them against the
    Rust tokenizer. Any other text goes to the Rust tokenizer, loaded the first time it is
    needed, so Unicode normalisation, accents and CJK stay the library's job.
    """

    def __init__(self, folder: Path, vocab_size: int) -> None:
        self._folder = folder
        self._vocab = _read_vocab(folder / "vocab.txt", vocab_size)
        self._pieces: dict[str, list[int]] = {}
        self._rust: Tokenizer | None = None
        self._lock = threading.Lock()

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text`` with [CLS] … [SEP], truncated to 256 ids in all."""
        if self._vocab is not None and text.isascii():
            return self._encode_ascii(text, self._vocab)
        return self._rust_tokenizer().encode(text).ids

    def _encode_ascii(self, text: str, vocab: dict[str, int]) -> list[int]:
        """BERT's uncased tokenizer restricted to ASCII input (see the class docstring)."""
        ids: list[int] = []
        budget = MAX_TOKENS - 2
        for n, segment in enumerate(_SPECIAL_TOKENS.split(text)):
            if n % 2:  # a literal special token such as [SEP]: matched before normalising
                ids.append(vocab[segment])
            else:
                for word in _ASCII_WORDS.findall(segment.translate(_ASCII_NORMALISE)):
                    ids.extend(self._wordpiece(word, vocab))
                    if len(ids) >= budget:
                        break
            if len(ids) >= budget:
                break
        return [vocab["[CLS]"], *ids[:budget], vocab["[SEP]"]]

    def _wordpiece(self, word: str, vocab: dict[str, int]) -> list[int]:
        """The word's WordPiece ids, memoised (bulk text repeats its words a lot)."""
        pieces = self._pieces.get(word)
        if pieces is None:
            pieces = _greedy_pieces(word, vocab)
            if len(self._pieces) < _PIECE_CACHE:
                self._pieces[word] = pieces
        return pieces

    def _rust_tokenizer(self) -> Tokenizer:
        """The ``tokenizers`` library's tokenizer, loaded on first use (thread-safe)."""
        if self._rust is None:
            with self._lock:
                if self._rust is None:
                    self._rust = load_tokenizer(self._folder / "tokenizer.json")
        return self._rust


_MAX_WORD_CHARS = 100  # WordPiece's max_input_chars_per_word in tokenizer.json

_PIECE_CACHE = 100_000  # memoised words; beyond that, new words are just not remembered


#: the special tokens, matched on the raw text as the library does (normalized: false)
_SPECIAL_TOKENS = re.compile(r"(\[(?:PAD|UNK|CLS|SEP|MASK)\])")


#: BertNormalizer on ASCII: drop control characters (not tab/newline/CR, which become
#: spaces), lowercase; accents and CJK handling do not apply
_ASCII_NORMALISE: dict[int, int | None] = {
    c: None for c in (*range(9), 11, 12, *range(14, 32), 127)
}
_ASCII_NORMALISE.update({9: 32, 10: 32, 13: 32})
_ASCII_NORMALISE.update({c: c + 32 for c in range(ord("A"), ord("Z") + 1)})


#: BertPreTokenizer on normalised ASCII: runs of letters/digits, and each punctuation
#: character on its own (spaces only separate)
_ASCII_WORDS = re.compile(r"[a-z0-9]+|[!-/:-@\[-`{-~]")


def _greedy_pieces(word: str, vocab: dict[str, int]) -> list[int]:
    """Greedy longest-match-first WordPiece (continuations prefixed ``##``). A word it cannot
    cover, or one longer than 100 characters, becomes a single [UNK], as in the library."""
    unknown = [vocab["[UNK]"]]
    if len(word) > _MAX_WORD_CHARS:
        return unknown
    pieces: list[int] = []
    start = 0
    while start < len(word):
        end = len(word)
        while end > start:
            token_id = vocab.get(word[start:end] if start == 0 else "##" + word[start:end])
            if token_id is not None:
                pieces.append(token_id)
                break
            end -= 1
        else:
            return unknown
        start = end
    return pieces


def _read_vocab(path: Path, vocab_size: int) -> dict[str, int] | None:
    """``vocab.txt`` as token → id, or None (Rust tokenizer only) when it is missing or does
    not look like this model's vocabulary."""
    try:
        tokens = path.read_text(encoding="utf-8").split("\n")
    except (OSError, UnicodeDecodeError):
        return None
    if tokens and tokens[-1] == "":
        tokens.pop()
    vocab = {token: i for i, token in enumerate(tokens)}
    expected = {"[PAD]": 0, "[UNK]": 100, "[CLS]": 101, "[SEP]": 102, "[MASK]": 103}
    if len(vocab) != len(tokens) or len(tokens) != vocab_size:
        return None
    if any(vocab.get(token) != i for token, i in expected.items()):
        return None
    return vocab


def load_tokenizer(path: Path) -> Tokenizer:
    """The library's WordPiece tokenizer, with the shipped file's pad-to-128/truncate-at-128
    replaced by no padding and truncation at 256 tokens, as the reference model does."""
    try:
        # deferred: `crib retrieve` when nothing is shown would import it up front (29 ms)
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_file(str(path))
    except Exception as exc:
        raise ModelError(f"cannot load the MiniLM tokenizer {path}: {exc}") from exc
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length=MAX_TOKENS)
    return tokenizer
