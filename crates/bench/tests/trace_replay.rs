//! Trace replay (`nowa sim --trace`): the device sized from the trace's live data, discarded
//! addresses reused, future-knowledge placement from a trace, FAR over the measured phase.
use nowa_bench::replay::{self, ReplayResult, ReplaySpec, VolumeMode};
use nowa_flash::{FtlConfig, GcUnit, PlacementKind};
use std::fmt::Write as _;
use std::path::Path;

const PAGE: u64 = 4096;

/// A nowa CSV trace from (op, first page, pages) requests.
fn write_trace(path: &Path, reqs: &[(char, u64, u64)]) {
    let mut s = String::from("ts_sec,op,offset_bytes,len_bytes\n");
    for (i, &(op, page, n)) in reqs.iter().enumerate() {
        writeln!(s, "{}.0,{op},{},{}", i, page * PAGE, n * PAGE).expect("a String takes text");
    }
    std::fs::write(path, s).expect("the temporary directory takes the trace");
}

fn spec(trace: &Path, fill: f64) -> ReplaySpec {
    ReplaySpec {
        trace: trace.to_path_buf(),
        format: None,
        ftl: FtlConfig {
            pages_per_block: 16,
            blocks_per_superblock: 1,
            gc_unit: GcUnit::Superblock,
            op: 0.25,
            track_far: true,
            ..FtlConfig::default()
        },
        capacity_pages: None,
        fill,
        warmup: 1.0,
        volume: 3.0,
        interval: 0.5,
        precondition: true,
        volumes: VolumeMode::PerVolume,
        only_volume: None,
        seed: 3,
    }
}

fn run(s: &ReplaySpec) -> ReplayResult {
    replay::run(s, None).unwrap_or_else(|e| panic!("{}: {e}", s.trace.display()))
}

/// A pseudo-random permutation step: page i of `n` -> (i * 7919) % n (7919 is prime).
fn scatter(i: u64, n: u64) -> u64 {
    (i * 7919) % n
}

/// SQLite's shape: a table of 1000 pages updated at random, and a WAL of 300 pages written
/// sequentially, then discarded (checkpointed and truncated), the next one at new addresses.
fn table_and_wal(path: &Path) {
    let mut reqs = Vec::new();
    for i in 0..1000 {
        reqs.push(('W', i, 1));
    }
    for wal in 0..10u64 {
        let base = 100_000 + wal * 300;
        for i in 0..300 {
            reqs.push(('W', base + i, 1));
        }
        for i in 0..300 {
            reqs.push(('W', scatter(wal * 300 + i, 1000), 1));
        }
        reqs.push(('D', base, 300));
    }
    write_trace(path, &reqs);
}

#[test]
fn device_is_sized_from_the_peak_live_data_not_every_address_written() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("wal.csv");
    table_and_wal(&t);
    let r = run(&spec(&t, 0.8));
    let d = &r.devices[0];
    assert_eq!(d.footprint_pages, 1000 + 10 * 300);
    assert_eq!(d.live_pages, 1000 + 300, "the table and one WAL at a time");
    assert_eq!(d.live_end_pages, 1000);
    // ceil(1300 / 0.8) = 1625 logical pages, not 4000 / 0.8.
    assert_eq!(d.sim.layout.logical_pages, 1625);
    assert_eq!(d.sim.in_use_pages, 1300);
    assert!(
        d.sim.measured.trimmed_pages > 0,
        "the WALs' discards reached the FTL"
    );
}

/// A looped replay's second pass starts with the pages the first left live: writing A,
/// discarding it, then writing B has one range live in the first pass and two in the next
/// (A is written again while B still holds its pages).
#[test]
fn the_peak_covers_the_looped_replay() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("ab.csv");
    write_trace(&t, &[('W', 0, 64), ('D', 0, 64), ('W', 1000, 64)]);
    let mut s = spec(&t, 1.0);
    s.ftl.op = 0.5;
    let r = run(&s);
    let d = &r.devices[0];
    assert_eq!(
        (d.footprint_pages, d.live_pages, d.live_end_pages),
        (128, 128, 64)
    );
    assert_eq!(d.sim.layout.logical_pages, 128);
    assert!(r.passes > 3.0, "the trace was looped: {}", r.passes);
}

