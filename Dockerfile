# syntax=docker/dockerfile:1
# Almanac's image: the worker, the `almanac` CLI (migrations, sink). Used by docker-compose.yml.
# Every dependency comes from the hash-locked requirements.lock; the project itself goes in with
# --no-deps, so nothing is resolved at build time.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /app

# Dependencies first (their own layer, rebuilt only when the lock changes), then the build backend
# (hatchling, also hash-locked) so the project builds without fetching anything unhashed.
COPY requirements.lock deploy/build-backend.lock ./
RUN pip install --require-hashes -r requirements.lock \
 && pip install --require-hashes --no-deps -r build-backend.lock

COPY . .
RUN pip install --no-deps --no-build-isolation . \
 && pip check

# An unprivileged user; /var/lib/almanac is ALMANAC_DATA_DIR (named volumes inherit its owner).
RUN useradd --system --uid 10001 --home-dir /var/lib/almanac --create-home almanac
USER almanac
ENV ALMANAC_DATA_DIR=/var/lib/almanac
# At most 2 glibc malloc arenas (default: 8 per core): the worker's threads (the SDK core's, the
# activity pool's) otherwise each grow their own; docs/operating/cluster.md gives the measured cut.
ENV MALLOC_ARENA_MAX=2

# 8765: `almanac sink`; 9464: Almanac's metrics; 9465: the Temporal SDK's metrics.
EXPOSE 8765 9464 9465
CMD ["almanac", "--help"]
