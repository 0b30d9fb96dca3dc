"""Command-line start-up cost: ``python bench/cli_startup.py [--rounds 15] [--before REF]``.

Each round runs, in turn, the baseline — a bare Typer command with one argument over the libraries
every ``almanac`` command needs anyway (``typer, pydantic, dateutil.rrule, yaml``): the floor a
Typer 0.29 command stands on, since Typer validates every parameter with a pydantic TypeAdapter and
so loads pydantic's schema generator, as any pydantic model does — and the commands a user types
most:

- ``almanac --help``;
- ``almanac validate examples/*.yaml``;
- ``almanac preview examples/daily-ops-summary.yaml`` over one day;
- a control command, ``almanac disable ID --reason …``, pointed at a Temporal address nothing
  listens on: it imports the client, connects, and exits 1 (expected; no server is needed, so
  the figure is the command's start-up and one refused connection).

Each command's ratio to the bare imports (:data:`IMPORTS`: ``python -c "import typer, pydantic,
dateutil.rrule, yaml"``, where ``import pydantic`` is a lazy module that loads none of pydantic's
validation machinery) is printed beside it, and two reference rows without an aim show floors:
those bare imports, and the baseline with ``import holidays`` (:data:`WITH_HOLIDAYS`).

``--before REF`` adds each Almanac command once more, run with the code at git ``REF``
(``git archive``) first on ``PYTHONPATH``, in the same rounds: before and after side by side.

Each command's wall time is divided by the baseline's *of the same round* (the machine is shared:
rounds alternate so a load spike hits both sides), and the median of those per-round ratios is
reported with the median wall times and the load average before and after. The median ratio
of CPU time (user + system, from ``wait4``) is printed beside it: on a loaded machine it is the
steadier of the two readings. The aim (issue 10) is
a ratio of at most 1.5 for each command but the control one (it has no aim). Every command must
exit with its expected code (0; 1 for the control command); one that does not stops the run (a
broken command is not fast).

Bytecode caching is on for every command (``PYTHONDONTWRITEBYTECODE`` is removed from their
environment; the warm-up round writes the ``.pyc`` files), as for an installed command.
Run from a source checkout (it reads ``examples/``). ``--json`` prints the figures as JSON.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from bench import _stack

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
ALMANAC = str(BIN / "almanac")
AIM = 1.5

IMPORTS_CODE = "import typer, pydantic, dateutil.rrule, yaml"
BARE_TYPER = f"""
{IMPORTS_CODE}
app = typer.Typer()
@app.command()
def files(paths: list[str]) -> None:
    pass
app(["a.yaml", "b.yaml"], standalone_mode=False)
"""
BASELINE = [sys.executable, "-c", BARE_TYPER]
"""The baseline: a bare Typer command with one argument. Typer (0.29) validates every parameter
with a pydantic TypeAdapter, so any command that takes an argument loads pydantic's schema
generator (as the first pydantic model of any program does); ``import pydantic`` alone does not."""
IMPORTS = "reference: the bare imports (lazy pydantic)"
"""Not an Almanac command: ``import typer, pydantic, dateutil.rrule, yaml`` and nothing else. Every
command's ratio to it is printed too (the ``imports`` column); it has no aim: no Typer command
with an argument, Almanac's or the bare one, runs on these imports alone."""
WITH_HOLIDAYS = "reference: the baseline + import holidays"
"""Not an Almanac command: the baseline and the ``holidays`` library, which ``validate`` of a spec
pinning a library calendar also needs (two of the examples pin NYSE). It has no aim."""
CONTROL = "almanac disable (Temporal unreachable)"
"""The control command: no aim (it connects, or tries to), compared with itself before/after."""
UNREACHABLE = "127.0.0.1:1"
"""A Temporal address nothing listens on: the control command is refused at once and exits 1."""


@dataclass(frozen=True)
class Command:
    """One measured command: its argument vector, expected exit code and added environment."""

    argv: list[str]
    exit_code: int = 0
    env: dict[str, str] = field(default_factory=dict)


def commands(before: tuple[str, Path] | None = None) -> dict[str, Command]:
    """The measured commands, by label (paths absolute, so the working directory is irrelevant).

    ``before``: ``(ref, source tree)``; each Almanac command is added again as
    ``"<label> @ <ref>"``, run with that tree first on ``PYTHONPATH``.
    """
    examples = sorted(str(p) for p in (ROOT / "examples").glob("*.yaml"))
    daily = str(ROOT / "examples" / "daily-ops-summary.yaml")
    almanac = {
        "almanac --help": Command([ALMANAC, "--help"]),
        "almanac validate examples/*.yaml": Command([ALMANAC, "validate", *examples]),
        "almanac preview (one day)": Command(
            [
                ALMANAC,
                "preview",
                daily,
                "--from",
                "2026-11-01T00:00:00Z",
                "--to",
                "2026-11-02T00:00:00Z",
            ]
        ),
        CONTROL: Command(
            [ALMANAC, "disable", "bench-schedule", "--reason", "bench"],
            exit_code=1,
            env={"ALMANAC_TEMPORAL_ADDRESS": UNREACHABLE},
        ),
    }
    measured = {
        IMPORTS: Command([sys.executable, "-c", IMPORTS_CODE]),
        WITH_HOLIDAYS: Command([sys.executable, "-c", f"import holidays\n{BARE_TYPER}"]),
    }
    for label, command in almanac.items():
        measured[label] = command
        if before is not None:
            ref, tree = before
            env = {**command.env, "PYTHONPATH": str(tree)}
            measured[f"{label} @ {ref}"] = Command(command.argv, command.exit_code, env)
    return measured


