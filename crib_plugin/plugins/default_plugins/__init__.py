"""crib's own plugins (channels are in ``read/channels``): the built-in models, hooks and
commands. Registered by module name (``plugins.manager.DEFAULT_PLUGINS``), so they sit at the top
of the layer order: like a third-party plugin, they may import any of crib."""
