//! The placement share of the out-of-place runs: a placement scheme of the shared log space
//! (`nowa_logspace::PlacementKind`) or SepFrozenBIT / SepFrozenDAC over a seeded oracle, the
//! DB GC victim policy and the garbage-proportion trigger.
//!
//! Drawn from a second stream of the seed ([`stream`]), so the draws of the main stream keep
//! their values: a seed without placement runs as it did before placement was drawn.

use crate::setup::{DeviceKind, Rng};
use nowa_engine::page::{self, PAGE_SIZE};
use nowa_engine::{FrozenBase, FrozenHook, OopConfig, PageOracle};
use nowa_logspace::{PlacementKind, PolicyKind};
use parking_lot::Mutex;
use rand::{RngExt, SeedableRng};
use std::sync::Arc;

/// Percent of the out-of-place runs with a placement scheme or SepFrozen.
const PLACEMENT_PCT: u32 = 40;
/// Percent of those that run SepFrozen.
const FROZEN_PCT: u32 = 25;
/// Classes drawn at most where the device limits open zones or handles (ZNS, FDP).
const DEVICE_CLASSES: u16 = 8;

/// The placement stream of `seed` (independent of the main stream).
#[must_use]
pub fn stream(seed: u64) -> Rng {
    Rng::seed_from_u64(nowa_units::mix64(seed ^ 0x706c_6163_6531))
}

/// What the placement draw chose (printed in the `--verbose` setup).
#[derive(Debug, Clone)]
pub struct PlacementDraw {
    /// The scheme as the CLI's `--placement` spells it (`sepbit:5`, `sepfrozen-dac:3`).
    pub scheme: String,
    /// Classes (open zones, one per class).
    pub classes: u16,
    /// SepFrozen: per mille of the judged pages the seeded oracle calls frozen.
    pub frozen_per_mille: Option<u32>,
    /// SepFrozen: what the oracles saw (shared by every store the seed builds).
    pub oracle: Option<Arc<Mutex<OracleLog>>>,
}

/// What the seeded oracles of a seed saw.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OracleLog {
    /// Victims judged (batches).
    pub batches: u64,
    /// Pages judged.
    pub pages: u64,
    /// Pages judged frozen.
    pub frozen: u64,
    /// The first batch that broke the hook's contract (an image not the page named, ...).
    pub bad: Option<String>,
}

/// A deterministic frozen-page oracle: a page is frozen when a hash of the seed, its pid and
/// the write time in its image's header (HR_current) falls below the drawn share. It checks
/// that every image is a valid page of the pid it is given.
struct SeededOracle {
    seed: u64,
    per_mille: u32,
    log: Arc<Mutex<OracleLog>>,
}

impl PageOracle for SeededOracle {
    fn name(&self) -> String {
        format!("seeded {}/1000", self.per_mille)
    }

    fn predict(&mut self, pages: &[(u64, &[u8])], out: &mut Vec<bool>) {
        out.clear();
        let mut log = self.log.lock();
        if pages.is_empty() && log.bad.is_none() {
            log.bad = Some("a victim judged without valid pages".into());
        }
        for &(pid, img) in pages {
            let bad = if img.len() == PAGE_SIZE {
                page::validate(img, pid).err().map(|e| e.to_string())
            } else {
                Some(format!("an image of {} bytes", img.len()))
            };
            if let (Some(why), None) = (bad, &log.bad) {
                log.bad = Some(format!(
                    "the image of page {pid} handed to the oracle: {why}"
                ));
            }
            let wt = page::hotness(img).current.wt();
            let h = nowa_units::mix64(self.seed ^ nowa_units::mix64(pid ^ (wt << 32)));
            out.push(h % 1000 < u64::from(self.per_mille));
        }
        assert_eq!(out.len(), pages.len(), "one verdict per page");
        log.batches += 1;
        log.pages += pages.len() as u64;
        log.frozen += out.iter().filter(|&&f| f).count() as u64;
    }
}

/// The schemes the engine runs (FK needs the future and is refused) and their smallest
/// class count; MiDAS has its own (7).
const SCHEMES: [(&str, u16); 9] = [
    ("nosep", 1),
    ("sepgc", 2),
    ("dac", 2),
    ("dac-paper", 2),
    ("sfr", 3),
    ("multiqueue", 3),
    ("warcip", 2),
    ("sepbit", 4),
    ("midas", 7),
];

