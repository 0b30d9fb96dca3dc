"""Register Almanac's custom search attributes on a Temporal namespace (idempotent).

Occurrence workflows carry ``ScheduleId``, ``Revision``, ``NominalLocal`` and ``OccurrenceState``
(``workflows.search_attributes``). A namespace that lacks them makes child starts and upserts fail
or hang, so the worker and the dev stack register them before any workflow runs.
"""

from __future__ import annotations

from temporalio.api.enums.v1 import IndexedValueType
from temporalio.api.operatorservice.v1 import (
    AddSearchAttributesRequest,
    ListSearchAttributesRequest,
)
from temporalio.client import Client
from temporalio.service import RPCError, RPCStatusCode

from workflows import search_attributes


async def register_search_attributes(client: Client) -> list[str]:
    """Add every missing Almanac search attribute to the client's namespace.

    Returns:
        The names that were added (empty when all were present).
    """
    namespace = client.namespace
    try:
        existing = await client.operator_service.list_search_attributes(
            ListSearchAttributesRequest(namespace=namespace)
        )
        present = set(existing.custom_attributes) | set(existing.system_attributes)
    except RPCError as exc:
        # The time-skipping test server cannot list them, but accepts additions.
        if exc.status != RPCStatusCode.UNIMPLEMENTED:
            raise
        present = set()
    missing = {
        key.name: IndexedValueType.ValueType(int(key.indexed_value_type))
        for key in search_attributes.ALL
        if key.name not in present
    }
    if missing:
        try:
            await client.operator_service.add_search_attributes(
                AddSearchAttributesRequest(namespace=namespace, search_attributes=missing)
            )
        except RPCError as exc:
            # Registered meanwhile (or, on the test server, before: it cannot list them).
            if exc.status != RPCStatusCode.ALREADY_EXISTS:
                raise
            return []
    return sorted(missing)
