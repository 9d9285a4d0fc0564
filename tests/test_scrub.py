"""Tests for crib_plugin.scrub: the streaming memory scrubber, write hygiene and tag neutralisation.

Besides examples, the streaming scrubber is checked against an independent, declarative reference
(`reference_scrub`, built on regular expressions that spell out the tag grammar of the module
docstring) on hypothesis-generated texts in which memory blocks really occur, under arbitrary chunking.
"""

from __future__ import annotations

import json
import random
import re
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from crib_plugin.text.scrub import (
    MAX_TAG_LENGTH,
    NEUTRAL_LT,
    Scrubber,
    neutralise_tags,
    scrub_stream,
    scrub_text,
    strip_memory_blocks,
)

SENTINEL = "\u00a7"  # "§": generated only inside memory blocks, so it must never come out
PROPERTY = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# ---------------------------------------------------------------------------------------- helpers


def feed_in_pieces(text: str, cuts: list[int]) -> str:
    """Scrub ``text`` cut at the given positions (any order, duplicates allowed)."""
    s = Scrubber()
    out, prev = [], 0
    for cut in sorted({c for c in cuts if 0 < c < len(text)}) + [len(text)]:
        out.append(s.feed(text[prev:cut]))
        prev = cut
    return "".join(out) + s.flush()


def feed_by_char(text: str) -> str:
    s = Scrubber()
    return "".join(s.feed(c) for c in text) + s.flush()


def feed_random_chunks(text: str, seed: int, max_chunk: int = 64) -> str:
    rng = random.Random(seed)
    s = Scrubber()
    out, i = [], 0
    while i < len(text):
        k = rng.randint(1, max_chunk)
        out.append(s.feed(text[i : i + k]))
        i += k
    return "".join(out) + s.flush()


# ------------------------------------------------------------- independent declarative reference

_WS = r"[ \t\n\r\f\v]"
_NAMEX = "(?P<name>(?i:memory-context|memory))"
_A = "(?:context_time|channels|skipped)"
_V = '"[^"<]*"'
_FULLATTR = rf"{_WS}+{_A}={_V}"
_OPEN = re.compile(rf"<{_NAMEX}(?P<attrs>(?:{_FULLATTR})+){_WS}*>", re.ASCII)
# "memory-context" is crib's name alone: an opener with any attributes, or none.
_LATTR = r"[A-Za-z0-9_:\-]{1,32}"
_OPEN_CONTEXT = re.compile(rf"<(?P<name>(?i:memory-context))(?P<attrs>(?:{_WS}+{_LATTR}={_V})*){_WS}*>", re.ASCII)
_CUT_CONTEXT = re.compile(rf'<(?i:memory-context)(?:{_WS}+{_LATTR}={_V})*(?:{_WS}*|{_WS}+{_LATTR}(?:=(?:"[^"<]*)?)?)\Z', re.ASCII)
_CLOSE = re.compile(rf"</{_NAMEX}{_WS}*>", re.ASCII)
# A candidate still alive at the end of the text that is crib's opener cut off after context_time=.
_TAIL = rf'(?:{_WS}+(?:[a-z_]{{1,32}}|{_A}=(?:"[^"<]*)?)?)?'
_CUT_OPENER = re.compile(
    rf'<{_NAMEX}(?:{_FULLATTR})*{_WS}+context_time=(?:"[^"<]*|{_V}(?:{_FULLATTR})*{_TAIL})?\Z', re.ASCII
)


def _is_crib_opener(m: re.Match[str]) -> bool:
    return bool(re.search(rf"{_WS}context_time=", m.group("attrs")))


