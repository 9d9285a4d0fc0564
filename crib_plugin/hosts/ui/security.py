"""The viewer's protections, as one ASGI middleware: only this run's token opens it, only loopback
host names reach it, no other origin can drive it, and every response forbids framing, referrers
and inline script.

Memories are attacker-influenced text (web pages, tool output); the viewer runs with the power to
forget and rewrite them. So:

* **token** — a random per-run secret in the URL printed at start; the first request carrying it
  gets an ``HttpOnly``, ``SameSite=Strict`` cookie and is redirected to the same page without it;
  every other request needs the cookie (401 otherwise).
* **Host** — must name this server on loopback (``127.0.0.1``, ``localhost`` or ``[::1]`` with
  its port): a DNS-rebinding page, whose requests carry its own host name, gets 421.
* **Origin** — a request with an ``Origin`` header must come from this server's origin; a POST
  must carry one, or ``Sec-Fetch-Site: same-origin`` (under ``no-referrer`` a browser sends
  ``Origin: null`` with its own forms; the fetch metadata header, which no page can set, says where
  it came from): 403 otherwise.
* **CSRF** — every POST carries the run's form token (:attr:`Guard.csrf`), checked by the views.
* **headers** — CSP with ``default-src 'none'`` (no script at all: the pages need none),
  ``frame-ancestors 'none'`` and ``X-Frame-Options: DENY``, ``Referrer-Policy: no-referrer``,
  ``X-Content-Type-Options: nosniff``, ``Cache-Control: no-store``.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from typing import Any, Awaitable, Callable
from urllib.parse import parse_qsl, urlencode

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")

CSP = ("default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; "
       "frame-ancestors 'none'; base-uri 'none'")
SECURITY_HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (b"content-security-policy", CSP.encode()),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-content-type-options", b"nosniff"),
    (b"cache-control", b"no-store"),
)

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]


@dataclass
class Guard:
    """This run's secrets and address: the URL token, the form token, the port it serves."""

    port: int
    token: str = field(default_factory=lambda: secrets.token_urlsafe(24))
    csrf: str = field(default_factory=lambda: secrets.token_urlsafe(24))

    @property
    def cookie_name(self) -> str:
        return f"crib_ui_{self.port}"  # cookies ignore ports: two viewers must not share one

    def allowed_hosts(self) -> set[str]:
        return {f"{name}:{self.port}" for name in LOOPBACK_NAMES}

    def allowed_origins(self) -> set[str]:
        return {f"http://{host}" for host in self.allowed_hosts()}

    def url(self, host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.port}/?token={self.token}"

    def csrf_ok(self, value: object) -> bool:
        return isinstance(value, str) and secrets.compare_digest(value.encode(), self.csrf.encode())


def _headers(scope: Scope) -> dict[str, str]:
    return {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}


class GuardMiddleware:
    """Wraps the viewer's app: refuses what :class:`Guard` does not allow, adds the headers to the rest."""

    def __init__(self, app: Callable[..., Awaitable[None]], guard: Guard) -> None:
        self.app = app
        self.guard = guard

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        refusal = self.refusal(scope)
        if refusal is not None:
            await _plain(send, *refusal)
            return
        query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1")))
        if "token" in query:  # the printed URL: swap the token for a cookie, drop it from the address bar
            rest = urlencode({k: v for k, v in query.items() if k != "token"})
            location = scope.get("path", "/") + (f"?{rest}" if rest else "")
            cookie = f"{self.guard.cookie_name}={self.guard.token}; HttpOnly; SameSite=Strict; Path=/"
            await _plain(send, 303, "see other", [(b"location", location.encode()), (b"set-cookie", cookie.encode())])
            return

        async def send_secured(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *SECURITY_HEADERS]
            await send(message)

        await self.app(scope, receive, send_secured)

    def refusal(self, scope: Scope) -> tuple[int, str] | None:
        """``(status, reason)`` when the request must be refused, else ``None``."""
        headers = _headers(scope)
        if headers.get("host", "") not in self.guard.allowed_hosts():
            return 421, "wrong host: crib ui answers only on loopback"
        origin = headers.get("origin")
        if origin == "null" and headers.get("sec-fetch-site") == "same-origin":
            origin = None  # our own form under Referrer-Policy no-referrer: browsers send "null", and say same-origin
        if origin is not None and origin not in self.guard.allowed_origins():
            return 403, "cross-origin request refused"
        method = scope.get("method", "GET")
        if method not in ("GET", "HEAD", "POST"):
            return 405, "method not allowed"
        if method == "POST" and origin is None and headers.get("sec-fetch-site") != "same-origin":
            return 403, "a change must come from crib ui's own page"
        query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1")))
        if "token" in query:
            return None if secrets.compare_digest(query["token"].encode(), self.guard.token.encode()) else (401, "wrong token")
        cookie = SimpleCookie()
        try:
            cookie.load(headers.get("cookie", ""))
        except Exception:  # a malformed cookie header: as if none
            return 401, "token required: open the URL crib ui printed"
        morsel = cookie.get(self.guard.cookie_name)
        if morsel is None or not secrets.compare_digest(morsel.value.encode(), self.guard.token.encode()):
            return 401, "token required: open the URL crib ui printed"
        return None


async def _plain(send: Send, status: int, text: str, extra: list[tuple[bytes, bytes]] | None = None) -> None:
    body = (text + "\n").encode()
    headers = [(b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(body)).encode()),
               *SECURITY_HEADERS, *(extra or [])]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
