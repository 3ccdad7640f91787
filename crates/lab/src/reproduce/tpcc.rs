//! how-to-write-to-ssds' TPC-C comparison (its Figure 16; docs/tpcc.md section 10): in place
//! on a conventional and on an FDP SSD against out of place with every optimization on FDP,
//! steady TPC-C at 90% fill, paced, until the device received its capacity.

use super::{DocTable, Measured, Paper, Scale, Spec};
use crate::ckpt::Host;
use crate::ckpt::TpccReport;
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
) -> Result<(Vec<Measured>, Vec<DocTable>), Error> {
    let base = common(spec.scale, spec.seed);
    let mut reports = Vec::new();
    for (i, (name, extra)) in RUNS.iter().enumerate() {
        sub(i as u64, RUNS.len() as u64, &format!("TPC-C {name}"));
        let mut f = base.clone();
        f.extend(extra.split_whitespace().map(String::from));
        let Some(r) = crate::ckpt::tpcc_report(host, &f, &dir.join(format!("tpcc-{name}.json")))?
        else {
            return Err(super::stopped());
        };
        reports.push(r);
    }
    let reports: [TpccReport; 3] = reports
        .try_into()
        .unwrap_or_else(|_| unreachable!("one report per configuration"));
    let scale = scale_line(&base);
    let cmd = command(&base);
    let tables = tables(&reports, &scale, &cmd);
    Ok((measured(&reports, &scale, &cmd), tables))
}

fn scale_line(base: &[String]) -> String {
    format!(
        "steady TPC-C, {} warehouses, 90% full, paced 50 MB/s, until 1 device capacity written",
        base[0].trim_start_matches("--warehouses=")
    )
}

fn command(base: &[String]) -> String {
    format!("nowa tpcc {} [--sim-mode=fdp:8 [--write-path=oop --compression=lz4 --gdt --nowa --zone-size=auto]]", base.join(" "))
}

/// The three outcomes, each checked to have run.
fn outcomes(reports: &[TpccReport; 3]) -> [TpccOutcome; 3] {
    let outs = reports.each_ref().map(TpccOutcome::of);
    for (o, (name, _)) in outs.iter().zip(RUNS) {
        assert!(
            o.transactions > 0.0 && o.device_busy_secs > 0.0 && o.flash_bytes_per_txn > 0.0,
            "{name}: a run that wrote ({o:?})"
        );
    }
    outs
}

fn measured(reports: &[TpccReport; 3], scale: &str, cmd: &str) -> Vec<Measured> {
    let [cns, fdp, oop] = outcomes(reports);
    vec![
        Measured::new(
            "TPC-C: flash bytes/txn, in place (CNS) / out of place (FDP)",
            cns.flash_bytes_per_txn / oop.flash_bytes_per_txn,
            scale,
            cmd,
        ),
        Measured::new(
            "TPC-C: flash bytes/txn, in place (FDP) / out of place (FDP)",
            fdp.flash_bytes_per_txn / oop.flash_bytes_per_txn,
            scale,
            cmd,
        ),
        Measured::new(
            "TPC-C: throughput, out of place (FDP) / in place (CNS)",
            oop.device_bound_tps() / cns.device_bound_tps(),
            scale,
            cmd,
        ),
    ]
}

/// The columns of the comparison's tables: the three configurations.
const COLUMNS: [&str; 3] = [
    "in place, CNS",
    "in place, FDP",
    "out of place, all optimizations, FDP",
];

/// An optional value's cell ("-" when the run cannot tell).
fn opt(x: Option<f64>, prec: usize) -> String {
    x.map_or_else(|| "-".into(), |v| format!("{v:.prec$}"))
}

type Cell = fn(&TpccReport) -> String;

