//! The figures' paper marks (Figures 3, 4, 6), Figure 5's rule for flat CDFs and its zoomed x
//! axis, and the victims table, on small hand-made runs (no simulation).

use super::*;
use nowa_flash::parallel::{ParallelCounters, StreamStats};

/// A run as the figures read it: the scheme, WAF, blocks erased, IOPS and the victims' histogram.
fn run(scheme: &str, waf: f64, erased: u64, iops: f64, hist: Vec<u64>) -> RunResult {
    RunResult {
        scheme: scheme.to_owned(),
        workload: String::new(),
        counters: ParallelCounters {
            erased_blocks: erased,
            ..ParallelCounters::default()
        },
        waf,
        requests: 0,
        sim_secs: 1.0,
        iops,
        pages_per_sec: 0.0,
        read_us: [0.0; 3],
        write_us: [0.0; 3],
        victim_hist: hist,
        cpu_secs: 0.0,
        streams: StreamStats::default(),
        valid_end: 0.0,
        interrupted: false,
    }
}

/// A victim histogram (101 bins) from (valid %, victims) pairs.
fn hist(at: &[(usize, u64)]) -> Vec<u64> {
    let mut h = vec![0u64; 101];
    for &(pct, n) in at {
        h[pct] += n;
    }
    h
}

/// The paper marks of an SVG bar chart (black 4 px lines), as their (x from, x to) pixels.
fn mark_spans(svg: &str) -> Vec<(f64, f64)> {
    svg.lines()
        .filter(|l| l.contains("<polyline") && l.contains("stroke=\"#000000\""))
        .filter(|l| l.contains("stroke-width=\"4\""))
        .map(|l| {
            let pts = l
                .split("points=\"")
                .nth(1)
                .unwrap()
                .split('"')
                .next()
                .unwrap();
            let xs: Vec<f64> = pts
                .split_whitespace()
                .map(|p| p.split(',').next().unwrap().parse().unwrap())
                .collect();
            (xs[0], xs[xs.len() - 1])
        })
        .collect()
}

/// The x spans of the bars filled with `fill` (an SVG `<rect>` colour).
fn bar_spans(svg: &str, fill: &str) -> Vec<(f64, f64)> {
    let attr = |l: &str, a: &str| -> f64 {
        let v = l.split(&format!(" {a}=\"")).nth(1).unwrap();
        v.split('"').next().unwrap().parse().unwrap()
    };
    svg.lines()
        .filter(|l| l.contains("<rect") && l.contains(&format!("fill=\"{fill}\"")))
        .map(|l| (attr(l, "x"), attr(l, "x") + attr(l, "width")))
        .collect()
}

const PRED: usize = 7;

#[test]
fn paper_marks_are_on_plan_pred_quarter_where_the_paper_gives_values() {
    assert_eq!(SCHEMES[PRED], "plan-pred-1/4");
    // fio and tpcc are generators, compile-capture stands for GCC, varmail for none.
    let cats: Vec<String> = ["fio", "tpcc", "compile-capture", "varmail"]
        .map(str::to_owned)
        .to_vec();
    let base = [2.0, 4.0, 1.5, 3.0];
    let nan = f64::NAN;
    // WAF: the paper's change times our baseline (fio 0.58 x 2, tpcc 0.75 x 4), GCC its 1.055.
    let want = [
        [0.58 * 2.0, 0.75 * 4.0, 1.055, nan],
        [0.54, nan, 0.31, nan],
        [1.30, 1.0, 1.0, nan],
    ];
    for (fig, want) in want.iter().enumerate() {
        let marks = paper_marks(fig, &cats, &base);
        assert_eq!(marks.len(), SCHEMES.len(), "figure {fig}");
        for (i, row) in marks.iter().enumerate() {
            if i == PRED {
                for (got, w) in row.iter().zip(want) {
                    assert!(
                        (got.is_nan() && w.is_nan()) || (got - w).abs() < 1e-12,
                        "figure {fig}: {row:?} against {want:?}"
                    );
                }
            } else {
                assert!(row.iter().all(|v| v.is_nan()), "{} marked", SCHEMES[i]);
            }
        }
    }
}

