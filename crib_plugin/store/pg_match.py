"""FTS5 ``MATCH`` expressions, as crib's channels write them, turned into PostgreSQL ``tsquery`` SQL.

The contract passes full-text queries in FTS5 syntax (:mod:`crib_plugin.text.terms` builds them): quoted
strings (inner quotes doubled), bare words, ``OR``, ``AND``, ``NOT``, parentheses, and adjacency
meaning AND. This module parses that subset and writes the equivalent ``tsquery`` expression, each
string going through ``phraseto_tsquery`` (so a quoted phrase stays a phrase and every word is
stemmed by the same configuration the index uses). User text never becomes SQL: every string is a
bound parameter. A malformed expression (an unterminated quote, a dangling operator, unbalanced
parentheses) raises :class:`~crib_plugin.core.errors.StoreError`, as FTS5 does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Union

from ..core.errors import StoreError

WEIGHTS = "'{0.2, 0.5, 0.0, 1.0}'"  # ts_rank's tsvector weights D (type), C (context), B (unused), A (content, a cue)
RANK_NORMALISATION = 1  # ts_rank: divide by 1 + log(document length)

_TOKEN = re.compile(r'\s*(?:(")|(\()|(\))|([^\s()"]+))')


@dataclass(frozen=True)
class Phrase:
    text: str


@dataclass(frozen=True)
class Op:
    kind: str  # "OR" | "AND" | "NOT"
    left: "Node"
    right: "Node"


Node = Union[Phrase, Op]


def _tokens(expression: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    pos = 0
    while pos < len(expression):
        if expression[pos:].strip() == "":
            break
        match = _TOKEN.match(expression, pos)
        if match is None:  # pragma: no cover - the pattern accepts every character
            raise StoreError(f"fts5: syntax error near {expression[pos:pos + 20]!r}")
        if match.group(1):
            end = match.end()
            text = []
            while True:
                close = expression.find('"', end)
                if close < 0:
                    raise StoreError(f"fts5: syntax error: unterminated string in {expression[:60]!r}")
                text.append(expression[end:close])
                if expression.startswith('""', close):
                    text.append('"')
                    end = close + 2
                    continue
                pos = close + 1
                break
            out.append(("str", "".join(text)))
            continue
        pos = match.end()
        if match.group(2):
            out.append(("(", "("))
        elif match.group(3):
            out.append((")", ")"))
        else:
            word = match.group(4)
            out.append(("op", word) if word in ("OR", "AND", "NOT") else ("str", word))
    return out


class _Parser:
    def __init__(self, tokens: list[tuple[str, str]], source: str) -> None:
        self.tokens = tokens
        self.pos = 0
        self.source = source

    def error(self) -> StoreError:
        return StoreError(f"fts5: syntax error in {self.source[:60]!r}")

    def peek(self) -> tuple[str, str] | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def parse(self) -> Node:
        node = self.or_expr()
        if self.peek() is not None:
            raise self.error()
        return node

    def or_expr(self) -> Node:
        node = self.and_expr()
        while self.peek() == ("op", "OR"):
            self.pos += 1
            node = Op("OR", node, self.and_expr())
        return node

    def and_expr(self) -> Node:
        node = self.unary()
        while True:
            token = self.peek()
            if token in (("op", "AND"), ("op", "NOT")):
                self.pos += 1
                node = Op(token[1], node, self.unary())
            elif token is not None and token[0] in ("str", "("):
                node = Op("AND", node, self.unary())  # adjacency is AND
            else:
                return node

    def unary(self) -> Node:
        token = self.peek()
        if token is None:
            raise self.error()
        self.pos += 1
        if token[0] == "str":
            return Phrase(token[1])
        if token[0] == "(":
            node = self.or_expr()
            if self.peek() != (")", ")"):
                raise self.error()
            self.pos += 1
            return node
        raise self.error()


def parse(expression: str) -> Node:
    """The expression's tree; :class:`StoreError` when it is not valid FTS5 syntax (or empty)."""
    tokens = _tokens(expression)
    if not tokens:
        raise StoreError("fts5: empty expression")
    return _Parser(tokens, expression).parse()


def phrases(node: Node) -> list[str]:
    """Every string of the expression, in order (for the trigram and LIKE searches)."""
    if isinstance(node, Phrase):
        return [node.text]
    return phrases(node.left) + phrases(node.right)


def tsquery_sql(node: Node, config: str, fold: bool = True) -> tuple[str, list[str]]:
    """``(sql, params)``: a ``tsquery`` expression for ``node`` in text-search ``config``."""
    if isinstance(node, Phrase):
        text = "crib_fold(?)" if fold else "?"
        return f"phraseto_tsquery('{config}', {text})", [node.text]
    left, lp = tsquery_sql(node.left, config, fold)
    right, rp = tsquery_sql(node.right, config, fold)
    joiner = {"OR": "||", "AND": "&&", "NOT": "&& !!"}[node.kind]
    return f"({left} {joiner} {right})", lp + rp


def or_operands(node: Node) -> list[Node]:
    """The operands of the expression's top-level ``OR`` (the expression itself when it is not an
    OR): the terms a BM25-like score weighs each by its rarity."""
    if isinstance(node, Op) and node.kind == "OR":
        return or_operands(node.left) + or_operands(node.right)
    return [node]
