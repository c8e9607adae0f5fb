#!/usr/bin/env bash
# Usage: fetch-debian-binary.sh <package> <path in the package> <destination directory>
# Puts one binary of a Debian trixie package in <destination directory> and prints its path; does nothing when it is
# there already. For tools this machine's Debian (bookworm) has too old or not at all, used by tests and benches only:
# tools/fetch-nats-server.sh and tools/fetch-docker-compose.sh. Uses apt with sources, lists and cache of its own (the
# machine's apt configuration is left as it is); needs apt-get and dpkg-deb, and root for apt's download sandbox.
set -euo pipefail

if [[ $# -ne 3 ]]; then
  echo "usage: $0 <package> <path in the package> <destination directory>" >&2
  exit 64
fi
package=$1 inside=$2 dest=$3
target="$dest/$(basename "$inside")"
if [[ -x $target ]]; then
  echo "$target"
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
apt_opts=(
  -o Dir::Etc::sourcelist=/dev/null -o "Dir::Etc::sourceparts=$work/sources.d"
  -o "Dir::State::Lists=$work/lists" -o "Dir::Cache=$work/cache" -o Debug::NoLocking=1 -o APT::Sandbox::User=root
)
apt-get "${apt_opts[@]}" -qq update </dev/null >&2
(cd "$work" && apt-get "${apt_opts[@]}" -qq download "$package" </dev/null >&2)
dpkg-deb -x "$work/${package}"_*.deb "$work/root"
mkdir -p "$dest"
install -m 0755 "$work/root/${inside#/}" "$target"
echo "$target"