/// Nine runs per workload of `cats` with distinct bar heights.
fn bar_rows(cats: &[String]) -> Vec<RunResult> {
    let mut rows = Vec::new();
    for (wi, _) in cats.iter().enumerate() {
        for (i, s) in SCHEMES.iter().enumerate() {
            #[expect(clippy::cast_precision_loss, reason = "small indices")]
            let k = (wi * SCHEMES.len() + i) as f64;
            let erased = 100 + 10 * u64::try_from(i).unwrap();
            rows.push(run(
                s,
                2.0 + k / 20.0,
                erased,
                1000.0 + 50.0 * k,
                hist(&[(50, 1)]),
            ));
        }
    }
    rows
}

#[test]
fn figures_3_4_6_draw_the_paper_marks_across_plan_pred_quarter_bars() {
    let dir = tempfile::tempdir().unwrap();
    let o = default_opts();
    let cats: Vec<String> = ["fio", "gcc", "varmail"].map(str::to_owned).to_vec();
    let rows = bar_rows(&cats);
    let charts = fig3_charts(&o, "", &rows, &cats);
    assert_eq!(charts.len(), 3);
    // Marks per figure: WAF on fio and gcc, erased on fio and gcc, throughput on both.
    for (file, chart, style) in &charts {
        let p = dir.path().join(format!("{file}.svg"));
        crate::plot::render_bar_styled(chart, style, &p).unwrap();
        crate::plot_layout::check_file(&p).unwrap();
        let svg = std::fs::read_to_string(&p).unwrap();
        let marks = mark_spans(&svg);
        assert_eq!(marks.len(), 2, "{file}: {marks:?}");
        assert!(
            style.subtitle.contains("paper:"),
            "{file}: {}",
            style.subtitle
        );
        assert!(
            crate::plot_layout::texts(&svg).iter().any(|t| t == "paper"),
            "{file}: legend"
        );
        // Each mark lies across a bar of PLAN-Pred-1/4's colour (the groups' colours in the
        // order their bars are drawn).
        let groups = group_colours(&svg);
        let pred = bar_spans(&svg, groups[PRED]);
        for m in &marks {
            assert!(
                pred.iter().any(|b| b.0 >= m.0 - 1.0 && b.1 <= m.1 + 1.0),
                "{file}: mark {m:?} is on no plan-pred-1/4 bar {pred:?} ({groups:?})"
            );
        }
    }
    // A capture replays at its own rate: its throughput chart has no marks.
    let traces = fig3_charts(&o, "-traces", &rows, &cats);
    assert!(traces[2]
        .2
        .bar_reference
        .iter()
        .flatten()
        .all(|v| v.is_nan()));
    assert!(!traces[2].2.subtitle.contains("paper:"));
}

/// One workload's nine runs for Figure 5: the baseline at 18 open with 95% of its victims
/// empty (the bound), Partial GC without GC, the others with victims 42-58% valid, none empty.
fn fig5_runs() -> Vec<RunResult> {
    SCHEMES
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let h = match *s {
                "baseline@18" => hist(&[(0, 95), (50, 5)]),
                "partial-gc" => hist(&[]),
                _ => hist(&[(42, 1), (45 + i, 6), (58, 1)]),
            };
            run(s, 2.0, 10, 1000.0, h)
        })
        .collect()
}

