"""Almanac's top layer, one module per role.

- ``almanac.settings``: ``AlmanacSettings`` (``ALMANAC_*``);
- ``almanac.client``: the Python API (``AlmanacClient``: apply, disable, enable, status, upcoming);
- ``almanac.worker``: the worker process (``run``, ``build_worker``);
- ``almanac.registration``: Almanac's search attributes on a Temporal namespace;
- ``almanac.tzdb``: the local tz release store (list, add, diff releases);
- ``almanac.cli``: the ``almanac`` command line over all of these.

Importing the package imports none of them: each is imported by name.
"""
