"""Every workflow patch ID has a recorded history on its path (DESIGN §6, upgrades.md).

``test_replay_histories.py`` replays what is recorded; this test holds the recordings to the code.
A patch ID is what a workflow module passes to ``workflow.patched`` or ``workflow.deprecate_patch``
(a string literal, or a module constant naming one). The SDK records it as a ``core_patch`` marker
whose ``patch-data`` says ``{"id": …, "deprecated": …}``.

- ``histories/*.json`` are recorded by today's code: each patch ID the code asks for is a marker
  in one of them, flagged ``deprecated`` exactly when the code calls ``deprecate_patch`` (a patch
  added without re-recording, or a file not re-recorded after a deprecation, fails here).
- ``histories/previous-release/*.json`` were recorded by the previous release, whose code asked
  ``workflow.patched`` for what is deprecated now: each deprecated ID is a marker in one of them,
  so the replay test proves that a run of the previous release on that path replays here.
- Every marker in any history names an ID the code still asks for: when a deprecated call is
  removed (the release after), the histories that carry it go with it.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

from temporalio.client import WorkflowHistory

REPO = Path(__file__).resolve().parents[2]
HISTORIES = Path(__file__).resolve().parent / "histories"
PREVIOUS_RELEASE = HISTORIES / "previous-release"
PATCH_MARKER = "core_patch"
"""The marker name the SDK records for a patch call (its details hold ``patch-data``)."""
PATCH_CALLS = {"patched": False, "deprecate_patch": True}
"""The ``temporalio.workflow`` functions that take a patch ID, and whether they deprecate it."""


def patch_calls(module: Path) -> dict[str, bool]:
    """The patch IDs a workflow module passes to a patch call: ID → whether it is deprecated."""
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
    found: dict[str, bool] = {}
    for node in ast.walk(tree):
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in PATCH_CALLS
        ):
            continue
        if not node.args:
            raise AssertionError(f"{module.name}:{node.lineno}: a patch call without an ID")
        arg = node.args[0]
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            patch_id = arg.value
        elif isinstance(arg, ast.Name) and arg.id in constants:
            patch_id = constants[arg.id]
        else:
            raise AssertionError(f"{module.name}:{node.lineno}: a patch ID this test cannot read")
        deprecated = PATCH_CALLS[node.func.attr]
        if found.setdefault(patch_id, deprecated) != deprecated:
            raise AssertionError(f"{module.name}: {patch_id} is both patched and deprecated")
    return found


def code_patches() -> dict[str, bool]:
    """Every patch ID the workflows ask for, and whether it is deprecated."""
    found: dict[str, bool] = {}
    for module in sorted((REPO / "workflows").glob("*.py")):
        found.update(patch_calls(module))
    return found


def recorded_markers(paths: list[Path]) -> set[tuple[str, bool]]:
    """Every ``(patch ID, deprecated)`` recorded as a marker in the histories at ``paths``."""
    seen = set()
    for path in paths:
        history = WorkflowHistory.from_json(path.stem, path.read_text())
        for event in history.events:
            if not event.HasField("marker_recorded_event_attributes"):
                continue
            marker = event.marker_recorded_event_attributes
            if marker.marker_name == PATCH_MARKER:
                for payload in marker.details["patch-data"].payloads:
                    data = json.loads(payload.data)
                    seen.add((data["id"], bool(data.get("deprecated", False))))
    return seen


def test_the_reader_finds_the_patches_of_the_workflows() -> None:
    # Guards the tests below against reading nothing: a few patches named in upgrades.md.
    ids = code_patches()
    assert {"almanac-early-wake", "almanac-jitter", "almanac-claim-in-attempt"} <= ids.keys()


def test_the_reader_tells_patched_from_deprecated(tmp_path: Path) -> None:
    module = tmp_path / "w.py"
    module.write_text(
        'NEW = "almanac-new"\n'
        "def f(workflow):\n"
        "    workflow.deprecate_patch('almanac-old')\n"
        "    return workflow.patched(NEW)\n"
    )
    assert patch_calls(module) == {"almanac-old": True, "almanac-new": False}


def test_every_patch_has_a_history_recorded_by_todays_code() -> None:
    recorded = recorded_markers(sorted(HISTORIES.glob("*.json")))
    missing = sorted(
        f"{pid} ({'deprecate_patch' if deprecated else 'patched'})"
        for pid, deprecated in code_patches().items()
        if (pid, deprecated) not in recorded
    )
    assert missing == [], f"patch calls with no history recorded by today's code: {missing}"


def test_every_deprecated_patch_has_a_history_of_the_previous_release() -> None:
    recorded = recorded_markers(sorted(PREVIOUS_RELEASE.glob("*.json")))
    missing = sorted(
        pid
        for pid, deprecated in code_patches().items()
        if deprecated and (pid, False) not in recorded
    )
    assert missing == [], f"deprecated patches with no previous-release history: {missing}"


def test_every_recorded_marker_names_a_patch_the_code_asks_for() -> None:
    asked = code_patches().keys()
    stale = sorted({pid for pid, _ in recorded_markers(sorted(HISTORIES.rglob("*.json")))} - asked)
    assert stale == [], f"histories of patches the code no longer asks for: {stale}"


def test_histories_live_in_the_two_known_folders() -> None:
    folders = {path.parent for path in HISTORIES.rglob("*.json")}
    assert folders <= {HISTORIES, PREVIOUS_RELEASE}, sorted(map(str, folders))
