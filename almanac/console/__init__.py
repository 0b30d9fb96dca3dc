"""The operator console: every decision of the ledger as web pages, and the human queue.

A read view over the ledger (``ledger`` read functions) and the client (``almanac.client`` for
its one write, resolving an UNKNOWN_EFFECT case), served by ``almanac console`` (docs/console.md).
It keeps no state of its own beyond signed session cookies, and writes no SQL.
"""

from almanac.console.app import create_app
from almanac.console.config import ConsoleSettings

__all__ = ["ConsoleSettings", "create_app"]
