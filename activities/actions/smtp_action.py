"""The ``smtp`` action: send one email through the standard library's :mod:`smtplib`.

The honest non-idempotent example (DESIGN §7): SMTP has no idempotency key and no way to ask
whether a message was delivered, so the adapter declares ``accepts_idempotency_key=False`` and
``can_query_result=False``, and the occurrence workflow must never resend after an UNCONFIRMED
outcome — it goes to UNKNOWN_EFFECT and the human queue. The occurrenceId travels in the headers
(``Message-ID: <occurrenceId@almanac.invalid>``, ``X-Almanac-Occurrence-Id``) for the humans.

Parameters (camelCase)::

    host, port:     the SMTP server (port default 25)                       host required
    from:           envelope and header sender                              required
    to:             one address or a list                                   required
    subject:        the subject line                                        required
    body:           plain-text body (default: a line describing the occurrence)
    timeoutSeconds: socket timeout for every step (default 30)
    starttls:       upgrade the connection with STARTTLS first (default false)
    implicitTls:    connect with TLS from the first byte (SMTPS, usually port 465; default false)
    username:       log in (AUTH) as this user; needs ``password`` and TLS
    password:       a secret reference, ``{secretRef: {env: ALMANAC_SECRET_…}}`` or
                    ``{secretRef: {file: …}}``, resolved by the worker when it sends

TLS (STARTTLS and implicit) is verified: ``ssl.create_default_context()`` — the system's roots,
the server's certificate and its host name. A password is never sent without TLS. Every connection
passes the worker's egress policy (``activities.actions.egress``) and goes to the address checked.

Classification, by how far the SMTP transaction got:

- before the ``DATA`` command (connect, greeting, EHLO, MAIL, RCPT): a timeout or lost connection
  → RETRYABLE_FAILURE (no message can have been delivered); a 4xx reply → RETRYABLE_FAILURE; a 5xx
  reply (e.g. a refused recipient) → NON_RETRYABLE_FAILURE.
- once ``DATA`` began: a timeout or lost connection → UNCONFIRMED (the server may hold the
  message); an explicit 4xx/5xx reply to ``DATA`` or to the final ``.`` → RETRYABLE / NON_RETRYABLE
  (the server said it did not take it); ``250`` → CONFIRMED.
"""

from __future__ import annotations

import asyncio
import contextlib
import smtplib
import socket
import ssl
from email.message import EmailMessage
from email.policy import SMTP as SMTP_POLICY
from typing import ClassVar

from pydantic import BaseModel

from activities.actions.base import ActionAdapter, ActionContext, Outcome, OutcomeKind
from activities.actions.egress import EgressPolicy, EgressRefused
from activities.actions.parameters import SmtpParameters
from activities.actions.secrets import Scrubber, SecretResolver, SecretUnavailable

MAX_REPLY_CHARS = 200


class _GuardedSMTP(smtplib.SMTP):
    """Connects only where the egress policy allows, to the address it checked.

    ``_host`` (the name TLS verifies the certificate against) stays the configured host name.
    """

    egress: EgressPolicy

    def _get_socket(self, host: str, port: int, timeout: float) -> socket.socket:
        self._host = host
        last: OSError | None = None
        for address in self.egress.resolve(host, port):
            try:
                return socket.create_connection((str(address), port), timeout, self.source_address)
            except OSError as exc:
                last = exc
        assert last is not None
        raise last


class _GuardedSMTPS(smtplib.SMTP_SSL, _GuardedSMTP):
    """SMTPS, guarded: ``SMTP_SSL._get_socket`` wraps what ``_GuardedSMTP._get_socket`` connected.

    The MRO is _GuardedSMTPS, SMTP_SSL, _GuardedSMTP, SMTP.
    """


def build_message(ctx: ActionContext, params: SmtpParameters) -> EmailMessage:
    """The email for ``ctx``: the occurrenceId in ``Message-ID`` and ``X-Almanac-*`` headers."""
    message = EmailMessage(policy=SMTP_POLICY)
    message["From"] = params.from_address
    message["To"] = ", ".join(params.to)
    message["Subject"] = params.subject
    message["Message-ID"] = f"<{ctx.occurrence_id}@almanac.invalid>"
    message["X-Almanac-Occurrence-Id"] = ctx.occurrence_id
    message["X-Almanac-Schedule-Id"] = ctx.schedule_id
    message["X-Almanac-Attempt"] = str(ctx.attempt)
    message.set_content(
        params.body
        or (
            f"Occurrence {ctx.occurrence_id} of schedule {ctx.schedule_id} (revision "
            f"{ctx.revision}): {ctx.nominal_local} local, {ctx.instant_utc}.\n"
        )
    )
    return message


