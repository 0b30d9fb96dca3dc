"""Where Almanac keeps its files, read from the environment without pydantic-settings.

``AlmanacSettings`` is the source of truth for every setting; these few paths are also needed by
the light commands (``validate``, ``preview``) whose start-up budget cannot pay for importing
pydantic-settings (``bench/cli_startup.py``). They read the same variables the same way —
names are matched case-insensitively, like pydantic-settings does — and a test holds the two
readings equal.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path


def default_data_dir() -> Path:
    """``$XDG_DATA_HOME/almanac``, else ``~/.local/share/almanac``."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "almanac"


def _variable(name: str, environ: Mapping[str, str]) -> str | None:
    wanted = name.lower()
    for key, value in environ.items():
        if key.lower() == wanted:
            return value
    return None


def data_dir_from_environment(environ: Mapping[str, str] | None = None) -> Path:
    """``ALMANAC_DATA_DIR``, else :func:`default_data_dir` (as ``AlmanacSettings.data_dir``)."""
    value = _variable("ALMANAC_DATA_DIR", os.environ if environ is None else environ)
    return Path(value) if value else default_data_dir()


def egress_allow_from_environment(environ: Mapping[str, str] | None = None) -> list[str]:
    """``ALMANAC_EGRESS_ALLOW`` split as ``AlmanacSettings.egress_allow`` splits it (, or space)."""
    value = _variable("ALMANAC_EGRESS_ALLOW", os.environ if environ is None else environ) or ""
    return [part for part in value.replace(" ", ",").split(",") if part]


def dev_sink_urls_from_environment(environ: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """The ``almanac dev`` sink's base URLs (``ALMANAC_DEV_SINK_PORT``, default 8765).

    The dev stack's worker allows its own sink, whatever ``ALMANAC_EGRESS_ALLOW`` says.
    """
    port = _variable("ALMANAC_DEV_SINK_PORT", os.environ if environ is None else environ)
    port = port if port and port.isdigit() else "8765"
    return (f"http://127.0.0.1:{port}", f"http://localhost:{port}")


def tzdb_store_from_environment(environ: Mapping[str, str] | None = None) -> Path:
    """``ALMANAC_TZDB_DIR``, else ``<data dir>/tzdb`` (as ``AlmanacSettings.tzdb_store``)."""
    env = os.environ if environ is None else environ
    value = _variable("ALMANAC_TZDB_DIR", env)
    return Path(value) if value else data_dir_from_environment(env) / "tzdb"
