//! `nowa frozen replay`: a write log through the placement simulator with every scheme.

use crate::flags;
use anyhow::{Context, Result};
use clap::Args;
use nowa_frozen::replay::{self, SchemeRun};
use nowa_lab::frozen::replay::ReplaySpec;
use nowa_logspace::PolicyKind;
use std::path::PathBuf;

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
    pub schemes: String,
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
    /// Seed of the randomized victim policies (printed; the same seed replays the same way).
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    /// No line per scheme replayed on stderr (the seed line and the results stay).
    #[arg(long, short)]
    pub quiet: bool,
}

fn schemes(s: &str) -> Result<String, String> {
    nowa_lab::frozen::replay::schemes(s).map(|_| s.to_owned())
}

/// `nowa frozen replay`: flags -> [`ReplaySpec`] -> the replays (nowa-lab) -> the table, the
/// JSON or the CSV.
pub fn run(a: &ReplayArgs) -> Result<()> {
    crate::resources::check_output_file("--csv", a.csv.as_deref())?;
    let spec = ReplaySpec {
        writes: a.writes.clone(),
        model: a.model.clone(),
        frozen_threshold: a.frozen_threshold,
        schemes: a.schemes.clone(),
        zone_size: a.zone_size,
        gp: a.gp,
        policy: a.policy.to_string(),
        horizon: a.horizon,
        seed: a.seed,
    };
    spec.check().map_err(crate::lab_error)?;
    // The handler before the header: a Ctrl-C once the header is out stops the run.
    nowa_lab::Cancel.on_sigint();
    eprintln!("nowa frozen replay: seed {}", a.seed);
    let each = |r: &SchemeRun| {
        if a.quiet {
            return;
        }
        eprintln!(
            "  {:<26} WAF {:.3}  FAR {:.3}  ({:.1} s CPU)",
            r.scheme, r.waf, r.far, r.cpu_secs
        );
    };
    let out = nowa_lab::frozen::replay::run_with(&spec, &each, &nowa_lab::Cancel)
        .map_err(crate::lab_error)?;
    eprintln!("nowa frozen replay: {}", out.result.setup);
    let runs = &out.result.runs;
    if let Some(p) = &a.csv {
        replay::write_csv(runs, p).with_context(|| format!("--csv {}", p.display()))?;
    }
    let stop = out.result.interruption();
    if a.json {
        println!("{}", serde_json::to_string_pretty(&out)?);
        return stop.map_or(Ok(()), |w| Err(crate::interrupted(w)));
    }
    print!("{}", nowa_lab::frozen::table(runs, a.classes));
    crate::stop_if(stop)
}
