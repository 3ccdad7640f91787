//! `nowa vssd`: bad flags, and (where /dev/fuse exists) data integrity through the mount, a
//! remount of a backing file, a killed daemon, nowa sim's WAF reproduced by O_DIRECT writes,
//! TRIM lowering WAF, and sqlite3 on ext4 on a loop device over the disk.

mod common;
mod vssd_common;
use common::{assert_usage_errors, nowa};
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::process::Command;
use vssd_common::{aligned, fuse_available, loop_tools, run, Daemon, Mounted};

const PAGE: u64 = 4096;
/// The geometry flag of the loop-device tests' vssds, for the daemon and for the replay.
const BPS: [&str; 2] = ["--blocks-per-superblock", "2"];

#[test]
fn bad_flags_exit_2_naming_the_flag() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let full = tmp.path().join("full");
    std::fs::create_dir(&full).expect("mkdir");
    std::fs::write(full.join("x"), b"x").expect("file");
    let existing = tmp.path().join("backing.img");
    std::fs::write(&existing, b"data").expect("file");
    let dir = tmp.path().join("mnt");
    let (d, f, b) = (
        dir.to_str().expect("utf-8"),
        full.to_str().expect("utf-8"),
        existing.to_str().expect("utf-8"),
    );
    assert_usage_errors(&[
        vec!["vssd", "serve", "--dir", d, "--capacity", "0"],
        vec!["vssd", "serve", "--dir", d, "--sim-mode", "zns"],
        vec!["vssd", "serve", "--dir", d, "--sim-mode", "fdp:0"],
        vec!["vssd", "serve", "--dir", d, "--timing", "warp"],
        vec!["vssd", "serve", "--dir", d, "--files", "0"],
        vec!["vssd", "serve", "--dir", d, "--op", "-7%"],
        vec!["vssd", "serve", "--dir", d, "--capacity", "10TiB"],
        vec!["vssd", "serve", "--dir", f],
        vec!["vssd", "serve", "--dir", d, "--backing", b],
        vec!["vssd", "serve", "--dir", d, "--record-trace", b],
        vec!["vssd", "stats", d],
        vec!["vssd", "stop", d],
        vec!["vssd", "attach", d],
    ]);
    for (args, flag) in [
        (vec!["--dir", f], "--dir"),
        (vec!["--dir", d, "--backing", b], "--backing"),
        (vec!["--dir", d, "--capacity", "10TiB"], "--capacity"),
        (vec!["--dir", d, "--sim-mode", "zns"], "--sim-mode"),
        (vec!["--dir", d, "--record-trace", b], "--record-trace"),
    ] {
        let mut a = vec!["vssd", "serve"];
        a.extend(args);
        let err = String::from_utf8_lossy(&nowa(&a).stderr).into_owned();
        assert!(err.contains(flag), "{a:?}: {err}");
    }
    assert_eq!(
        std::fs::read(&existing).expect("read"),
        b"data",
        "untouched"
    );
    assert!(!dir.exists() || std::fs::read_dir(&dir).expect("dir").next().is_none());
}

