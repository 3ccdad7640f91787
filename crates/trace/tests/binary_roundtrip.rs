//! The binary form round-trips every record exactly (proptest over arbitrary u64 fields), and a
//! text trace converted to it reads back the same records.

use nowa_trace::binary::{Reader, Writer};
use nowa_trace::{open, Format, Op, Record};
use proptest::prelude::*;

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        Just(Op::Read),
        Just(Op::Write),
        Just(Op::Discard),
        Just(Op::Flush)
    ]
}

fn record() -> impl Strategy<Value = Record> {
    // Mix small (delta-friendly) and extreme values.
    let big = prop_oneof![0u64..10_000, any::<u64>()];
    (big.clone(), 0u32..4, op(), big.clone(), big).prop_map(|(ts_ns, volume, op, offset, len)| {
        Record {
            ts_ns,
            volume,
            op,
            offset,
            len,
        }
    })
}

fn roundtrip(records: &[Record]) -> Vec<Record> {
    let dir = tempfile::tempdir().expect("test I/O");
    let path = dir.path().join("t.nwt");
    let mut w = Writer::create(&path, false).expect("test I/O");
    for r in records {
        w.push(r).expect("test I/O");
    }
    let h = w.finish().expect("test I/O");
    assert_eq!(h.records, records.len() as u64);
    let mut rd = Reader::new(
        &path,
        Box::new(std::fs::File::open(&path).expect("test I/O")),
    )
    .expect("test I/O");
    let mut out = Vec::new();
    while let Some(r) = rd.next_record().expect("test I/O") {
        out.push(r);
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]
    #[test]
    fn binary_form_roundtrips_exactly(records in prop::collection::vec(record(), 0..300)) {
        prop_assert_eq!(roundtrip(&records), records);
    }
}

#[test]
fn sequential_records_cost_few_bytes() {
    let records: Vec<Record> = (0..10_000u64)
        .map(|i| Record {
            ts_ns: i * 1000,
            volume: 0,
            op: Op::Write,
            offset: i * 4096,
            len: 4096,
        })
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.nwt");
    let mut w = Writer::create(&path, false).unwrap();
    for r in &records {
        w.push(r).unwrap();
    }
    let h = w.finish().unwrap();
    // tag + 2-byte timestamp delta; offset and length implied.
    assert!(h.body_bytes <= 3 * 10_000, "{} bytes", h.body_bytes);
    assert_eq!(h.writes, 10_000);
    assert_eq!(h.write_bytes, 10_000 * 4096);
}

#[test]
fn converted_fixture_reads_back_identically() {
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/blkparse.txt");
    let want: Vec<Record> = open(&src, None).unwrap().map(Result::unwrap).collect();
    let got = roundtrip(&want);
    assert_eq!(got, want);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("b.nwt");
    let mut w = Writer::create(&path, false).unwrap();
    for r in &want {
        w.push(r).unwrap();
    }
    w.finish().unwrap();
    assert_eq!(Format::detect(&path).unwrap(), Format::Binary);
    let again: Vec<Record> = open(&path, None).unwrap().map(Result::unwrap).collect();
    assert_eq!(again, want);
    assert!(
        Writer::create(&path, false).is_err(),
        "refuses to overwrite"
    );
}
