"""The edge's parameter catalog is the worker's registry without the adapters' imports.

``almanac validate`` and ``apply`` check a spec's action through ``activities.actions.catalog``
(no httpx, smtplib or asyncio); the worker checks it through ``ActionRegistry.default()``. These
tests hold the two to one truth: the same names, the very same model per name, and the same
problems — field, value and message — for the same parameters.
"""

from __future__ import annotations

from typing import Any

import pytest

from activities.actions import ActionRegistry
from activities.actions.catalog import PARAMETER_MODELS, action_problems, check_action
from timecontract import SpecError

SMTP = {"host": "mail.example.test", "from": "a@example.test", "to": "b@example.test"}
REF = {"secretRef": {"env": "ALMANAC_SECRET_OPS"}}

CASES: list[tuple[str, dict[str, Any]]] = [
    ("ftp", {"url": "http://x.test/e"}),
    ("http", {}),
    ("http", {"url": "http://x.test/e"}),
    ("http", {"url": "not a url", "timeoutSeconds": 0}),
    ("http", {"url": "https://user:pw@x.test/e"}),
    ("http", {"url": "https://x.test/e?page=2&access_token=abcdefgh123"}),
    ("http", {"url": "https://x.test/e?page=2"}),
    ("http", {"url": "http://x.test/e", "resultUrl": "http://x.test/{occurrenceId}"}),
    ("http", {"url": "http://x.test/e", "headers": {"Authorization": "Bearer abcdefgh123"}}),
    ("http", {"url": "http://x.test/e", "headers": {"Authorization": REF}}),
    ("http", {"url": "http://x.test/e", "headers": {"Idempotency-Key": "k"}}),
    ("http", {"url": "http://x.test/e", "headers": {"Cookie": {"secretRef": {"env": "X"}}}}),
    ("http", {"url": "http://x.test/e", "headers": {"X-Count": 3}}),
    ("http", {"url": "http://x.test/e", "signingSecret": "whsec_literal"}),
    ("http", {"url": "http://x.test/e", "signingSecret": {"secretRef": {"env": "HOME"}}}),
    ("http", {"url": "http://x.test/e", "extra": 1}),
    ("smtp", {**SMTP, "subject": "s"}),
    ("smtp", {**SMTP, "subject": "two\nlines"}),
    ("smtp", {**SMTP, "subject": "s", "username": "u"}),
    ("smtp", {**SMTP, "subject": "s", "username": "u", "password": REF}),
    ("smtp", {**SMTP, "subject": "s", "starttls": True, "implicitTls": True}),
    ("smtp", {**SMTP, "subject": "s", "to": ["not-an-address"], "port": 0}),
    ("temporal", {"workflowType": "W", "taskQueue": "q", "input": {"a": [1]}}),
    ("temporal", {"workflowType": "", "extra": True}),
    ("noop", {}),
    ("noop", {"note": "x" * 201}),
]


def _said(problems: list[SpecError]) -> list[tuple[str, Any, str]]:
    return [(p.field, p.value, str(p)) for p in problems]


def test_the_catalog_holds_each_adapters_own_model() -> None:
    registry = ActionRegistry.default()
    assert sorted(PARAMETER_MODELS) == registry.names()
    for name in registry.names():
        assert PARAMETER_MODELS[name] is registry.get(name).parameters_model


@pytest.mark.parametrize(("name", "parameters"), CASES)
def test_the_catalog_finds_what_the_registry_finds(name: str, parameters: dict[str, Any]) -> None:
    expected = _said(ActionRegistry.default().problems(name, parameters))
    assert _said(action_problems(name, parameters)) == expected


def test_the_cases_include_good_and_bad_parameters_of_every_adapter() -> None:
    # Otherwise the comparison above could pass on nothing but empty lists.
    bad = {n for n, p in CASES if action_problems(n, p)}
    good = {n for n, p in CASES if not action_problems(n, p)}
    assert bad >= {"ftp", *PARAMETER_MODELS} and good == set(PARAMETER_MODELS)


def test_check_action_raises_a_spec_error_naming_the_field_and_value() -> None:
    with pytest.raises(SpecError) as unknown:
        check_action("ftp", {})
    assert (unknown.value.field, unknown.value.value) == ("action.name", "ftp")
    assert "http, noop, smtp, temporal" in str(unknown.value)
    with pytest.raises(SpecError) as bad:
        check_action("http", {"url": "http://x.test/e", "timeoutSeconds": 0})
    assert (bad.value.field, bad.value.value) == ("action.parameters.timeoutSeconds", 0)
