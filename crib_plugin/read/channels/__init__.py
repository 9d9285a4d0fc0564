"""Retrieval channels. Each is a plugin of crib's own ``register_channels`` hook."""
