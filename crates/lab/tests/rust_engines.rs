//! The Rust engines of `nowa compare` (sled, redb, fjall: cargo feature `rust-engines`) each run
//! a small stream and keep what every commit wrote. An integration test of its own, built only
//! with the feature (`required-features`), so CI builds the feature for this one small binary
//! (`cargo test -p nowa-lab --features rust-engines --test rust_engines`), not for nowa-lab's
//! unit tests and every other test binary.

use nowa_lab::compare::bed::Target;
use nowa_lab::compare::rust_kv::{open, open_kv};
use nowa_lab::compare::stream::{Kind, Stream};
use nowa_lab::compare::{EngineName, Workload};
use std::collections::BTreeMap;

/// Runs a small tpcc-lite stream (multi-row transactions, reads of the transaction's own
/// writes) on `engine` in a temporary directory, closes it, opens it again and checks the
/// last value of every row the stream updated: what each commit wrote is on disk.
fn runs_a_small_stream_and_keeps_it(engine: EngineName) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let target = Target::Dir(tmp.path().to_owned(), 1 << 30);
    let s = Stream::generate(Workload::TpccLite, 2000, 60, 100, 7).expect("stream");
    let mut d = open(engine, &target, 8 << 20).expect("open");
    d.load(&s).expect("load");
    for t in &s.txns {
        d.txn(&s, t).expect("txn");
    }
    assert!(d.memory() > 0, "the engine holds memory");
    d.finish().expect("finish");
    let mut last = BTreeMap::new();
    for o in s.txns.iter().flatten() {
        if o.kind != Kind::Read {
            last.insert(o.key, o.ver);
        }
    }
    assert!(last.len() > 60, "the stream wrote rows");
    let dir = tmp.path().join(engine.name());
    let kv = open_kv(engine, &dir, 8 << 20).expect("reopen");
    for (k, ver) in &last {
        assert_eq!(kv.get(*k).expect("get"), Some(s.value(*k, *ver)), "key {k}");
    }
    // A loaded row the stream never wrote keeps its loaded value.
    let untouched = (0..s.loaded)
        .find(|k| !last.contains_key(k))
        .expect("a row");
    assert_eq!(kv.get(untouched).expect("get"), Some(s.value(untouched, 0)));
    assert_eq!(kv.get(1 << 40).expect("get"), None, "a key never written");
    kv.close().expect("close");
}

#[test]
fn sled_runs_a_small_stream_and_keeps_it() {
    runs_a_small_stream_and_keeps_it(EngineName::Sled);
}

#[test]
fn redb_runs_a_small_stream_and_keeps_it() {
    runs_a_small_stream_and_keeps_it(EngineName::Redb);
}

#[test]
fn fjall_runs_a_small_stream_and_keeps_it() {
    runs_a_small_stream_and_keeps_it(EngineName::Fjall);
}