#[test]
fn figure_5_leaves_flat_cdfs_off_names_them_and_zooms_to_the_rise() {
    let dir = tempfile::tempdir().unwrap();
    let svg_path = dir.path().join("plan-fig5-fio.svg");
    let o = default_opts();
    let runs = fig5_runs();
    figure5_chart(&o, "fio", &runs, &svg_path).unwrap();
    crate::plot_layout::check_file(&svg_path).unwrap();
    let svg = std::fs::read_to_string(&svg_path).unwrap();
    let texts = crate::plot_layout::texts(&svg);
    let all = texts.join(" ");
    // Named under the x axis, with why; not in the legend.
    assert!(
        all.contains("not drawn: baseline@18 (95% empty), partial-gc (no GC)"),
        "{all}"
    );
    for off in ["baseline@18", "partial-gc"] {
        assert!(!texts.iter().any(|t| t == off), "{off} drawn");
    }
    for on in ["baseline", "autostream", "plan-pred-1/4", "plan-pred-1/8"] {
        assert!(texts.iter().any(|t| t == on), "{on} not in the legend");
    }
    // The curves rise from 42% (first victim) to 58% (last): the axis spans 40-60%.
    assert!(all.contains("x axis: 40-60% valid"), "{all}");
    // x ticks at 40 and 60, none out of the range (the y ticks are 0-1 in tenths).
    let tick = |v: &str| texts.iter().any(|t| t == v);
    assert!(tick("40") && tick("60"), "{texts:?}");
    assert!(
        !["10", "20", "30", "70", "80", "100"].into_iter().any(tick),
        "{texts:?}"
    );
    // 94% empty is drawn (and the axis then starts at 0, where that curve rises).
    let mut r = runs.clone();
    r[1].victim_hist = hist(&[(0, 94), (50, 6)]);
    figure5_chart(&o, "fio", &r, &svg_path).unwrap();
    let texts = crate::plot_layout::texts(&std::fs::read_to_string(&svg_path).unwrap());
    assert!(texts.iter().any(|t| t == "baseline@18"), "{texts:?}");
    assert!(texts.join(" ").contains("x axis: 0-60% valid"));
    // Fewer than two curves left: no chart, and the stale one is removed.
    for x in &mut r[2..] {
        x.victim_hist = hist(&[(0, 99), (3, 1)]);
    }
    r[1].victim_hist = hist(&[(0, 99), (3, 1)]);
    figure5_chart(&o, "fio", &r, &svg_path).unwrap();
    assert!(!svg_path.exists(), "a chart of one curve");
}

#[test]
fn rise_range_spans_the_curves_rise_in_steps_of_five() {
    let s = |label: &str, h: &[(usize, u64)]| Series {
        label: label.into(),
        points: cdf(&hist(h)),
    };
    // 1 of 1000 at 10% does not count as rising (0.1% < 0.5%); 6 of 1000 does.
    let a = s("a", &[(10, 1), (33, 998), (71, 1)]);
    assert_eq!(rise_range(std::slice::from_ref(&a)), (30.0, 35.0));
    let b = s("b", &[(12, 6), (50, 994)]);
    assert_eq!(rise_range(&[a, b]), (10.0, 55.0));
}

/// Victims of one run by valid ratio (percent), one entry per victim.
fn victims(valid: &[usize]) -> Vec<u64> {
    hist(&valid.iter().map(|&v| (v, 1)).collect::<Vec<_>>())
}

#[test]
fn victims_table_gives_median_mean_empty_share_and_count() {
    let o = default_opts();
    let cats = vec!["fio".to_owned()];
    let rows: Vec<RunResult> = SCHEMES
        .iter()
        .map(|s| {
            let h = match *s {
                // Sorted: 0 0 10 20 20 50 90; median the 4th = 20; mean 190 / 7 = 27.14;
                // empty 2 of 7 = 28.6%.
                "plan-pred-1/4" => victims(&[20, 0, 90, 10, 20, 0, 50]),
                // Median of 0 0 0 100: the 2nd = 0 (the lower one); mean 25; empty 75%.
                "autostream" => victims(&[0, 100, 0, 0]),
                // Every victim full: median 100, mean 100, none empty.
                "multi-stream" => victims(&[100, 100, 100]),
                "baseline" => hist(&[]),
                _ => victims(&[60]),
            };
            run(s, 2.0, 10, 1000.0, h)
        })
        .collect();
    let table = victims_table(&o, &cats, &rows);
    // The cells of the table's line starting with `first`.
    let cells = |first: &str| -> Vec<&str> {
        let line = table.lines().find(|l| l.starts_with(first)).unwrap();
        line.split('|').map(str::trim).collect()
    };
    let (header, row) = (cells("| workload |"), cells("| fio |"));
    assert_eq!(header.len(), row.len(), "{table}");
    let cell = |scheme: &str| row[header.iter().position(|h| *h == scheme).unwrap()];
    assert_eq!(cell("plan-pred-1/4"), "20 / 27.1 / 29% / 7");
    assert_eq!(cell("autostream"), "0 / 25.0 / 75% / 4");
    assert_eq!(cell("multi-stream"), "100 / 100.0 / 0% / 3");
    assert_eq!(cell("baseline"), "-", "no GC");
    assert_eq!(cell("plan-pred-1/8"), "60 / 60.0 / 0% / 1");
    assert!(table.contains(&setup_line(&o)), "the setup line");
}

