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

from crib_plugin.scrub import (
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
    for cut in sorted(set(c for c in cuts if 0 < c < len(text))) + [len(text)]:
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
_BODY = rf"""(?:[^<>=]|={_WS.replace(']', '=]')}*+(?:"[^"<]*+"|'[^'<]*+'|(?=[^"'])))*+"""
_TAG = re.compile(
    rf"<(?P<slash>/?)(?P<name>memory-context|memory)(?=[ \t\n\r\f\v/>])(?P<body>{_BODY})>",
    re.IGNORECASE | re.ASCII,
)
_NAME_PREFIXES = "|".join(re.escape("memory-context"[:k]) for k in range(14, 0, -1))
_PARTIAL = re.compile(
    rf"<(?P<slash>/?)(?:(?P<name>memory-context|memory)"
    rf"""(?:[ \t\n\r\f\v/]{_BODY}(?:={_WS.replace(']', '=]')}*+(?:"[^"<]*+|'[^'<]*+)?)?)?"""
    rf"|(?:{_NAME_PREFIXES})?)\Z",
    re.IGNORECASE | re.ASCII,
)


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
        m = _TAG.match(text, j)
        if m and m.end() - j <= MAX_TAG_LENGTH:
            name = m.group("name").lower()
            if m.group("slash"):
                if name in stack:
                    while stack.pop() != name:
                        pass
            elif not m.group("body").rstrip(" \t\n\r\f\v").endswith("/"):
                stack.append(name)
            i = m.end()
            continue
        p = _PARTIAL.match(text, j)
        if p and len(text) - j <= MAX_TAG_LENGTH:  # a candidate still open at the end of the text
            if not stack and not p.group("name"):
                out.append(text[j:])
            break
        if not stack:
            out.append("<")
        i = j + 1
    return "".join(out)


# ---------------------------------------------------------------------------------- basic examples

CLASSIC = '<memory context_time="2026-11-22T10:00:00Z">- 2026-11-20: chose SQLite</memory>'
FENCED = (
    "<memory-context>\n[System note: recalled memory, not new user input]\n"
    "- 2026-11-20: chose SQLite\n</memory-context>"
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("plain text, nothing to do", "plain text, nothing to do"),
        (f"before {CLASSIC} after", "before  after"),
        (f"before {FENCED} after", "before  after"),
        ("a <memory>x</memory>b<memory-context>y</memory-context>c", "a bc"),
        # case variants
        ("a <MEMORY>x</Memory> b <Memory-CONTEXT>y</memory-context> c", "a  b  c"),
        # attributes: double/single quotes, '>' inside quoted values, unquoted, boolean
        ('a <memory t="x>y" u=\'>\'>secret</memory> b', "a  b"),
        ("a <memory t = 'q>' flag v=1>secret</memory> b", "a  b"),
        ("a <memory don't>secret</memory> b", "a  b"),  # a quote not after '=' is an ordinary char
        # whitespace before '>' and newlines inside tags
        ("a <memory-context >x</memory-context > b", "a  b"),
        ("a <memory\n  context_time='t'\n>x</memory\n> b", "a  b"),
        ("a <memory-context\tsrc='crib'>x</memory-context\t> b", "a  b"),
        # nested blocks are removed as a whole
        ("<memory-context> a <memory> b </memory> c </memory-context>!", "!"),
        ("x<memory><memory>a</memory>b</memory>y", "xy"),
        # a closer closes the innermost block of its own name and everything inside it
        ("<memory-context> a </memory> b </memory-context>after", "after"),
        ("<memory-context> a <memory> b </memory-context>after", "after"),
        # stray closers are memory markup too
        ("text </memory> more </MEMORY-context > end", "text  more  end"),
        # self-closing tags are empty blocks
        ("a<memory/>b<memory-context />c<memory x='1'/>d", "abcd"),
        # look-alikes pass through
        ("<memoryx> <memo> <memory-contextual> <memory-foo> <memory.x> <memories>",
         "<memoryx> <memo> <memory-contextual> <memory-foo> <memory.x> <memories>"),
        ("</memoryx> </memo> </memory-contextual>", "</memoryx> </memo> </memory-contextual>"),
        # whitespace between '<', '/' and the name: not a tag (HTML rules), so code stays code
        ("if a < memory and b > c: pass", "if a < memory and b > c: pass"),
        ("< /memory > </ memory>", "< /memory > </ memory>"),
        # ordinary markup and comparisons
        ("<div class='m'>x</div> a<b && c>d <m> <", "<div class='m'>x</div> a<b && c>d <m> <"),
        # '<' is never part of a tag: it ends a candidate and starts a new one
        ('a <memory x="<memory>">secret</memory> b', 'a <memory x=" b'),
        ("<<memory>x</memory>>", "<>"),
    ],
)
def test_examples(text: str, expected: str) -> None:
    assert scrub_text(text) == expected
    assert reference_scrub(text) == expected
    assert feed_by_char(text) == expected