def reference_scrub(text: str) -> str:
    """Scrub ``text`` by matching whole tags with regular expressions (no streaming, no state machine)."""
    out: list[str] = []
    stack: list[str] = []
    i = 0
    while True:
        j = text.find("<", i)
        if j < 0:
            if not stack:
                out.append(text[i:])
            break
        if not stack:
            out.append(text[i:j])
        m = _OPEN_CONTEXT.match(text, j) or _OPEN.match(text, j)
        if m and m.end() - j <= MAX_TAG_LENGTH and (m.re is _OPEN_CONTEXT or _is_crib_opener(m)):
            stack.append(m.group("name").lower())
            i = m.end()
            continue
        m = _CLOSE.match(text, j)
        if m and m.end() - j <= MAX_TAG_LENGTH and m.group("name").lower() in stack:
            name = m.group("name").lower()
            while stack.pop() != name:
                pass
            i = m.end()
            continue
        rest = text[j:]
        if "<" not in rest[1:] and len(rest) <= MAX_TAG_LENGTH and (_CUT_OPENER.match(rest) or _CUT_CONTEXT.match(rest)):
            break  # crib's opener cut off by the end of the text: dropped (inside a block, too)
        if not stack:
            out.append("<")
        i = j + 1
    return "".join(out)


# ---------------------------------------------------------------------------------- basic examples

T = ' context_time="2026-11-22T10:00:00Z"'
CLASSIC = f'<memory{T} channels="facts,fts">- 2026-11-20: chose SQLite</memory>'
FENCED = (
    f"<memory-context{T}>\n[Note from crib: recalled memory]\n"
    "- 2026-11-20: chose SQLite\n</memory-context>"
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("plain text, nothing to do", "plain text, nothing to do"),
        (f"before {CLASSIC} after", "before  after"),
        (f"before {FENCED} after", "before  after"),
        (f"a <memory{T}>x</memory>b<memory-context{T}>y</memory-context>c", "a bc"),
        # name case, attribute order, whitespace and newlines inside crib's tags
        (f"a <MEMORY{T}>x</Memory> b <Memory-CONTEXT{T}>y</memory-context> c", "a  b  c"),
        ('a <memory skipped="vector: x > y" context_time="t">secret</memory> b', "a  b"),
        ("a <memory\n  context_time=\"t\"\n  channels=\"fts\"\n>x</memory\n> b", "a  b"),
        (f"a <memory-context{T} >x</memory-context\t> b", "a  b"),
        # nested crib blocks are removed as a whole; a closer closes everything inside its block
        (f"<memory-context{T}> a <memory{T}> b </memory> c </memory-context>!", "!"),
        (f"<memory-context{T}> a </memory> b </memory-context>after", "after"),
        (f"<memory-context{T}> a <memory{T}> b </memory-context>after", "after"),
        # not crib's: no attributes, other attributes, unquoted values, no context_time
        ("let v: Vec<Memory> = Vec::new();", "let v: Vec<Memory> = Vec::new();"),
        ("parser.cpp needs #include <memory> for std::unique_ptr", "parser.cpp needs #include <memory> for std::unique_ptr"),
        ("a <memory>x</memory> b", "a <memory>x</memory> b"),
        ('<memory id="1">x</memory>', '<memory id="1">x</memory>'),
        ("<memory context_time=t>x</memory>", "<memory context_time=t>x</memory>"),
        ('<memory channels="fts">x</memory>', '<memory channels="fts">x</memory>'),
        ('<memory context_time="t"channels="x">y', '<memory context_time="t"channels="x">y'),
        ("<memory/> <memory-context />", "<memory/> <memory-context />"),
        # memory-context is crib's name alone: cut with or without attributes (a model drops them)
        ("a <memory-context>secret_key = 1234</memory-context> b", "a  b"),
        ('a <MEMORY-CONTEXT source="x" id="2">s</memory-context> b', "a  b"),
        ("<memory-context\n>x</memory-context>ok", "ok"),
        ("<div><p>HTML</p> <br/> <a href='x'>y</a></div>", "<div><p>HTML</p> <br/> <a href='x'>y</a></div>"),
        # stray closers are prose
        ("text </memory> more </MEMORY-context > end", "text </memory> more </MEMORY-context > end"),
        # look-alikes pass through
        ("<memoryx> <memo> <memory-contextual> <memory-foo> <memory.x> <memories>",
         "<memoryx> <memo> <memory-contextual> <memory-foo> <memory.x> <memories>"),
        ("if a < memory and b > c: pass", "if a < memory and b > c: pass"),
        ("<div class='m'>x</div> a<b && c>d <m> <", "<div class='m'>x</div> a<b && c>d <m> <"),
        # '<' is never part of a tag: it ends a candidate and starts a new one
        ('a <memory context_time="<memory>">x</memory> b', 'a <memory context_time="<memory>">x</memory> b'),
        (f"<<memory{T}>x</memory>>", "<>"),
    ],
)
def test_examples(text: str, expected: str) -> None:
    assert scrub_text(text) == expected
    assert reference_scrub(text) == expected
    assert feed_by_char(text) == expected


