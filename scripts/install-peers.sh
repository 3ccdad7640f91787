#!/usr/bin/env bash
# Installs the real database engines `nowa compare` runs beside nowa (docs/compare.md), from
# Debian's package registry. Needs root (apt-get). Installs only what is missing; prints what
# each engine is then. Usage: scripts/install-peers.sh [sqlite3] [postgresql] [mariadb]
#   (no argument: all of them).
set -euo pipefail

want=("$@")
[ ${#want[@]} -eq 0 ] && want=(sqlite3 postgresql mariadb)

pkgs=()
for e in "${want[@]}"; do
  case "$e" in
    sqlite3) command -v sqlite3 >/dev/null || pkgs+=(sqlite3) ;;
    postgresql) { command -v initdb >/dev/null || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; } || pkgs+=(postgresql) ;;
    mariadb) { command -v mariadbd >/dev/null || [ -x /usr/sbin/mariadbd ]; } || pkgs+=(mariadb-server mariadb-client) ;;
    *) echo "install-peers.sh: unknown engine '$e' (expected sqlite3, postgresql or mariadb)" >&2; exit 2 ;;
  esac
done

if [ ${#pkgs[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "install-peers.sh: installing ${pkgs[*]} needs root (apt-get)" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  # --no-install-recommends: the servers only; nowa starts and stops them itself, on its own
  # data directories, so the packages' own services are not needed (a container has no init).
  apt-get install -y -q --no-install-recommends "${pkgs[@]}"
fi

# PostgreSQL's Debian package keeps initdb and pg_ctl out of PATH: nowa compare looks there too.
for e in "${want[@]}"; do
  case "$e" in
    sqlite3) echo "sqlite3: $(sqlite3 --version | cut -d' ' -f1)" ;;
    postgresql)
      bin=$(command -v initdb || ls -d /usr/lib/postgresql/*/bin/initdb | tail -1)
      echo "postgresql: $("$(dirname "$bin")/postgres" --version)" ;;
    mariadb) echo "mariadb: $("$(command -v mariadbd || echo /usr/sbin/mariadbd)" --version)" ;;
  esac
done
