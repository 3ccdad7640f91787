//! `nowa compare`: flags to a [`Spec`], then the table, CSV and JSON of nowa-lab's
//! comparison (every engine on a fresh virtual SSD, one operation stream; docs/compare.md).

use crate::lab_error;
use crate::resources::{check_memory, check_new_output};
use anyhow::Result;
use clap::Args;
use nowa_lab::compare::{self, EngineName, Fs, Spec, Workload};
use nowa_lab::flags;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct CompareArgs {
    /// Engines, comma-separated: nowa-inplace, nowa-oop, sqlite3, postgresql, mariadb, rocksdb,
    /// lmdb (real engines: scripts/install-peers.sh), sled, redb, fjall (cargo features).
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        default_value = "nowa-inplace,nowa-oop,sqlite3,postgresql,mariadb,rocksdb,lmdb"
    )]
    engines: Vec<EngineName>,
    /// ycsb-a (50% reads, 50% updates), ycsb-w (100% updates), tpcc-lite (new-order).
    #[arg(long, value_enum, default_value = "ycsb-a")]
    workload: Workload,
    /// Rows loaded before the measured phase.
    #[arg(long, default_value = "100000", value_parser = flags::count::<u64>(1, 1 << 32))]
    records: u64,
    /// Operations measured (tpcc-lite: transactions).
    #[arg(long, default_value = "20000", value_parser = flags::count::<u64>(1, 1 << 32))]
    ops: u64,
    /// Bytes per value.
    #[arg(long, default_value = "120", value_parser = flags::count::<usize>(1, 2000))]
    value_size: usize,
    /// Each engine's own cache (buffer pool, shared_buffers, cache_size).
    #[arg(long, default_value = "128MiB", value_parser = flags::size(1 << 20, 1 << 40))]
    memory: u64,
    /// File system on the vssd: ext4, xfs, or raw (nowa's engines on the disk file).
    #[arg(long, value_enum, default_value = "ext4")]
    fs: Fs,
    /// The vssd's logical capacity (default: 4x the rows' bytes, at least 512 MiB).
    #[arg(long, value_parser = flags::size_4k(64 << 20, 1 << 40))]
    capacity: Option<u64>,
    /// The vssd's over-provisioning as spare/logical (0.07 or 7%).
    #[arg(long, default_value = "7%", value_parser = flags::fraction(0.0, true, 10.0, false))]
    op: f64,
    /// Seed of the operation stream.
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Pace the vssd's replies by a timing model (none, femu, mqsim): GC stalls reach the
    /// engines; the JSON adds the model-clock figures (model_secs, model_p99_us, model_stalls).
    #[arg(long, value_enum, default_value = "none")]
    timing: nowa_lab::flags::VssdTiming,
    /// Directory the vssds are mounted in (a fresh temporary directory each).
    #[arg(long, default_value = "/tmp", value_name = "DIR", value_parser = existing_dir)]
    work: PathBuf,
    /// Print the result as JSON (with the run's identity).
    #[arg(long)]
    json: bool,
    /// Write one CSV row per engine.
    #[arg(long, value_name = "FILE")]
    csv: Option<PathBuf>,
    /// Overwrite --csv.
    #[arg(long)]
    force: bool,
    /// No progress lines on stderr (the seed line and the results stay).
    #[arg(long, short)]
    quiet: bool,
}

/// `--work`: an existing directory.
fn existing_dir(s: &str) -> Result<PathBuf, String> {
    let p = PathBuf::from(s);
    if p.is_dir() {
        Ok(p)
    } else {
        Err(format!("{s}: not a directory"))
    }
}

fn spec(a: &CompareArgs) -> Result<Spec> {
    let capacity = a
        .capacity
        .unwrap_or_else(|| Spec::auto_capacity(a.workload, a.records, a.ops, a.value_size));
    // One vssd at a time: its data (in /dev/shm, memory) and its page maps.
    check_memory(&[
        ("--capacity", "vssd data", capacity),
        ("--memory", "the engine's cache", a.memory),
    ])?;
    if let Some(p) = &a.csv {
        check_new_output("--csv", p, a.force)?;
    }
    Ok(Spec {
        engines: Spec::engines_once(&a.engines),
        workload: a.workload,
        records: a.records,
        ops: a.ops,
        value_size: a.value_size,
        memory: a.memory,
        fs: a.fs,
        capacity,
        op: a.op,
        seed: a.seed,
        work: a.work.clone(),
        timing: a.timing,
    })
}

/// `nowa compare`.
pub fn run(a: &CompareArgs) -> Result<()> {
    let s = spec(a)?;
    compare::check(&s).map_err(lab_error)?;
    eprintln!(
        "nowa compare: seed {}, {:?}, {} records, {} ops, each engine on a fresh {}-byte vssd ({:?})",
        s.seed, s.workload, s.records, s.ops, s.capacity, s.fs
    );
    nowa_lab::Cancel.on_sigint();
    let rep = compare::run(&s, &compare::stderr_progress(&s, a.quiet)).map_err(lab_error)?;
    // `nowa run` re-runs a result from its identity: it must name this job and its seed.
    assert_eq!(rep.nowa.command, "compare", "the result names its job");
    assert_eq!(rep.nowa.seed, s.seed, "the result names its seed");
    if let Some(p) = &a.csv {
        compare::write_csv(&rep, p).map_err(lab_error)?;
    }
    // Ctrl-C: the partial result says so itself (stdout, JSON), not only the exit status.
    let stop = nowa_lab::Cancel
        .requested()
        .then_some("the rows above cover the part that ran");
    if a.json {
        let mut v = serde_json::to_value(&rep)?;
        if let (Some(what), Some(m)) = (stop, v.as_object_mut()) {
            m.insert("interrupted".into(), what.into());
        }
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        if let Some(what) = stop {
            println!("interrupted (Ctrl-C): {what}");
        }
        print!("{}", compare::table(&rep.result));
    }
    if let Some(what) = stop {
        return Err(crate::interrupted(what));
    }
    if rep.result.any_failed() {
        anyhow::bail!("an engine failed (its row says why)");
    }
    Ok(())
}
