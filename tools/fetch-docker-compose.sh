#!/usr/bin/env bash
# Puts Debian trixie's Docker Compose (v2, the `docker compose` plugin, run standalone) in
# ~/.cache/ormuz/docker-compose-2/ and prints its path; does nothing when it is there already. `docker compose config`
# needs no Docker engine: test/e2e/compose.e2e.spec.ts runs it to check docker-compose.yml as Compose itself reads it.
set -euo pipefail
exec bash "$(dirname "$0")/fetch-debian-binary.sh" docker-compose usr/libexec/docker/cli-plugins/docker-compose \
  "${ORMUZ_DOCKER_COMPOSE_DIR:-$HOME/.cache/ormuz/docker-compose-2}"
