//! `nowa plan`: PLAN (flexible superblocks, lifetime predictor) on the chip-addressed FTL with
//! the chip-level timing model: one run, the paper's figures, and the speed benchmark.

use crate::flags;
use crate::usage;
use anyhow::Result;
use clap::{Args, Subcommand};
use nowa_bench::plan::{self, FigureOpts, RunResult, RunSpec, WorkloadKind};
use nowa_device::timing::ChipParams;
use nowa_flash::parallel::ChipGeometry;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct PlanArgs {
    #[command(subcommand)]
    cmd: PlanCmd,
}

#[derive(Subcommand, Debug)]
enum PlanCmd {
    /// One scheme on one workload: WAF, erases, throughput, latency percentiles.
    Run(RunArgs),
    /// The paper's Figures 1, 3, 4, 5, 6 as CSV and PNG under --out (docs/plan.md).
    Figures(FigArgs),
    /// Speed: host page writes per CPU second with timing on (FIO, baseline and PLAN).
    Bench(DeviceArgs),
}

#[derive(Args, Debug, Clone)]
struct DeviceArgs {
    /// Channels.
    #[arg(long, default_value = "8", value_parser = flags::count::<u32>(1, 64))]
    channels: u32,
    /// Chips (LUNs) per channel (a power of two).
    #[arg(long, default_value = "8", value_parser = flags::count::<u32>(1, 64))]
    chips_per_channel: u32,
    /// Erase blocks per chip.
    #[arg(long, default_value = "1024", value_parser = flags::count::<u32>(8, 1 << 20))]
    blocks_per_chip: u32,
    /// Pages per erase block (the paper has 256; 16 keeps its 1024 superblocks at 1/16 size).
    #[arg(long, default_value = "16", value_parser = flags::count::<u32>(1, 1 << 16))]
    pages_per_block: u32,
    /// Flash page size: 4KiB or 16KiB.
    #[arg(long, default_value = "16KiB", value_parser = flags::size(4096, 16384))]
    page_size: u64,
    /// Over-provisioning as spare/logical, as every other --op (0.0667 or 6.67%; default:
    /// the paper's 6.25% spare/physical = 6.67% spare/logical). Both forms are printed.
    #[arg(long, conflicts_with = "op_physical",
          value_parser = flags::fraction(0.01, true, 1.0, false))]
    op: Option<f64>,
    /// Over-provisioning as spare/physical (the paper's 0.0625), as `nowa sim --op-physical`.
    #[arg(long, value_parser = flags::fraction(0.01, true, 0.5, true))]
    op_physical: Option<f64>,
    /// Chip latencies: femu (40/200/2000 us) or mqsim (75/750/3800 us + channel transfer).
    #[arg(long, default_value = "femu")]
    timing: String,
    /// Host writes per run, in drive writes.
    #[arg(long, default_value = "2", value_parser = flags::number(0.0, false, 1000.0))]
    drive_writes: f64,
    /// Workload seed (printed with the device; the same seed gives the same run).
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// No progress on stderr.
    #[arg(short, long)]
    quiet: bool,
    /// Fraction of every chip's blocks GC keeps free (FEMU's foreground GC threshold, 0.05;
    /// 0 = the 2-block minimum).
    #[arg(long, default_value = "0.05", value_parser = flags::fraction(0.0, false, 0.5, false))]
    gc_reserve: f64,
    /// Aged SSD: fraction of the logical space filled with valid data before each run
    /// (sequentially; the paper does not give its level; docs/plan.md "Aged SSD").
    #[arg(long, default_value = "0.9", value_parser = flags::fraction(0.0, true, 1.0, false))]
    fill: f64,
    /// Predictor seconds per simulated second (default: the paper's capacity over ours).
    #[arg(long, value_parser = flags::number(0.0, false, 1e6))]
    time_scale: Option<f64>,
}

#[derive(Args, Debug)]
struct RunArgs {
    #[command(flatten)]
    dev: DeviceArgs,
    /// Scheme: baseline[-1/2|1/4|1/8][@OPEN] (default one open host superblock, FEMU's;
    /// @18 = the paper's "same number" of open superblocks), partial-gc, multi-stream, autostream,
    /// plan-nopred-1/4|1/8, plan-pred-1/4|1/8.
    #[arg(long, default_value = "plan-pred-1/4")]
    scheme: String,
    /// Workload: fio, tpcc, ycsb, fileserver, gcc.
    #[arg(long, default_value = "fio", value_parser = flags::parsed::<WorkloadKind>())]
    workload: WorkloadKind,
    /// Replay this block trace (any format `nowa trace` reads) open-loop instead of
    /// --workload, pass after pass until --drive-writes (0: one pass): pages = the flash
    /// pages each request covers, stream = its volume.
    #[arg(long)]
    trace: Option<PathBuf>,
    /// With --trace: stop after this many records.
    #[arg(long, value_parser = flags::count::<u64>(1, u64::MAX))]
    trace_limit: Option<u64>,
    /// With --trace: accept it however many of its lines are unreadable (default: refuse
    /// one with more than 1%).
    #[arg(long, requires = "trace")]
    skip_bad: bool,
    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Args, Debug)]
