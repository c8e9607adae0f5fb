#!/usr/bin/env bash
# Puts Debian trixie's nats-server (2.10) in ~/.cache/ormuz/nats-server-2.10/ and prints its path; does nothing when it
# is there already. Replicated clusters (startNatsCluster: the chaos suite, the cluster tests) run it in preference to
# the machine's nats-server, because servers before 2.9.21 (bookworm's is 2.9.10) can accept two appends on one
# expected sequence at replicas 3 (nats-server#4320), which the chaos checker reports, rightly, as an anomaly: see
# docs/decisions/0032-the-log-on-a-nats-cluster.md.
set -euo pipefail
exec bash "$(dirname "$0")/fetch-debian-binary.sh" nats-server usr/sbin/nats-server \
  "${ORMUZ_CLUSTER_NATS_DIR:-$HOME/.cache/ormuz/nats-server-2.10}"