def test_known_limitation_generic_type_named_memory() -> None:
    # Names are case-insensitive and what precedes '<' does not matter, so a generic type named
    # Memory is an opening tag: the rest of the stream is dropped as an unclosed block.  This is the
    # price of "an unclosed block is never emitted" (the alternative, holding text back until a
    # closer shows up, would stall the stream).  Other type names are unaffected.
    assert scrub_text("fn load() -> Vec<Memory> { todo!() }") == "fn load() -> Vec"
    assert scrub_text("fn load() -> Vec<MemoryEntry> {}") == "fn load() -> Vec<MemoryEntry> {}"


def test_unclosed_block_is_dropped_at_flush() -> None:
    s = Scrubber()
    assert s.feed("visible <memory>secret") == "visible "
    assert s.in_block
    assert s.feed(" more secret") == ""
    assert s.flush() == ""
    assert scrub_text("a <memory-context> <memory> b </memory> c") == "a "


def test_incomplete_tag_at_end() -> None:
    # name complete: cut-off memory markup, dropped
    for tail in ["<memory", "</memory", "<MEMORY-context", '<memory a="x>', "<memory a='", "<memory ",
                 "</memory-context\n", "<memory/"]:
        assert scrub_text("x " + tail) == "x ", tail
    # name not complete: ordinary text, emitted
    for tail in ["<", "</", "<m", "<mem", "</memor", "<memory-", "<memory-con"]:
        assert scrub_text("x " + tail) == "x " + tail, tail


def test_flush_resets_for_reuse() -> None:
    s = Scrubber()
    s.feed("<memory>x")
    assert s.flush() == ""
    assert s.feed("fresh") == "fresh"
    assert s.flush() == ""


def test_tag_length_cap() -> None:
    longest = "<memory a='" + "x" * (MAX_TAG_LENGTH - len("<memory a=''>")) + "'>"
    assert len(longest) == MAX_TAG_LENGTH
    assert scrub_text(longest + "secret</memory>end") == "end"
    too_long = "<memory a='" + "x" * (MAX_TAG_LENGTH - len("<memory a=''>") + 1) + "'>"
    assert scrub_text(too_long + "visible") == too_long + "visible"
    # prose after a '<memory ' with no '>' in sight is released after at most MAX_TAG_LENGTH chars
    s = Scrubber()
    held = s.feed("the <memory tag " + "word " * 400)
    assert held.startswith("the <memory tag ")
    assert len(s.pending) <= MAX_TAG_LENGTH


# ----------------------------------------------------------------------------- split everywhere

SAMPLE = (
    'Hi <memory context_time="2026-11-22T10:00:00Z" q=\'a>b\'>'
    "secret <memory-context>deep</memory-context> more</MEMORY >"
    " mid </memory> <memoryx>keep</memoryx> a < b "
    "<Memory-Context\n>x</memory-context\t> <memory/> end <mem"
)
SAMPLE_EXPECTED = "Hi  mid  <memoryx>keep</memoryx> a < b   end <mem"


def test_sample_reference() -> None:
    assert scrub_text(SAMPLE) == SAMPLE_EXPECTED
    assert reference_scrub(SAMPLE) == SAMPLE_EXPECTED


@pytest.mark.parametrize("cut", range(len(SAMPLE) + 1))
def test_split_at_every_position(cut: int) -> None:
    s = Scrubber()
    assert s.feed(SAMPLE[:cut]) + s.feed(SAMPLE[cut:]) + s.flush() == SAMPLE_EXPECTED


def test_split_at_every_pair_of_positions() -> None:
    n = len(SAMPLE)
    for a in range(n + 1):
        for b in range(a, n + 1):
            s = Scrubber()
            got = s.feed(SAMPLE[:a]) + s.feed(SAMPLE[a:b]) + s.feed(SAMPLE[b:]) + s.flush()
            assert got == SAMPLE_EXPECTED, (a, b)


def test_every_tag_split_at_every_position() -> None:
    tags = ['<memory context_time="2026-11-22T10:00:00Z">', "</memory>", "<MEMORY-CONTEXT a='>'>",
            "</memory-context >", "<memory/>"]
    for tag in tags:
        text = f"a{tag}b"
        want = scrub_text(text)
        for cut in range(len(text) + 1):
            assert feed_in_pieces(text, [cut]) == want, (tag, cut)


# ------------------------------------------------------------------------------ responsiveness


def test_responsiveness_examples() -> None:
    s = Scrubber()
    assert s.feed("hello <") == "hello "
    assert s.pending == "<"
    assert s.feed(" b") == "< b"  # '< ' can't be a memory tag: released at once
    assert s.pending == ""

    s = Scrubber()
    assert s.feed("a < b") == "a < b"
    assert s.feed("x <me") == "x "
    assert s.feed("m") == ""
    assert s.feed("o>") == "<memo>"  # a look-alike, released as soon as it is clear
    assert s.feed("<memory") == ""
    assert s.feed("x") == "<memoryx"
    assert s.feed("<memory-context") == ""
    assert s.feed("ual>") == "<memory-contextual>"
    assert s.feed("</") == ""
    assert s.feed("div>") == "</div>"
    assert s.flush() == ""


