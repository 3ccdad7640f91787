//! `nowa frozen replay`: a write log through the placement simulator with every scheme.

use crate::flags;
use crate::usage;
use anyhow::{Context, Result};
use clap::Args;
use nowa_frozen::replay::{self, ReplayLog, Scheme};
use nowa_frozen::Model;
use nowa_logspace::PolicyKind;
use std::path::{Path, PathBuf};

#[derive(Args, Debug)]
pub struct ReplayArgs {
    /// The write log (`nowa frozen synth`, `nowa frozen from-trace`, `--record-writes`).
    #[arg(long, value_name = "FILE")]
    pub writes: PathBuf,
    /// The frozen-page model for the SepFrozen schemes (`nowa frozen train`).
    #[arg(long, value_name = "MODEL.json")]
    pub model: Option<PathBuf>,
    /// With --model: judge a page frozen when the model's probability is above P, in (0, 1)
    /// (default: the threshold stored in the model, 0.5 unless trained with another).
    #[arg(long, value_name = "P", value_parser = flags::fraction(0.0, true, 1.0, true))]
    pub frozen_threshold: Option<f64>,
    /// Schemes, comma-separated: `paper` (NoSep, 2R, WARCIP, DAC, DAC as the paper states it,
    /// SepFrozenDAC, SepBIT, SepFrozenBIT, FK, FK-kmeans), any `nowa sim --placement` name,
    /// or sepfrozen-bit|dac[-truth|-online][:N].
    #[arg(long, default_value = "paper", value_parser = schemes)]
    pub schemes: SchemeList,
    /// Zone (GC unit) size: a multiple of 4 KiB.
    #[arg(long, default_value = "4MiB", value_parser = flags::size_4k(64 << 10, 1 << 40))]
    pub zone_size: u64,
    /// GC runs while the garbage of sealed zones exceeds this share of all written pages.
    #[arg(long, default_value = "15%", value_parser = flags::fraction(0.0, true, 1.0, true))]
    pub gp: f64,
    /// Victim selection: cb-sepbit (the paper's cost-benefit) or greedy.
    #[arg(long, default_value = "cb-sepbit", value_parser = flags::parsed::<PolicyKind>())]
    pub policy: PolicyKind,
    /// The online variant's horizon in user writes (default: the log's distinct pages).
    #[arg(long, value_parser = flags::count::<u64>(1, 1 << 50))]
    pub horizon: Option<u64>,
    /// Write one row per scheme (and class) as CSV.
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// Print the per-class table of every scheme.
    #[arg(long)]
    pub classes: bool,
    /// Print the results as JSON.
    #[arg(long)]
    pub json: bool,
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
}

/// A parsed `--schemes` list.
#[derive(Debug, Clone)]
pub struct SchemeList(pub Vec<Scheme>);

fn schemes(s: &str) -> Result<SchemeList, String> {
    let mut out = Vec::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        if part == "paper" {
            out.extend(Scheme::paper());
        } else {
            out.push(part.parse::<Scheme>()?);
        }
    }
    if out.is_empty() {
        return Err("no scheme given".into());
    }
    Ok(SchemeList(out))
}

/// Load `--model` if any scheme needs it.
pub fn load_model(path: Option<&Path>, list: &[Scheme]) -> Result<Option<Model>> {
    match path {
        Some(p) => Ok(Some(
            Model::load(p).with_context(|| format!("--model {}", p.display()))?,
        )),
        None if list.iter().any(Scheme::needs_model) => Err(usage(
            "SepFrozen with a model needs --model FILE (or name sepfrozen-bit-truth / -online)"
                .to_owned(),
        )),
        None => Ok(None),
    }
}

pub fn run(a: &ReplayArgs) -> Result<()> {
    if !a.writes.exists() {
        return Err(usage(format!(
            "--writes {}: no such file",
            a.writes.display()
        )));
    }
    crate::resources::check_output_file("--csv", a.csv.as_deref())?;
    let cfg = nowa_lab::frozen::replay_config(a.zone_size, a.gp, &a.policy, a.horizon, a.seed)
        .map_err(crate::lab_error)?;
    let mut model = load_model(a.model.as_deref(), &a.schemes.0)?;
    if let Some(p) = a.frozen_threshold {
        let m = model.ok_or_else(|| usage("--frozen-threshold needs --model".to_owned()))?;
        let m = m
            .with_threshold(p)
            .map_err(|e| usage(format!("--frozen-threshold {p}: {e}")))?;
        model = Some(m);
    }
    let log =
        ReplayLog::load(&a.writes).with_context(|| format!("--writes {}", a.writes.display()))?;
    eprintln!(
        "nowa frozen replay: seed {}, {} ({} user writes, {} frees, {} original GC moves dropped; {} pages, {:.1}% of versions frozen), zones of {} pages, GP {:.0}%, {}",
        a.seed, a.writes.display(), log.user_writes(), log.summary.free, log.summary.gc,
        log.logical_pages, 100.0 * log.frozen_share(), cfg.unit_pages, 100.0 * cfg.gp, cfg.policy
    );
    let mut runs = Vec::new();
    for &s in &a.schemes.0 {
        let r = replay::run(
            &log,
            s,
            model.as_ref(),
            &cfg,
            nowa_units::cpu::thread_cpu_secs,
        )?;
        eprintln!(
            "  {:<26} WAF {:.3}  FAR {:.3}  ({:.1} s CPU)",
            r.scheme, r.waf, r.far, r.cpu_secs
        );
        runs.push(r);
    }
    if let Some(p) = &a.csv {
        replay::write_csv(&runs, p).with_context(|| format!("--csv {}", p.display()))?;
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&runs)?);
        return Ok(());
    }
    print!("{}", nowa_lab::frozen::table(&runs, a.classes));
    Ok(())
}