struct FigArgs {
    #[command(flatten)]
    dev: DeviceArgs,
    /// Directory of the CSV and PNG files (created if missing; its parent must exist).
    #[arg(long, default_value = "plan-figures")]
    out: PathBuf,
    /// Overwrite the plan-* files already in --out (refused without it).
    #[arg(long)]
    force: bool,
    /// Only Figure 1 (the parallelism sweep).
    #[arg(long)]
    fig1_only: bool,
    /// A captured block trace as an extra workload of Figures 3 to 6: NAME=FILE (repeatable;
    /// docs/plan.md has the capture commands).
    #[arg(long, value_parser = captured)]
    captured: Vec<(String, PathBuf)>,
    /// Pages per block of the device the captured traces run on (1024 superblocks, smaller).
    #[arg(long, default_value = "2", value_parser = flags::count::<u32>(1, 1 << 16))]
    captured_pages_per_block: u32,
    /// Workloads of Figures 3 to 6 (comma-separated).
    #[arg(long, default_value = "fio,tpcc,ycsb,fileserver,gcc", value_delimiter = ',', value_parser = flags::parsed::<WorkloadKind>())]
    workloads: Vec<WorkloadKind>,
}

fn captured(s: &str) -> Result<(String, PathBuf), String> {
    match s.split_once('=') {
        Some((name, file)) if !name.is_empty() && !file.is_empty() => {
            Ok((name.to_owned(), PathBuf::from(file)))
        }
        _ => Err(format!("'{s}': expected NAME=FILE")),
    }
}

/// The paper's over-provisioning, spare/physical.
const PAPER_OP_PHYSICAL: f64 = 0.0625;

/// Spare/physical from `--op` (spare/logical: s/l -> s/(l+s)) or `--op-physical`.
fn op_physical(d: &DeviceArgs) -> f64 {
    let p = d
        .op_physical
        .or(d.op.map(|l| l / (1.0 + l)))
        .unwrap_or(PAPER_OP_PHYSICAL);
    assert!(p > 0.0 && p < 1.0, "the flags bound the OP");
    p
}

fn opts(d: &DeviceArgs) -> Result<FigureOpts> {
    let page_bytes = match d.page_size {
        4096 => 4096,
        16384 => 16384,
        _ => return Err(usage("--page-size: 4KiB or 16KiB")),
    };
    let g = ChipGeometry {
        channels: d.channels,
        chips_per_channel: d.chips_per_channel,
        blocks_per_chip: d.blocks_per_chip,
        pages_per_block: d.pages_per_block,
        page_bytes,
        op_physical: op_physical(d),
    };
    g.validate().map_err(|e| {
        usage(format!(
            "--channels/--chips-per-channel/--blocks-per-chip: {e}"
        ))
    })?;
    // The workloads' regions need a minimum device; refused here, before any work.
    let min = plan::workload::MIN_LOGICAL_PAGES;
    if g.logical_pages() < min {
        return Err(usage(format!(
            "--channels/--chips-per-channel/--blocks-per-chip/--pages-per-block/--op: {} logical pages, the workloads need >= {min}",
            g.logical_pages()
        )));
    }
    let chips = match d.timing.as_str() {
        "femu" => ChipParams::femu(g.channels, g.chips_per_channel, page_bytes),
        "mqsim" => ChipParams::mqsim(g.channels, g.chips_per_channel, page_bytes),
        t => return Err(usage(format!("--timing {t}: expected femu or mqsim"))),
    };
    // The paper's device: 256 GiB physical.
    #[expect(clippy::cast_precision_loss, reason = "byte counts below 2^53")]
    let scale = (256u64 << 30) as f64 / (g.physical_pages() * u64::from(page_bytes)) as f64;
    assert!(
        scale.is_finite() && scale > 0.0,
        "a validated device has pages"
    );
    Ok(FigureOpts {
        geometry: g,
        chips,
        drive_writes: d.drive_writes,
        seed: d.seed,
        time_scale: d.time_scale.unwrap_or(scale),
        workloads: WorkloadKind::ALL.to_vec(),
        gc_reserve: d.gc_reserve,
        fill: d.fill,
        captured: Vec::new(),
        captured_pages_per_block: 2,
    })
}