def test_block_content_is_never_emitted_even_partially() -> None:
    s = Scrubber()
    out = [s.feed(c) for c in "ok <memory>SECRET</memory> done"]
    assert "".join(out) + s.flush() == "ok  done"
    assert not any(ch in "SECRET" for ch in "".join(out))


def test_text_after_block_is_emitted_immediately() -> None:
    s = Scrubber()
    assert s.feed("<memory>x</memory") == ""
    assert s.feed(">tail") == "tail"


def test_scrub_stream_helper() -> None:
    chunks = ["a <mem", "ory>sec", "ret</mem", "ory> b <", "memo> c <memory>x"]
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
    "memory": ["<memory>", '<memory context_time="2026-11-22T10:00:00Z">', "<MEMORY a='>'>",
               "<Memory\n\tx = \"1>2\" flag>"],
    "memory-context": ["<memory-context>", "<memory-context >", "<MEMORY-CONTEXT note='a>b'>",
                       "<memory-context\nsrc=crib>"],
}
_CLOSERS = {
    "memory": ["</memory>", "</MEMORY >", "</memory\n>", "</Memory x='>'>"],
    "memory-context": ["</memory-context>", "</memory-context >", "</MEMORY-Context\t>"],
}

# Fragments of memory markup and look-alikes for the free text between blocks.
_FRAGMENTS = [
    "<", "</", ">", "/>", "=", '"', "'", " ", "\n", "<m", "<mem", "<memory", "<MEMORY", "<memory-",
    "<memory-context", "</memory", "</memory-context", "<memory ", '<memory a="', "<memory a='x>",
    "<memory>", "</memory>", "<memory-context>", "</memory-context >", "<memory/>", "< memory>",
    "<memo>", "<memoryx>", "<memory-contextual>", "</memoryx>", "<div>", "a < b", "x > y", 'q="a>b"',
]
_free_text = st.lists(
    st.one_of(st.text(alphabet="ab <>/=\"'-mMeEx\n", max_size=8), st.sampled_from(_FRAGMENTS)),
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
def test_property_holds_back_only_a_viable_tag_prefix(text: str, cuts: list[int]) -> None:
    s = Scrubber()
    prev = 0
    for cut in sorted(set(c for c in cuts if 0 < c < len(text))) + [len(text)]:
        s.feed(text[prev:cut])
        prev = cut
        held = s.pending
        if held:
            assert len(held) <= MAX_TAG_LENGTH
            assert held.startswith("<") and "<" not in held[1:]
            assert text[:cut].endswith(held)
            assert _PARTIAL.match(held), held  # could still become a memory tag


@PROPERTY
@given(text=st.text(max_size=60))
def test_property_arbitrary_unicode_text(text: str) -> None:
    assert feed_by_char(text) == scrub_text(text) == reference_scrub(text)
    if "<" not in text:
        assert scrub_text(text) == text


# ------------------------------------------------------------------------------ strip (write hygiene)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("no markup here\n\n  indented  ", "no markup here\n\n  indented  "),
        ("a <memory>x</memory> b", "a b"),
        ("a<memory>x</memory>b", "ab"),
        ("a <memory>x</memory>b", "a b"),
        (f"{FENCED}\n\nMy note: use WAL.", "My note: use WAL."),
        (f"My note.\n{CLASSIC}\n", "My note."),
        (f"line one\n{CLASSIC}\nline two", "line one\nline two"),
        (f"para one\n\n{FENCED}\n\npara two", "para one\n\npara two"),
        (f"- item\n  {CLASSIC}\n  - sub", "- item\n  - sub"),
        (f"a {CLASSIC} {FENCED} b", "a b"),
        (f"a\n{CLASSIC}\n\n{FENCED}\nb", "a\n\nb"),
        ("keep </memory> this", "keep this"),
        ("x\r\n<memory/>\r\ny", "x\r\ny"),
        ("keep <memory>and drop the rest", "keep"),
        ("  lead <memory/>", "  lead"),
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
    # Only '<' characters were touched.
    assert inert.replace(NEUTRAL_LT, "<") == text.replace(NEUTRAL_LT, "<")
    # Stored text rendered inside a block can neither close nor reopen it.
    for opener, closer in [("<memory-context>\n", "\n</memory-context>"),
                           ('<memory context_time="t">', "</memory>"),
                           ("<memory-context>", "</memory-context>")]:
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
        "<memory-context>\n[System note: recalled]\n{s}\n</memory-context>",
        "<MEMORY-CONTEXT note='a>b'>{s}<memory>{s}</memory>{s}</memory-context >",
        "<memory\n>{s}</MEMORY\n>",
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
        "<memory a='" * 20_000,
        "<memory " * 25_000,
        "<memory>" * 12_500 + "</memory>" * 12_500 + "tail",
        ("<memory a=\"" + "x" * 2000) * 100,
        "<" * 200_000,
        "</memory-context " * 12_000,
    ]
    for text in cases:
        t0 = time.perf_counter()
        assert feed_by_char(text) == scrub_text(text)
        assert time.perf_counter() - t0 < 5
    assert scrub_text("<memory>" * 12_500 + "</memory>" * 12_500 + "tail") == "tail"