def test_generic_type_named_memory_is_code() -> None:
    assert scrub_text("fn load() -> Vec<Memory> { todo!() }") == "fn load() -> Vec<Memory> { todo!() }"
    assert strip_memory_blocks("std::shared_ptr<memory> p;") == "std::shared_ptr<memory> p;"


def test_unclosed_crib_block_is_dropped_at_flush() -> None:
    s = Scrubber()
    assert s.feed(f"visible <memory{T}>secret") == "visible "
    assert s.in_block
    assert s.feed(" more secret") == ""
    assert s.flush() == ""


def test_incomplete_tag_at_end() -> None:
    # crib's opener cut off after context_time=: dropped
    for tail in ['<memory context_time="2026', '<memory-context context_time=', '<memory context_time="t" chan',
                 '<memory channels="x" context_time="t"']:
        assert scrub_text("x " + tail) == "x ", tail
        assert reference_scrub("x " + tail) == "x ", tail
    # anything else is text: never is the text after an unclosed tag lost
    for tail in ["<memory-context", "<memory-context ", '<memory-context id="x', "<memory-context data-"]:
        assert scrub_text("x " + tail) == "x ", tail  # crib's name alone, cut off
        assert reference_scrub("x " + tail) == "x ", tail
    for tail in ["<", "</", "<m", "<mem", "</memor", "<memory", "</memory", "<memory ", "<memory-con",
                 "<memory context", '<memory id="', "<memory>and the rest of the sentence"]:
        assert scrub_text("x " + tail) == "x " + tail, tail
        assert reference_scrub("x " + tail) == "x " + tail, tail


SEED_002 = "<memory-context>secret_key = 1234</memory-context>"


def test_seed_002_chunked_example_never_reaches_the_output() -> None:
    """Seed 002's example (``<memory-`` then ``context>secret_key = 1234</memory-context>``), split
    at every position and every pair of positions, with text around it."""
    text = "before " + SEED_002 + " after"
    assert scrub_text(text) == "before  after"
    for i in range(len(text) + 1):
        assert feed_in_pieces(text, [i]) == "before  after", i
        for j in range(i, len(text) + 1, 3):
            assert "1234" not in feed_in_pieces(text, [i, j]), (i, j)
    assert feed_in_pieces(SEED_002, [len("<memory-")]) == ""
    assert "1234" not in strip_memory_blocks("note: " + SEED_002)


def test_flush_resets_for_reuse() -> None:
    s = Scrubber()
    s.feed(f"<memory{T}>x")
    assert s.flush() == ""
    assert s.feed("fresh") == "fresh"
    assert s.flush() == ""


def test_tag_length_cap() -> None:
    longest = '<memory context_time="' + "x" * (MAX_TAG_LENGTH - len('<memory context_time="">')) + '">'
    assert len(longest) == MAX_TAG_LENGTH
    assert scrub_text(longest + "secret</memory>end") == "end"
    too_long = '<memory context_time="' + "x" * (MAX_TAG_LENGTH - len('<memory context_time="">') + 1) + '">'
    assert scrub_text(too_long + "visible") == too_long + "visible"


# ----------------------------------------------------------------------------- split everywhere

SAMPLE = (
    f'Hi <memory{T} skipped="a>b">'
    f"secret <memory-context{T}>deep</memory-context> more</MEMORY >"
    " mid </memory> <memoryx>keep</memoryx> a < b Vec<Memory> "
    f"<Memory-Context\n{T}\n>x</memory-context\t> <memory/> end <mem"
)
SAMPLE_EXPECTED = "Hi  mid </memory> <memoryx>keep</memoryx> a < b Vec<Memory>  <memory/> end <mem"