/// Every scheme the draw may give, as its spelling starts (`SCHEMES` by the names
/// `PlacementKind` prints, then the two SepFrozen bases): index for the coverage bitmask.
pub const SCHEME_NAMES: [&str; 11] = [
    "nosep",
    "sepgc",
    "dac",
    "dac-paper",
    "sfr",
    "multiqueue",
    "warcip",
    "sepbit",
    "midas",
    "sepfrozen-bit",
    "sepfrozen-dac",
];

/// Index of `name` in [`SCHEME_NAMES`].
#[must_use]
pub fn scheme_index(name: &str) -> Option<usize> {
    SCHEME_NAMES.iter().position(|n| *n == name)
}

/// For [`PLACEMENT_PCT`] percent of the out-of-place runs: a scheme (or SepFrozen), its class
/// count, the victim policy and the GP trigger, into `o` (GDT and NoWA off: the engine runs a
/// scheme without them). The device is raised to fit one open zone per class (ZNS: the
/// open-zone limit; FDP: a handle per class besides the WAL's).
///
/// # Panics
/// If the drawn scheme does not open one zone per class (a harness bug).
pub fn draw(pr: &mut Rng, o: &mut OopConfig, device: &mut DeviceKind) -> Option<PlacementDraw> {
    if pr.random_range(0..100) >= PLACEMENT_PCT {
        return None;
    }
    let limited = matches!(
        device,
        DeviceKind::SimZns { .. } | DeviceKind::SimFdp { .. }
    );
    let most = if limited || pr.random_bool(0.8) {
        DEVICE_CLASSES
    } else {
        nowa_logspace::MAX_CLASSES
    };
    let d = if pr.random_range(0..100) < FROZEN_PCT {
        draw_frozen(pr, o, most)
    } else {
        draw_scheme(pr, o, most)
    };
    o.gdt = false;
    o.nowa = false;
    o.defer_compensation = false;
    o.gc_victim = match pr.random_range(0..9) {
        0 => None,
        1 => Some(PolicyKind::Greedy),
        2 => Some(PolicyKind::CostBenefit),
        3 => Some(PolicyKind::CostBenefitSepBit),
        4 => Some(PolicyKind::Fifo),
        5 => Some(PolicyKind::ScFifo),
        6 => Some(PolicyKind::Random),
        7 => Some(PolicyKind::KGreedy(pr.random_range(2..=8))),
        _ => Some(PolicyKind::Window(pr.random_range(2..=16))),
    };
    draw_gp(pr, o);
    match device {
        DeviceKind::SimZns { max_open } => *max_open = (*max_open).max(u32::from(d.classes)),
        DeviceKind::SimFdp { handles } => *handles = (*handles).max(d.classes + 1),
        DeviceKind::Mem | DeviceKind::SimCns => {}
    }
    assert_eq!(
        o.zones_open(),
        u32::from(d.classes),
        "one open zone per class"
    );
    assert!(
        (1..=nowa_logspace::MAX_CLASSES).contains(&d.classes),
        "{} classes",
        d.classes
    );
    assert!(!o.gdt && !o.nowa, "a scheme runs without GDT and NoWA");
    assert!(
        match *device {
            DeviceKind::SimZns { max_open } => max_open >= u32::from(d.classes),
            DeviceKind::SimFdp { handles } => handles > d.classes,
            DeviceKind::Mem | DeviceKind::SimCns => true,
        },
        "the device allows one open zone per class"
    );
    Some(d)
}

