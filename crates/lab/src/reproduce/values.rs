//! Every paper number docs/ cites, in one table: the paper, the item (the key the runners
//! measure under), where in the paper it stands, its value and unit, and what counts as
//! reproducing it. Values are from the papers' texts and tables; a value read off a figure
//! says so in its source. Ratios are "new / old" (neutral 1), differences "new - old" in
//! percentage points (neutral 0).

use super::verdict::Criterion;
use super::Paper;

/// One number of a paper.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PaperValue {
    /// The paper.
    pub paper: Paper,
    /// What is measured (unique; the runners' key).
    pub item: &'static str,
    /// Where the paper states it.
    pub source: &'static str,
    /// The paper's value.
    pub value: f64,
    /// Its unit.
    pub unit: &'static str,
    /// What counts as reproducing it.
    pub criterion: Criterion,
}

const fn v(
    paper: Paper,
    item: &'static str,
    source: &'static str,
    value: f64,
    unit: &'static str,
    criterion: Criterion,
) -> PaperValue {
    PaperValue {
        paper,
        item,
        source,
        value,
        unit,
        criterion,
    }
}

use Paper::{Checkpointing as C, HowToWrite as H, Plan as P, SepFrozen as F, SsdIq as S};

/// Every paper value, in the order of the report.
pub const PAPER_VALUES: &[PaperValue] = &[
    // how-to-write-to-ssds: Table 1 (YCSB-A zipf 0.8, 800 GB, Samsung PM9A3).
    v(
        H,
        "Table 1: in-place DB WAF",
        "Table 1",
        2.00,
        "WAF",
        Criterion::near(0.05),
    ),
    v(
        H,
        "Table 1: in-place SSD WAF",
        "Table 1",
        2.36,
        "WAF",
        Criterion::Near {
            tolerance: 0.15,
            neutral: Some(1.0),
        },
    ),
    v(
        H,
        "Table 1: + comp. + pagepack DB WAF",
        "Table 1",
        0.62,
        "WAF",
        Criterion::ratio(0.10),
    ),
    v(
        H,
        "Table 1: + NoWA SSD WAF",
        "Table 1",
        1.07,
        "WAF",
        Criterion::near(0.10),
    ),
    v(
        H,
        "Table 1: + aligning GC unit SSD WAF",
        "Table 1",
        1.00,
        "WAF",
        Criterion::near(0.05),
    ),
    v(
        H,
        "Table 1: - comp. DB WAF",
        "Table 1",
        3.58,
        "WAF",
        Criterion::ratio(0.15),
    ),
    v(
        H,
        "Table 1: total WAF, in-place / + aligning GC unit",
        "Table 1 (2.00 x 2.36 / 0.60 x 1.00)",
        7.87,
        "x",
        Criterion::ratio(0.15),
    ),
    v(
        H,
        "Table 1: OPS, + aligning GC unit / in-place (device-bound)",
        "Table 1 (535K / 229K)",
        2.34,
        "x",
        Criterion::ratio(0.15),
    ),
    v(
        H,
        "TPC-C: flash bytes/txn, in place (CNS) / out of place (FDP)",
        "Figure 16 / section 7.4",
        7.2,
        "x",
        Criterion::ratio(0.15),
    ),
    v(
        H,
        "TPC-C: flash bytes/txn, in place (FDP) / out of place (FDP)",
        "Figure 16 / section 7.4",
        7.2,
        "x",
        Criterion::ratio(0.15),
    ),
    v(
        H,
        "TPC-C: throughput, out of place (FDP) / in place (CNS)",
        "Figure 16 / section 7.4",
        2.45,
        "x",
        Criterion::ratio(0.15),
    ),
    // ssd-iq: the simulator's figures.
    v(
        S,
        "Fig. 3b: 2R-FIFO WAF at 90/10 / uniform",
        "Figure 3b (about half of uniform, read off the figure)",
        0.5,
        "x uniform",
        Criterion::ratio(0.15),
    ),
    v(
        S,
        "Fig. 3b: naive greedy WAF at 95/5 / uniform",
        "Figure 3b, section 4.2 (skew worsens greedy's WAF)",
        1.0,
        "x uniform",
        Criterion::AtLeast,
    ),
    v(
        S,
        "Fig. 4b: greedy WAF at zipf 0.8 / uniform",
        "Figure 4b, section 4.3 (higher zipf first raises WAF)",
        1.0,
        "x uniform",
        Criterion::AtLeast,
    ),
    v(
        S,
        "Fig. 4b: WAF at zipf 1.2, 0.02% write buffer / none",
        "Figure 4b, section 4.3 (the buffer drops WAF at high skew)",
        1.0,
        "x",
        Criterion::AtMost,
    ),
    v(
        S,
        "Fig. 7a: greedy WAF at OP 5% (spare/physical)",
        "Figure 7a, section 4.6 (WAF ~ 1/(2 OP))",
        10.0,
        "WAF",
        Criterion::near(0.10),
    ),
    v(
        S,
        "Fig. 7a: greedy WAF at OP 10% (spare/physical)",
        "Figure 7a, section 4.6 (WAF ~ 1/(2 OP))",
        5.0,
        "WAF",
        Criterion::near(0.10),
    ),
    // sepfrozen: TPC-C, section 5 (Figures 11-14, 18).
    v(
        F,
        "Fig. 12: WAF, SepFrozenBIT / SepBIT",
        "section 5, Figure 12 (-30.2%)",
        0.698,
        "x",
        Criterion::ratio(0.15),
    ),
    v(
        F,
        "Fig. 11: FAR, SepFrozenBIT / SepBIT",
        "section 5, Figure 11 (-35.4%)",
        0.646,
        "x",
        Criterion::ratio(0.15),
    ),
    v(
        F,
        "Fig. 11: FAR, SepFrozenDAC / DAC",
        "section 5, Figure 11 (-27.5%)",
        0.725,
        "x",
        Criterion::ratio(0.15),
    ),
    v(
        F,
        "Fig. 12: WAF, FK / SepFrozenBIT",
        "section 5, Figure 12 (1.49 / 1.60)",
        0.93,
        "x",
        Criterion::ratio(0.05),
    ),
    v(
        F,
        "Fig. 18: SGD model accuracy",
        "section 5, Figure 18 (92%)",
        92.0,
        "%",
        Criterion::near(0.05),
    ),
    // hot-page-aware checkpointing: TPC-C on InnoDB (500 warehouses, 50% buffer unless said).
    v(
        C,
        "Table I: vanilla checkpoint share of page flushes",
        "Table I",
        99.1,
        "%",
        Criterion::near(0.05),
    ),
    v(
        C,
        "Table I: TPS, mcc 3 / vanilla",
        "Table I (995 / 630)",
        1.58,
        "x",
        Criterion::ratio(0.15),
    ),
    v(
        C,
        "Table I: write KB/txn, mcc 3 / vanilla",
        "Table I (34.3 / 67.3)",
        0.51,
        "x",
        Criterion::ratio(0.15),
    ),
    v(
        C,
        "Table I: LRU share, mcc 3 - vanilla",
        "Table I (56.9% - 0.9%)",
        56.0,
        "pp",
        Criterion::difference(0.15),
    ),
    v(
        C,
        "Fig. 5: TPS, mcc 8 / vanilla",
        "Figure 5 (1,340 / 630)",
        2.13,
        "x",
        Criterion::ratio(0.15),
    ),
    v(
        C,
        "Fig. 5: checkpoint share, mcc 8 - vanilla",
        "Figure 5 (18% - 99.1%)",
        -81.1,
        "pp",
        Criterion::difference(0.15),
    ),
    v(
        C,
        "Fig. 4: TPS at 20% buffer, mcc 3 / vanilla",
        "Figure 4, section 5 (deferral underperforms at 10-20%)",
        1.0,
        "x",
        Criterion::AtMost,
    ),
    v(
        C,
        "Fig. 4: vanilla checkpoint share at 20% buffer",
        "section 5 (22% at 20%)",
        22.0,
        "%",
        Criterion::near(0.15),
    ),
    v(
        C,
        "Table II: recovery time (CPU + simulated SSD), mcc 3 / vanilla",
        "Table II (2,467.3 s / 1,895.6 s, wall)",
        1.302,
        "x",
        Criterion::ratio(0.15),
    ),
    v(
        C,
        "Table II: redo log replayed, mcc 3 / vanilla",
        "Table II redo time (706 s / 240 s): its replay of the log",
        2.94,
        "x",
        Criterion::ratio(0.15),
    ),
    // PLAN (FEMU, 256 GiB; baseline = one open superblock, baseline@18 = the paper's "same
    // number of open superblocks").
    v(
        P,
        "Fig. 1: FIO WAF, full / 1/8 parallelism (baseline@18)",
        "Figure 1 (x2.3)",
        2.3,
        "x",
        Criterion::ratio(0.15),
    ),
    v(
        P,
        "Fig. 1: FIO WAF, full / 1/8 parallelism (baseline)",
        "Figure 1 (x2.3)",
        2.3,
        "x",
        Criterion::ratio(0.15),
    ),
    v(
        P,
        "Fig. 1: FIO throughput, 1/2 / full parallelism (baseline@18)",
        "Figure 1 (~40% more)",
        1.4,
        "x",
        Criterion::ratio(0.15),
    ),
    v(
        P,
        "Fig. 3: FIO WAF, PLAN-Pred-1/4 / baseline",
        "Figure 3 (-42%)",
        0.58,
        "x",
        Criterion::ratio(0.15),
    ),
    v(
        P,
        "Fig. 3: FIO WAF, PLAN-Pred-1/4 / baseline@18",
        "Figure 3 (-42%)",
        0.58,
        "x",
        Criterion::ratio(0.15),
    ),
    v(
        P,
        "Fig. 3: TPC-C WAF, PLAN-Pred-1/4 / baseline",
        "Figure 3 (at least -25%)",
        0.75,
        "x",
        Criterion::AtMost,
    ),
    v(
        P,
        "Fig. 3: YCSB WAF, PLAN-Pred-1/4 / baseline",
        "Figure 3 (-5%)",
        0.95,
        "x",
        Criterion::ratio(0.05),
    ),
    v(
        P,
        "Fig. 3: TPC-C WAF, PLAN-Pred-1/4 / baseline@18",
        "Figure 3 (at least -25%)",
        0.75,
        "x",
        Criterion::AtMost,
    ),
    v(
        P,
        "Fig. 3: YCSB WAF, PLAN-Pred-1/4 / baseline@18",
        "Figure 3 (-5%)",
        0.95,
        "x",
        Criterion::ratio(0.05),
    ),
    v(
        P,
        "Fig. 3: Fileserver WAF, PLAN-Pred-1/4 / baseline",
        "Figure 3 (at least -25%)",
        0.75,
        "x",
        Criterion::AtMost,
    ),
    v(
        P,
        "Fig. 3: Fileserver WAF, PLAN-Pred-1/4 / baseline@18",
        "Figure 3 (at least -25%)",
        0.75,
        "x",
        Criterion::AtMost,
    ),
    v(
        P,
        "Fig. 3: GCC WAF, PLAN-Pred-1/4 / baseline",
        "Figure 3 (more than halved, to 1.04-1.07)",
        0.5,
        "x",
        Criterion::AtMost,
    ),
    v(
        P,
        "Fig. 3: GCC WAF, PLAN-Pred-1/4 / baseline@18",
        "Figure 3 (more than halved, to 1.04-1.07)",
        0.5,
        "x",
        Criterion::AtMost,
    ),
    v(
        P,
        "Fig. 3: FIO WAF, PLAN-Pred-1/8 / PLAN-Pred-1/4",
        "Figure 3 (1/4 -> 1/8 \"marginally\": read as within 5%)",
        1.0,
        "x",
        Criterion::near(0.05),
    ),
    v(
        P,
        "Fig. 4: FIO blocks erased, PLAN-Pred-1/4 / baseline",
        "Figure 4 (-46%)",
        0.54,
        "x",
        Criterion::ratio(0.15),
    ),
    v(
        P,
        "Fig. 4: FIO blocks erased, PLAN-Pred-1/4 / baseline@18",
        "Figure 4 (-46%)",
        0.54,
        "x",
        Criterion::ratio(0.15),
    ),
    v(
        P,
        "Fig. 4: GCC blocks erased, PLAN-Pred-1/4 / baseline",
        "Figure 4 (-69%)",
        0.31,
        "x",
        Criterion::ratio(0.15),
    ),
    v(
        P,
        "Fig. 4: GCC blocks erased, PLAN-Pred-1/4 / baseline@18",
        "Figure 4 (-69%)",
        0.31,
        "x",
        Criterion::ratio(0.15),
    ),
    v(
        P,
        "Fig. 5: FIO mean victim valid ratio, PLAN-Pred-1/4 - baseline",
        "Figure 5 (PLAN's CDF left of the others; no number: read as at least 2 pp lower)",
        -2.0,
        "pp",
        Criterion::AtMost,
    ),
    v(
        P,
        "Fig. 5: FIO mean victim valid ratio, PLAN-Pred-1/4 - baseline@18",
        "Figure 5 (PLAN's CDF left of the others; no number: read as at least 2 pp lower)",
        -2.0,
        "pp",
        Criterion::AtMost,
    ),
    v(
        P,
        "Fig. 5: TPC-C mean victim valid ratio, PLAN-Pred-1/4 - baseline",
        "Figure 5 (PLAN's CDF left of the others; no number: read as at least 2 pp lower)",
        -2.0,
        "pp",
        Criterion::AtMost,
    ),
    v(
        P,
        "Fig. 5: TPC-C mean victim valid ratio, PLAN-Pred-1/4 - baseline@18",
        "Figure 5 (PLAN's CDF left of the others; no number: read as at least 2 pp lower)",
        -2.0,
        "pp",
        Criterion::AtMost,
    ),
    v(
        P,
        "Fig. 5: Fileserver mean victim valid ratio, PLAN-Pred-1/4 - baseline",
        "Figure 5 (PLAN's CDF left of the others; no number: read as at least 2 pp lower)",
        -2.0,
        "pp",
        Criterion::AtMost,
    ),
    v(
        P,
        "Fig. 5: Fileserver mean victim valid ratio, PLAN-Pred-1/4 - baseline@18",
        "Figure 5 (PLAN's CDF left of the others; no number: read as at least 2 pp lower)",
        -2.0,
        "pp",
        Criterion::AtMost,
    ),
    v(
        P,
        "Fig. 5: GCC mean victim valid ratio, PLAN-Pred-1/4 - baseline",
        "Figure 5 (PLAN's CDF left of the others; no number: read as at least 2 pp lower)",
        -2.0,
        "pp",
        Criterion::AtMost,
    ),
    v(
        P,
        "Fig. 5: GCC mean victim valid ratio, PLAN-Pred-1/4 - baseline@18",
        "Figure 5 (PLAN's CDF left of the others; no number: read as at least 2 pp lower)",
        -2.0,
        "pp",
        Criterion::AtMost,
    ),
    v(
        P,
        "Fig. 6: FIO throughput, PLAN-Pred-1/4 / baseline",
        "Figure 6 (+30%)",
        1.30,
        "x",
        Criterion::ratio(0.15),
    ),
    v(
        P,
        "Fig. 6: FIO throughput, PLAN-Pred-1/4 / baseline@18",
        "Figure 6 (+30%)",
        1.30,
        "x",
        Criterion::ratio(0.15),
    ),
    v(
        P,
        "Fig. 6: Fileserver throughput, PLAN-Pred-1/4 / baseline",
        "Figure 6 (~+10%)",
        1.10,
        "x",
        Criterion::ratio(0.05),
    ),
    v(
        P,
        "Fig. 6: Fileserver throughput, PLAN-Pred-1/4 / baseline@18",
        "Figure 6 (~+10%)",
        1.10,
        "x",
        Criterion::ratio(0.05),
    ),
    v(
        P,
        "Fig. 6: TPC-C throughput, PLAN-Pred-1/4 / baseline",
        "Figure 6 (kept, if not improved: read as at least 0.97)",
        0.97,
        "x",
        Criterion::AtLeast,
    ),
    v(
        P,
        "Fig. 6: YCSB throughput, PLAN-Pred-1/4 / baseline",
        "Figure 6 (kept, if not improved: read as at least 0.97)",
        0.97,
        "x",
        Criterion::AtLeast,
    ),
    v(
        P,
        "Fig. 6: GCC throughput, PLAN-Pred-1/4 / baseline",
        "Figure 6 (kept, if not improved: read as at least 0.97)",
        0.97,
        "x",
        Criterion::AtLeast,
    ),
    v(
        P,
        "Fill 90%: FIO WAF, PLAN-Pred-1/4 / baseline",
        "Figure 3 (-42%; the paper gives no aging level)",
        0.58,
        "x",
        Criterion::ratio(0.15),
    ),
    v(
        P,
        "Fill 90%: FIO WAF, PLAN-Pred-1/4 / baseline@18",
        "Figure 3 (-42%; the paper gives no aging level)",
        0.58,
        "x",
        Criterion::ratio(0.15),
    ),
    v(
        P,
        "Fill 95%: FIO WAF, PLAN-Pred-1/4 / baseline",
        "Figure 3 (-42%; the paper gives no aging level)",
        0.58,
        "x",
        Criterion::ratio(0.15),
    ),
    v(
        P,
        "Fill 95%: FIO WAF, PLAN-Pred-1/4 / baseline@18",
        "Figure 3 (-42%; the paper gives no aging level)",
        0.58,
        "x",
        Criterion::ratio(0.15),
    ),
    v(
        P,
        "Fill 98%: FIO WAF, PLAN-Pred-1/4 / baseline",
        "Figure 3 (-42%; the paper gives no aging level)",
        0.58,
        "x",
        Criterion::ratio(0.15),
    ),
    v(
        P,
        "Fill 98%: FIO WAF, PLAN-Pred-1/4 / baseline@18",
        "Figure 3 (-42%; the paper gives no aging level)",
        0.58,
        "x",
        Criterion::ratio(0.15),
    ),
    v(
        P,
        "Fill 100%: FIO WAF, PLAN-Pred-1/4 / baseline",
        "Figure 3 (-42%; the paper gives no aging level)",
        0.58,
        "x",
        Criterion::ratio(0.15),
    ),
    v(
        P,
        "Fill 100%: FIO WAF, PLAN-Pred-1/4 / baseline@18",
        "Figure 3 (-42%; the paper gives no aging level)",
        0.58,
        "x",
        Criterion::ratio(0.15),
    ),
];

/// The paper value of `item`.
#[must_use]
pub fn lookup(item: &str) -> Option<&'static PaperValue> {
    PAPER_VALUES.iter().find(|p| p.item == item)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_are_unique_and_every_paper_has_three() {
        for (i, a) in PAPER_VALUES.iter().enumerate() {
            assert!(
                PAPER_VALUES[i + 1..].iter().all(|b| b.item != a.item),
                "{} twice",
                a.item
            );
            assert!(a.value.is_finite() && !a.unit.is_empty() && !a.source.is_empty());
        }
        for p in Paper::ALL {
            let n = PAPER_VALUES.iter().filter(|v| v.paper == p).count();
            assert!(n >= 3, "{p}: {n} values");
        }
    }
}