def test_sample_reference() -> None:
    assert scrub_text(SAMPLE) == SAMPLE_EXPECTED
    assert reference_scrub(SAMPLE) == SAMPLE_EXPECTED


@pytest.mark.parametrize("cut", range(0, len(SAMPLE) + 1, 3))
def test_split_at_every_position(cut: int) -> None:
    for c in (cut, cut + 1, cut + 2):
        s = Scrubber()
        assert s.feed(SAMPLE[:c]) + s.feed(SAMPLE[c:]) + s.flush() == SAMPLE_EXPECTED


def test_split_at_every_pair_of_positions() -> None:
    n = len(SAMPLE)
    for a in range(0, n + 1, 2):
        for b in range(a, n + 1):
            s = Scrubber()
            got = s.feed(SAMPLE[:a]) + s.feed(SAMPLE[a:b]) + s.feed(SAMPLE[b:]) + s.flush()
            assert got == SAMPLE_EXPECTED, (a, b)


def test_every_tag_split_at_every_position() -> None:
    tags = [f"<memory{T}>", "</memory>", f'<MEMORY-CONTEXT{T} skipped=">">', "</memory-context >"]
    for tag in tags:
        text = f"a{tag}b</memory></memory-context>c"
        want = scrub_text(text)
        for cut in range(len(text) + 1):
            assert feed_in_pieces(text, [cut]) == want, (tag, cut)


# ------------------------------------------------------------------------------ responsiveness


def test_responsiveness_examples() -> None:
    s = Scrubber()
    assert s.feed("hello <") == "hello "
    assert s.pending == "<"
    assert s.feed(" b") == "< b"  # '< ' can't be a crib tag: released at once
    assert s.pending == ""

    s = Scrubber()
    assert s.feed("x <me") == "x "
    assert s.feed("m") == ""
    assert s.feed("o>") == "<memo>"  # a look-alike, released as soon as it is clear
    assert s.feed("<memory") == ""
    assert s.feed(">") == "<memory>"  # no attributes: not crib's
    assert s.feed("Vec<Memory") == "Vec"
    assert s.feed("> x") == "<Memory> x"
    assert s.feed("</") == ""
    assert s.feed("div>") == "</div>"
    assert s.feed("</memory>") == "</memory>"  # no crib block open: prose
    assert s.flush() == ""


def test_block_content_is_never_emitted_even_partially() -> None:
    s = Scrubber()
    out = [s.feed(c) for c in f"ok <memory{T}>SECRET</memory> done"]
    assert "".join(out) + s.flush() == "ok  done"
    assert "S" not in "".join(out)


def test_text_after_block_is_emitted_immediately() -> None:
    s = Scrubber()
    assert s.feed(f"<memory{T}>x</memory") == ""
    assert s.feed(">tail") == "tail"


def test_scrub_stream_helper() -> None:
    chunks = ["a <mem", 'ory context_time="t">sec', "ret</mem", "ory> b <", f"memo> c <memory{T}>x"]
    pieces = list(scrub_stream(chunks))
    assert all(pieces)
    assert "".join(pieces) == scrub_text("".join(chunks)) == "a  b <memo> c "
    assert pieces[0] == "a "
    assert list(scrub_stream([])) == []


def test_state_round_trip_through_json() -> None:
    text = SAMPLE
    want = scrub_text(text)
    for cut in range(len(text) + 1):
        s = Scrubber()
        first = s.feed(text[:cut])
        state = json.loads(json.dumps(s.to_state()))
        t = Scrubber.from_state(state)
        assert first + t.feed(text[cut:]) + t.flush() == want, cut
    with pytest.raises(ValueError):
        Scrubber.from_state({"v": 99})


# ---------------------------------------------------------------------------- hypothesis property

