"""The viewer's pages: browse and search, one memory, fixes (each confirmed), sessions, store health.

Every page is a Jinja template rendered with autoescaping; no memory text ever reaches an
attribute that browsers treat as a URL (links are built from ids and scope names only), and the
pages carry no script. Every change is a POST carrying the run's form token, shown first as a
confirmation page, and recorded in the store's audit log like the CLI's (the same functions).
"""

from __future__ import annotations

import contextlib
import time
from pathlib import Path
from typing import Any

import jinja2
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from ...core.entry_types import BUILTIN_TYPES
from ...core.errors import CribError
from ...core.timeutil import now_iso
from ...output.session_journal import read_sessions
from ...read.ops import ListFilter
from ...text.redact import redact_value
from ..doctor import run_doctor
from .security import Guard, GuardMiddleware
from .stores import Stores

HERE = Path(__file__).parent
FIXES = ("forget", "correct", "cue", "type")
DOCTOR_TTL = 60.0  # seconds the health page reuses `crib doctor`'s checks

_env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(HERE / "templates")), autoescape=True)


class Viewer:
    """The views over one :class:`Stores` and one :class:`Guard` (a run's token and form token)."""

    def __init__(self, stores: Stores, guard: Guard) -> None:
        self.stores = stores
        self.guard = guard
        self._doctor: tuple[float, dict[str, Any]] | None = None

    def page(self, name: str, status: int = 200, **context: Any) -> HTMLResponse:
        html = _env.get_template(name).render(csrf=self.guard.csrf, where=self.stores.where(), **context)
        return HTMLResponse(html, status_code=status)

    def error(self, message: str, status: int = 400) -> HTMLResponse:
        return self.page("error.html", status=status, message=message)

    async def browse(self, request: Request) -> Response:
        q = request.query_params
        scope = q.get("scope", "project")
        form = {k: q.get(k, "") for k in ("text", "search", "type", "project", "author", "since", "until")}
        try:
            memory = self.stores.get(self.stores.check(scope))
            if form["search"].strip():
                rows, ranked = memory.search_memories(form["search"], limit=20), True
            else:
                flt = ListFilter(text=form["text"], types=[form["type"]] if form["type"] else (), since=form["since"] or None,
                                 until=form["until"] or None, project=form["project"], author=form["author"], limit=100)
                rows, ranked = memory.list_memories(flt), False
        except CribError as exc:
            return self.page("browse.html", scope=scope, form=form, rows=[], ranked=False, message=str(exc))
        return self.page("browse.html", scope=scope, form=form, rows=rows, ranked=ranked, message="")

    async def memory(self, request: Request) -> Response:
        scope, entry_id = request.path_params["scope"], int(request.path_params["entry_id"])
        try:
            data = self.stores.get(self.stores.check(scope)).show_memory(entry_id)
        except CribError as exc:
            return self.error(str(exc), 404)
        return self.page("memory.html", scope=scope, data=data, types=_types())

    async def fix(self, request: Request) -> Response:
        """A fix (forget, correct, cue, type): first a confirmation page, then — confirmed — the change."""
        scope, entry_id, action = request.path_params["scope"], int(request.path_params["entry_id"]), request.path_params["action"]
        form = await request.form()
        if not self.guard.csrf_ok(form.get("csrf")):
            return self.error("missing or wrong form token", 403)
        if action not in FIXES:
            return self.error(f"unknown action {action!r}", 404)
        value = str(form.get("value", ""))
        try:
            memory = self.stores.get(self.stores.check(scope))
            data = memory.show_memory(entry_id)
            if form.get("confirm") != "yes":
                return self.page("confirm.html", scope=scope, action=action, data=data, value=value,
                                 shown=redact_value(value))
            return self.apply(memory, scope, entry_id, action, value)
        except CribError as exc:
            return self.error(str(exc))

    def apply(self, memory: Any, scope: str, entry_id: int, action: str, value: str) -> Response:
        if action == "forget":
            memory.forget_memories([entry_id], reason="ui")
            return RedirectResponse(f"/?scope={scope}&done=forgot+{entry_id}", status_code=303)
        if action == "correct":
            target = memory.correct_memory(entry_id, value)
        elif action == "type":
            target = memory.change_type(entry_id, value)
        else:
            memory.set_memory_cue(entry_id, value)
            target = entry_id
        return RedirectResponse(f"/memory/{scope}/{target}", status_code=303)

    async def forget_query(self, request: Request) -> Response:
        """``forget --query`` in the page: the preview, then — confirmed — the chosen ids forgotten."""
        form = await request.form()
        if not self.guard.csrf_ok(form.get("csrf")):
            return self.error("missing or wrong form token", 403)
        scope, query = str(form.get("scope", "project")), str(form.get("query", ""))
        try:
            memory = self.stores.get(self.stores.check(scope))
            if form.get("confirm") != "yes":
                return self.page("forget_query.html", scope=scope, query=query, matches=memory.preview_forget(query))
            ids = [int(str(v)) for v in form.getlist("id") if str(v).isdigit()]
            removed = memory.forget_memories(ids, reason="query")
        except CribError as exc:
            return self.error(str(exc))
        return RedirectResponse(f"/?scope={scope}&done=forgot+{len(removed)}", status_code=303)

    async def sessions(self, request: Request) -> Response:
        return self.page("sessions.html", sessions=read_sessions(self.stores.sessions_folder()))

    async def health(self, request: Request) -> Response:
        stats: dict[str, Any] = {}
        for row in self.stores.where():
            try:
                stats[row["scope"]] = self.stores.get(row["scope"]).store_stats() if row["exists"] else None
            except CribError as exc:
                stats[row["scope"]] = {"error": str(exc)}
        return self.page("health.html", stats=stats, doctor=self.doctor())

    def doctor(self) -> dict[str, Any]:
        """``crib doctor``'s report, kept :data:`DOCTOR_TTL` seconds (it hashes the model's weights)."""
        now = time.monotonic()
        if self._doctor is None or now - self._doctor[0] > DOCTOR_TTL:
            try:
                report: dict[str, Any] = run_doctor()
            except Exception as exc:  # the page still shows the counts
                report = {"ok": False, "error": str(exc)}
            report["checked_at"] = now_iso()
            self._doctor = (now, report)
        return self._doctor[1]


def _types() -> list[str]:
    return sorted(t.name for t in BUILTIN_TYPES)


def _closing(stores: Stores) -> Any:
    @contextlib.asynccontextmanager
    async def lifespan(app: Any) -> Any:
        yield
        stores.close()
    return lifespan


def build_app(stores: Stores, guard: Guard) -> GuardMiddleware:
    """The viewer as an ASGI app, every request through :class:`GuardMiddleware`."""
    viewer = Viewer(stores, guard)
    app = Starlette(routes=[
        Route("/", viewer.browse),
        Route("/memory/{scope}/{entry_id:int}", viewer.memory),
        Route("/memory/{scope}/{entry_id:int}/{action}", viewer.fix, methods=["POST"]),
        Route("/forget", viewer.forget_query, methods=["POST"]),
        Route("/sessions", viewer.sessions),
        Route("/health", viewer.health),
        Mount("/static", StaticFiles(directory=str(HERE / "static")), name="static"),
    ], lifespan=_closing(stores))
    return GuardMiddleware(app, guard)
