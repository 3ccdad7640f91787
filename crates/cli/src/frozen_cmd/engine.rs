//! SepFrozen inside the engine (`nowa ycsb|tpcc --write-path oop --placement
//! sepfrozen-bit|sepfrozen-dac --frozen-model MODEL.json`): the trained model of `nowa-frozen`
//! as the engine's [`PageOracle`], and what a run reports about its placement.
//!
//! The adapter lives here, not in either library, because the engine must not depend on
//! `nowa-frozen` (the learning half stays independent of the engine); the CLI depends on both.
//! At DB GC the engine hands the oracle the images of a victim's valid pages in one batch;
//! the oracle decodes HR_current and HR_last from each page header
//! (`nowa_engine::page::hotness`), judges the whole batch with `Model::predict_into` and adds
//! the batch's thread CPU time to the shared [`InferenceCost`] (seconds per 256 MiB of victim,
//! the paper's unit and budget of 0.05 s).

use crate::placement_flags::EnginePlacement;
use crate::usage;
use anyhow::Result;
use nowa_engine::{FrozenHook, PageOracle};
use nowa_frozen::oracle::{record, CostHandle, InferenceCost};
use nowa_frozen::{HrWindow, Model};
use std::path::Path;
use std::sync::Arc;

/// The paper's inference budget: seconds per 256 MiB of victim pages.
pub const BUDGET_SECS_PER_256MIB: f64 = 0.05;

/// A trained model judging page images (see the module docs).
pub struct ModelPageOracle {
    model: Arc<Model>,
    batch: Vec<HrWindow>,
    cost: CostHandle,
}

impl ModelPageOracle {
    /// `model`, reporting into `cost`.
    #[must_use]
    pub fn new(model: Arc<Model>, cost: CostHandle) -> Self {
        ModelPageOracle {
            model,
            batch: Vec::new(),
            cost,
        }
    }
}

impl PageOracle for ModelPageOracle {
    fn name(&self) -> String {
        model_name(&self.model)
    }

    fn predict(&mut self, pages: &[(u64, &[u8])], out: &mut Vec<bool>) {
        let t0 = nowa_units::cpu::thread_cpu_secs();
        self.batch.clear();
        self.batch.extend(pages.iter().map(|(_, img)| {
            let h = nowa_engine::page::hotness(img);
            HrWindow::from_pair(h.current, h.last)
        }));
        self.model.predict_into(&self.batch, out);
        assert_eq!(out.len(), pages.len(), "one verdict per victim page");
        let secs = nowa_units::cpu::thread_cpu_secs() - t0;
        // A clock that stepped back (thread migrated between CPUs) counts as no time.
        record(&self.cost, pages.len(), out, secs.max(0.0));
    }
}

fn model_name(m: &Model) -> String {
    format!("{} twl {}", m.classifier.name(), m.twl.get())
}

/// SepFrozen as configured by the flags: the engine's hook and the run's inference cost.
pub struct FrozenRun {
    /// The engine's hook (its oracle factory shares [`FrozenRun::cost`] across opens).
    pub hook: FrozenHook,
    model: String,
    model_file: String,
    cost: CostHandle,
}

/// Load `--frozen-model` for `--placement`: the engine's hook, or a usage error naming the
/// flag at fault (no model, unreadable model, a model that needs more records than a page
/// header holds, a model without a SepFrozen placement).
///
/// # Errors
/// As above (exit code 2).
pub fn frozen_run(
    placement: Option<EnginePlacement>,
    model: Option<&Path>,
) -> Result<Option<FrozenRun>> {
    let (base, classes) = match (placement, model) {
        (Some(EnginePlacement::Frozen(b, n)), _) => (b, n),
        (_, None) => return Ok(None),
        (_, Some(_)) => {
            return Err(usage(
                "--frozen-model needs --placement sepfrozen-bit or sepfrozen-dac",
            ))
        }
    };
    let Some(path) = model else {
        return Err(usage(format!(
            "--placement {}: needs --frozen-model MODEL.json (train one with `nowa frozen train`)",
            EnginePlacement::Frozen(base, classes).name()
        )));
    };
    let m =
        Model::load(path).map_err(|e| usage(format!("--frozen-model {}: {e}", path.display())))?;
    if m.twl.get() > 2 {
        return Err(usage(format!(
            "--frozen-model {}: the model reads {} hotness records per page; a page header holds 2 (train with --twl 1 or 2)",
            path.display(),
            m.twl.get()
        )));
    }
    assert!(
        (2..=nowa_logspace::MAX_CLASSES).contains(&classes),
        "the --placement parser bounds the classes"
    );
    let (model, cost) = (Arc::new(m), CostHandle::default());
    let name = model_name(&model);
    let c = cost.clone();
    let hook = FrozenHook {
        base,
        classes,
        oracle: Arc::new(move || {
            Box::new(ModelPageOracle::new(model.clone(), c.clone())) as Box<dyn PageOracle>
        }),
    };
    Ok(Some(FrozenRun {
        hook,
        model: name,
        model_file: path.display().to_string(),
        cost,
    }))
}

/// SepFrozen's part of a run's report.
#[derive(Debug, Clone, serde::Serialize)]
pub struct FrozenReport {
    /// The model (classifier and records per page).
    pub model: String,
    /// Its file.
    pub model_file: String,
    /// Victim batches judged, pages judged and judged frozen, CPU seconds.
    pub inference: InferenceCost,
    /// Inference CPU seconds per 256 MiB of victim pages.
    pub secs_per_256mib: f64,
    /// The paper's budget for it.
    pub budget_secs_per_256mib: f64,
}

/// SepFrozen's report of a run (None without `--frozen-model`); the placement's per-class
/// table is the engine's (`Engine::class_report`), printed with the result.
#[must_use]
pub fn report(frozen: Option<&FrozenRun>) -> Option<FrozenReport> {
    frozen.map(|f| {
        let c = *f
            .cost
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        assert!(c.frozen <= c.pages, "judged frozen among the pages judged");
        FrozenReport {
            model: f.model.clone(),
            model_file: f.model_file.clone(),
            inference: c,
            secs_per_256mib: c.secs_per_256mib(),
            budget_secs_per_256mib: BUDGET_SECS_PER_256MIB,
        }
    })
}

/// Print `f` as text.
pub fn print(f: &FrozenReport) {
    let c = &f.inference;
    println!(
        "sepfrozen model {} ({}): {} of {} pages judged frozen at GC in {} victim batches; inference {:.2} ms per 256 MiB of victim (budget {:.0} ms), {:.3} s CPU in all",
        f.model,
        f.model_file,
        c.frozen,
        c.pages,
        c.batches,
        1e3 * f.secs_per_256mib,
        1e3 * f.budget_secs_per_256mib,
        c.cpu_secs
    );
}