/// The rows of the absolute table: name, the cell of one run.
const ROWS: [(&str, Cell); 14] = [
    ("run: seconds, transactions", |r| {
        format!("{:.1} s, {}", r.run.seconds, r.run.transactions)
    }),
    ("device busy / run time", |r| {
        opt(r.device_busy_secs.map(|b| 100.0 * b / r.run.seconds), 0) + "%"
    }),
    ("tpmC per device-busy minute (New-Orders)", |r| {
        opt(r.device_bound_tpmc, 0)
    }),
    ("transactions per device-busy second", |r| {
        format!("{:.1}", TpccOutcome::of(r).device_bound_tps())
    }),
    ("CPU per transaction, us", |r| {
        format!("{:.1}", r.run.cpu_us_per_txn)
    }),
    ("user page bytes/txn (eviction / checkpoint)", |r| {
        let d = &r.drilldown;
        format!(
            "{:.0} ({:.0} / {:.0})",
            per_txn(r, d.user_bytes),
            per_txn(r, d.eviction_bytes),
            per_txn(r, d.checkpoint_bytes)
        )
    }),
    ("stored page bytes/txn (compressed, packed)", |r| {
        format!("{:.0}", per_txn(r, r.drilldown.user_store_bytes))
    }),
    (
        "doublewrite / DB GC / compensation / mapping bytes/txn",
        |r| {
            let d = &r.drilldown;
            format!(
                "{:.0} / {:.0} / {:.0} / {:.0}",
                per_txn(r, d.doublewrite_bytes),
                per_txn(r, d.db_gc_bytes),
                per_txn(r, d.compensation_bytes),
                per_txn(r, d.meta_bytes)
            )
        },
    ),
    ("WAL bytes/txn", |r| format!("{:.0}", r.wal_bytes_per_txn)),
    ("device (host) bytes/txn", |r| {
        format!("{:.0}", r.host_bytes_per_txn)
    }),
    ("SSD GC bytes/txn", |r| {
        opt(r.drilldown.ssd_gc_bytes.map(|b| per_txn(r, b)), 0)
    }),
    ("**flash bytes/txn**", |r| opt(r.flash_bytes_per_txn, 0)),
    ("read bytes/txn (pool hit ratio)", |r| {
        format!("{:.0} ({:.3})", r.read_bytes_per_txn, r.engine.hit_ratio)
    }),
    ("DB / SSD / total WAF", |r| {
        format!(
            "{} / {} / {}",
            opt(r.db_waf, 2),
            opt(r.ssd_waf, 2),
            opt(r.total_waf, 2)
        )
    }),
];

/// `bytes` of the run phase per transaction.
fn per_txn(r: &TpccReport, bytes: u64) -> f64 {
    assert!(r.run.transactions > 0, "a run that committed");
    #[expect(
        clippy::cast_precision_loss,
        reason = "bytes and counts far below 2^52"
    )]
    let v = bytes as f64 / r.run.transactions as f64;
    v
}

