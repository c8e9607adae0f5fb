#!/usr/bin/env bash
# Puts Debian trixie's nats-server (2.10) in ~/.cache/ormuz/nats-server-2.10/ and prints its path; does nothing when it
# is there already. Replicated clusters (startNatsCluster: the chaos suite, the cluster tests) run it in preference to
# the machine's nats-server, because servers before 2.9.21 (bookworm's is 2.9.10) can accept two appends on one
# expected sequence at replicas 3 (nats-server#4320), which the chaos checker reports, rightly, as an anomaly: see
# docs/decisions/0032-the-log-on-a-nats-cluster.md. Needs apt-get and dpkg-deb, and root for apt's download sandbox.
set -euo pipefail

dest="${ORMUZ_CLUSTER_NATS_DIR:-$HOME/.cache/ormuz/nats-server-2.10}"
if [[ -x $dest/nats-server ]]; then
  echo "$dest/nats-server"
  exit 0
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/lists/partial" "$work/cache/archives/partial" "$work/sources.d"
cat >"$work/sources.d/trixie.sources" <<'SOURCES'
Types: deb
URIs: http://deb.debian.org/debian
Suites: trixie
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SOURCES
# Its own sources, lists and cache: the machine's apt configuration is left as it is.
apt_opts=(
  -o Dir::Etc::sourcelist=/dev/null -o "Dir::Etc::sourceparts=$work/sources.d"
  -o "Dir::State::Lists=$work/lists" -o "Dir::Cache=$work/cache" -o Debug::NoLocking=1 -o APT::Sandbox::User=root
)
apt-get "${apt_opts[@]}" -qq update </dev/null >&2
(cd "$work" && apt-get "${apt_opts[@]}" -qq download nats-server </dev/null >&2)
dpkg-deb -x "$work"/nats-server_*.deb "$work/root"
mkdir -p "$dest"
install -m 0755 "$work/root/usr/sbin/nats-server" "$dest/nats-server"
echo "$dest/nats-server"
