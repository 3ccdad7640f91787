//! Every reader on a hand-written fixture (tests/fixtures), recognized without --format, and
//! through gzip / xz / zstd.

use nowa_trace::{open, Format, Op, Record, TraceError};
use std::io::Write;
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn read(path: &Path, format: Option<Format>) -> Vec<Record> {
    open(path, format)
        .expect("test I/O")
        .collect::<Result<Vec<_>, _>>()
        .expect("test I/O")
}

fn r(ts_ns: u64, volume: u32, op: Op, offset: u64, len: u64) -> Record {
    Record {
        ts_ns,
        volume,
        op,
        offset,
        len,
    }
}

/// Reads `name` with its format given and detected, and checks the records.
fn check(name: &str, format: Format, want: &[Record]) {
    let path = fixture(name);
    assert_eq!(
        Format::detect(&path).expect("test I/O"),
        format,
        "{name}: detected"
    );
    assert_eq!(read(&path, Some(format)), want, "{name}");
    assert_eq!(read(&path, None), want, "{name}: auto");
}

#[test]
fn nowa_csv() {
    check(
        "nowa.csv",
        Format::NowaCsv,
        &[
            r(0, 0, Op::Write, 0, 8192),
            r(100_500, 0, Op::Read, 4096, 4096),
            r(1_000_000, 0, Op::Discard, 8192, 4096),
            r(1_000_001, 0, Op::Flush, 0, 0),
            r(2_500_000_000, 0, Op::Write, 1 << 20, 512),
        ],
    );
}

#[test]
fn alibaba() {
    let t = 1_577_808_000_000_000_000u64;
    check(
        "alibaba.csv",
        Format::Alibaba,
        &[
            r(t, 3, Op::Write, 126_703_616, 4096),
            r(t + 10_000, 3, Op::Read, 126_703_616, 8192),
            r(t + 20_000, 12, Op::Write, 0, 65536),
        ],
    );
}

#[test]
fn tencent() {
    let t = 1_538_323_200_000_000_000u64;
    check(
        "tencent.csv",
        Format::Tencent,
        &[
            r(t, 1283, Op::Write, 1_048_576 * 512, 8 * 512),
            r(t, 1283, Op::Read, 2048 * 512, 16 * 512),
            r(t + 1_000_000_000, 7, Op::Write, 0, 512),
        ],
    );
}

#[test]
fn msr() {
    check(
        "msr.csv",
        Format::Msr,
        &[
            r(12_816_637_200_306_162_900, 0, Op::Read, 3_154_305_024, 4096),
            r(
                12_816_637_201_638_215_500,
                0,
                Op::Write,
                3_154_305_024,
                4096,
            ),
            r(12_816_637_202_638_224_500, 1, Op::Write, 0, 65536),
        ],
    );
}

#[test]
fn disksim() {
    check(
        "disksim.trace",
        Format::DiskSim,
        &[
            r(0, 0, Op::Write, 1436 * 512, 4096),
            r(125_000, 0, Op::Read, 1436 * 512, 4096),
            r(250_000, 1, Op::Write, 0, 8192),
        ],
    );
}

#[test]
fn blkparse_keeps_issue_events_and_splits_preflush() {
    check(
        "blkparse.txt",
        Format::Blkparse,
        &[
            r(12_345, 0, Op::Write, 223_490 * 512, 4096),
            r(100_000_000, 0, Op::Flush, 0, 0),
            r(100_000_000, 0, Op::Write, 100 * 512, 8192),
            r(200_000_000, 0, Op::Discard, 2048 * 512, 2048 * 512),
            r(300_000_000, 1, Op::Read, 0, 4096),
            r(400_000_000, 0, Op::Flush, 0, 0),
        ],
    );
}

#[test]
fn fio_v2_accumulates_waits() {
    check(
        "fio_v2.log",
        Format::Fio,
        &[
            r(0, 0, Op::Write, 0, 4096),
            r(1_500_000, 1, Op::Read, 8192, 4096),
            r(1_500_000, 0, Op::Discard, 4096, 8192),
            r(1_500_000, 0, Op::Flush, 0, 0),
        ],
    );
}

#[test]
fn fio_v3_timestamps_in_ms() {
    check(
        "fio_v3.log",
        Format::Fio,
        &[
            r(194_000_000, 0, Op::Write, 61440, 4096),
            r(221_000_000, 0, Op::Read, 774_144, 8192),
            r(276_000_000, 0, Op::Flush, 0, 0),
        ],
    );
}

