"""Layer 6, the read path: prepare a query, run the channels, fuse, adjust for time and type,
gate, select."""
