"""Every ``workflow.patched`` change has a recorded history that took its new path (DESIGN §6).

``test_replay_histories.py`` replays what is recorded; this test holds the recordings to the code:
each patch ID the workflows ask for (a string literal, or a module constant naming one) appears as
a patch marker in at least one history under ``histories/``. A patch added without re-recording
(STYLE: "each with a replay test") fails here, naming it. The old paths are the histories recorded
before each patch, kept in the ``pre-*/`` and ``legacy/`` folders (``histories/README.md``).
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

from temporalio.client import WorkflowHistory

REPO = Path(__file__).resolve().parents[2]
HISTORIES = Path(__file__).resolve().parent / "histories"
PATCH_MARKER = "core_patch"
"""The marker name the SDK records for ``workflow.patched`` (its details hold ``patch-data``)."""


def patch_ids(module: Path) -> set[str]:
    """The IDs a workflow module passes to ``workflow.patched`` (literals and module constants)."""
    tree = ast.parse(module.read_text())
    constants = {
        target.id: node.value.value
        for node in tree.body
        if isinstance(node, ast.Assign)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
        for target in node.targets
        if isinstance(target, ast.Name)
    }
    found = set()
    for node in ast.walk(tree):
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "patched"
            and node.args
        ):
            continue
        arg = node.args[0]
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            found.add(arg.value)
        elif isinstance(arg, ast.Name):
            found.add(constants[arg.id])  # a KeyError names a patch ID this test cannot read
        else:
            raise AssertionError(f"{module.name}: a patch ID that is not a name or a literal")
    return found


def recorded_markers() -> set[str]:
    """Every patch ID recorded as a marker in any history under ``histories/``."""
    seen = set()
    for path in HISTORIES.rglob("*.json"):
        history = WorkflowHistory.from_json(path.stem, path.read_text())
        for event in history.events:
            if not event.HasField("marker_recorded_event_attributes"):
                continue
            marker = event.marker_recorded_event_attributes
            if marker.marker_name == PATCH_MARKER:
                for payload in marker.details["patch-data"].payloads:
                    seen.add(json.loads(payload.data)["id"])
    return seen


def test_the_reader_finds_the_patches_of_the_workflows() -> None:
    # Guards the test below against reading nothing: a few patches named in the README.
    ids = set().union(*(patch_ids(m) for m in (REPO / "workflows").glob("*.py")))
    assert {"almanac-early-wake", "almanac-jitter", "almanac-claim-in-attempt"} <= ids


def test_every_patch_has_a_history_on_its_new_path() -> None:
    ids = set().union(*(patch_ids(m) for m in (REPO / "workflows").glob("*.py")))
    missing = sorted(ids - recorded_markers())
    assert missing == [], f"patches with no recorded history on their new path: {missing}"
