"""``python -m crib_plugin`` runs the ``crib`` command."""

from __future__ import annotations

from .hosts.cli.hotpath import main

if __name__ == "__main__":
    main()
