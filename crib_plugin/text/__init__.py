"""Layer 1, pure text: words and stems, CJK, the lexicon, time words, memory-block scrubbing,
secret redaction. Imports only ``core``."""
