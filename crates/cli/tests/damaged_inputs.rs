//! The damaged-file half of the bad-input table (docs/testing.md; the command-line half is
//! tests/bad_input.rs): damaged traces of every format and codec and damaged write logs,
//! generated deterministically from a seed, through every command that reads them. Each run
//! must end within a timeout, without a panic or signal, and either refuse (exit 2, one
//! `nowa: error` line naming the file) or, for a trace with a few bad lines, accept and say
//! on stderr what it skipped. Anything else (exit 0 in silence, exit 1, a panic, a hang) is
//! a defect.
//!
//! `NOWA_DAMAGE_SEED=N cargo test -p nowa-cli --test damaged_inputs -- --nocapture`
//! (add `--release` to run the release binary) prints the table docs/testing.md shows.

mod common;
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const TIMEOUT: Duration = Duration::from_secs(60);

/// (fixture, --format name) of every text reader.
const FORMATS: [(&str, &str); 9] = [
    ("nowa.csv", "csv"),
    ("alibaba.csv", "alibaba"),
    ("tencent.csv", "tencent"),
    ("msr.csv", "msr"),
    ("disksim.trace", "disksim"),
    ("blkparse.txt", "blkparse"),
    ("fio_v2.log", "fio"),
    ("fio_v3.log", "fio"),
    ("midas.trace", "midas"),
];

/// xorshift64*: the damage is a function of the seed alone.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        usize::try_from(self.next() % n.max(1) as u64).expect("below n")
    }
    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next().to_le_bytes()[3]).collect()
    }
}

/// What a damaged file must produce.
#[derive(Clone, Copy, PartialEq)]
enum Want {
    Refused,
    /// Accepted, with the skipped lines said on stderr.
    Counted,
}

/// What a damaged file is (which commands read it).
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Trace,
    /// A SepFrozen write log.
    Log,
    /// A job file of `nowa run` (TOML, or JSON: a job or a result naming its run).
    JobToml,
    JobJson,
    /// A result of `nowa ssdiq --json` (`nowa ssdiq report` reads it).
    Ssdiq,
}

impl Kind {
    /// The file name's extension (`nowa run` tells TOML from JSON by it).
    fn ext(self) -> &'static str {
        match self {
            Kind::Trace | Kind::Log => "",
            Kind::JobToml => ".toml",
            Kind::JobJson | Kind::Ssdiq => ".json",
        }
    }
}

/// One damaged file: its path, the reader it targets, its damage, what it must produce, and
/// the `--format` to pass (None: detected).
struct Case {
    path: PathBuf,
    reader: String,
    damage: &'static str,
    want: Want,
    format: Option<&'static str>,
    kind: Kind,
}

fn fixture(name: &str) -> Vec<u8> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../trace/tests/fixtures")
        .join(name);
    std::fs::read(p).expect("fixture")
}

fn compress(codec: &str, text: &[u8]) -> Vec<u8> {
    match codec {
        "gz" => {
            let mut w = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            w.write_all(text).expect("in memory");
            w.finish().expect("in memory")
        }
        "xz" => {
            let mut w = xz2::write::XzEncoder::new(Vec::new(), 1);
            w.write_all(text).expect("in memory");
            w.finish().expect("in memory")
        }
        // With the content checksum, as the zstd tool writes by default.
        "zst" => {
            let mut w = zstd::stream::write::Encoder::new(Vec::new(), 3).expect("in memory");
            w.include_checksum(true).expect("in memory");
            w.write_all(text).expect("in memory");
            w.finish().expect("in memory")
        }
        _ => text.to_vec(),
    }
}

/// Lines of `text` with `n` lines of `junk` inserted at random places (not before the first
/// line: fio's header stays first).
fn insert_lines(
    rng: &mut Rng,
    text: &[u8],
    n: usize,
    junk: &mut dyn FnMut(&mut Rng) -> Vec<u8>,
) -> Vec<u8> {
    let mut lines: Vec<Vec<u8>> = text
        .split_inclusive(|&b| b == b'\n')
        .map(<[u8]>::to_vec)
        .collect();
    for _ in 0..n {
        let at = 1 + rng.below(lines.len());
        let mut l = junk(rng);
        l.push(b'\n');
        lines.insert(at.min(lines.len()), l);
    }
    lines.concat()
}

