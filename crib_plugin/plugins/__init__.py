"""Layer 4, the plugin contract: hook specifications, ``MemoryLike`` (what hooks and the pipeline
get of an open memory), the session, and the plugin manager with its entry-point cache.
The built-in plugins live in ``default_plugins/``, registered by name like any other."""