_OPENERS = {
    "memory": [f"<memory{T}>", f'<memory{T} channels="facts,fts,vector">', f'<MEMORY{T} skipped="a>b">',
               f"<Memory\n\t{T}\n>", '<memory channels="x" context_time="y">'],
    "memory-context": [f"<memory-context{T}>", f"<memory-context{T} >", f"<MEMORY-CONTEXT{T}>",
                       f'<memory-context\n{T} skipped="vector">',
                       # echoed by a model without crib's attributes, or with others: still crib's
                       "<memory-context>", "<Memory-Context >", '<memory-context id="3" data-src="x">'],
}
_CLOSERS = {
    "memory": ["</memory>", "</MEMORY >", "</memory\n>"],
    "memory-context": ["</memory-context>", "</memory-context >", "</MEMORY-Context\t>"],
}

# Fragments of memory markup and look-alikes for the free text between blocks.
_FRAGMENTS = [
    "<", "</", ">", "/>", "=", '"', "'", " ", "\n", "<m", "<mem", "<memory", "<MEMORY", "<memory-",
    "<memory-context", "</memory", "</memory-context", "<memory ", '<memory context_time="', "<memory a='x>",
    "<memory>", "</memory>", "<memory-context>", "</memory-context >", "<memory/>", "< memory>", "context_time=",
    "<memo>", "<memoryx>", "<memory-contextual>", "</memoryx>", "<div>", "a < b", "x > y", 'q="a>b"',
    'channels="', "Vec<Memory>", "#include <memory>",
]
_free_text = st.lists(
    st.one_of(st.text(alphabet="ab <>/=\"'-mMeEx_\n", max_size=8), st.sampled_from(_FRAGMENTS)),
    max_size=6,
).map("".join)
# Inside blocks: sentinel text and harmless characters, but no '<' (which could close the block).
_inner_text = st.text(alphabet=SENTINEL + "ab >/=\"'-m\n" + SENTINEL * 3, min_size=1, max_size=10)


def _block(content: st.SearchStrategy[list[str]]) -> st.SearchStrategy[str]:
    @st.composite
    def build(draw: st.DrawFn) -> str:
        name = draw(st.sampled_from(sorted(_OPENERS)))
        opener = draw(st.sampled_from(_OPENERS[name]))
        closer = draw(st.sampled_from(_CLOSERS[name]))
        return opener + SENTINEL + "".join(draw(content)) + closer

    return build()


_blocks = st.recursive(
    _block(st.lists(_inner_text, max_size=3)),
    lambda inner: _block(st.lists(st.one_of(_inner_text, inner), max_size=3)),
    max_leaves=6,
)
texts = st.lists(st.one_of(_free_text, _blocks), min_size=1, max_size=8).map("".join)


@PROPERTY
@given(text=texts, cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=30))
def test_property_streaming_equals_one_shot_and_drops_block_content(text: str, cuts: list[int]) -> None:
    whole = scrub_text(text)
    assert feed_in_pieces(text, cuts) == whole
    assert feed_by_char(text) == whole
    assert whole == reference_scrub(text)
    assert SENTINEL not in whole


@PROPERTY
@given(text=texts, cut=st.integers(min_value=0, max_value=400))
def test_property_state_survives_json(text: str, cut: int) -> None:
    s = Scrubber()
    first = s.feed(text[:cut])
    t = Scrubber.from_state(json.loads(json.dumps(s.to_state())))
    assert first + t.feed(text[cut:]) + t.flush() == scrub_text(text)


@PROPERTY
@given(text=texts, cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=20))
def test_property_holds_back_only_a_tag_prefix(text: str, cuts: list[int]) -> None:
    s = Scrubber()
    prev = 0
    for cut in sorted({c for c in cuts if 0 < c < len(text)}) + [len(text)]:
        s.feed(text[prev:cut])
        prev = cut
        held = s.pending
        if held:
            assert len(held) <= MAX_TAG_LENGTH
            assert held.startswith("<") and "<" not in held[1:]
            assert text[:cut].endswith(held)
            assert re.match(r"</?[mM]", held) or held in ("<", "</"), held


