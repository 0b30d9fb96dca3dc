"""Tooling around Almanac that production code never imports.

The effect sink (``devtools.sink``), the ``almanac dev`` process supervisor (``devtools.dev``) and
the acceptance gates harness (``devtools.gates``).
"""
