#!/usr/bin/env bash
# Installs the real database engines `nowa compare` runs beside nowa (docs/compare.md).
# sqlite3, PostgreSQL, MariaDB: Debian's packages (apt-get, needs root).
# RocksDB, LMDB: libraries without an interactive client; nowa feeds them through a small Python
#   program (crates/lab/src/compare/kv_driver.py) linked to them by two PyPI wheels that carry the
#   engine's own library: rocksdict (RocksDB) and lmdb (py-lmdb, LMDB). Binary wheels install in
#   seconds; the Rust crates `rocksdb` / `lmdb` would compile RocksDB from source (many minutes),
#   and apt's librocksdb-dev / liblmdb-dev would need a C driver compiled here.
# sled, redb, fjall: Rust engines that nowa links itself, behind cargo features; nothing to install,
#   this prints the build line that adds them (`nowa compare` prints the same line for an engine
#   that is not built in).
# Installs only what is missing; prints what each engine is then.
# Usage: scripts/install-peers.sh [sqlite3] [postgresql] [mariadb] [rocksdb] [lmdb] [sled] [redb] [fjall]
#   (no argument: the first five).
set -euo pipefail

want=("$@")
[ ${#want[@]} -eq 0 ] && want=(sqlite3 postgresql mariadb rocksdb lmdb)

# Versions the committed results were measured with.
ROCKSDICT=rocksdict==0.3.29
PYLMDB=lmdb==3.0.0

has_module() { python3 -c "import $1" >/dev/null 2>&1; }

pkgs=()
wheels=()
for e in "${want[@]}"; do
  case "$e" in
    sqlite3) command -v sqlite3 >/dev/null || pkgs+=(sqlite3) ;;
    postgresql) { command -v initdb >/dev/null || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; } || pkgs+=(postgresql) ;;
    mariadb) { command -v mariadbd >/dev/null || [ -x /usr/sbin/mariadbd ]; } || pkgs+=(mariadb-server mariadb-client) ;;
    rocksdb) has_module rocksdict || wheels+=("$ROCKSDICT") ;;
    lmdb) has_module lmdb || wheels+=("$PYLMDB") ;;
    sled|redb|fjall) ;;
    *) echo "install-peers.sh: unknown engine '$e' (expected sqlite3, postgresql, mariadb, rocksdb, lmdb, sled, redb or fjall)" >&2; exit 2 ;;
  esac
done

if [ ${#wheels[@]} -gt 0 ]; then
  command -v python3 >/dev/null || pkgs+=(python3 python3-pip)
fi

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

if [ ${#wheels[@]} -gt 0 ]; then
  # Binary wheels only: never a build from source. Debian's own python3 refuses a system-wide
  # pip install (PEP 668) unless told; nowa runs `python3` from PATH, so a virtualenv's python3
  # first on PATH works as well.
  python3 -m pip install -q --only-binary=:all: "${wheels[@]}" ||
    python3 -m pip install -q --only-binary=:all: --break-system-packages "${wheels[@]}"
fi

# PostgreSQL's Debian package keeps initdb and pg_ctl out of PATH: nowa compare looks there too.
for e in "${want[@]}"; do
  case "$e" in
    sqlite3) echo "sqlite3: $(sqlite3 --version | cut -d' ' -f1)" ;;
    postgresql)
      bin=$(command -v initdb || ls -d /usr/lib/postgresql/*/bin/initdb | tail -1)
      echo "postgresql: $("$(dirname "$bin")/postgres" --version)" ;;
    mariadb) echo "mariadb: $("$(command -v mariadbd || echo /usr/sbin/mariadbd)" --version)" ;;
    rocksdb) echo "rocksdb: rocksdict $(python3 -c 'import importlib.metadata as m; print(m.version("rocksdict"))')" ;;
    lmdb) echo "lmdb: py-lmdb $(python3 -c 'import importlib.metadata as m; print(m.version("lmdb"))'), LMDB $(python3 -c 'import lmdb; print(".".join(map(str, lmdb.version())))')" ;;
    sled|redb|fjall) echo "$e: built into nowa by a cargo feature: cargo build --release -p nowa-cli --features $e (all three: --features rust-engines)" ;;
  esac
done