/// A device GC cannot keep writable (too few spare blocks for the scheme's open units) is
/// the geometry flags' fault: exit 2 naming them. Where exactly a geometry turns unworkable
/// depends on the scheme and the workload, so it is found by running (the fill comes first,
/// before any measured work).
fn too_little_spare(e: anyhow::Error) -> anyhow::Error {
    let full = e
        .chain()
        .any(|c| matches!(c.downcast_ref(), Some(nowa_flash::FlashError::DeviceFull)));
    if full {
        usage(format!(
            "--op/--blocks-per-chip/--gc-reserve/--scheme: {e}: this geometry leaves GC too few spare blocks; raise --op or --blocks-per-chip"
        ))
    } else {
        e
    }
}

fn describe(o: &FigureOpts) {
    let g = &o.geometry;
    eprintln!(
        "device: {} ch x {} chips x {} blocks x {} pages x {} KiB = {} GiB physical, {} GiB logical; OP {:.4} spare/physical = {:.4} spare/logical; aged: {:.0}% of the logical space filled; GC keeps {:.1}% of each chip's blocks free (a threshold on free blocks, as FEMU's on free lines: not added to the spare); timing read {} / program {} / erase {} us, xfer {:.1} us; {} drive writes, seed {}, predictor time x{:.1}",
        g.channels,
        g.chips_per_channel,
        g.blocks_per_chip,
        g.pages_per_block,
        g.page_bytes / 1024,
        (g.physical_pages() * u64::from(g.page_bytes)) >> 30,
        (g.logical_pages() * u64::from(g.page_bytes)) >> 30,
        g.op_physical,
        g.op_logical(),
        o.fill * 100.0,
        o.gc_reserve * 100.0,
        o.chips.read_us,
        o.chips.program_us,
        o.chips.erase_us,
        o.chips.xfer_us,
        o.drive_writes,
        o.seed,
        o.time_scale
    );
}

fn line(r: &RunResult) -> String {
    format!(
        "{:<11} {:<16} WAF {:>6.3}  erased {:>8}  victims {:>7}  {:>8.0} IOPS  read p50/p99 {:>7.0}/{:>7.0} us  write p50/p99 {:>7.0}/{:>7.0} us  cpu {:.2} s",
        r.workload,
        r.scheme,
        r.waf,
        r.counters.erased_blocks,
        r.counters.victims,
        r.iops,
        r.read_us[0],
        r.read_us[1],
        r.write_us[0],
        r.write_us[1],
        r.cpu_secs
    )
}

pub fn run(a: PlanArgs) -> Result<()> {
    match a.cmd {
        PlanCmd::Run(r) => {
            let o = opts(&r.dev)?;
            let scheme = plan::parse_scheme(&r.scheme, &o.geometry)
                .map_err(|e| usage(format!("--scheme: {e}")))?;
            if let Some(t) = &r.trace {
                // Missing or unrecognized: refused before the run says it starts.
                nowa_trace::open(t, None).map_err(crate::trace_cmd::trace_err)?;
            }
            describe(&o);
            let spec = RunSpec {
                geometry: o.geometry,
                chips: o.chips,
                scheme,
                workload: r.workload,
                drive_writes: o.drive_writes,
                seed: o.seed,
                // A trace's clock is real time: its lifetimes need no scaling by default.
                time_scale: match (&r.trace, r.dev.time_scale) {
                    (Some(_), None) => 1.0,
                    _ => o.time_scale,
                },
                gc_reserve: o.gc_reserve,
                fill: o.fill,
                track_streams: true,
            };
            let res = match &r.trace {
                Some(path) => {
                    nowa_trace::set_skip_bad(r.skip_bad);
                    let mut res = plan::replay(&spec, path, r.trace_limit)?;
                    res.workload = "trace".to_owned();
                    res
                }
                None => plan::run(&spec).map_err(too_little_spare)?,
            };
            if r.json {
                println!("{}", serde_json::to_string_pretty(&res)?);
            } else {
                println!("{}", line(&res));
            }
            Ok(())
        }
        PlanCmd::Figures(f) => figures(&f),
        PlanCmd::Bench(d) => bench(&d),
    }
}

