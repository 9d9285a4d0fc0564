"""Human-readable account of one retrieval: each channel's ranking, floors, budget, timings."""

from __future__ import annotations

from ..core.records import Retrieval


def explain_text(retrieval: Retrieval) -> str:
    """A plain-text report: what each channel found, what was kept, dropped, and why."""
    lines = [f"query: {retrieval.query.text!r}", f"keywords: {', '.join(retrieval.query.keywords) or '-'}"]
    if retrieval.query.fts_expression:
        lines.append(f"fts: {retrieval.query.fts_expression}")
    for result in retrieval.channels:
        status = "ran" if result.ran else f"did not run ({result.note})"
        extra = f", floor dropped {result.dropped_by_floor}" if result.dropped_by_floor else ""
        note = f" — {result.note}" if result.ran and result.note else ""
        lines.append(
            f"channel {result.channel}: {status}, {len(result.hits)} hits{extra}, {result.seconds * 1000:.1f} ms{note}"
        )
        for hit in result.hits[:10]:
            mark = ("" if hit.passed_floor else "  (below floor)") + (f"  (via its {hit.via})" if hit.via else "")
            lines.append(f"    #{hit.rank:<3} entry {hit.entry_id:<6} score {hit.score:.4f}{mark}")
    if retrieval.gate is not None:
        state = "open" if retrieval.gate.open else "SHUT: nothing injected"
        lines.append(f"relevance gate {state} — {retrieval.gate.reason}")
    if retrieval.evidence is not None:
        evidence, cut = retrieval.evidence
        lines.append(cut.line())
        lines.extend(f"    entry {ev.entry_id:<6} {ev.line()}" for ev in evidence)
    if retrieval.query.time_range:
        lines.append(f"time range: {retrieval.query.time_range[0]} – {retrieval.query.time_range[1]} (entries written in it boosted)")
    notes: dict[int, list[str]] = {}
    for entry_id, note in retrieval.notes:
        notes.setdefault(entry_id, []).append(note)
    lines.append("kept:")
    for kept in retrieval.hits:
        ranks = ", ".join(f"{c}#{h.rank} ({h.score:.3f})" for c, h in sorted(kept.channels.items()))
        lines.append(f"    entry {kept.entry.id:<6} fused {kept.score:.5f}  {ranks}  {kept.entry.content[:70]!r}")
        lines.extend(f"        ↳ {note}" for note in notes.pop(kept.entry.id, []))
    for fact in retrieval.facts:
        lines.append(f"    fact {fact.subject} → {fact.predicate} → {fact.object} (score {fact.score:.3f})")
    if retrieval.pointers:
        lines.append("pointers (one line each, below the entries):")
        for pointer in retrieval.pointers:
            scope = f" ({pointer.entry.scope})" if pointer.entry.scope else ""
            lines.append(f"    entry {pointer.entry.id:<6}{scope} fused {pointer.score:.5f}  {pointer.entry.content[:70]!r}")
            lines.extend(f"        ↳ {note}" for note in notes.pop(pointer.entry.id, []))
    if retrieval.dropped:
        lines.append("dropped:")
        for entry_id, reason in retrieval.dropped:
            lines.append(f"    entry {entry_id:<6} {reason}")
    if notes:  # about the whole retrieval (id 0) or about entries that were not kept
        lines.append("notes:")
        for entry_id, texts in sorted(notes.items()):
            lines.extend(f"    {'retrieval' if entry_id == 0 else f'entry {entry_id:<6}'} {text}" for text in texts)
    timings = ", ".join(f"{k} {v * 1000:.1f} ms" for k, v in retrieval.timings.items())
    lines.append(f"timings: {timings}")
    return "\n".join(lines)
