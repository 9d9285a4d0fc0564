"""The offline rule-based fact extractor (no model): plain sentences → (subject, predicate, object).

:mod:`.extractor` holds :class:`RuleExtractor` (and the notes on what it extracts and why),
:mod:`.sentences` the sentence rules it tries in order, :mod:`.phrases` subject/object naming and
roles → predicates, :mod:`.patterns` the regexes and word lists. ``crib_plugin.models.rules`` stays
the import path.
"""

from __future__ import annotations

from .extractor import ROLE_PREDICATES, RuleExtractor

__all__ = ["RuleExtractor", "ROLE_PREDICATES"]