/// The plan-* files already in `out` (what a figures run would overwrite).
fn existing_outputs(out: &std::path::Path) -> Vec<PathBuf> {
    let Ok(dir) = std::fs::read_dir(out) else {
        return Vec::new();
    };
    let mut v: Vec<PathBuf> = dir
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            name.starts_with("plan-") && (name.ends_with(".csv") || name.ends_with(".png"))
        })
        .collect();
    v.sort();
    v
}

fn figures(f: &FigArgs) -> Result<()> {
    let mut o = opts(&f.dev)?;
    o.workloads.clone_from(&f.workloads);
    o.captured.clone_from(&f.captured);
    o.captured_pages_per_block = f.captured_pages_per_block;
    if let Some((name, file)) = o.captured.iter().find(|c| !c.1.is_file()) {
        return Err(usage(format!(
            "--captured {name}={}: no such file",
            file.display()
        )));
    }
    // Shipped figures (docs/figures) are never overwritten by accident.
    if let (false, Some(first)) = (f.force, existing_outputs(&f.out).first()) {
        return Err(usage(format!(
            "--out {}: {} exists (pass --force to overwrite the plan-* files there)",
            f.out.display(),
            first.display()
        )));
    }
    crate::resources::create_output_dir("--out", &f.out)?;
    describe(&o);
    let total = plan::figure_run_count(&o, f.fig1_only);
    let pb = crate::sim_cmd::bar(total, f.dev.quiet, "plan figures: runs");
    let mut log = |r: &RunResult| {
        pb.inc(1);
        pb.suspend(|| println!("{}", line(r)));
    };
    plan::figure1(&o, &f.out, &mut log)?;
    if !f.fig1_only {
        plan::figures3to6(&o, &f.out, &mut log)?;
    }
    pb.finish_and_clear();
    eprintln!("wrote {}/plan-*.csv and plan-*.png", f.out.display());
    Ok(())
}

