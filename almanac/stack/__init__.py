"""The whole stack on one machine: ``almanac dev`` and the effect sink (DESIGN §7, §8).

``almanac.stack.dev`` supervises the Temporal dev server, the sink and a worker and prints every
transition live (``almanac.stack.live``), with the examples aimed at its sink
(``almanac.stack.dev_sink``); ``almanac.stack.sink`` is the small HTTP service that
records downstream effects once per ``Idempotency-Key``. The library (``almanac``) never imports
this package; only the ``dev`` and ``sink`` commands do, inside the command.
"""
