//! Damaged traces of every format, plain and through gzip / xz / zstd: each reader counts the
//! lines it skips, accepts a few (at most `DEFAULT_BAD_SHARE`), and refuses, naming the file
//! and the first bad line, a file of garbage, one without records, or a broken stream.

use nowa_trace::{binary, open, open_with, Format, ReadPolicy, Record, TraceError};
use std::io::Write;
use std::path::{Path, PathBuf};

/// (fixture, format) of every text reader.
const TEXT: [(&str, Format); 9] = [
    ("nowa.csv", Format::NowaCsv),
    ("alibaba.csv", Format::Alibaba),
    ("tencent.csv", Format::Tencent),
    ("msr.csv", Format::Msr),
    ("disksim.trace", Format::DiskSim),
    ("blkparse.txt", Format::Blkparse),
    ("fio_v2.log", Format::Fio),
    ("fio_v3.log", Format::Fio),
    ("midas.trace", Format::Midas),
];

const CODECS: [&str; 4] = ["", "gz", "xz", "zst"];

fn fixture(name: &str) -> Vec<u8> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    std::fs::read(p).expect("test I/O")
}

fn compress(codec: &str, text: &[u8]) -> Vec<u8> {
    match codec {
        "gz" => {
            let mut w = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            w.write_all(text).expect("test I/O");
            w.finish().expect("test I/O")
        }
        "xz" => {
            let mut w = xz2::write::XzEncoder::new(Vec::new(), 1);
            w.write_all(text).expect("test I/O");
            w.finish().expect("test I/O")
        }
        "zst" => zstd::encode_all(text, 3).expect("test I/O"),
        _ => text.to_vec(),
    }
}

fn write(dir: &Path, name: &str, codec: &str, bytes: &[u8]) -> PathBuf {
    let p = dir.join(format!("{name}.{codec}"));
    std::fs::write(&p, compress(codec, bytes)).expect("test I/O");
    p
}

fn read_all(p: &Path, f: Format) -> Result<Vec<Record>, TraceError> {
    open(p, Some(f))?.collect()
}

/// The fixture repeated `copies` times, with `garbage` lines after its first line (before
/// blkparse's closing summary, whose free text is no damage).
fn with_garbage(fix: &[u8], copies: usize, garbage: usize) -> (Vec<u8>, u64) {
    let cut = fix
        .iter()
        .position(|&b| b == b'\n')
        .expect("a fixture has lines")
        + 1;
    let mut out = fix[..cut].to_vec();
    for i in 0..garbage {
        out.extend_from_slice(format!("garbage {i} \u{fffd}\n").as_bytes());
    }
    out.extend_from_slice(&fix[cut..]);
    for _ in 1..copies {
        out.extend_from_slice(fix);
    }
    (out, 2)
}

#[test]
fn garbage_beyond_the_share_is_refused_naming_the_first_bad_line() {
    let dir = tempfile::tempdir().expect("test I/O");
    for (name, f) in TEXT {
        let (bytes, first_bad) = with_garbage(&fixture(name), 2, 3);
        for codec in CODECS {
            let p = write(dir.path(), name, codec, &bytes);
            let e = read_all(&p, f).expect_err("refused");
            let msg = e.to_string();
            assert!(
                matches!(e, TraceError::TooManyBad { first_line, bad: 3, .. } if first_line == first_bad),
                "{name}.{codec}: {msg}"
            );
            assert!(
                msg.contains(&format!("{}:{first_bad}:", p.display())),
                "{msg}"
            );
            assert!(e.is_bad_input());
        }
    }
}

