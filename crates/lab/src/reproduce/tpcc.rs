//! how-to-write-to-ssds' TPC-C comparison (its Figure 16; docs/tpcc.md section 10): in place
//! on a conventional and on an FDP SSD against out of place with every optimization on FDP,
//! steady TPC-C at 90% fill, paced, until the device received its capacity.

use super::{Measured, Scale, Spec};
use crate::ckpt::Host;
use crate::Error;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// What the comparison reads from one `nowa tpcc` run.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TpccOutcome {
    /// Transactions completed.
    pub transactions: f64,
    /// Seconds the simulated SSD was busy (its timing model).
    pub device_busy_secs: f64,
    /// Flash (media) bytes per transaction, the SSD's GC included.
    pub flash_bytes_per_txn: f64,
    /// Transactions per wall second.
    pub txn_per_s: f64,
}

impl TpccOutcome {
    /// What the comparison reads from a run's report.
    #[must_use]
    pub fn of(r: &crate::ckpt::TpccReport) -> TpccOutcome {
        #[expect(clippy::cast_precision_loss, reason = "transactions far below 2^52")]
        let transactions = r.run.transactions as f64;
        TpccOutcome {
            transactions,
            device_busy_secs: r.device_busy_secs.unwrap_or(f64::NAN),
            flash_bytes_per_txn: r.flash_bytes_per_txn.unwrap_or(f64::NAN),
            txn_per_s: r.run.txn_per_s,
        }
    }
    /// Transactions per second of device busy time: the throughput the device allows.
    #[must_use]
    pub fn device_bound_tps(&self) -> f64 {
        self.transactions / self.device_busy_secs
    }
}

/// The three configurations: (name, flags beyond the common ones).
const RUNS: [(&str, &str); 3] = [
    ("inplace-cns", ""),
    ("inplace-fdp", "--sim-mode=fdp:8"),
    (
        "oop-fdp",
        "--sim-mode=fdp:8 --write-path=oop --compression=lz4 --gdt --nowa --zone-size=auto",
    ),
];

fn common(scale: Scale, seed: u64) -> Vec<String> {
    let wh = match scale {
        Scale::Quick => 2,
        Scale::Full => 20,
    };
    let mut f: Vec<String> = [
        "--threads=2",
        "--steady",
        "--dataset-fill=0.9",
        "--device-writes=1",
        "--media-bandwidth=50MB",
        "--read-bandwidth=150MB",
        "-q",
    ]
    .map(String::from)
    .to_vec();
    f.insert(0, format!("--warehouses={wh}"));
    f.push(format!("--seed={seed}"));
    f
}

pub(super) fn run(
    spec: &Spec,
    dir: &Path,
    host: &dyn Host,
    sub: &(dyn Fn(u64, u64, &str) + Sync),
) -> Result<Vec<Measured>, Error> {
    let base = common(spec.scale, spec.seed);
    let mut outs = Vec::new();
    for (i, (name, extra)) in RUNS.iter().enumerate() {
        sub(i as u64, RUNS.len() as u64, &format!("TPC-C {name}"));
        let mut f = base.clone();
        f.extend(extra.split_whitespace().map(String::from));
        let Some(r) = crate::ckpt::tpcc_report(host, &f, &dir.join(format!("tpcc-{name}.json")))?
        else {
            return Err(super::stopped());
        };
        outs.push(TpccOutcome::of(&r));
    }
    assert_eq!(outs.len(), RUNS.len(), "one outcome per configuration");
    for (o, (name, _)) in outs.iter().zip(RUNS) {
        assert!(
            o.transactions > 0.0 && o.device_busy_secs > 0.0 && o.flash_bytes_per_txn > 0.0,
            "{name}: a run that wrote ({o:?})"
        );
    }
    let (cns, fdp, oop) = (outs[0], outs[1], outs[2]);
    let scale = format!(
        "steady TPC-C, {} warehouses, 90% full, paced 50 MB/s, until 1 device capacity written",
        base[0].trim_start_matches("--warehouses=")
    );
    let cmd = format!("nowa tpcc {} [--sim-mode=fdp:8 [--write-path=oop --compression=lz4 --gdt --nowa --zone-size=auto]]", base.join(" "));
    Ok(vec![
        Measured::new(
            "TPC-C: flash bytes/txn, in place (CNS) / out of place (FDP)",
            cns.flash_bytes_per_txn / oop.flash_bytes_per_txn,
            &scale,
            &cmd,
        ),
        Measured::new(
            "TPC-C: flash bytes/txn, in place (FDP) / out of place (FDP)",
            fdp.flash_bytes_per_txn / oop.flash_bytes_per_txn,
            &scale,
            &cmd,
        ),
        Measured::new(
            "TPC-C: throughput, out of place (FDP) / in place (CNS)",
            oop.device_bound_tps() / cns.device_bound_tps(),
            &scale,
            &cmd,
        ),
    ])
}