@PROPERTY
@given(text=st.text(max_size=60))
def test_property_arbitrary_unicode_text(text: str) -> None:
    assert feed_by_char(text) == scrub_text(text) == reference_scrub(text)
    if "context_time" not in text:
        assert scrub_text(text) == text


# ------------------------------------------------------------------------------ strip (write hygiene)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("no markup here\n\n  indented  ", "no markup here\n\n  indented  "),
        (f"a <memory{T}>x</memory> b", "a b"),
        (f"a<memory{T}>x</memory>b", "ab"),
        (f"a <memory{T}>x</memory>b", "a b"),
        (f"{FENCED}\n\nMy note: use WAL.", "My note: use WAL."),
        (f"My note.\n{CLASSIC}\n", "My note."),
        (f"line one\n{CLASSIC}\nline two", "line one\nline two"),
        (f"para one\n\n{FENCED}\n\npara two", "para one\n\npara two"),
        (f"- item\n  {CLASSIC}\n  - sub", "- item\n  - sub"),
        (f"a {CLASSIC} {FENCED} b", "a b"),
        (f"a\n{CLASSIC}\n\n{FENCED}\nb", "a\n\nb"),
        ("keep </memory> this", "keep </memory> this"),
        (f"x\r\n<memory{T}></memory>\r\ny", "x\r\ny"),
        (f"keep <memory{T}>and drop the rest", "keep"),
        ("keep <memory>and the rest", "keep <memory>and the rest"),
        ("parser.cpp needs #include <memory> for std::unique_ptr", "parser.cpp needs #include <memory> for std::unique_ptr"),
        ("<memoryx> stays", "<memoryx> stays"),
    ],
)
def test_strip_memory_blocks(text: str, expected: str) -> None:
    assert strip_memory_blocks(text) == expected


@PROPERTY
@given(text=texts)
def test_property_strip_matches_scrub_up_to_whitespace(text: str) -> None:
    stripped = strip_memory_blocks(text)
    assert SENTINEL not in stripped
    assert stripped.split() == scrub_text(text).split()
    if scrub_text(text) == text:
        assert stripped == text


# --------------------------------------------------------------------------------- neutralisation


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("</memory-context>", "‹/memory-context>"),
        ("<memory context_time='x'>", "‹memory context_time='x'>"),
        ("a </MEMORY > b <Memory-Context\n>", "a ‹/MEMORY > b ‹Memory-Context\n>"),
        ("< /memory > </ memory> < memory>", "‹ /memory > ‹/ memory> ‹ memory>"),
        ("<memory/>", "‹memory/>"),
        ("List<Memory> xs", "List‹Memory> xs"),  # a generic type named Memory is a tag too: neutralised
        ("text ending <memory", "text ending ‹memory"),
        ("text ending </memory-context a='x", "text ending ‹/memory-context a='x"),
        ("text ending <mem", "text ending ‹mem"),
        ("text ending <", "text ending ‹"),
    ],
)
def test_neutralise_tags(text: str, expected: str) -> None:
    assert neutralise_tags(text) == expected
    assert neutralise_tags(expected) == expected


@pytest.mark.parametrize(
    "text",
    [
        "if (a < b && c > d) { return x<y; }",
        "<div class=\"memory\"><p>memory</p></div>",
        "List<MemoryEntry> xs = new ArrayList<>();",
        "<memoryx> <memo> <memory-contextual> <memory-foo> <memories> a<mem b",
        "vector<int> v; std::map<std::string, int> m; x <= y >= z",
        "<!-- memory --> <![CDATA[<memory]]x",
        "plain text without angle brackets",
        "",
    ],
)
def test_neutralise_leaves_other_text_alone(text: str) -> None:
    assert neutralise_tags(text) == text