def run_once(command: Command, env: dict[str, str]) -> tuple[float, float]:
    """One run of ``command``: wall seconds (start to exit) and CPU seconds (user + system).

    The command must exit with its expected code. Output goes to a temporary file, not a pipe,
    so no reader thread competes with the child for the two cores.
    """
    with tempfile.TemporaryFile() as stdout, tempfile.TemporaryFile() as stderr:
        started = time.perf_counter()
        child = subprocess.Popen(
            command.argv, stdout=stdout, stderr=stderr, env={**env, **command.env}, cwd=ROOT
        )
        _, status, usage = os.wait4(child.pid, 0)
        elapsed = time.perf_counter() - started
        child.returncode = os.waitstatus_to_exitcode(status)
        if child.returncode != command.exit_code:
            stderr.seek(0)
            tail = stderr.read().decode(errors="replace")[-2000:]
            argv = " ".join(command.argv)
            raise SystemExit(f"{argv} exited {child.returncode}:\n{tail}")
    return elapsed, usage.ru_utime + usage.ru_stime


def measure(rounds: int, before: tuple[str, Path] | None = None) -> dict[str, object]:
    """Run ``rounds`` alternating rounds (after one warm-up round) and summarize them."""
    env = {**os.environ, "COLUMNS": "100"}
    # Measure what an installed command costs: with cached bytecode on both sides (the warm-up
    # round writes it). Without, every run compiles typer's, pydantic's and Almanac's sources.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("PYTHONPATH", None)  # this checkout, unless a command names another tree
    measured = commands(before)
    baseline_command = Command(BASELINE)
    for command in [baseline_command, *measured.values()]:  # warm the page cache and .pyc files
        run_once(command, env)
    load_before = os.getloadavg()
    baseline: list[float] = []
    baseline_cpu: list[float] = []
    times: dict[str, list[float]] = {label: [] for label in measured}
    ratios: dict[str, list[float]] = {label: [] for label in measured}
    cpu_ratios: dict[str, list[float]] = {label: [] for label in measured}
    for _ in range(rounds):
        base, base_cpu = run_once(baseline_command, env)
        baseline.append(base)
        baseline_cpu.append(base_cpu)
        for label, command in measured.items():
            took, cpu = run_once(command, env)
            times[label].append(took)
            ratios[label].append(took / base)
            cpu_ratios[label].append(cpu / base_cpu)
    load_after = os.getloadavg()
    imports = times[IMPORTS]
    return {
        "rounds": rounds,
        "python": sys.version.split()[0],
        "cpus": os.cpu_count(),
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in load_after],
        "baseline_median_s": round(statistics.median(baseline), 3),
        "baseline_median_cpu_s": round(statistics.median(baseline_cpu), 3),
        "commands": {
            label: {
                "median_s": round(statistics.median(times[label]), 3),
                "median_ratio": round(statistics.median(ratios[label]), 2),
                "min_ratio": round(min(ratios[label]), 2),
                "max_ratio": round(max(ratios[label]), 2),
                "median_cpu_ratio": round(statistics.median(cpu_ratios[label]), 2),
                "median_imports_ratio": round(
                    statistics.median(t / i for t, i in zip(times[label], imports, strict=True)), 2
                ),
                "within_aim": statistics.median(ratios[label]) <= AIM if aimed(label) else None,
            }
            for label in measured
        },
    }


def aimed(label: str) -> bool:
    """Whether a row has the aim (not the reference, not the control command)."""
    return label not in (IMPORTS, WITH_HOLIDAYS) and not label.startswith(CONTROL)


def main() -> None:
    """Parse the options, measure, print a table (or JSON)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15, help="alternating rounds (default 15)")
    parser.add_argument("--before", metavar="REF", help="also run each command from git REF")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    options = parser.parse_args()
    with contextlib.ExitStack() as stack:
        before = None
        if options.before:
            before = (options.before, stack.enter_context(_stack.source_tree(options.before)))
        figures = measure(options.rounds, before)
    if options.json:
        print(json.dumps(figures, indent=2))
        return
    print(
        f"{figures['rounds']} rounds, Python {figures['python']}, {figures['cpus']} CPUs, "
        f"load average {figures['load_average_before']} → {figures['load_average_after']}"
    )
    print(
        "baseline (a bare Typer command with one argument over typer, pydantic, dateutil.rrule, "
        f"yaml): {figures['baseline_median_s']} s wall, {figures['baseline_median_cpu_s']} s CPU"
    )
    rows = figures["commands"]
    assert isinstance(rows, dict)
    width = max(34, *(len(label) for label in rows))
    header = (
        f"{'command':{width}} {'median s':>9} {'ratio':>6} {'min':>5} {'max':>5} {'CPU ratio':>9} "
        f"{'imports':>7}"
    )
    print(f"{header}  aim: ratio ≤ {AIM}")
    for label, row in rows.items():
        verdict = "—" if row["within_aim"] is None else ("ok" if row["within_aim"] else "OVER")
        print(
            f"{label:{width}} {row['median_s']:9.3f} {row['median_ratio']:6.2f} "
            f"{row['min_ratio']:5.2f} {row['max_ratio']:5.2f} {row['median_cpu_ratio']:9.2f} "
            f"{row['median_imports_ratio']:7.2f}  {verdict}"
        )


if __name__ == "__main__":
    main()