#[test]
fn data_survives_fsync_punch_and_a_remount_of_the_backing_file() {
    if !fuse_available("data_survives_fsync_punch_and_a_remount_of_the_backing_file") {
        return;
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let (dir, img) = (tmp.path().join("mnt"), tmp.path().join("disk.img"));
    let img_s = img.to_str().expect("utf-8");
    let args = [
        "--capacity",
        "64MiB",
        "--blocks-per-superblock",
        "1",
        "--backing",
        img_s,
    ];
    let d = Daemon::start(&dir, &args);
    let pattern: Vec<u8> = (0..300_000u32).map(|i| (i * 7 % 251) as u8).collect();
    {
        // Buffered, unaligned: partial pages are merged with their neighbours.
        let f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(dir.join("disk"))
            .expect("open");
        f.write_all_at(&pattern, 12_345).expect("write");
        f.write_all_at(b"tail", 64 * 1024 * 1024 - 4)
            .expect("last bytes");
        f.sync_all().expect("fsync");
        let mut back = vec![0u8; pattern.len()];
        f.read_exact_at(&mut back, 12_345).expect("read");
        assert_eq!(back, pattern, "read back what was written");
        assert!(
            f.write_all_at(b"x", 64 * 1024 * 1024).is_err(),
            "past the end"
        );
    }
    assert!(d.stat("flushes") >= 1, "fsync reached the device");
    // Punch 2 pages inside the pattern: they read as zeroes, the rest is intact.
    let st = Command::new("fallocate")
        .args(["-p", "-o", "24576", "-l", "8192"])
        .arg(dir.join("disk"))
        .status()
        .expect("fallocate");
    assert!(st.success(), "fallocate --punch-hole");
    assert_eq!(d.stat("trim_bytes"), 8192);
    // O_TRUNC is ignored, as on a block device node; other sizes are refused.
    let f = std::fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(dir.join("disk"))
        .expect("open with O_TRUNC");
    assert!(f.set_len(4096).is_err(), "a disk keeps its size");
    drop(f);
    assert_eq!(
        std::fs::metadata(dir.join("disk")).expect("stat").len(),
        64 << 20
    );
    let summary = d.stop();
    assert!(summary.contains("WAF"), "{summary}");
    // Remount: without --force the existing backing file is refused, with it the data is kept.
    let refused = nowa(&[
        "vssd",
        "serve",
        "--dir",
        dir.to_str().expect("utf-8"),
        "--backing",
        img_s,
    ]);
    assert_eq!(refused.status.code(), Some(2));
    let d = Daemon::start(&dir, &[&args[..], &["--force"]].concat());
    let f = std::fs::File::open(dir.join("disk")).expect("open");
    let mut back = vec![0u8; pattern.len()];
    f.read_exact_at(&mut back, 12_345).expect("read");
    let mut want = pattern.clone();
    want[24576 - 12_345..32768 - 12_345].fill(0);
    assert_eq!(back, want, "the data and the hole survive a remount");
    let mut tail = [0u8; 4];
    f.read_exact_at(&mut tail, 64 * 1024 * 1024 - 4)
        .expect("tail");
    assert_eq!(&tail, b"tail");
    drop(f);
    assert_eq!(
        d.stat("host_write_bytes"),
        0,
        "the reload is not counted as host writes"
    );
    d.stop();
}

#[test]
fn a_killed_daemon_leaves_a_mount_that_stop_removes() {
    if !fuse_available("a_killed_daemon_leaves_a_mount_that_stop_removes") {
        return;
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("mnt");
    let mut d = Daemon::start(
        &dir,
        &["--capacity", "64MiB", "--blocks-per-superblock", "1"],
    );
    d.child.kill().expect("kill -9");
    d.child.wait().expect("reap");
    assert!(
        std::fs::read_to_string(dir.join(".stats")).is_err(),
        "dead mount"
    );
    let out = nowa(&["vssd", "stop", dir.to_str().expect("utf-8")]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").expect("mountinfo");
    assert!(
        !mounts.contains(dir.to_str().expect("utf-8")),
        "mount removed"
    );
    std::fs::write(dir.join("plain"), b"ok").expect("a plain directory again");
}

/// `nowa vssd serve --bench` prints the CPU cost of a write through the mount and the SSD WAF
/// of the timed writes: on a 64 MiB vssd, 100,000 random writes (6 capacities) run GC while
/// they are timed, so the WAF is well above 1 (before, the output did not say whether GC ran).
#[test]
fn bench_prints_the_cost_per_write_and_the_waf_of_the_timed_writes() {
    let name = "bench_prints_the_cost_per_write_and_the_waf_of_the_timed_writes";
    if !fuse_available(name) {
        return;
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("mnt");
    let out = common::nowa_ok(&[
        "vssd",
        "serve",
        "--dir",
        dir.to_str().expect("utf-8"),
        "--capacity",
        "64MiB",
        "--bench",
        "--bench-writes",
        "100000",
        BPS[0],
        BPS[1],
    ]);
    println!("{out}");
    let cpu = field_before(&out, " us CPU per 4 KiB write");
    let waf = field_after(&out, "SSD WAF ");
    assert!(cpu > 0.0, "{out}");
    assert!(waf > 1.5, "GC ran while the writes were timed: {out}");
}

/// The number just before `tail` in `text`.
fn field_before(text: &str, tail: &str) -> f64 {
    let head = &text[..text
        .find(tail)
        .unwrap_or_else(|| panic!("no {tail:?}: {text}"))];
    let word = head.split_whitespace().last().expect("a number");
    word.parse()
        .unwrap_or_else(|_| panic!("{word:?} before {tail:?}"))
}

/// The number just after `head` in `text`.
fn field_after(text: &str, head: &str) -> f64 {
    let at = text
        .find(head)
        .unwrap_or_else(|| panic!("no {head:?}: {text}"))
        + head.len();
    let word = text[at..].split_whitespace().next().expect("a number");
    word.parse()
        .unwrap_or_else(|_| panic!("{word:?} after {head:?}"))
}

/// xorshift: uniform enough for page numbers.
fn next(x: &mut u64) -> u64 {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    *x
}

/// `n` uniform random 4 KiB O_DIRECT writes into pages [0, pages).
fn random_writes(f: &std::fs::File, pages: u64, n: u64, seed: &mut u64) {
    let (buf, o) = aligned(4096, 0x5a);
    for _ in 0..n {
        f.write_all_at(&buf[o..o + 4096], next(seed) % pages * PAGE)
            .expect("O_DIRECT write");
    }
}

/// SSD WAF between two stats snapshots: flash bytes programmed / host bytes written.
fn waf_between(a: &serde_json::Value, b: &serde_json::Value) -> f64 {
    let d = |k: &str| (b[k].as_u64().expect(k) - a[k].as_u64().expect(k)) as f64;
    d("media_write_bytes") / d("host_write_bytes")
}

#[test]
fn random_direct_writes_reproduce_nowa_sims_waf_and_trim_lowers_it() {
    if !fuse_available("random_direct_writes_reproduce_nowa_sims_waf_and_trim_lowers_it") {
        return;
    }
    let dev = ["--capacity", "128MiB", "--blocks-per-superblock", "2"];
    let sim = common::nowa_json(&[&["sim", "--json", "-q"][..], &dev[..]].concat());
    let sim_waf = sim["waf"].as_f64().expect("sim waf");
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("mnt");
    let trace = tmp.path().join("received.csv");
    let record = ["--record-trace", trace.to_str().expect("utf-8")];
    let d = Daemon::start(&dir, &[&dev[..], &record[..]].concat());
    let f = d.disk();
    let pages = (128 << 20) / PAGE;
    // As nowa sim: a sequential fill, 2 capacities of warm-up, 2 measured.
    let (buf, o) = aligned(1 << 20, 1);
    for i in 0..(128 << 20) / (1 << 20) {
        f.write_all_at(&buf[o..o + (1 << 20)], i << 20)
            .expect("fill");
    }
    let mut seed = 42;
    random_writes(&f, pages, 2 * pages, &mut seed);
    let s0 = d.stats();
    random_writes(&f, pages, 2 * pages, &mut seed);
    let s1 = d.stats();
    let waf = waf_between(&s0, &s1);
    assert!(
        (waf / sim_waf - 1.0).abs() < 0.03,
        "vssd WAF {waf:.3} vs nowa sim {sim_waf:.3}"
    );
    // TRIM half the disk, then write only the other half: the FTL has the trimmed half as
    // spare, so WAF falls.
    let st = Command::new("fallocate")
        .args([
            "-p",
            "-o",
            &(64u64 << 20).to_string(),
            "-l",
            &(64u64 << 20).to_string(),
        ])
        .arg(dir.join("disk"))
        .status()
        .expect("fallocate");
    assert!(st.success());
    random_writes(&f, pages / 2, pages, &mut seed);
    let s2 = d.stats();
    random_writes(&f, pages / 2, pages, &mut seed);
    let trimmed_waf = waf_between(&s2, &d.stats());
    println!("vssd WAF {waf:.3}, nowa sim {sim_waf:.3}, after trimming half {trimmed_waf:.3}");
    assert!(trimmed_waf < waf / 2.0, "{trimmed_waf} vs {waf}");
    let whole = d.stats();
    drop(f);
    d.stop();
    replay_matches_the_vssd(&trace, &dev, &whole);
}

/// `nowa sim --trace` of the stream a vssd recorded (`--record-trace`: every page write and
/// trim its FTL received) on the same device, once through from empty, gives the vssd's WAF
/// over the whole session within 1%: the fill, the random writes, the TRIM and the writes
/// after it.
fn replay_matches_the_vssd(trace: &Path, dev: &[&str], whole: &serde_json::Value) {
    let host_pages = whole["host_write_bytes"].as_u64().expect("host") / PAGE;
    let vssd_waf =
        whole["media_write_bytes"].as_u64().expect("media") as f64 / (host_pages * PAGE) as f64;
    let replay_waf = vssd_common::replay_waf(trace, 128 << 20, &dev[2..], host_pages);
    println!(
        "vssd WAF over the session {vssd_waf:.4}, nowa sim --trace of its stream {replay_waf:.4}"
    );
    assert!(
        (replay_waf / vssd_waf - 1.0).abs() < 0.01,
        "vssd {vssd_waf:.4} vs replay {replay_waf:.4}"
    );
}

/// Field `i` (0-based) of /sys/block/DEV/stat.
fn block_stat(dev: &str, i: usize) -> u64 {
    let name = Path::new(dev)
        .file_name()
        .expect("name")
        .to_str()
        .expect("utf-8");
    let s = std::fs::read_to_string(format!("/sys/block/{name}/stat")).expect("stat");
    s.split_whitespace()
        .nth(i)
        .expect("field")
        .parse()
        .expect("number")
}

/// A vssd, a loop device over its disk, ext4 on it mounted; `engine` runs on the mounted
/// directory; then the vssd's host byte counts are checked against the loop device's
/// /sys/block counters, the vssd is stopped (which detaches the loop device), and the
/// block stream it received (`--record-trace`) is replayed with `nowa sim --trace`: the
/// replay's WAF must be the vssd's within 1%. A file system and a database do not send the
/// same stream twice (journal commit timing, writeback), so the check replays the stream of
/// this very run, as the vssd received it. The vssd's counters at the unmount, or None where
/// the test is skipped (it said why).
fn on_ext4(
    name: &str,
    tools: &[&str],
    mib: u64,
    engine: impl FnOnce(&Path),
) -> Option<serde_json::Value> {
    if !fuse_available(name) {
        return None;
    }
    if let Err(why) = loop_tools(tools) {
        println!("SKIPPED {name}: {why}");
        return None;
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let (dir, fs) = (tmp.path().join("mnt"), tmp.path().join("fs"));
    let trace = tmp.path().join("received.csv");
    let record = trace.to_str().expect("utf-8");
    let cap = format!("{mib}MiB");
    // Units of 2 blocks (2 MiB), so a 64 MiB vssd has the units its GC needs.
    let d = Daemon::start(
        &dir,
        &["--capacity", &cap, "--record-trace", record, BPS[0], BPS[1]],
    );
    let dev = run(Command::new(env!("CARGO_BIN_EXE_nowa"))
        .args(["vssd", "attach"])
        .arg(&dir))
    .trim()
    .to_owned();
    let (written0, read0) = (block_stat(&dev, 6), block_stat(&dev, 2));
    assert_eq!(
        d.stat("host_write_bytes"),
        0,
        "nothing written before the loop device"
    );
    // Inode tables zeroed at mkfs, not by ext4lazyinit after the mount: the kernel sends
    // lazyinit's write-zeroes to the loop device's file as PUNCH_HOLE, which the vssd cannot
    // tell from a discard (it counts a trim, /sys/block counts a write).
    let lazy = "lazy_itable_init=0,lazy_journal_init=0";
    run(Command::new("mkfs.ext4").args(["-q", "-E", lazy, &dev]));
    std::fs::create_dir(&fs).expect("mkdir");
    let mounted = Mounted::mount(&dev, &fs);
    engine(&fs);
    mounted.unmount();
    let s = d.stats();
    // A reused loop device keeps its counters from earlier attachments: compare deltas.
    let sectors_written = block_stat(&dev, 6) - written0;
    let sectors_read = block_stat(&dev, 2) - read0;
    println!(
        "{name}: vssd host bytes written {}, read {}; {dev}: {} and {} (sectors x 512); SSD WAF {}",
        s["host_write_bytes"],
        s["host_read_bytes"],
        sectors_written * 512,
        sectors_read * 512,
        s["waf"]
    );
    assert_eq!(s["host_write_bytes"].as_u64(), Some(sectors_written * 512));
    assert_eq!(s["host_read_bytes"].as_u64(), Some(sectors_read * 512));
    assert!(s["flushes"].as_u64().expect("flushes") > 0);
    let summary = d.stop();
    assert!(summary.contains("WAF"), "{summary}");
    let still = Command::new("losetup").arg(&dev).output();
    assert!(
        still.map(|o| !o.status.success()).unwrap_or(true),
        "stop detached {dev}"
    );
    received_stream_replays_at_the_vssds_waf(name, &trace, mib << 20, &s);
    Some(s)
}

/// `nowa sim --trace` of the stream the vssd recorded, on a device of its `capacity` from
/// empty, once through: the same page writes, and the vssd's SSD WAF within 1%.
/// The FTL's page writes are the media writes less the GC copies: host_write_bytes also
/// counts write-zeroes, which reach the FTL as trims.
fn received_stream_replays_at_the_vssds_waf(
    name: &str,
    trace: &Path,
    capacity: u64,
    s: &serde_json::Value,
) {
    let media = s["media_write_bytes"].as_u64().expect("media");
    let ftl_pages = (media - s["gc_copy_bytes"].as_u64().expect("gc")) / PAGE;
    let vssd_waf = s["waf"].as_f64().expect("waf");
    assert!(
        ((media / PAGE) as f64 / ftl_pages as f64 / vssd_waf - 1.0).abs() < 1e-9,
        "waf is the FTL's flash pages over its host pages"
    );
    let replay = vssd_common::replay_waf(trace, capacity, &BPS, ftl_pages);
    println!("{name}: SSD WAF {vssd_waf:.4}, nowa sim --trace of the received stream {replay:.4}");
    assert!(
        (replay / vssd_waf - 1.0).abs() < 0.01,
        "{name}: vssd {vssd_waf:.4} vs replay {replay:.4}"
    );
    // Where the vssd ran GC, its copies (WAF - 1) agree within 1% too: a replay that ran no
    // GC at all would pass the check above on a WAF near 1.
    if vssd_waf > 1.001 {
        assert!(
            ((replay - 1.0) / (vssd_waf - 1.0) - 1.0).abs() < 0.01,
            "{name}: GC copies per host page {:.5} vs replay {:.5}",
            vssd_waf - 1.0,
            replay - 1.0
        );
    }
}

#[test]
fn sqlite3_on_ext4_on_a_loop_device_and_the_byte_counts_match() {
    let name = "sqlite3_on_ext4_on_a_loop_device_and_the_byte_counts_match";
    // A 64 MiB vssd, and a database copied to a new file and the old one deleted, round
    // after round: ext4 (no discard) places each copy on other blocks, so the vssd fills
    // and runs GC, and the replay has GC to agree on (on 512 MiB both were exactly 1.0).
    let ran = on_ext4(name, &["sqlite3"], 64, |fs| {
        let sql = "pragma journal_mode=wal; create table t(a integer primary key, b text); \
                   with recursive c(x) as (select 1 union all select x+1 from c where x<20000) \
                   insert into t select x, hex(randomblob(100)) from c; \
                   delete from t where a % 2 = 0; pragma integrity_check; select count(*) from t;";
        let got = run(Command::new("sqlite3").arg(fs.join("t.db")).arg(sql));
        assert!(got.ends_with("ok\n10000\n"), "sqlite3 said: {got}");
        for round in 0..40 {
            let next = fs.join("next.db");
            let sql = format!(
                "update t set b = hex(randomblob(150)) where a % 3 = {}; vacuum into '{}';",
                round % 3,
                next.display()
            );
            run(Command::new("sqlite3").arg(fs.join("t.db")).arg(sql));
            std::fs::rename(&next, fs.join("t.db")).expect("the copy replaces the database");
        }
        let got = run(Command::new("sqlite3")
            .arg(fs.join("t.db"))
            .arg("pragma integrity_check; select count(*) from t;"));
        assert_eq!(got, "ok\n10000\n", "sqlite3 said: {got}");
    });
    // The rounds above fill the 64 MiB vssd: it ran GC (SSD WAF 1.033 on this machine).
    if let Some(s) = ran {
        assert!(s["gc_copy_bytes"].as_u64().expect("gc") > 0, "no GC: {s}");
    }
}

/// PostgreSQL's rounds on its vssd: how many, and the rows of its table.
const PG_ROUNDS: u32 = 24;
const PG_ROWS: u32 = 100_000;

#[test]
fn postgresql_on_ext4_on_a_loop_device_and_the_byte_counts_match() {
    let name = "postgresql_on_ext4_on_a_loop_device_and_the_byte_counts_match";
    let user = Command::new("id").arg("postgres").output();
    if !user.is_ok_and(|o| o.status.success()) {
        println!("SKIPPED {name}: no postgres user (PostgreSQL refuses to run as root)");
        return;
    }
    // A 128 MiB vssd, and rounds of an update of a third of the rows, `vacuum full` (the
    // table and its index rewritten into new files, the old ones removed) and a checkpoint:
    // ext4 (no discard) puts each rewrite on other blocks, so the vssd fills and runs GC,
    // and the replay has GC to agree on (on 512 MiB without the rounds both were 1.0000).
    let tools = ["initdb", "pg_ctl", "psql", "su"];
    let Some(s) = on_ext4(name, &tools, 128, |fs| {
        run(Command::new("chown").arg("postgres").arg(fs));
        let f = fs.to_str().expect("utf-8");
        // WAL kept to 32-64 MiB (16 MiB segments), so it fits beside two copies of the table.
        let opts = "-k {f} -p 55433 -c listen_addresses= -c min_wal_size=32MB -c max_wal_size=64MB";
        let script = format!(
            "initdb -D {f}/data >/dev/null && \
             pg_ctl -D {f}/data -o '{opts}' -l {f}/log start -w >/dev/null || exit 1; \
             P='psql -h {f} -p 55433 -d postgres -qAt -v ON_ERROR_STOP=1'; \
             $P -c 'create table t(a int primary key, b text)' \
               -c 'insert into t select g, md5(g::text) from generate_series(1,{PG_ROWS}) g' \
               -c 'checkpoint'; r=$?; i=0; \
             while [ $r = 0 ] && [ $i -lt {PG_ROUNDS} ]; do \
               $P -c \"update t set b = md5(b) where a % 3 = $((i % 3))\" \
                 -c 'vacuum full t' -c 'checkpoint'; r=$?; i=$((i + 1)); done; \
             [ $r = 0 ] && $P -c 'select count(*) from t'; r=$?; \
             pg_ctl -D {f}/data stop -w >/dev/null; exit $r",
            opts = opts.replace("{f}", f)
        );
        let got = run(Command::new("su").args(["postgres", "-s", "/bin/sh", "-c", &script]));
        assert_eq!(got.trim(), PG_ROWS.to_string(), "psql said: {got}");
    }) else {
        return;
    };
    assert!(
        s["gc_copy_bytes"].as_u64().expect("gc_copy_bytes") > 0,
        "PostgreSQL's rounds filled the vssd and it ran GC: {s}"
    );
}
