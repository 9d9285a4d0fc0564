"""Layer 7, what a retrieval becomes: the rendered block, ``--explain``, the retrieval log."""