@PROPERTY
@given(text=st.one_of(texts, st.text(max_size=80)))
def test_property_neutralised_text_cannot_break_the_fence(text: str) -> None:
    inert = neutralise_tags(text)
    assert neutralise_tags(inert) == inert  # idempotent
    # Only '<' characters were touched (entities such as &lt; become one '‹').
    if "&" not in text:
        assert inert.replace(NEUTRAL_LT, "<") == text.replace(NEUTRAL_LT, "<").replace("\uff1c", "<").replace(
            "\ufe64", "<"
        ) or "\uff1c" in text or "\ufe64" in text
    # Stored text rendered inside a block can neither close nor reopen it.
    for opener, closer in [('<memory-context context_time="t">\n', "\n</memory-context>"),
                           ('<memory context_time="t" channels="fts">', "</memory>"),
                           ('<memory-context context_time="t">', "</memory-context>")]:
        assert scrub_text(opener + inert + closer + "AFTER") == "AFTER"
        assert scrub_text("BEFORE" + opener + inert + closer + "AFTER") == "BEFOREAFTER"
    # Nothing the scrubber would treat as memory markup is left.
    assert scrub_text(inert) == inert


def test_neutralised_text_has_no_memory_markup() -> None:
    text = SAMPLE + " </memory-context> <memory"
    inert = neutralise_tags(text)
    assert scrub_text(inert) == inert


# ------------------------------------------------------------------------------ 1 MB acceptance


def _megabyte_stream(seed: int = 20261122) -> str:
    rng = random.Random(seed)
    words = ["the", "memory", "a<b", "x > y", "<div>", "</p>", "<memo>", "<memoryx>", "code", "List<int>",
             "<memory-contextual>", "ok", "\n", "SQLite", "'quoted'", '"dq"', "=", "<"]
    blocks = [
        '<memory context_time="2026-11-22T10:00:00Z">{s}</memory>',
        '<memory-context context_time="t">\n[Note from crib: recalled]\n{s}\n</memory-context>',
        '<MEMORY-CONTEXT context_time="t" skipped="a>b">{s}<memory context_time="t">{s}</memory>{s}</memory-context >',
        '<memory\ncontext_time="t"\n>{s}</MEMORY\n>',
    ]
    parts: list[str] = []
    size = 0
    while size < 1_000_000:
        if rng.random() < 0.15:
            sentinel = f"{SENTINEL}secret-{rng.randrange(10**6)}{SENTINEL}"
            piece = rng.choice(blocks).format(s=sentinel)
        else:
            piece = " ".join(rng.choice(words) for _ in range(rng.randint(1, 20))) + " "
        parts.append(piece)
        size += len(piece)
    return "".join(parts)


@pytest.mark.slow
def test_one_megabyte_stream_linear_time() -> None:
    text = _megabyte_stream()
    assert len(text) >= 1_000_000 and text.count(SENTINEL) > 1000

    t0 = time.perf_counter()
    whole = scrub_text(text)
    t1 = time.perf_counter()
    by_char = feed_by_char(text)
    t2 = time.perf_counter()
    chunked = feed_random_chunks(text, seed=7, max_chunk=100)
    t3 = time.perf_counter()
    via_generator = "".join(scrub_stream(text[i : i + 4096] for i in range(0, len(text), 4096)))

    assert whole == by_char == chunked == via_generator
    assert SENTINEL not in whole and "secret-" not in whole
    assert "<memoryx>" in whole and "<memory-contextual>" in whole and "a<b" in whole
    timings = {"whole": t1 - t0, "by_char": t2 - t1, "random_chunks": t3 - t2}
    print(f"\n1 MB scrub timings (s): {timings}")
    assert t3 - t0 < 10, timings


@pytest.mark.slow
def test_adversarial_inputs_stay_linear() -> None:
    # Many unterminated candidates, long quoted values, deep nesting: still linear.
    cases = [
        '<memory context_time="' * 20_000,
        "<memory " * 25_000,
        '<memory context_time="t">' * 12_500 + "</memory>" * 12_500 + "tail",
        ('<memory context_time="' + "x" * 2000) * 100,
        "<" * 200_000,
        "</memory-context " * 12_000,
    ]
    for text in cases:
        t0 = time.perf_counter()
        assert feed_by_char(text) == scrub_text(text)
        assert time.perf_counter() - t0 < 5
    assert scrub_text('<memory context_time="t">' * 12_500 + "</memory>" * 12_500 + "tail") == "tail"
