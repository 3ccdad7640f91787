# The client `nowa compare` feeds RocksDB and LMDB through (crates/lab/src/compare/client.rs,
# Dialect::Kv): neither has an interactive client, so this program links the engine (the PyPI
# wheels rocksdict and lmdb, each with the engine's own C/C++ library inside; installed by
# scripts/install-peers.sh) and reads one command a line on stdin:
#   P KEY HEX   put (buffered in the open transaction)
#   G KEY       get: prints the value's length (the open transaction's own write first), -1 if none
#   C           commit the open transaction durably (RocksDB: one WriteBatch, sync=true; LMDB: one
#               write transaction, which fsyncs at commit by default)
#   F           make everything durable (after the load): RocksDB flushes its memtable to an SST
#   M TEXT      print TEXT (the marker that tells the driver a transaction is done)
# Usage: kv_driver.py rocksdb|lmdb DIR CACHE_BYTES MAP_BYTES. Any error ends it with a message on
# stderr and a nonzero exit, which the driver reports.
import sys


def rocksdb(path, cache, _map):
    from rocksdict import BlockBasedOptions, Cache, Options, Rdict, WriteBatch, WriteOptions

    opts = Options(raw_mode=True)
    opts.create_if_missing(True)
    table = BlockBasedOptions()
    table.set_block_cache(Cache(cache))
    opts.set_block_based_table_factory(table)
    db = Rdict(path, opts)
    sync = WriteOptions()
    sync.sync = True

    def commit(pending):
        batch = WriteBatch(raw_mode=True)
        for k, v in pending.items():
            batch.put(k, v)
        db.write(batch, sync)

    def get(k):
        return db.get(k)

    def flush():
        db.flush(True)
        db.flush_wal(True)

    return commit, get, flush, db.close


def lmdb_engine(path, _cache, map_bytes):
    import lmdb

    # Defaults otherwise: sync and metasync on (fsync at every commit), no writemap.
    env = lmdb.open(path, map_size=map_bytes, max_dbs=0)

    def commit(pending):
        with env.begin(write=True) as t:
            for k, v in pending.items():
                t.put(k, v)

    def get(k):
        with env.begin() as t:
            return t.get(k)

    def flush():
        env.sync(True)

    return commit, get, flush, env.close


def main():
    kind, path, cache, map_bytes = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    commit, get, flush, close = (rocksdb if kind == "rocksdb" else lmdb_engine)(path, cache, map_bytes)
    out = sys.stdout
    pending = {}
    for line in sys.stdin:
        op = line[0]
        if op == "P":
            _, k, v = line.split()
            pending[int(k).to_bytes(8, "big")] = bytes.fromhex(v)
        elif op == "G":
            k = int(line[2:]).to_bytes(8, "big")
            v = pending.get(k)
            if v is None:
                v = get(k)
            out.write(f"{-1 if v is None else len(v)}\n")
        elif op == "C":
            if pending:
                commit(pending)
                pending = {}
        elif op == "F":
            flush()
        elif op == "M":
            out.write(line[2:])
            out.flush()
        else:
            sys.exit(f"kv_driver: unknown command {line.strip()!r}")
    if pending:
        sys.exit("kv_driver: input ended inside a transaction")
    close()


main()
