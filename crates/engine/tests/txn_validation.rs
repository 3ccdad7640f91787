//! Commit validation with the unchanged-leaf shortcut (a read whose leaf kept its LSN is not
//! read again): a change to another key of the same leaf is no conflict, a change to a key
//! read, a key inserted where a get found nothing or into a scanned range is one; and the
//! shortcut stays right across splits and emptied (freed) leaves.

use nowa_device::MemDevice;
use nowa_engine::{Config, Engine, EngineError, ScanDir, TableId, TreeOptions};

fn engine() -> (Engine, TableId) {
    let cfg = Config {
        pool_bytes: 256 * 4096,
        wal_limit_bytes: Some(4 << 20),
        ..Config::default()
    };
    let e = Engine::create(MemDevice::new(64 << 20), cfg).expect("test step");
    let (t, _) = e
        .open_table("t", TreeOptions::default())
        .expect("test step");
    (e, t)
}

fn key(i: u32) -> [u8; 4] {
    i.to_be_bytes()
}

fn put(e: &Engine, t: TableId, i: u32, v: &[u8]) {
    let mut x = e.begin();
    x.put(t, &key(i), v).expect("test step");
    x.commit().expect("test step");
}

fn conflicted(r: Result<(), EngineError>) -> bool {
    match r {
        Ok(()) => false,
        Err(EngineError::Conflict) => true,
        Err(e) => panic!("unexpected error {e}"),
    }
}

#[test]
fn same_leaf_other_key_is_no_conflict_but_the_key_read_is() {
    let (e, t) = engine();
    for i in 0..10 {
        put(&e, t, i, b"v0");
    }
    let mut a = e.begin();
    assert_eq!(a.get(t, &key(3)).expect("test step"), Some(b"v0".to_vec()));
    put(&e, t, 4, b"v1"); // same leaf, another key: the slow path finds key 3 unchanged
    a.put(t, &key(100), b"x").expect("test step");
    assert!(!conflicted(a.commit()));

    let mut b = e.begin();
    assert_eq!(b.get(t, &key(3)).expect("test step"), Some(b"v0".to_vec()));
    put(&e, t, 3, b"v2");
    b.put(t, &key(101), b"x").expect("test step");
    assert!(conflicted(b.commit()));
}

#[test]
fn inserts_where_a_read_found_nothing_conflict() {
    let (e, t) = engine();
    for i in 0..10 {
        put(&e, t, i * 2, b"v0");
    }
    let mut a = e.begin();
    assert_eq!(a.get(t, &key(5)).expect("test step"), None);
    put(&e, t, 5, b"new");
    a.put(t, &key(200), b"x").expect("test step");
    assert!(conflicted(a.commit()));

    let mut b = e.begin();
    let rows = b
        .scan(t, &key(6), Some(&key(12)), ScanDir::Forward, 100)
        .expect("test step");
    assert_eq!(rows.len(), 3);
    put(&e, t, 9, b"phantom");
    b.put(t, &key(201), b"x").expect("test step");
    assert!(conflicted(b.commit()));

    let mut c = e.begin();
    let rows = c
        .scan(t, &key(0), Some(&key(12)), ScanDir::Reverse, 2)
        .expect("test step");
    assert_eq!(rows.len(), 2);
    put(&e, t, 11, b"phantom");
    c.put(t, &key(202), b"x").expect("test step");
    assert!(conflicted(c.commit()));
}

/// Many leaves: a read is kept across splits elsewhere (no conflict) and across the split or
/// emptying of its own leaf (conflict only if its value changed).
#[test]
fn splits_and_freed_leaves_keep_validation_exact() {
    let (e, t) = engine();
    let big = vec![7u8; 400];
    for i in 0..400 {
        put(&e, t, i, &big);
    }
    // A read in the first leaves; splits far away (appends past the end) do not touch it.
    let mut a = e.begin();
    assert!(a.get(t, &key(1)).expect("test step").is_some());
    for i in 400..800 {
        put(&e, t, i, &big);
    }
    a.put(t, &key(5000), b"x").expect("test step");
    assert!(!conflicted(a.commit()));
    // A read of key 200; its leaf splits (inserts right next to it): value unchanged.
    let mut b = e.begin();
    assert!(b.get(t, &key(200)).expect("test step").is_some());
    for j in 0..40u32 {
        let mut x = e.begin();
        let k = [0, 0, 0, 200, u8::try_from(j).expect("small")];
        x.put(t, &k, &big).expect("test step");
        x.commit().expect("test step");
    }
    b.put(t, &key(5001), b"x").expect("test step");
    assert!(!conflicted(b.commit()));
    // A scan over keys 300..310 whose leaf is emptied (and freed) before the commit.
    let mut c = e.begin();
    let rows = c
        .scan(t, &key(300), Some(&key(310)), ScanDir::Forward, 100)
        .expect("test step");
    assert_eq!(rows.len(), 10);
    for i in 280..340 {
        let mut x = e.begin();
        assert!(x.delete(t, &key(i)).expect("test step"));
        x.commit().expect("test step");
    }
    c.put(t, &key(5002), b"x").expect("test step");
    assert!(conflicted(c.commit()));
}