#[test]
fn midas_skips_load_end_and_unused() {
    check(
        "midas.trace",
        Format::Midas,
        &[
            r(146_559_796, 0, Op::Write, 0, 4096),
            r(146_609_386, 0, Op::Write, 4096, 8192),
            r(146_637_836, 0, Op::Read, 5 * 4096, 8192),
            r(300_000_000, 0, Op::Discard, 0, 4096),
        ],
    );
}

#[test]
fn compressed_fixtures_read_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let src = fixture("alibaba.csv");
    let text = std::fs::read(&src).unwrap();
    let want = read(&src, None);
    let gz = dir.path().join("a.csv.gz");
    let mut w = flate2::write::GzEncoder::new(
        std::fs::File::create(&gz).unwrap(),
        flate2::Compression::default(),
    );
    w.write_all(&text).unwrap();
    w.finish().unwrap();
    let zst = dir.path().join("a.csv.zst");
    std::fs::write(&zst, zstd::encode_all(&text[..], 3).unwrap()).unwrap();
    let xz = dir.path().join("a.csv.xz");
    let mut w = xz2::write::XzEncoder::new(std::fs::File::create(&xz).unwrap(), 6);
    w.write_all(&text).unwrap();
    w.finish().unwrap();
    for p in [gz, zst, xz] {
        assert_eq!(read(&p, None), want, "{}", p.display());
    }
}

#[test]
fn bad_lines_name_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("bad.csv");
    std::fs::write(
        &p,
        "ts_sec,op,offset_bytes,len_bytes\n0.1,W,0,4096\n0.2,X,0,4096\n",
    )
    .unwrap();
    let err = open(&p, None)
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap_err();
    let msg = err.to_string();
    assert!(
        matches!(
            err,
            TraceError::TooManyBad {
                first_line: 3,
                bad: 1,
                lines: 2,
                ..
            }
        ),
        "{msg}"
    );
    assert!(msg.contains("bad.csv:3") && msg.contains("'op'"), "{msg}");
    std::fs::write(&p, "3,W,12,4096,100\n3,W,12\n").unwrap();
    let msg = open(&p, Some(Format::Alibaba))
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap_err()
        .to_string();
    assert!(
        msg.contains(":2:") && msg.contains("expected 5 fields, found 3"),
        "{msg}"
    );
    std::fs::write(&p, "who knows\n").unwrap();
    let msg = open(&p, None).err().unwrap().to_string();
    assert!(msg.contains("unrecognized trace format"), "{msg}");
}

/// A run's identity line (`# nowa {...}`, JSON with commas) before the header, as `nowa
/// capture` writes it: recognized and read as the same records as the file without it (old
/// captures have none).
#[test]
fn a_csv_with_an_identity_line_reads_as_one_without() {
    let dir = tempfile::tempdir().expect("tmp");
    let records = [
        r(0, 0, Op::Write, 0, 8192),
        r(1_000, 0, Op::Discard, 4096, 4096),
        r(2_000, 0, Op::Flush, 0, 0),
    ];
    let id = "# nowa {\"version\":\"0.1.0\",\"command\":\"capture\",\"seed\":0,\"spec\":{\"cmd\":[\"dd\",\"of={dev}\"]}}\n";
    let mut paths = Vec::new();
    for (name, comment) in [("with.csv", id), ("without.csv", "")] {
        let p = dir.path().join(name);
        let mut w =
            nowa_trace::CsvWriter::create_commented(&p, false, false, comment).expect("test I/O");
        for rec in &records {
            w.push(rec).expect("test I/O");
        }
        w.finish().expect("test I/O");
        paths.push(p);
    }
    let text = std::fs::read_to_string(&paths[0]).expect("test I/O");
    assert!(text.starts_with("# nowa {"), "{text}");
    assert_eq!(
        text.lines().nth(1),
        Some("ts_sec,op,offset_bytes,len_bytes")
    );
    for p in &paths {
        assert_eq!(Format::detect(p).expect("test I/O"), Format::NowaCsv);
        assert_eq!(read(p, None), records, "{}", p.display());
        assert_eq!(read(p, Some(Format::NowaCsv)), records, "{}", p.display());
    }
}
