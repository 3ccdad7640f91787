//! `nowa frozen replay` (job `frozen-replay`): a write log's user writes through the placement
//! simulator with every scheme asked for.

use super::training::file_error;
use crate::{Cancel, Error, Identity, Report};
use nowa_frozen::replay::{self, ReplayLog, Scheme, SchemeRun};
use nowa_frozen::Model;
use nowa_logspace::PolicyKind;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// One replay (keys: the flags of `nowa frozen replay` with underscores).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReplaySpec {
    /// The write log.
    pub writes: PathBuf,
    /// The frozen-page model of the SepFrozen schemes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<PathBuf>,
    /// The model's decision threshold (absent: its own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frozen_threshold: Option<f64>,
    /// Schemes, comma-separated (`paper`, a placement name, sepfrozen-bit|dac[-truth|-online][:N]).
    pub schemes: String,
    /// Zone (GC unit) size, bytes.
    pub zone_size: u64,
    /// GC runs while the garbage of sealed zones exceeds this share of the written pages.
    pub gp: f64,
    /// Victim selection (cb-sepbit, greedy, ...).
    pub policy: String,
    /// The online variant's horizon in user writes (absent: the log's distinct pages).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub horizon: Option<u64>,
    /// Seed of the replay.
    pub seed: u64,
}

/// `--schemes`: `paper` expands to the paper's schemes.
///
/// # Errors
/// An unknown scheme, or none.
pub fn schemes(s: &str) -> Result<Vec<Scheme>, String> {
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
    Ok(out)
}

/// What a replay measured: one run per scheme, and the log's figures.
#[derive(Debug, Clone, Serialize)]
pub struct ReplayResult {
    /// Per scheme: WAF, FAR, per-class statistics, inference cost.
    pub runs: Vec<SchemeRun>,
    /// The log's setup line (user writes, frees, pages, frozen share, zones).
    #[serde(skip)]
    pub setup: String,
    /// Ctrl-C stopped the replays: `runs` holds the schemes replayed before it (the one being
    /// replayed is dropped: part of the log is not comparable).
    pub interrupted: bool,
    /// The schemes asked for (`runs` has them all unless interrupted).
    pub schemes_planned: usize,
}

impl ReplayResult {
    /// What ran when Ctrl-C stopped the replays ("N of M schemes replayed"); none otherwise.
    ///
    /// # Panics
    /// If more schemes ran than were asked for, or fewer without Ctrl-C (a bug).
    #[must_use]
    pub fn interruption(&self) -> Option<String> {
        assert!(
            self.runs.len() <= self.schemes_planned,
            "no more runs than schemes asked for"
        );
        assert!(
            self.interrupted || self.runs.len() == self.schemes_planned,
            "only Ctrl-C leaves a scheme out"
        );
        self.interrupted.then(|| {
            format!(
                "{} of {} schemes replayed",
                self.runs.len(),
                self.schemes_planned
            )
        })
    }
}

impl ReplaySpec {
    fn policy(&self) -> Result<PolicyKind, Error> {
        self.policy
            .parse()
            .map_err(|e| Error::Usage(format!("policy: {e}")))
    }

    /// Checks the fields and that the log exists.
    ///
    /// # Errors
    /// [`Error::Usage`] naming the field.
    pub fn check(&self) -> Result<(), Error> {
        let list = schemes(&self.schemes).map_err(|e| Error::Usage(format!("schemes: {e}")))?;
        super::replay_config(
            self.zone_size,
            self.gp,
            &self.policy()?,
            self.horizon,
            self.seed,
        )?;
        if !self.writes.exists() {
            return Err(Error::Usage(format!(
                "--writes {}: no such file",
                self.writes.display()
            )));
        }
        if self.model.is_none() && list.iter().any(Scheme::needs_model) {
            return Err(Error::Usage(
                "SepFrozen with a model needs --model FILE (or name sepfrozen-bit-truth / -online)"
                    .into(),
            ));
        }
        if self.frozen_threshold.is_some() && self.model.is_none() {
            return Err(Error::Usage("--frozen-threshold needs --model".into()));
        }
        Ok(())
    }

    fn load_model(&self) -> Result<Option<Model>, Error> {
        let Some(p) = &self.model else {
            return Ok(None);
        };
        let m = Model::load(p).map_err(|e| file_error("--model", p, e))?;
        match self.frozen_threshold {
            Some(t) => m
                .with_threshold(t)
                .map(Some)
                .map_err(|e| Error::Usage(format!("--frozen-threshold {t}: {e}"))),
            None => Ok(Some(m)),
        }
    }
}

/// Replays the log with every scheme; `each` sees each scheme's run as it ends. Ctrl-C
/// ([`Cancel`]) ends it after the schemes replayed so far (`interrupted`).
///
/// # Errors
/// A bad spec or input file ([`Error::Usage`]); the replay's errors.
///
/// # Panics
/// If a checked spec named no scheme (a bug).
pub fn run_with(
    spec: &ReplaySpec,
    each: &dyn Fn(&SchemeRun),
    cancel: &Cancel,
) -> Result<Report<ReplayResult>, Error> {
    spec.check()?;
    let id = Identity::now("frozen-replay", spec, spec.seed);
    let cfg = super::replay_config(
        spec.zone_size,
        spec.gp,
        &spec.policy()?,
        spec.horizon,
        spec.seed,
    )?;
    let model = spec.load_model()?;
    let log = ReplayLog::load(&spec.writes).map_err(|e| file_error("--writes", &spec.writes, e))?;
    let setup = format!(
        "{} ({} user writes, {} frees, {} original GC moves dropped; {} pages, {:.1}% of versions frozen), zones of {} pages, GP {:.0}%, {}",
        spec.writes.display(), log.user_writes(), log.summary.free, log.summary.gc,
        log.logical_pages, 100.0 * log.frozen_share(), cfg.unit_pages, 100.0 * cfg.gp, cfg.policy
    );
    let planned = schemes(&spec.schemes).map_err(Error::Usage)?;
    let mut runs = Vec::new();
    for &s in &planned {
        let stop = || cancel.requested();
        let run = replay::run_until(
            &log,
            s,
            model.as_ref(),
            &cfg,
            nowa_units::cpu::thread_cpu_secs,
            &stop,
        )
        .map_err(super::failed)?;
        // None: stopped inside the scheme (dropped); a finished one is kept.
        let Some(r) = run else {
            break;
        };
        each(&r);
        runs.push(r);
        if cancel.requested() {
            break;
        }
    }
    let interrupted = runs.len() < planned.len();
    assert!(
        interrupted || !runs.is_empty(),
        "a checked spec names a scheme"
    );
    assert!(
        interrupted == cancel.requested() || runs.len() == planned.len(),
        "only Ctrl-C leaves schemes out"
    );
    Ok(Report {
        nowa: id,
        result: ReplayResult {
            runs,
            setup,
            interrupted,
            schemes_planned: planned.len(),
        },
    })
}