def _refused(code: int, reply: bytes | str, step: str) -> Outcome:
    text = reply.decode(errors="replace") if isinstance(reply, bytes) else reply
    text = " ".join(text.split())[:MAX_REPLY_CHARS]  # the ledger keeps a bounded, one-line reply
    kind = OutcomeKind.NON_RETRYABLE_FAILURE if code >= 500 else OutcomeKind.RETRYABLE_FAILURE
    return Outcome(kind, detail=f"{step} refused: {code} {text}", status_code=code)


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def send(
    ctx: ActionContext,
    params: SmtpParameters,
    *,
    egress: EgressPolicy,
    tls: ssl.SSLContext,
    password: str | None = None,
) -> Outcome:
    """Send the email synchronously and classify the result (see the module docstring)."""
    message = build_message(ctx, params)
    smtp: _GuardedSMTP | _GuardedSMTPS
    if params.implicit_tls:
        smtp = _GuardedSMTPS(timeout=params.timeout_seconds, context=tls)
    else:
        smtp = _GuardedSMTP(timeout=params.timeout_seconds)
    smtp.egress = egress
    try:
        try:
            smtp.connect(params.host, params.port)
        except EgressRefused as exc:
            return Outcome(OutcomeKind.NON_RETRYABLE_FAILURE, detail=f"not sent: {exc}")
        except smtplib.SMTPConnectError as exc:
            return _refused(exc.smtp_code, exc.smtp_error, "greeting")
        except ssl.SSLCertVerificationError as exc:
            return Outcome(
                OutcomeKind.NON_RETRYABLE_FAILURE, detail=f"not sent (TLS): {_describe(exc)}"
            )
        except (OSError, smtplib.SMTPException) as exc:
            return Outcome(OutcomeKind.RETRYABLE_FAILURE, detail=f"not sent: {_describe(exc)}")
        try:
            smtp.ehlo_or_helo_if_needed()
            if params.starttls:
                smtp.starttls(context=tls)
                smtp.ehlo()
            if params.username is not None and password is not None:
                smtp.login(params.username, password)
            code, reply = smtp.mail(params.from_address)
            if code != 250:
                return _refused(code, reply, "MAIL FROM")
            for recipient in params.to:
                code, reply = smtp.rcpt(recipient)
                if code not in (250, 251):
                    return _refused(code, reply, f"RCPT TO {recipient}")
        except smtplib.SMTPResponseException as exc:
            return _refused(exc.smtp_code, exc.smtp_error, "envelope")
        except ssl.SSLCertVerificationError as exc:
            return Outcome(
                OutcomeKind.NON_RETRYABLE_FAILURE, detail=f"not sent (TLS): {_describe(exc)}"
            )
        except (OSError, smtplib.SMTPException) as exc:
            # Without a completed DATA transaction no server delivers anything.
            return Outcome(
                OutcomeKind.RETRYABLE_FAILURE, detail=f"not sent (envelope): {_describe(exc)}"
            )
        try:
            code, reply = smtp.data(message.as_bytes())
        except smtplib.SMTPDataError as exc:
            return _refused(exc.smtp_code, exc.smtp_error, "DATA")
        except (OSError, smtplib.SMTPException) as exc:
            # DATA began: the server may have the whole message and be about to deliver it.
            return Outcome(
                OutcomeKind.UNCONFIRMED, detail=f"DATA began, no final reply: {_describe(exc)}"
            )
        if code != 250:
            return _refused(code, reply, "message")
        # The message was accepted; a failed goodbye changes nothing.
        with contextlib.suppress(OSError, smtplib.SMTPException):
            smtp.quit()
        return Outcome(
            OutcomeKind.CONFIRMED,
            result={
                "replyCode": code,
                "reply": reply.decode(errors="replace"),
                "messageId": message["Message-ID"],
                "recipients": list(params.to),
            },
            detail=f"{code} accepted",
            status_code=code,
        )
    finally:
        smtp.close()


class SmtpAction(ActionAdapter[SmtpParameters]):
    """Send one email; non-idempotent, no result query: doubt means UNKNOWN_EFFECT."""

    name: ClassVar[str] = "smtp"
    parameters_model: ClassVar[type[BaseModel]] = SmtpParameters
    accepts_idempotency_key: ClassVar[bool] = False
    can_query_result: ClassVar[bool] = False

    def __init__(
        self,
        *,
        egress: EgressPolicy | None = None,
        secrets: SecretResolver | None = None,
        tls_context: ssl.SSLContext | None = None,
    ) -> None:
        """Build the adapter.

        Args:
            egress: where connections may go (default: globally routable addresses only).
            secrets: resolves the password reference (default: ``ALMANAC_SECRET_*`` variables).
            tls_context: verifies the server (default ``ssl.create_default_context()``; tests
                pass one that trusts their own CA).
        """
        self._egress = egress or EgressPolicy()
        self._secrets = secrets or SecretResolver()
        self._tls = tls_context

    def _tls_context(self) -> ssl.SSLContext:
        if self._tls is None:
            self._tls = ssl.create_default_context()
        return self._tls

    async def invoke(self, ctx: ActionContext) -> Outcome:
        """Send the email on a worker thread (smtplib blocks); see the module docstring."""
        params = self.validate(ctx.parameters)
        password = None
        if params.password is not None:
            try:
                password = self._secrets.resolve(params.password)
            except SecretUnavailable as exc:
                return Outcome(OutcomeKind.NON_RETRYABLE_FAILURE, detail=f"not sent: {exc}")
        outcome = await asyncio.to_thread(
            send, ctx, params, egress=self._egress, tls=self._tls_context(), password=password
        )
        if password is None:
            return outcome
        scrub = Scrubber([password])
        return Outcome(
            outcome.kind,
            result=scrub.data(outcome.result),
            detail=scrub(outcome.detail),
            status_code=outcome.status_code,
            retry_after_seconds=outcome.retry_after_seconds,
        )
