"""``ledger.transitions``: the only code that updates an occurrence's state, and how it fails."""

from __future__ import annotations

import ast
import re
from datetime import timedelta
from pathlib import Path

import pytest
from ledger_support import T0, due_occurrence, make_spec
from sqlalchemy import select

import ledger as ledger_package
from ledger import (
    ClaimLost,
    IllegalTransition,
    Ledger,
    OccurrenceState,
    materialize,
    publish_revision,
    show_occurrence,
)
from ledger.events import OCCURRENCES
from ledger.transitions import transition, transition_where

pytest_plugins = ["ledger_fixtures"]  # ledger, backend and the PostgreSQL cluster

S = OccurrenceState
LEDGER_DIR = Path(ledger_package.__file__).parent


ROOT = LEDGER_DIR.parent
PRODUCTION = ("timecontract", "ledger", "activities", "workflows", "almanac")
RAW_UPDATE = re.compile(r"\bUPDATE\s+occurrences\b", re.IGNORECASE)


def _names_occurrences(node: ast.AST) -> bool:
    return (isinstance(node, ast.Name) and node.id == "OCCURRENCES") or (
        isinstance(node, ast.Attribute) and node.attr == "OCCURRENCES"
    )


def _updates_of_occurrences(path: Path) -> list[int]:
    """Lines that update the occurrences table.

    Spelled ``update(OCCURRENCES)`` (also ``sa.update``), ``OCCURRENCES.update()``, or as SQL text
    ``UPDATE occurrences``.
    """
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return sorted(node.lineno for node in ast.walk(tree) if _updates(node))


def _updates(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str) and RAW_UPDATE.search(node.value) is not None
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    called = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
    if called != "update":
        return False
    on_table = isinstance(func, ast.Attribute) and _names_occurrences(func.value)
    return on_table or any(_names_occurrences(a) for a in node.args)


def test_only_the_transitions_module_updates_occurrences() -> None:
    found = {
        str(path.relative_to(ROOT)): lines
        for package in PRODUCTION
        for path in sorted((ROOT / package).rglob("*.py"))
        if "migrations" not in path.parts  # the triggers' own SQL, frozen per revision
        and path != LEDGER_DIR / "transitions.py"
        and (lines := _updates_of_occurrences(path))
    }
    assert found == {}
    assert _updates_of_occurrences(LEDGER_DIR / "transitions.py")  # the check can fail


def test_the_update_finder_sees_every_spelling(tmp_path: Path) -> None:
    module = tmp_path / "spellings.py"
    module.write_text(
        "update(OCCURRENCES)\n"
        "sa.update(events.OCCURRENCES)\n"
        "OCCURRENCES.update()\n"
        "text('update  occurrences SET state = 1')\n"
        "update(SLOTS)\n"
        "text('UPDATE occurrence_events SET why = 1')\n"
    )
    assert _updates_of_occurrences(module) == [1, 2, 3, 4]


def _planned(ledger: Ledger, days: int = 3) -> list[str]:
    spec = make_spec()
    publish_revision(ledger, spec, T0, by="test")
    rows = materialize(ledger, spec, T0, T0 + timedelta(days=days), T0).rows
    return [r.occurrence_id for r in rows if r.state is S.PLANNED]


def test_transition_where_moves_the_set_in_one_statement_with_one_event_each(
    ledger: Ledger,
) -> None:
    planned = _planned(ledger)

    def work(connection: object) -> tuple[str, ...]:
        return transition_where(
            connection,  # type: ignore[arg-type]
            S.PLANNED,
            S.CANCELLED,
            OCCURRENCES.c.occurrence_id.in_(planned[:2]),
            now_utc=T0,
            by="test",
            why="because",
            expected=2,
        )

    assert ledger.write(work) == tuple(sorted(planned[:2]))
    for occurrence_id in planned[:2]:
        detail = show_occurrence(ledger, occurrence_id)
        assert detail.occurrence.state is S.CANCELLED
        assert detail.occurrence.state_reason == "because"
        assert [(e.from_state, e.to_state, e.why) for e in detail.events][-1] == (
            "PLANNED",
            "CANCELLED",
            "because",
        )
    assert show_occurrence(ledger, planned[2]).occurrence.state is S.PLANNED


def test_transition_where_rolls_back_when_fewer_rows_change_than_expected(
    ledger: Ledger,
) -> None:
    planned = _planned(ledger)
    ledger.retries = 1  # no re-run: see the ClaimLost itself

    def work(connection: object) -> tuple[str, ...]:
        return transition_where(
            connection,  # type: ignore[arg-type]
            S.PLANNED,
            S.DUE,
            OCCURRENCES.c.occurrence_id.in_([*planned[:2], "no-such-occurrence"]),
            now_utc=T0,
            by="test",
            why="released",
            expected=3,
        )

    with pytest.raises(ClaimLost):
        ledger.write(work)
    states = ledger.read(
        lambda c: set(c.execute(select(OCCURRENCES.c.state)).scalars())  # type: ignore[arg-type]
    )
    assert states == {S.PLANNED.value}
    assert all(len(show_occurrence(ledger, i).events) == 1 for i in planned)  # creation only


def test_transition_where_refuses_an_illegal_pair_before_any_sql(ledger: Ledger) -> None:
    with pytest.raises(IllegalTransition):
        ledger.write(
            lambda c: transition_where(c, S.PLANNED, S.SUCCEEDED, now_utc=T0, by="t", why="no")
        )


def test_transition_refuses_an_illegal_pair_and_a_stale_fencing_token(ledger: Ledger) -> None:
    occurrence_id = due_occurrence(ledger)
    with pytest.raises(IllegalTransition):
        ledger.write(
            lambda c: transition(c, occurrence_id, S.RUNNING, now_utc=T0, by="t", why="no")
        )
    with pytest.raises(ClaimLost):
        ledger.write(
            lambda c: transition(
                c, occurrence_id, S.CANCELLED, now_utc=T0, by="t", why="no", claim_generation=1
            )
        )
    # A guard that does not hold changes nothing and raises ClaimLost.
    ledger.retries = 1
    with pytest.raises(ClaimLost):
        ledger.write(
            lambda c: transition(
                c,
                occurrence_id,
                S.CANCELLED,
                now_utc=T0,
                by="t",
                why="no",
                guard=OCCURRENCES.c.revision == 99,
            )
        )
    detail = show_occurrence(ledger, occurrence_id)
    assert detail.occurrence.state is S.DUE
    assert [e.to_state for e in detail.events] == ["PLANNED", "DUE"]
