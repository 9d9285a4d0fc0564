"""``crib ui``: the local web viewer (:mod:`crib_plugin.hosts.ui`), on loopback, with a per-run token.

Needs the ``ui`` extra (Starlette, uvicorn, python-multipart); without it the command says how to
install it. The first line printed is the URL to open (token included), so scripts can read it.
"""

from __future__ import annotations

import socket
import webbrowser

import click

from ...core.errors import InputError
from .params import PORT

try:  # the `ui` extra: optional, and loaded only by this command
    import uvicorn

    from ..ui.app import build_app
    from ..ui.security import Guard
    from ..ui.stores import Stores
except ImportError as exc:  # pragma: no cover - exercised where the extra is missing
    MISSING: str | None = str(exc)
else:
    MISSING = None


def bind_loopback(port: int) -> socket.socket:
    """A listening socket on 127.0.0.1 (``port`` 0: any free one); never another interface."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(("127.0.0.1", port))
    except OSError as exc:
        sock.close()
        raise InputError(f"cannot listen on 127.0.0.1:{port}: {exc.strerror}") from None
    sock.listen(64)
    return sock


@click.command()
@click.option("--port", type=PORT, default=0, help="Port on 127.0.0.1 (default: any free one).")
@click.option("--no-browser", is_flag=True, help="Print the URL only; do not open a browser.")
def ui(port: int, no_browser: bool) -> None:
    """See and fix what crib remembers, in your browser: browse and search the stores, a memory's
    history and facts, what each prompt of an agent session was given and why, store health.

    Serves on 127.0.0.1 only; the URL printed first holds this run's token. Ctrl-C stops it."""
    if MISSING is not None:
        raise InputError(f"crib ui needs the ui extra: pip install 'crib-plugin[ui]' ({MISSING})")
    sock = bind_loopback(port)
    guard = Guard(port=sock.getsockname()[1])
    click.echo(guard.url(), color=False)
    click.echo("crib ui: serving on loopback only; Ctrl-C to stop", err=True)
    if not no_browser:
        webbrowser.open(guard.url())
    config = uvicorn.Config(build_app(Stores(), guard), log_level="warning", access_log=False, lifespan="on")
    uvicorn.Server(config).run(sockets=[sock])
