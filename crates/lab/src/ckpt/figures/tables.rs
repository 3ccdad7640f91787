//! The tables docs/checkpointing.md quotes, as [`DocTable`]s of the reproduction report
//! (generated blocks `hot-page-aware-checkpointing:NAME`): Table I, Figure 4's table, Table
//! II and Figures 1-2's shares, each cell the mean over the seeds with the min-max beside it,
//! the paper's values in their own columns. No number of these tables is typed by hand.

use super::{f, Agg, Point, Recovery, Row};
use crate::reproduce::{DocTable, Paper};

/// `mean [min-max]` of `get` over the setting's seeds (the mean alone for one seed).
fn cell(a: &Agg<'_>, get: &dyn Fn(&Row) -> f64, prec: usize) -> String {
    let m = a.mean(get);
    if a.rows.len() < 2 {
        return format!("{m:.prec$}");
    }
    let (lo, hi) = a.range(get);
    format!("{m:.prec$} [{lo:.prec$}-{hi:.prec$}]")
}

/// The vanilla setting (count 0, no bound) of `cols`' buffer and path.
fn vanilla<'a, 'b>(cols: &'b [&'b Agg<'a>], of: &Agg<'_>) -> Option<&'b Agg<'a>> {
    cols.iter().copied().find(|v| {
        v.point.mcc == 0
            && v.point.redo_bound.is_none()
            && v.point.path == of.point.path
            && v.point.buffer_pct == of.point.buffer_pct
    })
}

