"""Render retrievals through Jinja templates: the user's directory first, then crib's own.

Template lookup (a ``ChoiceLoader``, as in datasette): ``CRIB_TEMPLATES`` (or the ``templates``
argument) → crib's own, ``crib_plugin/output/templates/`` (inside the package: a wheel and an
editable install find them the same way). A user overrides a template by putting a file of the same name in their directory.

Stored text can never open or close the fence: every memory tag inside content is neutralised
here, before any template sees it. Nor is a secret ever re-injected verbatim: content stored
before redaction existed, or by another tool, passes crib's redaction rules again here
(:func:`crib_plugin.text.redact.redact_for_render`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from ..core.entry_types import as_table
from ..core.records import Entry, Fact, Retrieval
from ..core.timeutil import now_iso
from ..text.redact import redact_for_render as safe
from ..text.redact import redact_head_for_render
from ..text.scrub import neutralise_tags
from ..text.scrub.lines import contain_lines, one_line
from ..text.snippet import entry_shown, snippet

if TYPE_CHECKING:  # pragma: no cover
    from ..plugins.contracts import MemoryLike

TEMPLATE_DIRS = (Path(__file__).resolve().parent / "templates",)

CLASSIC = "memory.md.j2"  # <memory context_time=…> — `crib retrieve`
CONTEXT = "memory_context.md.j2"  # <memory-context> with its system note — hooks and agent loops
FORMATS = {"memory": CLASSIC, "context": CONTEXT}
POINTER_HEADING = "May also bear on this (`show` tool / `crib show ID`)"
"""The heading of a prompt's pointers: what they are and how to read one in full."""
INDEX_HEADING = "More standing memories (`show` tool / `crib show ID`)"
"""The heading of SessionStart's index: the standing memories past those shown in full."""


@dataclass
class View:
    """A neutralised copy of an entry or fact, the only thing templates see."""

    data: dict[str, Any]

    def __getattr__(self, name: str) -> Any:
        try:
            return self.data[name]
        except KeyError as exc:
            raise AttributeError(name) from exc


def template_dirs(user_dir: Path | None = None) -> list[Path]:
    """Where templates are looked up: ``user_dir`` (``CRIB_TEMPLATES``) first, then crib's own."""
    dirs = [user_dir] if user_dir else []
    dirs.extend(d for d in TEMPLATE_DIRS if d.is_dir())
    return dirs


def warm_template(template: str = CLASSIC, user_dir: Path | None = None) -> None:
    """Import Jinja, compile ``template`` and everything it includes, and render it once.

    A cold process calls this while its prefetch worker embeds the prompt, so that work overlaps
    the embedding instead of following it: a template's ``{% include %}`` is compiled only when
    first rendered, hence the throwaway render of a sample entry and fact.
    """
    sample_entry = Entry(id=0, type="note", content="sample", created_at=now_iso(), metadata={})
    sample_fact = Fact(id=0, subject="a", predicate="b", object="c", valid_from=sample_entry.created_at)
    render_block([sample_entry], [sample_fact], template=template, user_dir=user_dir)


def _entry_view(entry: Entry) -> View:
    return View({
        "id": entry.id,
        "type": neutralise_tags(entry.type),
        "content": neutralise_tags(contain_lines(entry_shown(safe(entry.content), entry.id))),  # long: cut, with where to read the rest
        "created_at": entry.created_at,
        "metadata": entry.metadata,
        "scope": entry.scope,
        "superseded_by": entry.superseded_by,
    })


def _pointer_view(entry: Entry, chars: int | None = None) -> View:
    """A pointer's one line: the redacted content cut at a word boundary, then neutralised before
    its ``…`` (a cut can leave the start of a tag at the end, which neutralising catches there)."""
    return View({
        "id": entry.id,
        "type": neutralise_tags(entry.type),
        "snippet": snippet(redact_head_for_render(entry.content), chars, finish=neutralise_tags),
        "created_at": entry.created_at,
        "scope": entry.scope,
    })


def _fact_view(fact: Fact) -> View:
    return View({
        "id": fact.id,
        "subject": neutralise_tags(one_line(safe(fact.subject))),
        "predicate": neutralise_tags(one_line(safe(fact.predicate))),
        "object": neutralise_tags(one_line(safe(fact.object))),
        "valid_from": fact.valid_from,
        "valid_until": fact.valid_until,
    })


def render_block(
    entries: Sequence[Entry],
    facts: Sequence[Fact] = (),
    *,
    template: str = CLASSIC,
    user_dir: Path | None = None,
    context_time: str | None = None,
    channels: Sequence[str] = (),
    skipped: Sequence[str] = (),
    types: Mapping[str, Any] | None = None,
    pointers: Sequence[Entry] = (),
    pointer_heading: str = POINTER_HEADING,
    pointer_chars: int | None = None,
) -> str:
    """The block for these entries, facts and pointers, or ``""`` when there is nothing to show.

    Entries are shown newest first (ties: larger id first), as the original crib did. Templates
    also get ``types``: the type table (:mod:`crib_plugin.core.entry_types`; ``types`` when given, a
    registry's, else crib's own), so a template can write ``{{ types[e.type].meaning }}``.
    ``pointers`` (:mod:`crib_plugin.read.pointers`) follow the entries in their own (best-first) order,
    under ``pointer_heading``, each cut to ``pointer_chars`` (default
    :data:`~crib_plugin.text.snippet.SNIPPET_CHARS`).
    """
    if not entries and not facts and not pointers:
        return ""
    ordered = sorted(entries, key=lambda e: (e.created_at, e.id), reverse=True)
    # deferred: Jinja, 23 % of `import numpy` in the SessionStart hook's process (loaded machine): a
    # process renders only when it has something to show; `crib retrieve` renders after the prefetch fork
    from .jinja_env import load_template

    text = load_template(template, template_dirs(user_dir)).render(
        context_time=context_time or now_iso(),
        entries=[_entry_view(e) for e in ordered],
        facts=[_fact_view(f) for f in facts],
        pointers=[_pointer_view(p, pointer_chars) for p in pointers],
        pointer_heading=pointer_heading,
        channels=neutralise_tags(",".join(channels)).replace('"', "'"),
        skipped=neutralise_tags("; ".join(skipped)).replace('"', "'"),
        types=as_table(types),
    )
    return text.strip() + "\n"


def render_retrieval(memory: MemoryLike, retrieval: Retrieval, *, template: str = CLASSIC) -> str:
    """The pipeline's last stage, *rendered*: the block for a selected retrieval, or ``""`` when it is
    empty (:func:`render_block` with the memory's templates and types). With ``CRIB_LOG`` set, each
    render appends one JSON line describing the retrieval."""
    block = ""
    if not retrieval.empty:
        ran = [c.channel for c in retrieval.channels if c.ran]
        skipped = [f"{c.channel}: {c.note}" for c in retrieval.channels if not c.ran]
        block = render_block(
            [h.entry for h in retrieval.hits], retrieval.facts, template=template, user_dir=memory.settings.templates,
            channels=ran, skipped=skipped, types=memory.registry.types, pointers=[h.entry for h in retrieval.pointers],
        )
    if memory.settings.log_path is not None:
        # deferred: only with CRIB_LOG set; it loads hashlib (its _hashlib extension), before the prefetch fork
        # in `crib retrieve`, where every prompt would pay for it
        from .retrieval_log import log_retrieval
        log_retrieval(memory.settings.log_path, retrieval, block)
    return block