/// The comparison's tables (generated blocks `how-to-write-to-ssds:tpcc` and `:tpcc-ratios`,
/// `@full` for the full scale's): every run's bytes per transaction by cause, WAFs and
/// device-bound throughput, then the paper's ratios beside ours against each in-place run.
fn tables(reports: &[TpccReport; 3], scale: &str, cmd: &str) -> Vec<DocTable> {
    let header = |first: &str, cols: &[&str]| {
        std::iter::once(first)
            .chain(cols.iter().copied())
            .map(String::from)
            .collect::<Vec<_>>()
    };
    let rows = ROWS
        .iter()
        .map(|(name, cell)| {
            std::iter::once((*name).to_owned())
                .chain(reports.iter().map(cell))
                .collect()
        })
        .collect();
    let absolute = DocTable::new(
        Paper::HowToWrite,
        "tpcc",
        header("", &COLUMNS),
        rows,
        format!("Scale: {scale}; one run per configuration; `{cmd}`. Per-transaction bytes are of the run phase (after the load)."),
    );
    let [cns, fdp, oop] = outcomes(reports);
    let paper = |item| super::values::lookup(item).map_or(f64::NAN, |v| v.value);
    let x = |v: f64| format!("{v:.2}x");
    let ratios = DocTable::new(
        Paper::HowToWrite,
        "tpcc-ratios",
        header(
            "",
            &[
                "paper (15,000 warehouses, FDP SSD A)",
                "nowa vs in place, CNS",
                "nowa vs in place, FDP",
            ],
        ),
        vec![
            vec![
                "flash bytes per transaction, in place / out of place".into(),
                x(paper("TPC-C: flash bytes/txn, in place (CNS) / out of place (FDP)")),
                x(cns.flash_bytes_per_txn / oop.flash_bytes_per_txn),
                x(fdp.flash_bytes_per_txn / oop.flash_bytes_per_txn),
            ],
            vec![
                "throughput, out of place / in place (transactions per device-busy second)".into(),
                x(paper("TPC-C: throughput, out of place (FDP) / in place (CNS)")),
                x(oop.device_bound_tps() / cns.device_bound_tps()),
                x(oop.device_bound_tps() / fdp.device_bound_tps()),
            ],
        ],
        format!("Scale: {scale}; the paper's values are its Figure 16 / section 7.4 (both runs on FDP SSD A, two hours each)."),
    );
    vec![absolute, ratios]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The quick report's three runs as committed (docs/reproduction/how-to-write-to-ssds).
    fn committed() -> [TpccReport; 3] {
        RUNS.map(|(name, _)| {
            let p = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!(
                "../../docs/reproduction/how-to-write-to-ssds/tpcc-{name}.json"
            ));
            TpccReport::read(&p).expect("a committed nowa tpcc report")
        })
    }

    fn row<'a>(t: &'a DocTable, starts: &str) -> &'a [String] {
        t.rows
            .iter()
            .find(|r| r[0].starts_with(starts))
            .unwrap_or_else(|| panic!("{}: no row {starts}", t.name))
    }

    /// The comparison's tables are the runs' reports: each configuration's bytes and WAFs in
    /// its column, and the ratios those of the report's entries.
    #[test]
    fn the_comparison_tables_are_the_runs_reports() {
        let r = committed();
        let t = tables(&r, "the scale", "the command");
        assert_eq!(t.len(), 2);
        let abs = &t[0];
        assert_eq!(abs.name, "tpcc");
        assert_eq!(abs.columns.len(), 1 + RUNS.len());
        let flash = row(abs, "**flash bytes/txn");
        for (i, rep) in r.iter().enumerate() {
            let want = rep.flash_bytes_per_txn.expect("a simulated SSD tells");
            assert_eq!(flash[i + 1], format!("{want:.0}"), "{}", RUNS[i].0);
        }
        let dw = row(abs, "doublewrite");
        assert!(
            !dw[1].starts_with("0 /"),
            "in place writes doublewrite copies"
        );
        assert!(
            dw[3].starts_with("0 /"),
            "out of place writes none: {}",
            dw[3]
        );
        let waf = row(abs, "DB / SSD / total WAF");
        assert!(
            waf[3].contains(" / 1.00 / "),
            "out of place: SSD WAF 1 ({})",
            waf[3]
        );
        assert!(abs.note.contains("the scale") && abs.note.contains("the command"));
        let m = measured(&r, "s", "c");
        let ratios = &t[1];
        assert_eq!(ratios.name, "tpcc-ratios");
        let flash = row(ratios, "flash bytes");
        assert_eq!(flash[1], "7.20x", "the paper's value");
        assert_eq!(flash[2], format!("{:.2}x", m[0].value));
        assert_eq!(flash[3], format!("{:.2}x", m[1].value));
        let tput = row(ratios, "throughput");
        assert_eq!(tput[1], "2.45x", "the paper's value");
        assert_eq!(tput[2], format!("{:.2}x", m[2].value));
    }
}
