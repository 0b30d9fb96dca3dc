"""Almanac's top layer, one module per role.

- ``almanac.settings``: ``AlmanacSettings`` (``ALMANAC_*``);
- ``almanac.client``: the Python API (``AlmanacClient``: apply, disable, enable, status, upcoming),
  its reading half ``almanac.schedule_reader``, its errors ``almanac.client_errors`` and the spec
  checks before a change is sent ``almanac.apply_checks``;
- ``almanac.ledger_client``: ``LedgerClient``, the operator's ledger writes (materialize, resolve);
- ``almanac.worker``: the worker process (``run``, ``build_worker``);
- ``almanac.registration``: Almanac's search attributes on a Temporal namespace;
- ``almanac.tzdb``: the local tz release store (list, add, diff releases);
- ``almanac.stack``: the stack on one machine (``almanac dev``) and the effect sink;
- ``almanac.gates``: the acceptance gates harness and its simulated calendar;
- ``almanac.cli``: the ``almanac`` command line over all of these.

Importing the package imports none of them: each is imported by name.
"""