/// The colours of a bar chart's groups in the order their bars are drawn.
fn group_colours(svg: &str) -> Vec<&str> {
    let mut groups: Vec<&str> = Vec::new();
    for l in svg.lines().filter(|l| l.contains("<rect")) {
        if let Some(f) = l.split("fill=\"").nth(1).and_then(|f| f.split('"').next()) {
            if f.starts_with('#') && f != "#FFFFFF" && !groups.contains(&f) {
                groups.push(f);
            }
        }
    }
    groups
}

#[test]
fn figure_1_marks_the_papers_two_ratios_not_the_bars_divided_by_themselves() {
    let dir = tempfile::tempdir().unwrap();
    let o = default_opts();
    // 1 open, then 18 + 1 open, at 1/8, 1/4, 1/2, full: WAF rising, throughput peaking at 1/2.
    let rows: Vec<RunResult> = [2.0, 2.1, 2.2, 2.3, 2.0, 2.4, 2.8, 3.2]
        .iter()
        .zip([800.0, 900.0, 1100.0, 1000.0, 700.0, 850.0, 1200.0, 1000.0])
        .map(|(&w, t)| run("baseline", w, 10, t, hist(&[(50, 1)])))
        .collect();
    let (chart, style) = fig1_chart(&o, &rows).unwrap();
    let p = dir.path().join("plan-fig1.svg");
    crate::plot::render_bar_styled(&chart, &style, &p).unwrap();
    crate::plot_layout::check_file(&p).unwrap();
    let svg = std::fs::read_to_string(&p).unwrap();
    // Two marks: WAF at full over 1/8 (2.3) and throughput at 1/2 over full (1.4), both on the
    // 18 + 1 bars; none at 1/8's WAF or full's throughput, which are 1 by the division.
    let marks = mark_spans(&svg);
    assert_eq!(marks.len(), 2, "{marks:?}");
    let groups = group_colours(&svg);
    // The four groups' colours, then the legend's black "paper" swatch.
    assert_eq!(groups.len(), 5, "{groups:?}");
    assert_eq!(groups[4], "#000000", "{groups:?}");
    // The bars of a group left to right (the legend's swatches are right of the plot).
    let bars = |g: usize| {
        let mut b = bar_spans(&svg, groups[g]);
        b.sort_by(|x, y| x.0.total_cmp(&y.0));
        b.truncate(4);
        b
    };
    let on = |m: &(f64, f64), b: &(f64, f64)| b.0 >= m.0 - 1.0 && b.1 <= m.1 + 1.0;
    let (waf18, tput18) = (bars(1), bars(3));
    assert!(
        marks.iter().any(|m| on(m, &waf18[3])),
        "{marks:?} {waf18:?}"
    );
    assert!(
        marks.iter().any(|m| on(m, &tput18[2])),
        "{marks:?} {tput18:?}"
    );
    assert!(
        !marks.iter().any(|m| on(m, &waf18[0])),
        "a mark on 1/8's WAF"
    );
    assert!(
        !marks.iter().any(|m| on(m, &tput18[3])),
        "a mark on full's throughput"
    );
    assert!(style.subtitle.contains("paper"), "{}", style.subtitle);
}