/// The damaged text forms of one base trace (`lines` lines): name, bytes, what they must do.
fn text_damages(rng: &mut Rng, base: &[u8], lines: usize) -> Vec<(&'static str, Vec<u8>, Want)> {
    let many = lines / 20 + 2;
    // Random bytes after a non-ASCII one: a line that starts with '#' or is blank after
    // trimming is a comment or a blank line by the formats' definition, not damage.
    let mut garbage = |r: &mut Rng| {
        let n = 3 + r.below(40);
        std::iter::once(0xff)
            .chain(
                r.bytes(n)
                    .into_iter()
                    .map(|b| if b == b'\n' { b'x' } else { b }),
            )
            .collect()
    };
    let words = |r: &mut Rng| format!("lorem {} ipsum,{}", r.next(), r.next()).into_bytes();
    let overflow = |r: &mut Rng| {
        let n = format!("{}{}", r.next(), r.next());
        format!("{n},W,{n},{n},{n},{n},{n}").into_bytes()
    };
    let mut cut = base.to_vec();
    let from = rng.below(base.len() / 2);
    cut.splice(from..from + base.len() / 3, rng.bytes(base.len() / 3));
    vec![
        ("empty", Vec::new(), Want::Refused),
        ("comments only", b"# a\n\n# b\n".to_vec(), Want::Refused),
        (
            "binary garbage",
            {
                let n = 4096 + rng.below(8192);
                rng.bytes(n)
            },
            Want::Refused,
        ),
        (
            "garbage lines",
            insert_lines(rng, base, many, &mut garbage),
            Want::Refused,
        ),
        (
            "text lines",
            insert_lines(rng, base, many, &mut { words }),
            Want::Refused,
        ),
        (
            "overflowing numbers",
            insert_lines(rng, base, many, &mut { overflow }),
            Want::Refused,
        ),
        ("a third overwritten", cut, Want::Refused),
        (
            "one bad line",
            insert_lines(rng, base, 1, &mut garbage),
            Want::Counted,
        ),
    ]
}

/// The compressed forms' own damage: cut at a random byte, or a byte flipped.
fn stream_damages(rng: &mut Rng, packed: &[u8]) -> Vec<(&'static str, Vec<u8>)> {
    let cut = 1 + rng.below(packed.len() - 2);
    let mut flipped = packed.to_vec();
    let at = packed.len() / 4 + rng.below(packed.len() / 2);
    flipped[at] ^= 1 << rng.below(8);
    vec![
        ("cut stream", packed[..cut].to_vec()),
        ("flipped byte", flipped),
    ]
}

/// Writes `bytes` as the next damaged file of `cases`.
#[expect(clippy::too_many_arguments, reason = "one case's fields")]
fn add(
    cases: &mut Vec<Case>,
    dir: &Path,
    reader: &str,
    damage: &'static str,
    want: Want,
    format: Option<&'static str>,
    kind: Kind,
    bytes: &[u8],
) {
    let path = dir.join(format!("d{:04}{}", cases.len(), kind.ext()));
    std::fs::write(&path, bytes).expect("temp dir");
    cases.push(Case {
        path,
        reader: reader.to_owned(),
        damage,
        want,
        format,
        kind,
    });
}

