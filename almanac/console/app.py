"""The console's web application: routes, sessions, CSRF, errors (Starlette + Jinja2).

Pages are server-rendered HTML; the one script (``static/console.js``) refreshes the live part
of a page when the ledger's newest event changes. Reads need no sign-in; every write needs a
signed-in operator (a token from the secrets store) or a trusted proxy's user header, and the
session's CSRF token, and records ``console:<operator>`` as who did it: resolving an
UNKNOWN_EFFECT case through ``almanac.ledger_client.LedgerClient.resolve``, and a schedule's
disable, enable and trigger through ``almanac.client.AlmanacClient``
(``almanac.console.control``) — what the CLI calls.
"""

from __future__ import annotations

import secrets
from collections.abc import Awaitable, Callable
from contextlib import nullcontext
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode

from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

import ledger
from almanac import readings
from almanac.client_errors import ChangeRejected, TemporalUnavailable
from almanac.console import control, forms, pages, preview
from almanac.console.auth import COOKIE, Operators, Session, Sessions, csrf_ok, proxy_user
from almanac.console.calendar import local_text
from almanac.console.config import ConsoleSettings
from almanac.ledger_client import LedgerClient
from almanac.settings import AlmanacSettings
from timecontract import format_instant, format_offset, format_recorded

HERE = Path(__file__).parent


def _utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass
class Console:
    """What every request needs: the ledger, settings, clock, sessions and operators."""

    ledger: ledger.Ledger
    settings: AlmanacSettings
    console: ConsoleSettings
    clock: Callable[[], datetime]
    sessions: Sessions
    operators: Operators
    templates: Environment

    def operator(self, request: Request, session: Session | None) -> str | None:
        """Who is signed in: the trusted proxy's user (when configured), else the session's."""
        header = self.console.user_header
        if header:
            user = proxy_user(request.headers.get(header))
            if user is not None:
                return user
        return session.operator if session else None

    def writer(self, request: Request, form: Any, doing: str) -> str | Response:
        """The operator a write is made by, or the refusal page (403 no CSRF, 401 no operator).

        Checked before anything else of the form: a refused write reads and writes nothing.
        """
        session = self.sessions.load(request.cookies.get(COOKIE))
        if not csrf_ok(session, forms.submitted(form, "csrf")):
            message = "csrf: the form's token is not this session's (reload the page and retry)"
            return self.render(request, "error.html", 403, title="Refused", message=message)
        operator = self.operator(request, session)
        if operator is None:
            return self.render(
                request, "error.html", 401, title="Sign in", message=f"sign in to {doing}"
            )
        return operator

    def render(self, request: Request, name: str, status: int = 200, **context: Any) -> Response:
        """Render a page with the session's CSRF token and operator; issue a session if none."""
        session = self.sessions.load(request.cookies.get(COOKIE))
        fresh = session is None
        if session is None:
            session = self.sessions.new()
        html = self.templates.get_template(name).render(
            request=request,
            csrf=session.csrf,
            operator=self.operator(request, session),
            can_sign_in=self.operators.configured,
            now=self.clock(),
            **context,
        )
        response = HTMLResponse(html, status_code=status)
        if fresh:
            self.set_session(response, session)
        return response

    def set_session(self, response: Response, session: Session) -> None:
        """Set the session cookie (HttpOnly, SameSite=Strict, path /)."""
        response.set_cookie(
            COOKIE,
            self.sessions.dump(session),
            httponly=True,
            samesite="strict",
            max_age=int(self.console.session_hours * 3600),
        )