/// A log that always writes new addresses and discards the old ones replays on a device far
/// smaller than its footprint: the discarded addresses' device pages are reused.
#[test]
fn discarded_addresses_are_reused() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("log.csv");
    let mut reqs = Vec::new();
    for seg in 0..40u64 {
        reqs.push(('W', seg * 1000, 128));
        if seg > 0 {
            reqs.push(('D', (seg - 1) * 1000, 128));
        }
    }
    write_trace(&t, &reqs);
    let mut s = spec(&t, 0.5);
    s.precondition = false;
    let r = run(&s);
    let d = &r.devices[0];
    assert_eq!(d.footprint_pages, 40 * 128);
    // Two segments live at once; in the looped replay the last one survives to the next
    // pass's first two: three.
    assert_eq!(d.live_pages, 3 * 128);
    assert_eq!(d.sim.layout.logical_pages, 768);
    assert!(d.sim.layout.logical_pages < d.footprint_pages);
    assert!(
        d.sim.waf < 1.05,
        "a sequential log with discards moves nothing: {}",
        d.sim.waf
    );
}

/// Hot and cold pages mixed: 80% of the writes go to 32 of 2000 pages (a hot page lives
/// about 40 writes, two or three units of 16 pages: FK's classes tell it from cold data).
fn hot_cold(path: &Path) {
    let mut reqs = Vec::new();
    for i in 0..2000 {
        reqs.push(('W', i, 1));
    }
    for i in 0..20_000u64 {
        let p = if i % 5 == 4 {
            32 + scatter(i, 1968)
        } else {
            scatter(i, 32)
        };
        reqs.push(('W', p, 1));
    }
    write_trace(path, &reqs);
}

#[test]
fn future_knowledge_placement_runs_from_a_trace() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("hc.csv");
    hot_cold(&t);
    let mut s = spec(&t, 0.9);
    s.ftl.op = 0.1;
    let nosep = run(&s);
    s.ftl.placement = Some("fk:4".parse::<PlacementKind>().unwrap());
    let fk = run(&s);
    let (w0, w1) = (nosep.waf, fk.waf);
    eprintln!("NoSep {w0:.3}, FK {w1:.3}");
    assert_eq!(fk.devices[0].sim.placement, "fk:4");
    assert!(w0 > 1.3, "greedy without separation amplifies: {w0}");
    assert!(
        w1 < w0 * 0.9,
        "knowing the future separates hot from cold: FK {w1} vs {w0}"
    );
}

/// FK reads each write's next invalidation from the trace: a discard ends a page's life as an
/// overwrite does, in the same pass or, looped, in the next (a discard that comes before the
/// page's first write kills the previous pass's last write).
#[test]
fn future_knowledge_sees_discards() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("d.csv");
    // Page writes (clock): p0 (0), p1 (1), discard p0 (at 2), p1 (2); pass = 3.
    write_trace(&t, &[('W', 0, 1), ('W', 1, 1), ('D', 0, 1), ('W', 1, 1)]);
    let s = spec(&t, 1.0);
    let next = replay::trace_next_overwrite(&s, None, true).unwrap();
    // p0's write dies at the discard (not at its next pass's write, 3); p1's first write at
    // its overwrite; p1's last at its first event of the next pass (3 + 1).
    assert_eq!(next, vec![2, 2, 4]);
    // A discard before the page's first write: p5 (0), p6 (1); pass = 2.
    write_trace(&t, &[('D', 5, 1), ('W', 5, 1), ('W', 6, 1)]);
    let next = replay::trace_next_overwrite(&s, None, true).unwrap();
    assert_eq!(
        next,
        vec![2, 3],
        "p5 dies at the next pass's discard (2 + 0)"
    );
    assert_eq!(
        replay::trace_next_overwrite(&s, None, false).unwrap(),
        vec![u64::MAX; 2]
    );
}

/// FAR and the GC copies the summary prints beside it count the same phase.
#[test]
fn far_counts_the_measured_phase() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("hc.csv");
    hot_cold(&t);
    let r = run(&spec(&t, 0.9));
    let sim = &r.devices[0].sim;
    assert!(sim.far_tracked);
    assert!(
        sim.total.gc_pages > sim.measured.gc_pages,
        "GC ran before the measured phase too"
    );
    assert_eq!(
        sim.far.moves, sim.measured.gc_pages,
        "FAR's moves are the GC copies"
    );
    assert!(sim.far.frozen_moves <= sim.far.moves);
    let text = replay::summary(&r);
    assert!(
        text.contains(&format!("of {} GC moves", sim.measured.gc_pages)),
        "{text}"
    );
}
