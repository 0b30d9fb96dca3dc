"""Tooling around Almanac that production code never imports.

The effect sink (``devtools.sink``), the ``almanac dev`` process supervisor (``devtools.dev``) and
the acceptance gates harness (``devtools.gates``; ``devtools.acceptance`` drives its claims,
``devtools.gate_fixtures`` holds the specs and ledgers the gates share).
"""