#[test]
fn a_few_bad_lines_are_skipped_and_counted() {
    let dir = tempfile::tempdir().expect("test I/O");
    for (name, f) in TEXT {
        let clean = read_all(&write(dir.path(), name, "", &fixture(name)), f).expect("test I/O");
        let (bytes, first_bad) = with_garbage(&fixture(name), 100, 1);
        for codec in CODECS {
            let p = write(dir.path(), name, codec, &bytes);
            let mut r = open(&p, Some(f)).expect("test I/O");
            let got: Vec<Record> = r.by_ref().collect::<Result<_, _>>().expect("test I/O");
            assert_eq!(got.len(), clean.len() * 100, "{name}.{codec}");
            let s = r.skipped().expect("the bad line is counted");
            assert_eq!((s.bad, s.first_line), (1, first_bad), "{name}.{codec}");
            // Strict: no bad line allowed.
            let strict = ReadPolicy { max_bad_share: 0.0 };
            let e = open_with(&p, Some(f), strict)
                .expect("test I/O")
                .collect::<Result<Vec<_>, _>>()
                .expect_err("refused");
            assert!(matches!(e, TraceError::TooManyBad { .. }), "{e}");
        }
    }
}

#[test]
fn skip_bad_accepts_any_share_but_not_an_empty_trace() {
    let dir = tempfile::tempdir().expect("test I/O");
    let (bytes, _) = with_garbage(&fixture("alibaba.csv"), 1, 50);
    let p = write(dir.path(), "a", "", &bytes);
    let any = ReadPolicy { max_bad_share: 1.0 };
    let got: Vec<Record> = open_with(&p, Some(Format::Alibaba), any)
        .expect("test I/O")
        .collect::<Result<_, _>>()
        .expect("test I/O");
    assert_eq!(got.len(), 3);
    let junk = write(dir.path(), "junk", "", b"nothing\nat all\n");
    let e = open_with(&junk, Some(Format::Alibaba), any)
        .expect("test I/O")
        .collect::<Result<Vec<_>, _>>()
        .expect_err("refused");
    assert!(
        matches!(
            e,
            TraceError::TooManyBad {
                first_line: 1,
                bad: 2,
                ..
            }
        ),
        "{e}"
    );
}

#[test]
fn files_without_records_are_refused() {
    let dir = tempfile::tempdir().expect("test I/O");
    let header_only = write(dir.path(), "h", "", b"ts_sec,op,offset_bytes,len_bytes\n");
    let e = read_all(&header_only, Format::NowaCsv).expect_err("refused");
    assert!(matches!(e, TraceError::Empty { lines: 1, .. }), "{e}");
    // Detected as the nowa CSV from its header, then refused.
    let e = open(&header_only, None)
        .expect("test I/O")
        .collect::<Result<Vec<_>, _>>()
        .expect_err("refused");
    assert!(matches!(e, TraceError::Empty { .. }), "{e}");
    assert!(e.to_string().contains("no records"), "{e}");
    for (name, f) in TEXT {
        for codec in CODECS {
            let empty = write(dir.path(), &format!("e-{name}"), codec, b"");
            let e = read_all(&empty, f).expect_err("refused");
            assert!(matches!(e, TraceError::Empty { lines: 0, .. }), "{e}");
            assert!(e.to_string().contains(&empty.display().to_string()));
            let comments = write(dir.path(), &format!("c-{name}"), codec, b"# a\n\n# b\n");
            let e = read_all(&comments, f).expect_err("refused");
            assert!(matches!(e, TraceError::Empty { lines: 3, .. }), "{e}");
        }
    }
    // fio: a header and nothing else.
    let fio = write(dir.path(), "fio", "", b"fio version 2 iolog\n");
    assert!(matches!(
        read_all(&fio, Format::Fio).expect_err("refused"),
        TraceError::Empty { .. }
    ));
}

#[test]
fn blkparse_garbage_is_counted_and_its_summary_is_not() {
    let dir = tempfile::tempdir().expect("test I/O");
    let fix = fixture("blkparse.txt");
    let p = write(dir.path(), "b", "", &fix);
    let mut r = open(&p, Some(Format::Blkparse)).expect("test I/O");
    assert!(r.by_ref().count() > 0);
    assert_eq!(
        r.skipped(),
        None,
        "the fixture's summary lines are no damage"
    );
    let mut bytes = b"hello\n".to_vec();
    bytes.extend_from_slice(&fix);
    let p = write(dir.path(), "b2", "", &bytes);
    let e = read_all(&p, Format::Blkparse).expect_err("refused");
    assert!(
        matches!(e, TraceError::TooManyBad { first_line: 1, .. }),
        "{e}"
    );
}

