"""Layer 5, the write path: clean input, write entries (vectors, facts, supersession, audit),
manage and import them."""