/// The garbage-proportion trigger: none (half the runs), SepBIT's 0.15 or a drawn 0.01-0.60.
fn draw_gp(pr: &mut Rng, o: &mut OopConfig) {
    o.gc_garbage_proportion = match pr.random_range(0..4) {
        0 | 1 => None,
        2 => Some(0.15),
        _ => Some(f64::from(pr.random_range(1..=60u32)) / 100.0),
    };
    if !filters_victims(o) {
        // The trigger collects only zones at its threshold; a chooser that cannot filter
        // (MiDAS's own FIFO picks; FIFO, random, k-greedy, window) collected any zone, often
        // one almost all valid, so a round freed about nothing and the trigger stayed due:
        // seed 20,010,073 ran 8,808 foreground GC rounds in 4,651 operations. The engine
        // refuses the pair, as the FTL model does (`ConfigError::GcTriggerVictims`); the
        // draw keeps its stream and drops the trigger.
        o.gc_garbage_proportion = None;
    }
    assert!(
        o.gc_garbage_proportion
            .is_none_or(|t| (0.0..1.0).contains(&t)),
        "a garbage proportion in [0, 1)"
    );
}

/// Whether the DB GC's victims of `o` honor the garbage-proportion filter (its default with a
/// scheme or SepFrozen is SepBIT's cost-benefit, which does).
fn filters_victims(o: &OopConfig) -> bool {
    o.placement != Some(PlacementKind::MiDas)
        && o.gc_victim
            .as_ref()
            .is_none_or(PolicyKind::honors_victim_filter)
}

fn draw_scheme(pr: &mut Rng, o: &mut OopConfig, most: u16) -> PlacementDraw {
    let (name, min) = SCHEMES[pr.random_range(0..SCHEMES.len())];
    let n = pr.random_range(min..=most.max(min));
    let k = match name {
        "nosep" => PlacementKind::NoSep,
        "sepgc" => PlacementKind::SepGc,
        "midas" => PlacementKind::MiDas,
        _ => format!("{name}:{n}")
            .parse()
            .expect("a scheme the parser knows"),
    };
    assert!(!k.needs_future(), "FK is refused by the engine");
    o.placement = Some(k);
    PlacementDraw {
        scheme: k.to_string(),
        classes: k.build().classes(),
        frozen_per_mille: None,
        oracle: None,
    }
}

fn draw_frozen(pr: &mut Rng, o: &mut OopConfig, most: u16) -> PlacementDraw {
    let (base, min, name) = if pr.random_bool(0.5) {
        (FrozenBase::Bit, 4, "sepfrozen-bit")
    } else {
        (FrozenBase::Dac, 2, "sepfrozen-dac")
    };
    let classes = pr.random_range(min..=most);
    assert!(classes >= min, "{name}: {classes} classes");
    let per_mille = [0, 100, 500, 900, 1000][pr.random_range(0..5)];
    let seed: u64 = pr.random();
    let log = Arc::new(Mutex::new(OracleLog::default()));
    let l2 = log.clone();
    o.placement = None;
    o.frozen = Some(FrozenHook {
        base,
        classes,
        oracle: Arc::new(move || {
            Box::new(SeededOracle {
                seed,
                per_mille,
                log: l2.clone(),
            }) as Box<dyn PageOracle>
        }),
    });
    PlacementDraw {
        scheme: format!("{name}:{classes}"),
        classes,
        frozen_per_mille: Some(per_mille),
        oracle: Some(log),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The oracle judges deterministically and reports an image that is not a valid page of
    /// the pid it was given (the contract check of `sim/classes.rs`).
    #[test]
    fn the_oracle_flags_an_image_of_another_page() {
        let log = Arc::new(Mutex::new(OracleLog::default()));
        let mut o = SeededOracle {
            seed: 9,
            per_mille: 500,
            log: log.clone(),
        };
        let mut img = vec![0u8; PAGE_SIZE];
        page::init(&mut img, page::KIND_LEAF, 5);
        page::seal(&mut img);
        let (mut a, mut b) = (Vec::new(), Vec::new());
        let pages: Vec<(u64, &[u8])> = (0..64).map(|_| (5, &img[..])).collect();
        o.predict(&pages, &mut a);
        o.predict(&pages, &mut b);
        assert_eq!(a, b, "deterministic");
        assert_eq!(a.len(), 64);
        assert!(log.lock().bad.is_none(), "{:?}", log.lock().bad);
        o.predict(&[(6, &img[..])], &mut a);
        let bad = log
            .lock()
            .bad
            .clone()
            .expect("page 5's image given as page 6");
        assert!(bad.contains("page 6"), "{bad}");
        assert_eq!(log.lock().batches, 3);
    }
}
