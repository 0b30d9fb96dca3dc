#!/bin/sh
# Register Almanac's custom search attributes (workflows/search_attributes.py) on the namespace,
# once: an occurrence workflow that upserts an unregistered attribute retries its task forever.
# Idempotent: an attribute already present is left alone. Runs in temporalio/admin-tools.
set -eu
address="${TEMPORAL_ADDRESS:-temporal:7233}"
namespace="${TEMPORAL_NAMESPACE:-default}"

# The namespace appears shortly after the frontend serves (auto-setup creates it): wait, bounded.
tries=0
until existing="$(temporal operator search-attribute list --address "$address" --namespace "$namespace")"; do
  tries=$((tries + 1))
  if [ "$tries" -ge 60 ]; then
    echo "namespace $namespace not ready at $address after $tries tries" >&2
    exit 1
  fi
  sleep 2
done
for pair in ScheduleId=Keyword Revision=Int NominalLocal=Keyword OccurrenceState=Keyword; do
  name="${pair%%=*}"
  type="${pair#*=}"
  if printf '%s\n' "$existing" | grep -qw "$name"; then
    echo "search attribute $name already registered"
  else
    temporal operator search-attribute create --address "$address" --namespace "$namespace" \
      --name "$name" --type "$type"
  fi
done