/// `cell`, and the ratio of the means to vanilla's when `a` is not vanilla.
fn with_ratio(cols: &[&Agg<'_>], a: &Agg<'_>, get: &dyn Fn(&Row) -> f64, prec: usize) -> String {
    let c = cell(a, get, prec);
    match vanilla(cols, a) {
        Some(v) if !std::ptr::eq(v, a) => format!("{c} ({:.2}x)", a.mean(get) / v.mean(get)),
        _ => c,
    }
}

type Get = fn(&Row) -> f64;

/// Table I's rows: name, the paper's vanilla / mcc 3 / mcc 8, nowa's field, decimals,
/// whether a ratio to vanilla is shown.
const TABLE1_ROWS: [(&str, [&str; 3], Get, usize, bool); 10] = [
    (
        "TPS (device-bound)",
        ["630", "995 (1.58x)", "~1,340 (2.13x)"],
        |r| r.bound_tps,
        0,
        true,
    ),
    ("TPS (wall)", ["", "", ""], |r| r.tps, 0, true),
    (
        "write KB/txn (device: pages, doublewrite, WAL)",
        ["67.3", "34.3 (0.51x)", ""],
        |r| r.write_kb_txn,
        1,
        true,
    ),
    (
        "page writes KB/txn (checkpoint + LRU)",
        ["", "", ""],
        |r| r.page_kb_txn,
        2,
        true,
    ),
    (
        "checkpoint flush %",
        ["99.1", "43", "18"],
        |r| r.ckpt_pct,
        1,
        false,
    ),
    ("LRU flush %", ["0.9", "56.9", ""], |r| r.lru_pct, 1, false),
    (
        "forced (WAL limit) %",
        ["", "", ""],
        |r| r.forced_pct,
        1,
        false,
    ),
    ("deferrals/txn", ["", "", ""], |r| r.deferrals_txn, 2, false),
    ("hit ratio", ["", "", ""], |r| r.hit_ratio, 4, false),
    (
        "simulated SSD busy, % of wall time",
        ["", "", ""],
        |r| 100.0 * r.device_util,
        0,
        false,
    ),
];

/// Table I at the buffer `big`: one column per (path, count), the paper's three beside.
fn table1(aggs: &[Agg<'_>], big: u32, note: &str) -> Option<DocTable> {
    let cols: Vec<&Agg<'_>> = aggs
        .iter()
        .filter(|a| a.point.buffer_pct == big && a.point.redo_bound.is_none())
        .collect();
    if cols.is_empty() {
        return None;
    }
    let mut header: Vec<String> = ["", "paper vanilla", "paper mcc 3", "paper mcc 8"]
        .map(String::from)
        .to_vec();
    header.extend(cols.iter().map(|a| a.point.label()));
    assert!(
        cols.iter().all(|a| a.point.buffer_pct == big),
        "Table I is of one buffer"
    );
    let rows = TABLE1_ROWS
        .iter()
        .map(|(name, paper, get, prec, ratio)| {
            let mut r = vec![(*name).to_owned()];
            r.extend(paper.iter().map(|p| (*p).to_owned()));
            r.extend(cols.iter().map(|a| {
                if *ratio {
                    with_ratio(&cols, a, get, *prec)
                } else {
                    cell(a, get, *prec)
                }
            }));
            r
        })
        .collect();
    Some(DocTable::new(
        Paper::Checkpointing,
        "table-1",
        header,
        rows,
        format!("Buffer {big}% of the loaded database. {note}"),
    ))
}

/// The paper's Figure 4 at a buffer, as its text gives it.
fn paper_fig4(buffer: u32) -> &'static str {
    match buffer {
        10 | 20 => "deferral slower than vanilla; vanilla checkpoint share 22% at 20%",
        50 => "mcc 3 1.58x, mcc 8 2.13x; vanilla checkpoint share 99.1%",
        _ => "",
    }
}

/// Figure 4's table: device-bound TPS per buffer and count (ratio to vanilla), and
/// vanilla's flush shares.
fn figure4(aggs: &[Agg<'_>], note: &str) -> Option<DocTable> {
    let grid: Vec<&Agg<'_>> = aggs
        .iter()
        .filter(|a| a.point.redo_bound.is_none() && a.point.path == "inplace")
        .collect();
    let mut buffers: Vec<u32> = grid.iter().map(|a| a.point.buffer_pct).collect();
    let mut counts: Vec<u32> = grid.iter().map(|a| a.point.mcc).collect();
    for v in [&mut buffers, &mut counts] {
        v.sort_unstable();
        v.dedup();
    }
    if buffers.is_empty() {
        return None;
    }
    let mut header = vec!["buffer".to_owned()];
    header.extend(counts.iter().map(|m| format!("TPS mcc {m}")));
    header.extend(["vanilla checkpoint %", "vanilla LRU %", "paper"].map(String::from));
    let tps: Get = |r| r.bound_tps;
    let rows = buffers
        .iter()
        .map(|&b| {
            let at = |m: u32| {
                grid.iter()
                    .copied()
                    .find(|a| a.point.buffer_pct == b && a.point.mcc == m)
            };
            let mut r = vec![format!("{b}%")];
            r.extend(
                counts
                    .iter()
                    .map(|&m| at(m).map_or_else(String::new, |a| with_ratio(&grid, a, &tps, 0))),
            );
            for get in [(|r| r.ckpt_pct) as Get, |r| r.lru_pct] {
                r.push(at(0).map_or_else(String::new, |a| cell(a, &get, 1)));
            }
            r.push(paper_fig4(b).to_owned());
            r
        })
        .collect();
    Some(DocTable::new(
        Paper::Checkpointing,
        "fig-4",
        header,
        rows,
        format!("Device-bound TPS, in place. {note}"),
    ))
}

/// `mean [min-max]` of the crashes' values.
fn spread(v: &[f64], prec: usize) -> String {
    assert!(!v.is_empty(), "a count has a crash");
    let m = v.iter().sum::<f64>() / v.len() as f64;
    if v.len() < 2 {
        return format!("{m:.prec$}");
    }
    let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    format!("{m:.prec$} [{lo:.prec$}-{hi:.prec$}]")
}

/// The 95% bootstrap interval of `mean(b) / mean(a)`: 2,000 resamples of each list with
/// replacement (a fixed generator: the same lists give the same interval).
///
/// # Panics
/// If a list is empty.
fn ratio_interval(a: &[f64], b: &[f64]) -> (f64, f64) {
    assert!(!a.is_empty() && !b.is_empty(), "values to resample");
    let mut state = 0x9E37_79B9_7F4A_7C15_u64;
    // SplitMix64.
    let mut next = move |n: usize| {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        usize::try_from((z ^ (z >> 31)) % n as u64).unwrap_or(0)
    };
    let mut mean = |v: &[f64]| (0..v.len()).map(|_| v[next(v.len())]).sum::<f64>() / v.len() as f64;
    let mut r: Vec<f64> = (0..2000).map(|_| mean(b) / mean(a)).collect();
    r.sort_by(f64::total_cmp);
    let (lo, hi) = (r[49], r[1949]);
    assert!(lo <= hi, "an interval");
    (lo, hi)
}

/// Whether the ratio mcc 3 / vanilla is settled: `ratio (95% bootstrap lo-hi)`, and whether
/// the min-max ranges of the two counts overlap.
fn settled(v0: &[f64], v3: &[f64], what: &str) -> String {
    let m = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let (lo, hi) = ratio_interval(v0, v3);
    let max = |v: &[f64]| v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let min = |v: &[f64]| v.iter().copied().fold(f64::INFINITY, f64::min);
    let overlap = min(v3) <= max(v0) && min(v0) <= max(v3);
    format!(
        "{what} mcc 3 / vanilla {:.2}x (95% bootstrap {lo:.2}-{hi:.2}; the min-max of the two counts {})",
        m(v3) / m(v0),
        if overlap { "overlap" } else { "do not overlap" }
    )
}

/// Table II: per count (no bound), the crashes' recovery phases, mean [min-max] over the
/// crash images (`crash_points` per crash run, one run per seed, spread over the second half
/// of the run and so over its flush cycles).
fn table2(crashes: &[(Point, Recovery)], seconds: f64) -> Option<DocTable> {
    let mut counts: Vec<u32> = crashes
        .iter()
        .filter(|(p, _)| p.redo_bound.is_none())
        .map(|(p, _)| p.mcc)
        .collect();
    counts.sort_unstable();
    counts.dedup();
    if counts.is_empty() {
        return None;
    }
    let header = [
        "run",
        "crashes",
        "recovery s (CPU + simulated SSD)",
        "redo range MiB",
        "records replayed",
        "pages read",
        "open wall s",
        "redo wall s",
    ]
    .map(String::from)
    .to_vec();
    let mut rows: Vec<Vec<String>> = counts.iter().map(|&m| table2_row(crashes, m)).collect();
    for (run, open, redo) in [
        ("paper vanilla", "1,895.6", "240"),
        ("paper mcc 3", "2,467.3 (1.30x)", "706 (2.94x)"),
    ] {
        rows.push(
            [run, "1", open, "", "", "", open, redo]
                .map(String::from)
                .to_vec(),
        );
    }
    let mut moments: Vec<f64> = crashes.iter().map(|(_, r)| r.crash_secs).collect();
    moments.sort_by(f64::total_cmp);
    moments.dedup();
    let moments: Vec<String> = moments.iter().map(|t| format!("{t:.1}")).collect();
    Some(DocTable::new(
        Paper::Checkpointing,
        "table-2",
        header,
        rows,
        format!(
            "Each crash run: TPC-C on a file paced by the simulated SSD's timing model (as the \
             paced runs: the page cleaner's clock is the model's) at the largest buffer, one per \
             seed; a crash image at {} s after the load (a copy while the process is stopped, \
             the last by SIGKILL at {seconds:.0} s), each recovered and checked (TPC-C \
             consistency); mean [min-max] over the images. Recovery s: the open's CPU time plus \
             its I/O timed by the simulated SSD's model, which the machine's load does not set; \
             the wall times beside it are the machine's. The paper's rows give its wall times \
             (its recovery is I/O-bound on a real SSD).{}",
            moments.join(", "),
            table2_ratios(crashes, &counts)
        ),
    ))
}

/// The crash images of count `m` (the count's own crash runs, not a redo-bound run's).
fn images_of(crashes: &[(Point, Recovery)], m: u32) -> Vec<&Recovery> {
    crashes
        .iter()
        .filter(|(p, _)| p.mcc == m && p.redo_bound.is_none())
        .map(|(_, r)| r)
        .collect()
}

/// Table II's row of count `m`: mean [min-max] of each recovery figure over its images.
fn table2_row(crashes: &[(Point, Recovery)], m: u32) -> Vec<String> {
    let of = images_of(crashes, m);
    assert!(!of.is_empty(), "mcc {m} has a crash");
    let col = |g: &dyn Fn(&Recovery) -> f64, prec| {
        spread(&of.iter().map(|r| g(r)).collect::<Vec<_>>(), prec)
    };
    vec![
        format!("mcc {m}"),
        of.len().to_string(),
        col(&|r| r.work_secs(), 2),
        col(&|r| f(r.redo_bytes) / 1_048_576.0, 1),
        col(&|r| f(r.records), 0),
        col(&|r| f(r.pages_read), 0),
        col(&|r| r.open_secs, 2),
        col(&|r| f(r.redo_us) / 1e6, 2),
    ]
}

/// The paper's two ratios (mcc 3 / vanilla) with whether they are settled, when both counts
/// crashed; else nothing.
fn table2_ratios(crashes: &[(Point, Recovery)], counts: &[u32]) -> String {
    if !(counts.contains(&0) && counts.contains(&3)) {
        return String::new();
    }
    let of = |m: u32, g: &dyn Fn(&Recovery) -> f64| -> Vec<f64> {
        images_of(crashes, m).into_iter().map(g).collect()
    };
    format!(
        " {}; {}; {}.",
        settled(
            &of(0, &Recovery::work_secs),
            &of(3, &Recovery::work_secs),
            "Recovery time (CPU + simulated SSD)"
        ),
        settled(
            &of(0, &|r| f(r.redo_bytes)),
            &of(3, &|r| f(r.redo_bytes)),
            "redo range"
        ),
        settled(
            &of(0, &|r| r.open_secs),
            &of(3, &|r| r.open_secs),
            "wall-clock open time"
        )
    )
}

/// Figures 1-2's shares: (pages selected once, by the 3rd selection; checkpoint writes by
/// pages resident >= 5 and >= 10 selections), evicted pages and with the resident ones.
pub(super) fn residency(evicted: [f64; 4], all: [f64; 4], big: u32, seed: u64) -> DocTable {
    let names = [
        "pages selected once, % of pages",
        "pages selected at most 3 times, % of pages",
        "checkpoint writes by pages resident >= 5 selections, %",
        "checkpoint writes by pages resident >= 10 selections, %",
    ];
    let paper = ["~62", "~81", "~51", "~20"];
    let rows = (0..4)
        .map(|i| {
            vec![
                names[i].to_owned(),
                paper[i].to_owned(),
                format!("{:.1}", evicted[i]),
                format!("{:.1}", all[i]),
            ]
        })
        .collect();
    DocTable::new(
        Paper::Checkpointing,
        "figures-1-2",
        [
            "",
            "paper",
            "nowa: evicted pages",
            "nowa: evicted + resident at the end",
        ]
        .map(String::from)
        .to_vec(),
        rows,
        format!(
            "Vanilla at buffer {big}%, seed {seed}; engine lifetime (load and run); a page's \
             selections are the consecutive checkpoint selections it saw while resident and dirty."
        ),
    )
}

/// Every table of the runs (the residency table is added by the caller).
pub(super) fn all(
    aggs: &[Agg<'_>],
    crashes: &[(Point, Recovery)],
    big: u32,
    seconds: f64,
    note: &str,
) -> Vec<DocTable> {
    [
        table1(aggs, big, note),
        figure4(aggs, note),
        table2(crashes, seconds),
    ]
    .into_iter()
    .flatten()
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The interval brackets the ratio of the means, and says when it is not settled.
    #[test]
    fn the_bootstrap_interval_brackets_the_ratio_and_its_spread() {
        let a = [1.0, 2.0, 3.0, 2.0, 1.0, 3.0, 2.0, 2.0];
        let far: Vec<f64> = a.iter().map(|x| x * 4.0).collect();
        let (lo, hi) = ratio_interval(&a, &far);
        assert!(lo > 2.5 && hi < 6.0 && lo < 4.0 && hi > 4.0, "{lo}-{hi}");
        assert_eq!(
            ratio_interval(&a, &far),
            (lo, hi),
            "the same lists, the same interval"
        );
        let (lo, hi) = ratio_interval(&a, &a);
        assert!(lo < 1.0 && hi > 1.0, "{lo}-{hi}");
        let s = settled(&a, &far, "redo time");
        assert!(s.contains("4.00x") && s.contains("do not overlap"), "{s}");
        assert!(settled(&a, &a, "x").contains("min-max of the two counts overlap"));
    }
}