#[test]
fn binary_garbage_read_as_text_is_refused() {
    let dir = tempfile::tempdir().expect("test I/O");
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let bytes: Vec<u8> = (0..20_000)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x.to_le_bytes()[0]
        })
        .collect();
    for (name, f) in TEXT {
        let p = write(dir.path(), &format!("g-{name}"), "", &bytes);
        let e = read_all(&p, f).expect_err("refused");
        assert!(e.is_bad_input(), "{name}: {e}");
        assert!(e.to_string().contains(&p.display().to_string()), "{e}");
    }
}

#[test]
fn truncated_compressed_streams_are_refused() {
    let dir = tempfile::tempdir().expect("test I/O");
    for (name, f) in TEXT {
        let text = fixture(name).repeat(50);
        for codec in ["gz", "xz", "zst"] {
            let full = compress(codec, &text);
            for cut in [full.len() / 2, full.len() - 4, 12] {
                let p = dir.path().join(format!("{name}-{cut}.{codec}"));
                std::fs::write(&p, &full[..cut]).expect("test I/O");
                let e = read_all(&p, f).expect_err("refused");
                assert!(
                    matches!(e, TraceError::Damaged { .. }),
                    "{name}.{codec} cut at {cut}: {e}"
                );
                assert!(e.is_bad_input());
            }
        }
    }
}

#[test]
fn empty_and_truncated_binary_traces_are_refused() {
    let dir = tempfile::tempdir().expect("test I/O");
    let p = dir.path().join("empty.nwt");
    binary::Writer::create(&p, false)
        .expect("test I/O")
        .finish()
        .expect("test I/O");
    let e = read_all(&p, Format::Binary).expect_err("refused");
    assert!(matches!(e, TraceError::Empty { .. }), "{e}");
    let short = dir.path().join("short.nwt");
    std::fs::write(&short, &std::fs::read(&p).expect("test I/O")[..10]).expect("test I/O");
    let e = read_all(&short, Format::Binary).expect_err("refused");
    assert!(e.is_bad_input(), "{e}");
    assert!(e.to_string().contains("short.nwt"), "{e}");
}

#[test]
fn a_damaged_binary_body_is_refused_before_any_record() {
    let dir = tempfile::tempdir().expect("test I/O");
    let csv = write(dir.path(), "n", "", &fixture("nowa.csv").repeat(40));
    let good = dir.path().join("g.nwt");
    let mut w = binary::Writer::create(&good, false).expect("test I/O");
    for r in open(&csv, None).expect("test I/O") {
        w.push(&r.expect("test I/O")).expect("test I/O");
    }
    w.finish().expect("test I/O");
    let bytes = std::fs::read(&good).expect("test I/O");
    // Every bit of the body's second half: a flip must stop the open, not a later record.
    for at in bytes.len() / 2..bytes.len() {
        let mut f = bytes.clone();
        f[at] ^= 0x40;
        let p = dir.path().join("f.nwt");
        std::fs::write(&p, &f).expect("test I/O");
        let e = open(&p, Some(Format::Binary)).err();
        assert!(
            e.as_ref().is_some_and(TraceError::is_bad_input),
            "byte {at}: {e:?}"
        );
    }
}

#[test]
fn a_request_ending_past_2_to_the_64_is_an_unreadable_line() {
    let dir = tempfile::tempdir().expect("test I/O");
    let end = u64::MAX - 100;
    let p = write(
        dir.path(),
        "o",
        "",
        format!("0.1,W,{end},4096\n").as_bytes(),
    );
    let e = read_all(&p, Format::NowaCsv).expect_err("refused");
    assert!(e.to_string().contains("offset + length"), "{e}");
}