/// The damaged traces of the text readers, one round of random damage.
fn text_cases(rng: &mut Rng, dir: &Path, cases: &mut Vec<Case>) {
    for (i, (name, format)) in FORMATS.into_iter().enumerate() {
        let fix = fixture(name);
        let base = fix.repeat(40);
        let lines = base.iter().filter(|&&b| b == b'\n').count();
        for codec in ["", "gz", "xz", "zst"] {
            let reader = format!("{format}{}{codec}", if codec.is_empty() { "" } else { "." });
            for (damage, bytes, want) in text_damages(rng, &base, lines) {
                let packed = compress(codec, &bytes);
                add(
                    cases,
                    dir,
                    &reader,
                    damage,
                    want,
                    Some(format),
                    Kind::Trace,
                    &packed,
                );
            }
            if !codec.is_empty() {
                for (damage, bytes) in stream_damages(rng, &compress(codec, &base)) {
                    add(
                        cases,
                        dir,
                        &reader,
                        damage,
                        Want::Refused,
                        Some(format),
                        Kind::Trace,
                        &bytes,
                    );
                }
            }
        }
        // A whole trace of another format under this one's --format.
        let (other, _) = FORMATS[(i + 1 + rng.below(FORMATS.len() - 1)) % FORMATS.len()];
        if FORMATS.iter().all(|(n, f)| *n != other || *f != format) {
            let bytes = fixture(other).repeat(40);
            add(
                cases,
                dir,
                format,
                "another format",
                Want::Refused,
                Some(format),
                Kind::Trace,
                &bytes,
            );
        }
    }
}

