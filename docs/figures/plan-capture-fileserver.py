#!/usr/bin/env python3
"""A file-server-like workload for `nowa capture` (docs/plan.md, Filebench's fileserver in
small): 4 worker processes, each with its own directory of up to 1000 files of 128 KiB; every
iteration picks a random file and creates it (one 128 KiB write), appends 16 KiB, reads it
whole, or deletes it, as Filebench's fileserver flow does (create, append, read, delete).
Seeded: `plan-capture-fileserver.py ITERATIONS SEED`."""
import os
import random
import sys

FILES, SIZE, APPEND = 1000, 128 * 1024, 16 * 1024


def worker(w, iterations, seed):
    rnd = random.Random(seed * 100 + w)
    d = f"w{w}"
    os.makedirs(d, exist_ok=True)
    data = rnd.randbytes(SIZE)
    alive = [False] * FILES
    for i in range(FILES // 2):
        with open(f"{d}/f{i}", "wb") as f:
            f.write(data)
        alive[i] = True
    for _ in range(iterations):
        i = rnd.randrange(FILES)
        p, op = f"{d}/f{i}", rnd.randrange(4)
        if not alive[i] or op == 0:
            with open(p, "wb") as f:
                f.write(data)
            alive[i] = True
        elif op == 1:
            with open(p, "ab") as f:
                f.write(data[:APPEND])
        elif op == 2:
            with open(p, "rb") as f:
                f.read()
        else:
            os.unlink(p)
            alive[i] = False


def main():
    iterations = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    pids = []
    for w in range(4):
        pid = os.fork()
        if pid == 0:
            worker(w, iterations, seed)
            os._exit(0)
        pids.append(pid)
    for pid in pids:
        _, status = os.waitpid(pid, 0)
        assert status == 0, "a worker failed"


if __name__ == "__main__":
    main()
