"""Secret redaction: credentials never reach the store, and never leave it verbatim.

Two passes use this module:

* **write** (:func:`redact`, called by :func:`crib_plugin.write.clean.clean_content`, so every
  ``crib write``, ``crib import`` and ``Memory.write``): crib's own rules (:data:`CRIB_RULES`)
  *plus* the denylist regexes of `detect-secrets <https://github.com/Yelp/detect-secrets>`_'
  plugins (AWS, Stripe, Slack, SendGrid, Twilio, Discord, Mailchimp, …), a maintained detector
  whose pattern set grows with its releases;
* **render** (:func:`redact_for_render`, called by :mod:`crib_plugin.output.render` on every entry and
  fact it shows, by ``crib search``, and — through :func:`redact_value`, content and metadata — by
  ``crib export``, ``list`` and ``show``): crib's own rules only.  Text stored
  before redaction existed, or by an older crib, is still never re-injected verbatim.  The
  detect-secrets rules stay off this per-prompt path because importing detect-secrets costs
  ~185 ms (it imports ``requests``) against a ~230 ms cold ``crib retrieve``.

A secret is replaced by ``[REDACTED:KIND]``, ``KIND`` naming what was removed
(``[REDACTED:aws-secret-key]``, ``[REDACTED:github-token]``, ``[REDACTED:password]``); the words
around it stay, so the memory keeps its meaning ("the staging DB password is [REDACTED:password]").
Redaction is idempotent: a marker is never taken for a secret.

Cost: a rule runs (and is compiled, once per process) only when a literal its matches need is in
the text; each token rule is anchored at the start of a run (a look-behind forbids starting inside a
run of token characters) and every repetition is bounded, so a pass is linear in the text with a
bounded constant; the keyword rules are tried only where a keyword sits (one anchored match each);
detect-secrets' regexes, written for line-by-line scanning, only run on lines of at most
:data:`MAX_LINE_FOR_PLUGINS` characters (longer lines are covered by crib's own rules).

``CRIB_REDACT=0`` turns both passes off (see :func:`crib_plugin.core.config.redact_enabled`).
"""

from __future__ import annotations

from .detect import plugin_rules
from .passes import Span, find_secrets, redact, redact_for_render, redact_head_for_render, redact_value
from .rules import CRIB_RULES, MARKER, MAX_LINE_FOR_PLUGINS, Rule, looks_secret, marker

__all__ = [
    "CRIB_RULES",
    "MARKER",
    "MAX_LINE_FOR_PLUGINS",
    "Rule",
    "Span",
    "find_secrets",
    "looks_secret",
    "marker",
    "plugin_rules",
    "redact",
    "redact_for_render",
    "redact_head_for_render",
    "redact_value",
]