/// The compact binary form: written from the nowa CSV fixture, then damaged.
fn binary_cases(rng: &mut Rng, dir: &Path, cases: &mut Vec<Case>) {
    let src = dir.join("base.csv");
    std::fs::write(&src, fixture("nowa.csv").repeat(40)).expect("temp dir");
    let good = dir.join("base.nwt");
    let mut w = nowa_trace::binary::Writer::create(&good, true).expect("temp dir");
    for r in nowa_trace::open(&src, None).expect("fixture") {
        w.push(&r.expect("fixture")).expect("temp dir");
    }
    w.finish().expect("temp dir");
    let empty = dir.join("empty.nwt");
    nowa_trace::binary::Writer::create(&empty, true)
        .expect("temp dir")
        .finish()
        .expect("temp dir");
    let good = std::fs::read(&good).expect("temp dir");
    let empty = std::fs::read(&empty).expect("temp dir");
    for codec in ["", "gz", "xz", "zst"] {
        let reader = format!("binary{}{codec}", if codec.is_empty() { "" } else { "." });
        let mut variants: Vec<(&'static str, Vec<u8>)> = vec![("no records", empty.clone())];
        for _ in 0..3 {
            let cut = 1 + rng.below(good.len() - 2);
            variants.push(("cut", good[..cut].to_vec()));
            let mut f = good.clone();
            let at = rng.below(f.len());
            f[at] ^= 1 << rng.below(8);
            variants.push(("flipped byte", f));
        }
        let mut tail = good.clone();
        let n = 1 + rng.below(64);
        tail.extend_from_slice(&rng.bytes(n));
        variants.push(("bytes appended", tail));
        let mut magic = good[..8].to_vec();
        magic.extend_from_slice(&rng.bytes(2000));
        variants.push(("magic then garbage", magic));
        for (damage, bytes) in variants {
            let packed = compress(codec, &bytes);
            add(
                cases,
                dir,
                &reader,
                damage,
                Want::Refused,
                Some("binary"),
                Kind::Trace,
                &packed,
            );
        }
    }
}

/// SepFrozen write logs (`nowa frozen synth`), damaged.
fn log_cases(rng: &mut Rng, dir: &Path, cases: &mut Vec<Case>) {
    let base = dir.join("base").join("writes.log");
    let o = Command::new(env!("CARGO_BIN_EXE_nowa"))
        .args(["frozen", "synth", "--writes", "3000", "--force", "--out"])
        .arg(dir.join("base"))
        .output()
        .expect("run nowa");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let good = std::fs::read(&base).expect("temp dir");
    let mut variants: Vec<(&'static str, Vec<u8>)> = vec![
        ("empty", Vec::new()),
        ("binary garbage", rng.bytes(4096)),
        ("a trace instead", fixture("nowa.csv")),
    ];
    for _ in 0..6 {
        let cut = 1 + rng.below(good.len() - 2);
        variants.push(("cut", good[..cut].to_vec()));
        let mut f = good.clone();
        let at = rng.below(f.len());
        f[at] ^= 1 << rng.below(8);
        variants.push(("flipped byte", f));
    }
    for (damage, bytes) in variants {
        add(
            cases,
            dir,
            "write log",
            damage,
            Want::Refused,
            None,
            Kind::Log,
            &bytes,
        );
    }
}

/// The base job of the job-file damages: a small sim (a damage that left a valid job would
/// run it in a moment, and show as "accepted").
const JOB_TOML: &str = "command = \"sim\"\n\n[spec]\ncapacity = \"512MiB\"\nworkload = \"zipf:0.9\"\nop = \"7%\"\npolicy = \"greedy\"\nwarmup = 0.1\nvolume = 0.2\nseed = 7\n";
/// The same job in JSON.
const JOB_JSON: &str = r#"{"command": "sim", "spec": {"capacity": "512MiB", "workload": "zipf:0.9", "op": "7%", "policy": "greedy", "warmup": 0.1, "volume": 0.2, "seed": 7}}"#;

/// A byte of `text` that is JSON structure (a brace, bracket, colon, comma or quote), at
/// random: flipping any bit of it leaves no valid JSON (a cut or a flip inside a value might).
fn structural(rng: &mut Rng, text: &[u8]) -> usize {
    let at: Vec<usize> = (0..text.len())
        .filter(|&i| b"{}[]:,\"".contains(&text[i]))
        .collect();
    at[rng.below(at.len())]
}

/// Damages of a JSON document that leave no valid JSON: a proper prefix, a structural byte
/// flipped, garbage appended, binary garbage, nothing.
fn json_damages(rng: &mut Rng, good: &[u8], n: usize) -> Vec<(&'static str, Vec<u8>)> {
    let mut v: Vec<(&'static str, Vec<u8>)> =
        vec![("empty", Vec::new()), ("binary garbage", rng.bytes(512))];
    for _ in 0..n {
        v.push(("cut", good[..rng.below(good.len() - 1)].to_vec()));
        let mut f = good.to_vec();
        let at = structural(rng, &f);
        f[at] ^= 1 << rng.below(8);
        v.push(("flipped structural byte", f));
        let mut t = good.to_vec();
        t.push(b'x');
        let k = rng.below(16);
        t.extend_from_slice(&rng.bytes(k));
        v.push(("garbage appended", t));
    }
    v
}

/// Job files of `nowa run`, damaged: every damage leaves an invalid job by construction
/// (a syntax error, a missing or unknown field, a value of the wrong type or out of range).
fn job_cases(rng: &mut Rng, dir: &Path, cases: &mut Vec<Case>) {
    // The undamaged jobs run: a refusal below is the damage's.
    for (name, text) in [("base.toml", JOB_TOML), ("base.json", JOB_JSON)] {
        let base = dir.join(name);
        std::fs::write(&base, text).expect("temp dir");
        let o = Command::new(env!("CARGO_BIN_EXE_nowa"))
            .args(["run", "-q"])
            .arg(&base)
            .output()
            .expect("run nowa");
        assert!(
            o.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    let spec = JOB_TOML.split("[spec]\n").nth(1).expect("a spec table");
    for _ in 0..4 {
        let n = rng.below(1000);
        // One value of the spec replaced by one out of its range.
        let (key, value) = match rng.below(5) {
            0 => ("op", format!("\"{}%\"", 101 + n)),
            1 => ("capacity", "\"0\"".to_owned()),
            2 => ("workload", format!("\"zipf:-{n}\"")),
            3 => ("policy", format!("\"bogus{n}\"")),
            _ => ("seed", format!("-{}", 1 + n)),
        };
        let out_of_range: String = JOB_TOML
            .lines()
            .map(|l| match l.split(" = ").next() {
                Some(k) if k == key => format!("{key} = {value}\n"),
                _ => format!("{l}\n"),
            })
            .collect();
        let toml: Vec<(&'static str, String)> = vec![
            ("empty", String::new()),
            ("no command", format!("[spec]\n{spec}")),
            (
                "unknown command",
                JOB_TOML.replace("\"sim\"", &format!("\"bogus{n}\"")),
            ),
            ("unknown key", format!("{JOB_TOML}bogus_{n} = 1\n")),
            (
                "wrong type",
                JOB_TOML.replace("seed = 7", &format!("seed = \"s{n}\"")),
            ),
            ("value out of range", out_of_range),
            ("duplicate key", format!("{JOB_TOML}seed = {n}\n")),
            (
                "unclosed string",
                JOB_TOML.replace("\"512MiB\"", "\"512MiB"),
            ),
            ("unclosed table", JOB_TOML.replace("[spec]", "[spec")),
            (
                "a trace instead",
                String::from_utf8_lossy(&fixture("nowa.csv")).into_owned(),
            ),
        ];
        for (damage, text) in toml {
            add(
                cases,
                dir,
                "job (toml)",
                damage,
                Want::Refused,
                None,
                Kind::JobToml,
                text.as_bytes(),
            );
        }
        let mut bytes = JOB_TOML.as_bytes().to_vec();
        let at = JOB_TOML.find("zipf").expect("a workload");
        bytes[at] = 0xff;
        add(
            cases,
            dir,
            "job (toml)",
            "invalid UTF-8",
            Want::Refused,
            None,
            Kind::JobToml,
            &bytes,
        );
        for (damage, bytes) in json_damages(rng, JOB_JSON.as_bytes(), 2) {
            add(
                cases,
                dir,
                "job (json)",
                damage,
                Want::Refused,
                None,
                Kind::JobJson,
                &bytes,
            );
        }
        let result = format!("{{\"nowa\": {{\"command\": \"sim\", \"seed\": {n}}}, \"waf\": 1.5}}");
        for (damage, text) in [
            ("an array", format!("[{JOB_JSON}]")),
            ("a result without its spec", result),
            ("no command", JOB_JSON.replace("\"command\": \"sim\", ", "")),
        ] {
            add(
                cases,
                dir,
                "job (json)",
                damage,
                Want::Refused,
                None,
                Kind::JobJson,
                text.as_bytes(),
            );
        }
    }
}

/// Results of `nowa ssdiq --json` (one small run on a simulated SSD), damaged for
/// `nowa ssdiq report`.
fn ssdiq_cases(rng: &mut Rng, dir: &Path, cases: &mut Vec<Case>) {
    let out = dir.join("ssdiq-base");
    let mut args = vec!["ssdiq", "sim:64MiB", "--json", "--plot-format", "svg"];
    args.extend_from_slice(common::SSDIQ_FAST);
    args.extend(["--out", common::arg(&out)]);
    common::nowa_ok(&args);
    let o = Command::new(env!("CARGO_BIN_EXE_nowa"))
        .args(["ssdiq", "report"])
        .arg(out.join("ssdiq.json"))
        .output()
        .expect("run nowa");
    assert!(
        o.status.success(),
        "the undamaged result: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let good = std::fs::read(out.join("ssdiq.json")).expect("ssdiq.json");
    let mut variants = json_damages(rng, &good, 12);
    let text = String::from_utf8(good.clone()).expect("JSON is UTF-8");
    variants.push(("an empty object", b"{}".to_vec()));
    variants.push(("a job file instead", JOB_JSON.as_bytes().to_vec()));
    // The first number of the document as a string: a field of the wrong type.
    if let Some(at) = text.find(|c: char| c.is_ascii_digit()) {
        let end = at
            + text[at..]
                .find(|c: char| !c.is_ascii_digit() && c != '.')
                .unwrap_or(0);
        variants.push((
            "wrong type",
            format!("{}\"{}\"{}", &text[..at], &text[at..end], &text[end..]).into_bytes(),
        ));
    }
    for (damage, bytes) in variants {
        add(
            cases,
            dir,
            "ssdiq result",
            damage,
            Want::Refused,
            None,
            Kind::Ssdiq,
            &bytes,
        );
    }
}

/// The command lines that read `c` (the file's name is the last argument or a flag's value).
fn commands(c: &Case, i: usize, out: &Path) -> Vec<(&'static str, Vec<String>)> {
    let f = c.path.display().to_string();
    let o = out.display().to_string();
    let s = |v: &[&str]| v.iter().map(|x| (*x).to_owned()).collect::<Vec<_>>();
    match c.kind {
        Kind::JobToml | Kind::JobJson => return vec![("run", s(&["run", "-q", &f]))],
        Kind::Ssdiq => return vec![("ssdiq report", s(&["ssdiq", "report", &f]))],
        Kind::Trace => {}
        Kind::Log => {
            return vec![
                ("frozen stats", s(&["frozen", "stats", "--writes", &f])),
                (
                    "frozen replay",
                    s(&["frozen", "replay", "--schemes", "nosep", "--writes", &f]),
                ),
            ]
        }
    }
    let fmt = c.format.unwrap_or("csv");
    let mut v = vec![("trace stats", s(&["trace", "stats", "--format", fmt, &f]))];
    let convert = s(&[
        "trace",
        "convert",
        "--force",
        "--format",
        fmt,
        &f,
        &format!("{o}.nwt"),
    ]);
    // plan and from-trace recognize the format: a whole trace of another format is a good
    // trace to them.
    let cycle = if c.damage == "another format" { 2 } else { 4 };
    let other = match (c.want, i % cycle) {
        (Want::Counted, _) | (_, 0) => ("trace convert", convert),
        (_, 1) => (
            "sim --trace",
            s(&[
                "sim",
                "-q",
                "--pages-per-block",
                "64",
                "--blocks-per-superblock",
                "2",
                "--trace-format",
                fmt,
                "--trace",
                &f,
            ]),
        ),
        (_, 2) => (
            "plan run --trace",
            s(&[
                "plan",
                "run",
                "--drive-writes",
                "0",
                "--blocks-per-chip",
                "64",
                "--trace",
                &f,
            ]),
        ),
        _ => (
            "frozen from-trace",
            s(&[
                "frozen",
                "from-trace",
                "--force",
                "--trace",
                &f,
                "--out",
                &format!("{o}-log"),
            ]),
        ),
    };
    v.push(other);
    v
}

struct Outcome {
    code: Option<i32>,
    stderr: String,
    secs: f64,
}

fn run(args: &[String]) -> Outcome {
    let t = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_nowa"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn nowa");
    let mut stderr = String::new();
    let mut pipe = child.stderr.take().expect("piped");
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = pipe.read_to_string(&mut s);
        s
    });
    let status = loop {
        if let Some(st) = child.try_wait().expect("wait for nowa") {
            break Some(st);
        }
        if t.elapsed() > TIMEOUT {
            child.kill().expect("kill a hung nowa");
            child.wait().expect("reap a hung nowa");
            break None;
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    stderr.push_str(&reader.join().expect("stderr reader"));
    Outcome {
        code: status.and_then(|s| s.code()),
        stderr,
        secs: t.elapsed().as_secs_f64(),
    }
}

/// What is wrong with an outcome, if anything.
fn defect(c: &Case, o: &Outcome) -> Option<String> {
    let name = c
        .path
        .file_name()
        .and_then(|n| n.to_str())
        .expect("ASCII name");
    let errors: Vec<&str> = o
        .stderr
        .lines()
        .filter(|l| l.starts_with("nowa: error"))
        .collect();
    if o.stderr.contains("panicked") {
        return Some("panic".into());
    }
    match (c.want, o.code) {
        (_, None) => Some(format!(
            "no exit code (hang or signal) after {:.1} s",
            o.secs
        )),
        (Want::Refused, Some(2)) if errors.len() == 1 && errors[0].contains(name) => None,
        (Want::Refused, Some(2)) => Some("exit 2 without one error line naming the file".into()),
        (Want::Refused, Some(0)) => Some("accepted (exit 0)".into()),
        (Want::Counted, Some(0)) if o.stderr.contains(&format!("{name}: skipped 1 unreadable")) => {
            None
        }
        (_, Some(c)) => Some(format!("exit {c}")),
    }
}

#[test]
fn damaged_files_are_refused_or_counted_by_every_reader_and_command() {
    let seed = std::env::var("NOWA_DAMAGE_SEED").map_or(26, |s| s.parse().expect("a u64 seed"));
    println!("seed {seed}");
    let mut rng = Rng(seed | 1);
    let dir = tempfile::tempdir().expect("temp dir");
    let mut cases = Vec::new();
    for _round in 0..2 {
        text_cases(&mut rng, dir.path(), &mut cases);
    }
    binary_cases(&mut rng, dir.path(), &mut cases);
    log_cases(&mut rng, dir.path(), &mut cases);
    job_cases(&mut rng, dir.path(), &mut cases);
    ssdiq_cases(&mut rng, dir.path(), &mut cases);
    let runs: Vec<(usize, &'static str, Vec<String>)> = cases
        .iter()
        .enumerate()
        .flat_map(|(i, c)| {
            let out = dir.path().join(format!("out{i}"));
            commands(c, i, &out)
                .into_iter()
                .map(move |(n, a)| (i, n, a))
        })
        .collect();
    let outcomes = run_all(&runs);
    report(&cases, &runs, &outcomes);
}

/// Runs every command line on two threads; outcomes in order.
fn run_all(runs: &[(usize, &'static str, Vec<String>)]) -> Vec<Outcome> {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let out = std::sync::Mutex::new((0..runs.len()).map(|_| None).collect::<Vec<_>>());
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some((_, _, args)) = runs.get(i) else {
                    break;
                };
                let o = run(args);
                out.lock().expect("no runner panicked")[i] = Some(o);
            });
        }
    });
    out.into_inner()
        .expect("no runner panicked")
        .into_iter()
        .map(|o| o.expect("every line ran"))
        .collect()
}

/// Prints the tables (by reader, by command: runs, refused, counted, defects) and asserts
/// no defect.
fn report(cases: &[Case], runs: &[(usize, &'static str, Vec<String>)], outcomes: &[Outcome]) {
    let mut by_reader: BTreeMap<String, [u64; 5]> = BTreeMap::new();
    let mut by_cmd: BTreeMap<&str, [u64; 5]> = BTreeMap::new();
    for c in cases {
        let family = c.reader.split('.').next().unwrap_or("").to_owned();
        by_reader.entry(family).or_default()[0] += 1;
    }
    let mut failures = Vec::new();
    for ((i, cmd, args), o) in runs.iter().zip(outcomes) {
        let c = &cases[*i];
        let family = c.reader.split('.').next().unwrap_or("").to_owned();
        let col = match defect(c, o) {
            None if c.want == Want::Refused => 2,
            None => 3,
            Some(d) => {
                let last = o.stderr.lines().last().unwrap_or("");
                let line = args.join(" ");
                failures.push(format!(
                    "{} ({}): nowa {line}: {d}\n  {last}",
                    c.damage, c.reader
                ));
                4
            }
        };
        for row in [
            by_reader.entry(family).or_default(),
            by_cmd.entry(cmd).or_default(),
        ] {
            row[1] += 1;
            row[col] += 1;
        }
    }
    let head = "| runs | refused: exit 2, one line naming the file | accepted, skipped line said | defects |";
    println!("| reader (plain, .gz, .xz, .zst) | damaged files {head}\n|---|---|---|---|---|---|");
    for (reader, r) in &by_reader {
        println!(
            "| {reader} | {} | {} | {} | {} | {} |",
            r[0], r[1], r[2], r[3], r[4]
        );
    }
    println!("\n| command {head}\n|---|---|---|---|---|");
    for (cmd, r) in &by_cmd {
        println!("| nowa {cmd} | {} | {} | {} | {} |", r[1], r[2], r[3], r[4]);
    }
    let files = cases.len();
    let slowest = outcomes.iter().map(|o| o.secs).fold(0.0, f64::max);
    println!(
        "\n{files} damaged files, {} runs, {} defects, slowest run {slowest:.2} s",
        runs.len(),
        failures.len()
    );
    assert!(files >= 500, "{files} damaged files");
    assert!(
        failures.is_empty(),
        "{} defects:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