def _templates() -> Environment:
    env = Environment(
        loader=FileSystemLoader(HERE / "templates"),
        autoescape=select_autoescape(["html"]),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["utc"] = _utc_text
    env.filters["recorded"] = lambda value: "—" if value is None else format_recorded(value)
    env.filters["offset"] = lambda value: "—" if value is None else format_offset(value)
    env.globals["local_text"] = local_text
    env.globals["urlencode"] = urlencode
    env.globals["max_field"] = forms.MAX_FIELD
    return env


def _utc_text(value: datetime | None) -> str:
    """An instant as ``timecontract.format_instant`` writes it, ``—`` for none.

    The ``utc`` filter, for instants the spec resolves (exact). The ``recorded`` filter gives a
    time taken from a clock (an event's, an attempt's, a case's, an error's, the page's reading)
    cut to whole seconds (``timecontract.format_recorded``), as
    :func:`~almanac.console.calendar.local_text` shows local times.
    """
    return "—" if value is None else format_instant(value)


def create_app(
    handle: ledger.Ledger,
    settings: AlmanacSettings | None = None,
    console: ConsoleSettings | None = None,
    *,
    clock: Callable[[], datetime] = _utc_now,
) -> Starlette:
    """The console over ``handle`` (the ledger), reading "now" only from ``clock`` (aware UTC)."""
    settings = settings or AlmanacSettings()
    console = console or ConsoleSettings()
    key = (
        console.session_key.get_secret_value().encode()
        if console.session_key
        else secrets.token_bytes(32)
    )
    state = Console(
        handle,
        settings,
        console,
        clock,
        Sessions(key, timedelta(hours=console.session_hours), clock),
        Operators(console.operators, settings.secrets_dir or settings.data_dir / "secrets"),
        _templates(),
    )
    routes = [
        Route("/", lambda request: RedirectResponse("/schedules", 303)),
        Route("/schedules", _page(state, _schedules)),
        Route("/schedules/{schedule_id}", _page(state, _schedule)),
        *(
            Route(
                f"/schedules/{{schedule_id}}/{action}",
                _page(state, _control(action)),
                methods=["POST"],
            )
            for action in control.ACTIONS
        ),
        Route("/occurrences/{occurrence_id}", _page(state, _occurrence)),
        Route("/queue", _page(state, _queue)),
        Route("/queue/resolve", _page(state, _resolve), methods=["POST"]),
        Route("/preview", _page(state, _preview), methods=["GET", "POST"]),
        Route("/login", _page(state, _login), methods=["GET", "POST"]),
        Route("/logout", _page(state, _logout), methods=["POST"]),
        Route("/live/stamp", _page(state, _stamp)),
        Mount("/static", StaticFiles(directory=HERE / "static"), name="static"),
    ]
    return Starlette(routes=routes)


Handler = Callable[[Console, Request], Awaitable[Response]]


def _page(state: Console, handler: Handler) -> Callable[[Request], Awaitable[Response]]:
    """Wrap a handler: bad input is a 400 page, an unknown ID 404, an unreachable ledger 503.

    A misspelt schedule ID is told the close one the ledger knows
    (``readings.nearest_schedule_id``).
    """

    async def endpoint(request: Request) -> Response:
        try:
            return await handler(state, request)
        except forms.FormError as exc:
            return state.render(request, "error.html", 400, title="Bad input", message=str(exc))
        except ledger.ScheduleNotFound as exc:
            unknown = exc.schedule_id
            meant = await _run(lambda: readings.nearest_schedule_id(state.ledger, unknown))
            message = f"{exc}: did you mean {meant}?" if meant else str(exc)
            return state.render(request, "error.html", 404, title="Not found", message=message)
        except ledger.OccurrenceNotFound as exc:
            return state.render(request, "error.html", 404, title="Not found", message=str(exc))
        except ledger.LedgerUnavailable as exc:
            message = f"ledger unavailable: {exc}"
            return state.render(request, "error.html", 503, title="Ledger", message=message)

    return endpoint


def _query(request: Request) -> dict[str, list[str]]:
    return parse_qs(request.url.query, keep_blank_values=False)


async def _run(work: Callable[[], Any]) -> Any:
    from starlette.concurrency import run_in_threadpool

    return await run_in_threadpool(work)


async def _schedules(state: Console, request: Request) -> Response:
    after = request.query_params.get("after") or None
    if after is not None:
        after = forms.text("after", after)
    now = state.clock()
    context = await _run(
        lambda: pages.schedules(state.ledger, now, after, state.settings.tzdb_store)
    )
    return state.render(request, "schedules.html", **context)


async def _schedule(state: Console, request: Request, status: int = 200, **extra: Any) -> Response:
    schedule_id = request.path_params["schedule_id"]
    now = state.clock()
    query = _query(request) if request.method == "GET" else {}
    context = await _run(
        lambda: pages.schedule(state.ledger, schedule_id, now, query, state.settings.tzdb_store)
    )
    return state.render(request, "schedule.html", status, query=query, **context, **extra)


def _control(action: str) -> Handler:
    """The POST handler of one schedule write (``almanac.console.control``)."""

    async def write(state: Console, request: Request) -> Response:
        form = await request.form()
        operator = state.writer(request, form, f"{action} a schedule")
        if isinstance(operator, Response):
            return operator
        schedule_id = request.path_params["schedule_id"]
        await _run(lambda: ledger.get_gate(state.ledger, schedule_id))  # unknown: 404
        try:
            checked = control.check(action, schedule_id, operator, form)
            settings = control.client_settings(state.settings, state.ledger)
            verdict = await control.send(checked, settings, state.clock)
        except control.OPERATIONAL as exc:
            title = "Temporal" if isinstance(exc, TemporalUnavailable) else "No verdict"
            return state.render(request, "error.html", 503, title=title, message=str(exc))
        except control.REFUSED as exc:
            return await _schedule(state, request, control.status_of(exc), problem=str(exc))
        response = await _schedule(state, request, verdict=verdict)
        response.headers["Cache-Control"] = "no-store"
        return response

    return write


async def _occurrence(state: Console, request: Request) -> Response:
    occurrence_id = request.path_params["occurrence_id"]
    now = state.clock()
    context = await _run(
        lambda: pages.occurrence(
            state.ledger,
            occurrence_id,
            now,
            state.console.temporal_ui_url,
            state.settings.temporal.namespace,
            state.settings.tzdb_store,
        )
    )
    return state.render(request, "occurrence.html", **context)


async def _queue(state: Console, request: Request, **extra: Any) -> Response:
    now = state.clock()
    resolved = request.query_params.get("resolved")
    if resolved is not None:
        resolved = forms.text("resolved", resolved)
    context = await _run(lambda: pages.queue(state.ledger, now, resolved))
    status = extra.pop("status", 200)
    return state.render(request, "queue.html", status, **context, **extra)


async def _resolve(state: Console, request: Request) -> Response:
    form = await request.form()
    operator = state.writer(request, form, "resolve a case")
    if isinstance(operator, Response):
        return operator
    occurrence_id = forms.text("occurrenceId", forms.submitted(form, "occurrenceId"))
    outcome = forms.submitted(form, "outcome") or ""
    reason = forms.text("reason", forms.submitted(form, "reason"), required=False)
    client = LedgerClient(lambda: nullcontext(state.ledger), state.clock)
    try:
        if not reason.strip():
            raise ChangeRejected(
                f"reason={reason!r}: say why (it is stored on the case)",
                field="reason",
                value=reason,
            )
        case = await _run(
            lambda: client.resolve(
                occurrence_id, outcome, by=f"console:{operator}", note=reason.strip()
            )
        )
    except ChangeRejected as exc:
        return await _queue(state, request, status=400, problem=str(exc), failed=occurrence_id)
    except (ledger.CaseNotFound, ledger.ClaimLost) as exc:
        return await _queue(state, request, status=409, problem=str(exc), failed=occurrence_id)
    return RedirectResponse("/queue?" + urlencode({"resolved": case.occurrence_id}), 303)


async def _preview(state: Console, request: Request) -> Response:
    if request.method == "GET":
        return state.render(request, "preview.html", result=None)
    form = await request.form()
    session = state.sessions.load(request.cookies.get(COOKIE))
    if not csrf_ok(session, forms.submitted(form, "csrf")):
        raise forms.FormError("csrf", "…", "the form's token is not this session's (reload)")
    upload = form.get("file")
    text, json_file = b"", False
    if upload is not None and not isinstance(upload, str):
        text = await upload.read(preview.MAX_SPEC_BYTES + 1)
        json_file = (upload.filename or "").lower().endswith(".json")  # read as the CLI reads it
    if not text.strip():
        text, json_file = (forms.submitted(form, "spec") or "").encode(), False
    if not text.strip():
        raise forms.FormError("spec", "", "paste a spec or choose a file")
    start = forms.instant("from", forms.submitted(form, "from"))
    end = forms.instant("to", forms.submitted(form, "to"))
    store = state.settings.tzdb_store
    result = await _run(lambda: preview.check(text, store, json_file=json_file))
    if not result.problems and result.spec is not None:
        if start is not None and end is not None and end <= start:
            raise forms.FormError("to", forms.submitted(form, "to"), "not after from")
        spec = result.spec
        result = await _run(lambda: preview.window(spec, start, end, store))
    status = 400 if result.problems else 200  # a spec with problems is bad form input
    return state.render(request, "preview.html", status=status, result=result)


async def _login(state: Console, request: Request) -> Response:
    if request.method == "GET":
        return state.render(request, "login.html", problem=None)
    form = await request.form()
    session = state.sessions.load(request.cookies.get(COOKIE))
    if not csrf_ok(session, forms.submitted(form, "csrf")):
        raise forms.FormError("csrf", "…", "the form's token is not this session's (reload)")
    name = forms.text("operator", forms.submitted(form, "operator"))
    token = forms.submitted(form, "token") or ""
    verified = await _run(lambda: state.operators.verify(name, token))
    if not verified:
        # One message for an unknown name and a wrong token; the token is never echoed.
        problem = f"operator={name!r}: name or token not accepted"
        return state.render(request, "login.html", 401, problem=problem)
    response = RedirectResponse("/queue", 303)
    state.set_session(response, state.sessions.signed_in(name))
    return response


async def _logout(state: Console, request: Request) -> Response:
    form = await request.form()
    session = state.sessions.load(request.cookies.get(COOKIE))
    if not csrf_ok(session, forms.submitted(form, "csrf")):
        raise forms.FormError("csrf", "…", "the form's token is not this session's (reload)")
    response = RedirectResponse("/schedules", 303)
    state.set_session(response, state.sessions.new())
    return response


async def _stamp(state: Console, request: Request) -> Response:
    stamp = await _run(lambda: ledger.change_stamp(state.ledger))
    return JSONResponse({"event": stamp})