fn bench(d: &DeviceArgs) -> Result<()> {
    let o = opts(d)?;
    describe(&o);
    for name in ["baseline", "plan-pred-1/4"] {
        let scheme = plan::parse_scheme(name, &o.geometry).map_err(|e| usage(e.to_string()))?;
        let r = plan::run(&RunSpec {
            geometry: o.geometry,
            chips: o.chips,
            scheme,
            workload: WorkloadKind::Fio,
            drive_writes: o.drive_writes,
            seed: o.seed,
            time_scale: o.time_scale,
            gc_reserve: o.gc_reserve,
            fill: o.fill,
            track_streams: false,
        })
        .map_err(too_little_spare)?;
        assert!(
            r.counters.host_pages > 0 && r.cpu_secs > 0.0,
            "a run writes and takes CPU time"
        );
        let c = &r.counters;
        // GC copies outnumber host writes several times with a tight GC reserve: the cost per
        // flash page operation is the number that does not depend on the WAF.
        #[expect(clippy::cast_precision_loss, reason = "counts far below 2^53")]
        let ns_per_op = r.cpu_secs * 1e9 / (c.host_pages + c.read_pages + c.gc_pages) as f64;
        println!(
            "{name:<14} {} host page writes + {} reads + {} GC copies (WAF {:.2}) in {:.3} CPU s: {:.2} M host page writes/s per core (timing on), {:.1} ns per page operation",
            c.host_pages,
            c.read_pages,
            c.gc_pages,
            r.waf,
            r.cpu_secs,
            r.writes_per_cpu_sec() / 1e6,
            ns_per_op
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;
    use proptest::prelude::*;

    #[derive(Parser)]
    struct Flags {
        #[command(flatten)]
        dev: DeviceArgs,
    }

    /// The geometry flags of `nowa plan run`, small values: refused as bad input (exit 2),
    /// or the run completes; never a panic or a failure of another kind. Issue 26: 64 blocks
    /// of 1 page panicked in the workload generator.
    fn check(args: &[String], scheme: &str) -> Result<(), TestCaseError> {
        let flags =
            Flags::try_parse_from(std::iter::once("t".to_owned()).chain(args.iter().cloned()));
        let Ok(f) = flags else { return Ok(()) };
        let o = match opts(&f.dev) {
            Ok(o) => o,
            Err(e) => {
                prop_assert!(e.downcast_ref::<crate::UsageError>().is_some(), "{e}");
                return Ok(());
            }
        };
        let Ok(scheme) = plan::parse_scheme(scheme, &o.geometry) else {
            return Ok(());
        };
        let spec = RunSpec {
            geometry: o.geometry,
            chips: o.chips,
            scheme,
            workload: WorkloadKind::Fio,
            drive_writes: o.drive_writes,
            seed: o.seed,
            time_scale: o.time_scale,
            gc_reserve: o.gc_reserve,
            track_streams: true,
            fill: o.fill,
        };
        if let Err(e) = plan::run(&spec).map_err(too_little_spare) {
            prop_assert!(
                e.downcast_ref::<crate::UsageError>().is_some(),
                "{args:?}: {e}"
            );
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]
        #[test]
        fn small_geometries_are_refused_or_run(
            channels in 0u32..5,
            chips in 0u32..5,
            blocks in 0u32..300,
            pages in 0u32..24,
            op in prop::sample::select(vec!["0.01", "0.0625", "0.5"]),
            reserve in prop::sample::select(vec!["0", "0.05", "0.5"]),
            scheme in prop::sample::select(vec!["baseline", "plan-pred-1/4", "partial-gc", "multi-stream"]),
        ) {
            let args: Vec<String> = [
                ("--channels", channels.to_string()),
                ("--chips-per-channel", chips.to_string()),
                ("--blocks-per-chip", blocks.to_string()),
                ("--pages-per-block", pages.to_string()),
                ("--op", op.to_owned()),
                ("--gc-reserve", reserve.to_owned()),
                ("--drive-writes", "0.01".to_owned()),
            ]
            .into_iter()
            .flat_map(|(k, v)| [k.to_owned(), v])
            .collect();
            check(&args, scheme)?;
        }
    }

    fn dev(args: &str) -> Result<DeviceArgs, clap::Error> {
        let args = std::iter::once("t").chain(args.split_whitespace());
        Flags::try_parse_from(args).map(|f| f.dev)
    }

    /// `--op` is spare/logical as everywhere else (was spare/physical: `--op 7%` gave 7%
    /// spare/physical = 7.53% spare/logical); `--op-physical` takes the paper's form.
    #[test]
    fn op_is_spare_over_logical() {
        let p = op_physical(&dev("--op 7%").unwrap());
        assert!((p - 0.07 / 1.07).abs() < 1e-12, "{p}");
        assert!((op_physical(&dev("").unwrap()) - 0.0625).abs() < 1e-12);
        assert!((op_physical(&dev("--op-physical 0.0625").unwrap()) - 0.0625).abs() < 1e-12);
        let o = opts(&dev("--op 7%").unwrap()).unwrap();
        assert!((o.geometry.op_logical() - 0.07).abs() < 1e-3);
        assert!(
            dev("--op 7% --op-physical 6%").is_err(),
            "one form at a time"
        );
        assert!(dev("-q").unwrap().quiet);
    }

    #[derive(Parser)]
    struct Figs {
        #[command(flatten)]
        f: FigArgs,
    }

    /// `plan figures` writes into a new directory by default and refuses to overwrite plan-*
    /// files without --force, before any run (it used to write over docs/figures).
    #[test]
    fn figures_refuse_to_overwrite_without_force() {
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("figs");
        std::fs::create_dir(&out).unwrap();
        std::fs::write(out.join("plan-fig1.csv"), "old").unwrap();
        let args = ["t", "--out", out.to_str().unwrap(), "--fig1-only", "-q"];
        let f = Figs::try_parse_from(args).unwrap().f;
        let e = figures(&f).unwrap_err();
        assert!(e.downcast_ref::<crate::UsageError>().is_some(), "{e}");
        assert!(
            e.to_string().contains("plan-fig1.csv") && e.to_string().contains("--force"),
            "{e}"
        );
        assert_eq!(
            std::fs::read_to_string(out.join("plan-fig1.csv")).unwrap(),
            "old"
        );
        let d = Figs::try_parse_from(["t"]).unwrap().f;
        assert_eq!(d.out, PathBuf::from("plan-figures"), "not docs/figures");
    }

    #[test]
    fn the_issue_26_geometry_is_refused_naming_the_flags() {
        let args: Vec<String> = "--blocks-per-chip 64 --pages-per-block 1 --drive-writes 0.01"
            .split(' ')
            .map(str::to_owned)
            .collect();
        let f = Flags::try_parse_from(std::iter::once("t".to_owned()).chain(args)).unwrap();
        let Err(e) = opts(&f.dev) else {
            panic!("64 blocks of 1 page accepted")
        };
        assert!(e.downcast_ref::<crate::UsageError>().is_some());
        assert!(e.to_string().contains("--pages-per-block"), "{e}");
    }
}
