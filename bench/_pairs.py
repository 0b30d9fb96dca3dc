"""Alternating rounds: the measured code and its baseline, in turn, in one process.

Every bench in ``bench/`` reports its figures through this module, so a figure in
``bench/README.md`` is always a median over rounds in which the measured code and its baseline ran
back to back, on the same machine, under the same load. On the shared 2-core machines the absolute
rates swing ±50 % between runs; a ratio taken within one round does not.

Usage::

    arms = [Arm("bare", run_bare), Arm("almanac", run_almanac)]
    result = await alternate(arms, rounds=3, baseline="bare", metric="rate")
    print(result.table())

Each arm's ``run(round_index)`` performs one measurement and returns its figures (a mapping of
name → float; ``metric`` must be one of them, higher = better unless ``lower_is_better``). The
order of the arms rotates each round (A B C, B C A, C A B …) so no arm always runs first on a cold
cache or last on a warm one. The ratio of a round is ``arm ÷ baseline`` (or ``baseline ÷ arm``
when lower is better), so ≥ 1 always means "as good as the baseline or better".
"""

from __future__ import annotations

import inspect
import os
import statistics
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

Figures = Mapping[str, float]


@dataclass(frozen=True)
class Arm:
    """One side of the comparison: a name and a callable that measures one round."""

    name: str
    run: Callable[[int], Figures | Awaitable[Figures]]


@dataclass
class Round:
    """One round: every arm's figures and the load average before it."""

    index: int
    order: list[str]
    figures: dict[str, Figures]
    load_before: tuple[float, float, float]


@dataclass
class Result:
    """All rounds, and the medians the README quotes."""

    arms: list[str]
    baseline: str
    metric: str
    lower_is_better: bool
    rounds: list[Round] = field(default_factory=list)

    def ratios(self, arm: str) -> list[float]:
        """``arm`` against the baseline, one ratio per round (≥ 1: as good or better)."""
        out = []
        for r in self.rounds:
            a, b = r.figures[arm][self.metric], r.figures[self.baseline][self.metric]
            if self.lower_is_better:
                a, b = b, a
            out.append(a / b if b else float("nan"))
        return out

    def median(self, arm: str, name: str) -> float:
        """The median over rounds of one figure of one arm."""
        return statistics.median(r.figures[arm][name] for r in self.rounds)

    def loads(self) -> list[float]:
        """The one-minute load average before each round."""
        return [r.load_before[0] for r in self.rounds]

    def table(self, names: Sequence[str] | None = None) -> str:
        """A Markdown table: per arm, the medians of its figures and its ratio (median, range)."""
        names = list(names or self.rounds[0].figures[self.arms[0]].keys())
        head = ["arm", *[f"{n} (median)" for n in names], f"ratio vs {self.baseline} (min–max)"]
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for arm in self.arms:
            cells = [arm]
            for n in names:
                cells.append(_fmt(self.median(arm, n)))
            if arm == self.baseline:
                cells.append("1 (baseline)")
            else:
                rs = self.ratios(arm)
                cells.append(f"**{statistics.median(rs):.2f}** ({min(rs):.2f}–{max(rs):.2f})")
            lines.append("| " + " | ".join(cells) + " |")
        loads = self.loads()
        lines.append(
            f"\n{len(self.rounds)} alternating rounds; load average (1 min) before the rounds: "
            + ", ".join(f"{x:.1f}" for x in loads)
            + f" on {os.cpu_count()} CPUs"
        )
        return "\n".join(lines)

    def as_dict(self) -> dict[str, Any]:
        """Everything, for ``--json``."""
        return {
            "baseline": self.baseline,
            "metric": self.metric,
            "ratios": {a: self.ratios(a) for a in self.arms if a != self.baseline},
            "rounds": [
                {
                    "order": r.order,
                    "load_before": r.load_before,
                    "figures": {k: dict(v) for k, v in r.figures.items()},
                }
                for r in self.rounds
            ],
        }


def loadavg() -> tuple[float, float, float]:
    """The 1-, 5- and 15-minute load averages."""
    return os.getloadavg()


async def alternate(
    arms: Sequence[Arm],
    *,
    rounds: int,
    baseline: str,
    metric: str,
    lower_is_better: bool = False,
    report: Callable[[str], None] | None = print,
) -> Result:
    """Run every arm once per round, rotating the order; return all figures.

    Args:
        arms: the arms (one of them named ``baseline``).
        rounds: how many rounds (3 or more for a median that means something).
        baseline: the arm the others are divided by.
        metric: the figure the ratio is taken on.
        lower_is_better: a time or a latency (ratio = baseline ÷ arm) rather than a rate.
        report: where to print one line per measurement as it finishes (``None``: silent).
    """
    names = [a.name for a in arms]
    if baseline not in names:
        raise ValueError(f"baseline {baseline!r} is not one of the arms {names}")
    result = Result(names, baseline, metric, lower_is_better)
    for index in range(rounds):
        shift = index % len(arms)
        order = list(arms[shift:]) + list(arms[:shift])
        load = loadavg()
        figures: dict[str, Figures] = {}
        for arm in order:
            started = time.monotonic()
            value = arm.run(index)
            if inspect.isawaitable(value):
                value = await value
            figures[arm.name] = dict(value)
            if report is not None:
                shown = ", ".join(f"{k}={_fmt(v)}" for k, v in value.items())
                report(
                    f"round {index + 1}/{rounds} {arm.name}: {shown} "
                    f"({time.monotonic() - started:.1f} s, load {loadavg()[0]:.1f})"
                )
        result.rounds.append(Round(index, [a.name for a in order], figures, load))
    return result


def _fmt(value: float) -> str:
    if value != value:  # NaN
        return "—"
    if abs(value) >= 100:
        return f"{value:,.0f}"
    if abs(value) >= 10:
        return f"{value:.1f}"
    return f"{value:.3g}"
