"""``crib ui``: a local web viewer of the stores (browse, search, one memory's history, sessions,
fixes, store health), served on loopback by Starlette + uvicorn (the ``ui`` extra).

Imported only by the ``crib ui`` command: nothing on the per-prompt path loads it.
"""
