//! Charts: line charts (one or more series, markers on every point, optional log axes) and
//! grouped bar charts, rendered to PNG or SVG chosen by the file extension.
//!
//! Text uses DejaVu Sans embedded in the binary (`assets/fonts/DejaVuSans.ttf`, registered with
//! plotters' `ab_glyph` backend), so rendering needs no system font library and looks the same
//! everywhere.
//!
//! ```no_run
//! use nowa_bench::plot::{render_line, LineChart, Series};
//! let chart = LineChart {
//!     title: "WAF vs OP".into(),
//!     x_label: "OP (spare/logical)".into(),
//!     y_label: "WAF".into(),
//!     series: vec![Series { label: "greedy".into(), points: vec![(0.07, 7.8), (0.28, 2.5)] }],
//!     log_x: false,
//!     log_y: false,
//!     y_range: None,
//! };
//! render_line(&chart, std::path::Path::new("waf.svg")).unwrap();
//! ```

use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::path::Path;
use std::sync::Once;

/// One line of a [`LineChart`].
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Legend text.
    pub label: String,
    /// (x, y) points, drawn in the given order. Non-finite values (and values <= 0 on a log
    /// axis) are skipped.
    pub points: Vec<(f64, f64)>,
}

/// A line chart with a marker on every point and a legend.
#[derive(Debug, Clone, PartialEq)]
pub struct LineChart {
    /// Title above the chart.
    pub title: String,
    /// X axis label.
    pub x_label: String,
    /// Y axis label.
    pub y_label: String,
    /// The lines.
    pub series: Vec<Series>,
    /// Logarithmic x axis.
    pub log_x: bool,
    /// Logarithmic y axis.
    pub log_y: bool,
    /// Fixed y range; None = from the data (with a margin; starting at 0 on a linear axis when
    /// all values are positive and close enough to it).
    pub y_range: Option<(f64, f64)>,
}

/// Grouped bars: for every category one bar per group. `groups[g].1[c]` is the value of group
/// `g` in category `c` (missing or non-finite values leave a gap).
#[derive(Debug, Clone, PartialEq)]
pub struct BarChart {
    /// Title above the chart.
    pub title: String,
    /// Y axis label.
    pub y_label: String,
    /// One group of bars per category, left to right.
    pub categories: Vec<String>,
    /// (legend text, one value per category).
    pub groups: Vec<(String, Vec<f64>)>,
}

/// What a chart shows beyond its data, shared by every figure so they read alike: a setup
/// subtitle under the title, the paper's values (dashed lines with hollow markers for lines,
/// a black bar across each bar for bars), a min-max band over seeds, labelled x ticks, and the
/// value axis from zero unless `y_from_data` says otherwise (then the subtitle must say so).
/// The legend always sits in its own column right of the plot, where it cannot cover data.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Style {
    /// Second title line (device, OP, fill, seed, run length, scale); empty: none.
    pub subtitle: String,
    /// Bars: logarithmic value axis (bars rise from the lowest decade). Set automatically
    /// when the values span more than a decade.
    pub log_y: bool,
    /// Lines: reference curves (the paper's values, analytic models) drawn dashed under the
    /// measured series, with hollow markers on every point; the label names the source.
    pub reference: Vec<Series>,
    /// Lines: the spread (min-max over seeds) of the series with the same label, shaded.
    pub spread: Vec<Spread>,
    /// Lines: label the x axis at exactly these values (categorical or fractional x, where
    /// the automatic ticks would skip or misplace them); empty: automatic ticks.
    pub x_ticks: Vec<f64>,
    /// Bars: the paper's value per group and category (`bar_reference[g][c]`, NaN = none),
    /// drawn as a black bar across the bar; its legend entry says "paper".
    pub bar_reference: Vec<Vec<f64>>,
    /// The value axis spans the data instead of starting at zero.
    pub y_from_data: bool,
}

/// The spread of one series: (x, min, max) over seeds or repetitions.
#[derive(Debug, Clone, PartialEq)]
pub struct Spread {
    /// The label of the series it belongs to.
    pub label: String,
    /// (x, lowest, highest).
    pub points: Vec<(f64, f64, f64)>,
}

/// Why a chart could not be rendered.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PlotError {
    /// The file name ends neither in .png nor in .svg.
    #[error("unsupported plot file extension for {} (use .png or .svg)", .0.display())]
    Extension(std::path::PathBuf),
    /// No finite value to draw.
    #[error("nothing to plot: {0}")]
    Empty(&'static str),
    /// The drawing backend failed (its errors are generic per backend: kept as text).
    #[error("cannot write plot {}: {msg}", path.display())]
    Draw {
        /// The plot file.
        path: std::path::PathBuf,
        /// The backend's message.
        msg: String,
    },
}

const WIDTH: u32 = 1024;
const HEIGHT: u32 = 640;
const FONT: &str = "sans-serif";
static FONT_BYTES: &[u8] = include_bytes!("../../../assets/fonts/DejaVuSans.ttf");

/// Colour-blind friendly palette (Okabe-Ito, with wine for its black: black marks the paper's
/// values), then five of Paul Tol's colours and crimson, far from these and from each other (Palette99's
/// next picks repeated near-identical yellows and pinks: twelve schemes, two pairs alike), then
/// Palette99 for more series. No grey: the layout check takes grey for grid lines.
const COLORS: [RGBColor; 14] = [
    RGBColor(0, 114, 178),
    RGBColor(213, 94, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(230, 159, 0),
    RGBColor(86, 180, 233),
    RGBColor(136, 34, 85),
    RGBColor(240, 228, 66),
    RGBColor(51, 34, 136),
    RGBColor(153, 153, 51),
    RGBColor(17, 119, 51),
    RGBColor(220, 20, 60),
    RGBColor(140, 81, 10),
    RGBColor(68, 170, 153),
];

fn color(i: usize) -> RGBColor {
    if i < COLORS.len() {
        COLORS[i]
    } else {
        let c = Palette99::pick(i).to_rgba();
        RGBColor(c.0, c.1, c.2)
    }
}

fn register_font() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // The font is compiled in; a failure here is a build problem, reported at draw time by
        // plotters as a font error rather than a panic.
        let _ = plotters::style::register_font(FONT, FontStyle::Normal, FONT_BYTES);
    });
}

#[derive(Clone, Copy)]
enum Format {
    Png,
    Svg,
}

fn format_of(path: &Path) -> Result<Format, PlotError> {
    match path
        .extension()
        .and_then(|e| e.to_str())
        .map(|e| e.to_ascii_lowercase())
    {
        Some(e) if e == "png" => Ok(Format::Png),
        Some(e) if e == "svg" => Ok(Format::Svg),
        _ => Err(PlotError::Extension(path.to_path_buf())),
    }
}

fn draw_err(path: &Path, e: impl std::fmt::Display) -> PlotError {
    PlotError::Draw {
        path: path.to_path_buf(),
        msg: e.to_string(),
    }
}

type DrawResult = Result<(), String>;

/// Pretty tick label: integers without decimals, small values with 2-3 significant digits.
fn fmt_tick(v: f64) -> String {
    let a = v.abs();
    if a == 0.0 {
        "0".into()
    } else if a >= 1e6 {
        format!("{:.0e}", v)
    } else if a >= 100.0 || (v.fract() == 0.0 && a >= 1.0) {
        format!("{:.0}", v)
    } else if a >= 10.0 {
        format!("{:.1}", v)
    } else if a >= 0.001 {
        // Down to 0.001 as decimals (a log axis of rates: "0.005", not "5.0e-3").
        let s = format!("{:.4}", v);
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        format!("{:.1e}", v)
    }
}

fn usable(v: f64, log: bool) -> bool {
    v.is_finite() && (!log || v > 0.0)
}

/// Value range of one axis. Linear: from zero when `from_zero` and no value is negative, 5%
/// margin. Log: the data range widened by 10% each way; its ticks come from [`log_ticks`], so
/// the range need not hold whole decades (half-empty log axes hide the data's differences).
fn axis_range(vals: impl Iterator<Item = f64>, log: bool, from_zero: bool) -> (f64, f64) {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for v in vals {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if !lo.is_finite() {
        return if log { (1.0, 10.0) } else { (0.0, 1.0) };
    }
    if log {
        return if hi > lo * 1.5 {
            (lo / 1.1, hi * 1.1)
        } else {
            (lo / 1.5, hi * 1.5)
        };
    }
    if from_zero && lo >= 0.0 {
        lo = 0.0;
    }
    if hi - lo < 1e-12 * hi.abs().max(1.0) {
        let d = if hi == 0.0 { 1.0 } else { hi.abs() * 0.1 };
        return (lo - d, hi + d);
    }
    let m = (hi - lo) * 0.05;
    (if lo == 0.0 { 0.0 } else { lo - m }, hi + m)
}

/// Tick values of a log axis over `lo..hi`: the decades when they give four or more, else
/// 1-2-5 per decade, else every multiple (so a range inside one decade still gets labels).
fn log_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let sets: [&[f64]; 3] = [
        &[1.0],
        &[1.0, 2.0, 5.0],
        &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0],
    ];
    let mut out = Vec::new();
    for (k, mults) in sets.iter().enumerate() {
        out.clear();
        let mut decade = 10f64.powf(lo.log10().floor());
        while decade <= hi {
            out.extend(
                mults
                    .iter()
                    .map(|m| m * decade)
                    .filter(|v| (lo..=hi).contains(v)),
            );
            decade *= 10.0;
        }
        if out.len() >= 4 - k.min(1) {
            break;
        }
    }
    assert!(
        out.iter().all(|v| (lo..=hi).contains(v)),
        "log ticks lie on the axis"
    );
    out
}

/// The drawable points of a line chart's series, references and spreads (non-finite values
/// and, on log axes, values <= 0 left out).
struct LineData {
    series: Vec<Vec<(f64, f64)>>,
    reference: Vec<Vec<(f64, f64)>>,
    spread: Vec<(usize, Band)>,
}

/// (x, lowest, highest) points of a spread.
type Band = Vec<(f64, f64, f64)>;

impl LineData {
    fn new(chart: &LineChart, style: &Style) -> Self {
        let ok = |&(x, y): &(f64, f64)| usable(x, chart.log_x) && usable(y, chart.log_y);
        let keep = |s: &Series| s.points.iter().copied().filter(ok).collect::<Vec<_>>();
        let spread = style
            .spread
            .iter()
            .filter_map(|sp| {
                let i = chart.series.iter().position(|s| s.label == sp.label)?;
                let p = sp.points.iter().copied();
                let p = p.filter(|&(x, lo, hi)| ok(&(x, lo)) && ok(&(x, hi)));
                Some((i, p.collect()))
            })
            .collect();
        LineData {
            series: chart.series.iter().map(keep).collect(),
            reference: style.reference.iter().map(keep).collect(),
            spread,
        }
    }

    fn xs(&self) -> impl Iterator<Item = f64> + '_ {
        let lines = self.series.iter().chain(&self.reference).flatten();
        lines
            .map(|p| p.0)
            .chain(self.spread.iter().flat_map(|s| s.1.iter().map(|p| p.0)))
    }

    fn ys(&self) -> impl Iterator<Item = f64> + '_ {
        let lines = self.series.iter().chain(&self.reference).flatten();
        let band = self.spread.iter().flat_map(|s| s.1.iter());
        lines.map(|p| p.1).chain(band.flat_map(|p| [p.1, p.2]))
    }
}

/// Renders a line chart to `path` (`.png` or `.svg`).
///
/// # Errors
/// An unknown extension, nothing finite to draw, or the backend failing to write.
pub fn render_line(chart: &LineChart, path: &Path) -> Result<(), PlotError> {
    render_line_styled(chart, &Style::default(), path)
}

/// [`render_line`] with a [`Style`].
///
/// # Errors
/// As [`render_line`].
///
/// # Panics
/// Never: the x range of finite points is non-empty (asserted).
pub fn render_line_styled(chart: &LineChart, style: &Style, path: &Path) -> Result<(), PlotError> {
    let format = format_of(path)?;
    let data = LineData::new(chart, style);
    if data.series.iter().all(Vec::is_empty) {
        return Err(PlotError::Empty("no finite points in any series"));
    }
    let ticks = style
        .x_ticks
        .iter()
        .copied()
        .filter(|&v| usable(v, chart.log_x));
    let (x0, x1) = axis_range(data.xs().chain(ticks), chart.log_x, false);
    let (y0, y1) = chart
        .y_range
        .unwrap_or_else(|| axis_range(data.ys(), chart.log_y, !style.y_from_data));
    if y0.partial_cmp(&y1) != Some(std::cmp::Ordering::Less) || (chart.log_y && y0 <= 0.0) {
        return Err(PlotError::Empty(
            "y range is empty (or not positive on a log axis)",
        ));
    }
    assert!(x0 < x1, "axis_range gives a non-empty x range");
    register_font();
    let ranges = ((x0, x1), (y0, y1));
    let res = match format {
        Format::Png => {
            let root = BitMapBackend::new(path, (WIDTH, HEIGHT)).into_drawing_area();
            line_axes(&root, chart, style, &data, ranges)
                .and_then(|()| root.present().map_err(|e| e.to_string()))
        }
        Format::Svg => {
            let root = SVGBackend::new(path, (WIDTH, HEIGHT)).into_drawing_area();
            line_axes(&root, chart, style, &data, ranges)
                .and_then(|()| root.present().map_err(|e| e.to_string()))
        }
    };
    res.map_err(|e| draw_err(path, e))
}

type Ranges = ((f64, f64), (f64, f64));

fn line_axes<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    chart: &LineChart,
    style: &Style,
    data: &LineData,
    r: Ranges,
) -> DrawResult {
    let ((x0, x1), (y0, y1)) = r;
    let area = titled(root, &chart.title, &style.subtitle)?;
    let (plot, side) = area.split_horizontally(WIDTH - LEGEND_WIDTH);
    let d = (root, &plot, chart, style, data, r);
    match (chart.log_x, chart.log_y) {
        (false, false) => line_draw(d, x0..x1, y0..y1),
        (true, false) => line_draw(d, (x0..x1).log_scale(), y0..y1),
        (false, true) => line_draw(d, x0..x1, (y0..y1).log_scale()),
        (true, true) => line_draw(d, (x0..x1).log_scale(), (y0..y1).log_scale()),
    }?;
    side_legend(&side, &line_legend(chart, style, data))
}

/// A white page with the title (and the subtitle, if any) over the whole width; returns the
/// area below.
fn titled<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    subtitle: &str,
) -> Result<DrawingArea<DB, Shift>, String> {
    root.fill(&WHITE).map_err(|x| x.to_string())?;
    let mut area = root.titled(title, (FONT, 28)).map_err(|x| x.to_string())?;
    let font = (FONT, 15).into_font();
    let style = TextStyle::from(font.clone());
    let fits = |line: &str| {
        root.estimate_text_size(line, &style)
            .is_ok_and(|(w, _)| w + 40 <= WIDTH)
    };
    for line in subtitle_lines(subtitle, &fits) {
        area = area
            .titled(&line, font.clone())
            .map_err(|x| x.to_string())?;
    }
    Ok(area)
}

/// A setup too long for one line of the page, broken after "; " (or, for a part still too
/// long, after ", " or a space) into as many lines as it needs: the whole setup is always
/// drawn, never cut at the page's edge.
fn subtitle_lines(subtitle: &str, fits: &dyn Fn(&str) -> bool) -> Vec<String> {
    // The coarsest separator whose every part fits on a line by itself.
    let sep = ["; ", ", "]
        .into_iter()
        .find(|sep| subtitle.split_inclusive(sep).all(|p| fits(p.trim_end())))
        .unwrap_or(" ");
    let mut lines: Vec<String> = Vec::new();
    let mut cur = String::new();
    for part in subtitle.split_inclusive(sep) {
        let joined = format!("{cur}{part}");
        if cur.is_empty() || fits(joined.trim_end()) {
            cur = joined;
        } else {
            lines.push(cur.trim_end().to_owned());
            cur = part.to_owned();
        }
    }
    if !cur.trim().is_empty() {
        lines.push(cur.trim_end().to_owned());
    }
    lines
}

type LineArgs<'a, DB> = (
    &'a DrawingArea<DB, Shift>,
    &'a DrawingArea<DB, Shift>,
    &'a LineChart,
    &'a Style,
    &'a LineData,
    Ranges,
);

fn line_draw<DB, X, Y>(d: LineArgs<'_, DB>, xr: X, yr: Y) -> DrawResult
where
    DB: DrawingBackend,
    X: AsRangedCoord<Value = f64>,
    Y: AsRangedCoord<Value = f64>,
    X::CoordDescType: ValueFormatter<f64>,
    Y::CoordDescType: ValueFormatter<f64>,
{
    let (page, plot, chart, style, data, ((x0, x1), (y0, y1))) = d;
    let e = |e: &dyn std::fmt::Display| e.to_string();
    let x_lines = desc_lines(page, &chart.x_label)?;
    let mut cc = ChartBuilder::on(plot)
        .margin(16)
        .x_label_area_size(56 + 21 * (u32::try_from(x_lines.len()).unwrap_or(1).max(1) - 1))
        .y_label_area_size(80)
        .build_cartesian_2d(xr, yr)
        .map_err(|x| e(&x))?;
    // Log axes and given x ticks are labelled here (plotters labels only whole decades).
    let x_ticks = if style.x_ticks.is_empty() && chart.log_x {
        log_ticks(x0, x1)
    } else {
        style.x_ticks.clone()
    };
    let y_ticks = if chart.log_y {
        log_ticks(y0, y1)
    } else {
        Vec::new()
    };
    let (fx, fy) = (tick_fmt(!x_ticks.is_empty()), tick_fmt(!y_ticks.is_empty()));
    cc.configure_mesh()
        .x_desc(if x_lines.len() > 1 {
            ""
        } else {
            &chart.x_label
        })
        .y_desc(&chart.y_label)
        .label_style((FONT, 16))
        .axis_desc_style((FONT, 18))
        .x_label_formatter(&fx)
        .y_label_formatter(&fy)
        .light_line_style(RGBColor(235, 235, 235))
        .bold_line_style(RGBColor(200, 200, 200))
        .draw()
        .map_err(|x| e(&x))?;
    let px = |v: f64| cc.backend_coord(&(v, y0));
    tick_labels(
        page,
        &x_ticks.iter().map(|&v| (v, px(v))).collect::<Vec<_>>(),
        true,
    )?;
    let py = |v: f64| cc.backend_coord(&(x0, v));
    tick_labels(
        page,
        &y_ticks.iter().map(|&v| (v, py(v))).collect::<Vec<_>>(),
        false,
    )?;
    if x_lines.len() > 1 {
        x_desc(page, &x_lines, (px(x0), px(x1)))?;
    }
    line_marks(&mut cc, data)
}

/// Tick labels as plotters draws them, or none where [`tick_labels`] draws them.
fn tick_fmt(manual: bool) -> impl Fn(&f64) -> String {
    move |v| {
        if manual {
            String::new()
        } else {
            fmt_tick(*v)
        }
    }
}

/// Width of the plotting area of a line chart (page minus legend, margins, y label area).
const PLOT_WIDTH: u32 = WIDTH - LEGEND_WIDTH - 2 * 16 - 80;

/// An axis description on as many lines as the plotting area's width needs (plotters draws
/// one line, and a long one ran off both sides of the page).
fn desc_lines<DB: DrawingBackend>(
    page: &DrawingArea<DB, Shift>,
    label: &str,
) -> Result<Vec<String>, String> {
    let style = TextStyle::from((FONT, 18).into_font());
    let fits = |l: &str| {
        page.estimate_text_size(l, &style)
            .is_ok_and(|(w, _)| w <= PLOT_WIDTH)
    };
    Ok(subtitle_lines(label, &fits))
}

/// The x axis description's lines, centred under the axis from `a` to `z` (pixels), below
/// the tick labels.
fn x_desc<DB: DrawingBackend>(
    page: &DrawingArea<DB, Shift>,
    lines: &[String],
    (a, z): ((i32, i32), (i32, i32)),
) -> DrawResult {
    let style = TextStyle::from((FONT, 18).into_font()).pos(Pos::new(HPos::Center, VPos::Top));
    let mid = (a.0 + z.0) / 2;
    for (i, line) in (0i32..).zip(lines) {
        let at = (mid, a.1 + 30 + 21 * i);
        page.draw(&Text::new(line.as_str(), at, style.clone()))
            .map_err(|x| x.to_string())?;
    }
    Ok(())
}

/// Tick labels (and tick marks) at pixel positions, under the x axis or left of the y axis;
/// a label that would overprint the previous one is left out (only automatic log ticks come
/// that close).
fn tick_labels<DB: DrawingBackend>(
    page: &DrawingArea<DB, Shift>,
    ticks: &[(f64, (i32, i32))],
    x_axis: bool,
) -> DrawResult {
    let pos = if x_axis {
        Pos::new(HPos::Center, VPos::Top)
    } else {
        Pos::new(HPos::Right, VPos::Center)
    };
    let style = TextStyle::from((FONT, 16).into_font()).pos(pos);
    let mut last_end = i32::MIN;
    for &(v, (x, y)) in ticks {
        let label = fmt_tick(v);
        let (w, h) = page
            .estimate_text_size(&label, &style)
            .map_err(|x| x.to_string())?;
        let (w, h) = (i32::try_from(w).unwrap_or(0), i32::try_from(h).unwrap_or(0));
        let (start, end, at, mark) = if x_axis {
            (x - w / 2, x + w / 2, (x, y + 8), [(x, y), (x, y + 5)])
        } else {
            (-y - h / 2, -y + h / 2, (x - 8, y), [(x - 5, y), (x, y)])
        };
        page.draw(&PathElement::new(mark, BLACK))
            .map_err(|x| x.to_string())?;
        if start < last_end + 6 {
            continue;
        }
        last_end = end;
        page.draw(&Text::new(label, at, style.clone()))
            .map_err(|x| x.to_string())?;
    }
    Ok(())
}

/// The spreads (shaded), the references (dashed, hollow markers), then the measured series
/// on top (solid, filled markers), so a model never hides the measurement.
fn line_marks<DB, X, Y>(
    cc: &mut ChartContext<'_, DB, Cartesian2d<X, Y>>,
    data: &LineData,
) -> DrawResult
where
    DB: DrawingBackend,
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    let e = |e: &dyn std::fmt::Display| e.to_string();
    for (i, band) in &data.spread {
        let mut poly: Vec<(f64, f64)> = band.iter().map(|p| (p.0, p.2)).collect();
        poly.extend(band.iter().rev().map(|p| (p.0, p.1)));
        cc.draw_series(std::iter::once(Polygon::new(poly, color(*i).mix(0.2))))
            .map_err(|x| e(&x))?;
    }
    for (k, p) in data.reference.iter().enumerate() {
        let c = color(data.series.len() + k);
        cc.draw_series(DashedLineSeries::new(
            p.iter().copied(),
            8,
            5,
            c.stroke_width(2),
        ))
        .map_err(|x| e(&x))?;
        cc.draw_series(p.iter().map(|&xy| Circle::new(xy, 5, c.stroke_width(2))))
            .map_err(|x| e(&x))?;
    }
    for (i, p) in data.series.iter().enumerate() {
        let c = color(i);
        cc.draw_series(LineSeries::new(p.iter().copied(), c.stroke_width(2)))
            .map_err(|x| e(&x))?;
        // Dense series get small markers so the line stays readable.
        let r = if p.len() > 150 { 2 } else { 4 };
        cc.draw_series(p.iter().map(|&xy| Circle::new(xy, r, c.filled())))
            .map_err(|x| e(&x))?;
    }
    Ok(())
}

/// How a legend entry shows its series.
#[derive(Clone, Copy)]
enum Swatch {
    Line(RGBColor),
    Dashed(RGBColor),
    Bar(RGBColor),
    /// The black mark of a paper value across a bar.
    Paper,
}

fn line_legend(chart: &LineChart, style: &Style, data: &LineData) -> Vec<(String, Swatch)> {
    let mut out = Vec::new();
    for (i, (s, p)) in chart.series.iter().zip(&data.series).enumerate() {
        if !s.label.is_empty() && !p.is_empty() {
            let band = data.spread.iter().any(|b| b.0 == i);
            let label = if band {
                format!("{} (band: min-max)", s.label)
            } else {
                s.label.clone()
            };
            out.push((label, Swatch::Line(color(i))));
        }
    }
    for (k, (s, p)) in style.reference.iter().zip(&data.reference).enumerate() {
        if !s.label.is_empty() && !p.is_empty() {
            let c = color(data.series.len() + k);
            out.push((s.label.clone(), Swatch::Dashed(c)));
        }
    }
    out
}

/// Width of the legend column right of every plot.
const LEGEND_WIDTH: u32 = 230;

/// The legend in its own column: one swatch and name per entry, top down; a long name is
/// wrapped at spaces (or '-') onto further lines.
fn side_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    entries: &[(String, Swatch)],
) -> DrawResult {
    let e = |x: &dyn std::fmt::Display| x.to_string();
    let style = TextStyle::from((FONT, 16).into_font()).pos(Pos::new(HPos::Left, VPos::Center));
    let mut y = 70;
    for (name, swatch) in entries {
        match *swatch {
            Swatch::Line(c) => area.draw(
                &(EmptyElement::at((4, y))
                    + PathElement::new(vec![(0, 0), (22, 0)], c.stroke_width(2))
                    + Circle::new((11, 0), 4, c.filled())),
            ),
            Swatch::Dashed(c) => area.draw(
                &(EmptyElement::at((4, y))
                    + PathElement::new(vec![(0, 0), (7, 0)], c.stroke_width(2))
                    + PathElement::new(vec![(15, 0), (22, 0)], c.stroke_width(2))
                    + Circle::new((11, 0), 4, c.stroke_width(2))),
            ),
            Swatch::Bar(c) => area.draw(&Rectangle::new([(8, y - 7), (24, y + 7)], c.filled())),
            Swatch::Paper => area.draw(&Rectangle::new([(4, y - 2), (28, y + 2)], BLACK.filled())),
        }
        .map_err(|x| e(&x))?;
        for line in wrap(name, 22) {
            area.draw(&Text::new(line, (34, y), style.clone()))
                .map_err(|x| e(&x))?;
            y += 19;
        }
        y += 6;
    }
    Ok(())
}

/// `s` in lines of at most about `width` characters, broken after spaces or '-'.
fn wrap(s: &str, width: usize) -> Vec<String> {
    let mut lines = vec![String::new()];
    for word in s.split_inclusive([' ', '-']) {
        let cur = lines.last_mut().map_or(0, |l| l.chars().count());
        if cur > 0 && cur + word.trim_end().chars().count() > width {
            lines.push(String::new());
        }
        if let Some(l) = lines.last_mut() {
            l.push_str(word);
        }
    }
    lines.into_iter().map(|l| l.trim_end().to_owned()).collect()
}

/// Bar charts sharing one set of categories, each `(file under dir, title, y label, groups)`.
///
/// # Errors
/// As [`render_bar`], for the first chart that fails.
pub fn render_bars<S: AsRef<str>>(
    dir: &Path,
    categories: &[String],
    charts: impl IntoIterator<Item = (S, S, S, Vec<(String, Vec<f64>)>)>,
) -> Result<(), PlotError> {
    for (file, title, y, groups) in charts {
        let chart = BarChart {
            title: title.as_ref().into(),
            y_label: y.as_ref().into(),
            categories: categories.to_vec(),
            groups,
        };
        render_bar(&chart, &dir.join(file.as_ref()))?;
    }
    Ok(())
}

/// Renders a grouped bar chart to `path` (`.png` or `.svg`).
///
/// # Errors
/// An unknown extension, nothing finite to draw, or the backend failing to write.
pub fn render_bar(chart: &BarChart, path: &Path) -> Result<(), PlotError> {
    render_bar_styled(chart, &Style::default(), path)
}

/// Whether the positive values span more than a decade (then a linear axis leaves the small
/// ones as stubs) and none is zero or negative (a log axis could not show those).
#[must_use]
pub fn spans_decades(values: impl IntoIterator<Item = f64>) -> bool {
    let (mut lo, mut hi, mut all_positive) = (f64::INFINITY, 0.0f64, true);
    for v in values.into_iter().filter(|v| v.is_finite()) {
        all_positive &= v > 0.0;
        lo = lo.min(v);
        hi = hi.max(v);
    }
    all_positive && hi > 10.0 * lo
}

/// Whether bars with some zeros still need a log axis: the positive values span more than a
/// decade and none is negative. The zeros are then marked "0" at the floor (a rate of 0.01
/// beside one of 0.9 vanishes on a linear axis; a zero is still shown as one).
fn bars_span_decades(values: impl IntoIterator<Item = f64>) -> bool {
    let vs: Vec<f64> = values.into_iter().filter(|v| v.is_finite()).collect();
    !vs.iter().any(|&v| v < 0.0) && spans_decades(vs.into_iter().filter(|&v| v > 0.0))
}

/// [`render_bar`] with a [`Style`] (on a log axis, values <= 0 are marked "0" at the floor; the axis turns
/// logarithmic by itself when the values span more than a decade).
///
/// # Errors
/// As [`render_bar`]. Paper values beyond the chart's groups are not drawn.
pub fn render_bar_styled(chart: &BarChart, style: &Style, path: &Path) -> Result<(), PlotError> {
    let format = format_of(path)?;
    if chart.categories.is_empty() || chart.groups.is_empty() {
        return Err(PlotError::Empty(
            "a bar chart needs at least one category and one group",
        ));
    }
    let n = chart.categories.len();
    let all = || {
        let bars = chart.groups.iter().flat_map(|g| g.1.iter().take(n));
        bars.chain(style.bar_reference.iter().flat_map(|g| g.iter().take(n)))
            .copied()
    };
    let mut style = style.clone();
    style.log_y |= spans_decades(all()) || bars_span_decades(all());
    let vals = all().filter(|&v| usable(v, style.log_y));
    let (y0, y1) = if style.log_y {
        // The smallest bar rises half a factor of two above the floor: one just above the
        // floor would look like a zero (a false-positive rate of 0.008 beside 0.9).
        let (y0, y1) = axis_range(vals.clone(), true, false);
        (y0.min(vals.fold(f64::INFINITY, f64::min) / 2.0), y1)
    } else {
        let (y0, y1) = axis_range(vals.chain(std::iter::once(0.0)), false, true);
        (y0.min(0.0), y1)
    };
    register_font();
    let res = match format {
        Format::Png => {
            let root = BitMapBackend::new(path, (WIDTH, HEIGHT)).into_drawing_area();
            bar_axes(&root, chart, &style, y0, y1)
                .and_then(|()| root.present().map_err(|e| e.to_string()))
        }
        Format::Svg => {
            let root = SVGBackend::new(path, (WIDTH, HEIGHT)).into_drawing_area();
            bar_axes(&root, chart, &style, y0, y1)
                .and_then(|()| root.present().map_err(|e| e.to_string()))
        }
    };
    res.map_err(|e| draw_err(path, e))
}

fn bar_axes<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    chart: &BarChart,
    style: &Style,
    y0: f64,
    y1: f64,
) -> DrawResult {
    let area = titled(root, &chart.title, &style.subtitle)?;
    let (plot, side) = area.split_horizontally(WIDTH - LEGEND_WIDTH);
    if style.log_y {
        bar_draw(root, &plot, chart, style, (y0..y1).log_scale(), (y0, y1))?;
    } else {
        bar_draw(root, &plot, chart, style, y0..y1, (y0.max(0.0), y1))?;
    }
    let mut entries: Vec<(String, Swatch)> = (chart.groups.iter().enumerate())
        .map(|(gi, g)| (g.0.clone(), Swatch::Bar(color(gi))))
        .collect();
    if style.bar_reference.iter().flatten().any(|v| v.is_finite()) {
        entries.push(("paper".into(), Swatch::Paper));
    }
    side_legend(&side, &entries)
}

fn bar_draw<DB, Y>(
    page: &DrawingArea<DB, Shift>,
    plot: &DrawingArea<DB, Shift>,
    chart: &BarChart,
    style: &Style,
    yr: Y,
    (base, top): (f64, f64),
) -> DrawResult
where
    DB: DrawingBackend,
    Y: AsRangedCoord<Value = f64>,
    Y::CoordDescType: ValueFormatter<f64>,
{
    let e = |e: &dyn std::fmt::Display| e.to_string();
    let n = chart.categories.len();
    let mut cc = ChartBuilder::on(plot)
        .margin(16)
        .x_label_area_size(64)
        .y_label_area_size(80)
        .build_cartesian_2d(0.0..n as f64, yr)
        .map_err(|x| e(&x))?;
    let manual_y = style.log_y;
    let fy = move |v: &f64| {
        if manual_y {
            String::new()
        } else {
            fmt_tick(*v)
        }
    };
    cc.configure_mesh()
        .disable_x_mesh()
        .x_labels(0)
        .x_label_formatter(&|_| String::new())
        .y_desc(&chart.y_label)
        .label_style((FONT, 16))
        .axis_desc_style((FONT, 18))
        .y_label_formatter(&fy)
        .light_line_style(RGBColor(235, 235, 235))
        .bold_line_style(RGBColor(200, 200, 200))
        .draw()
        .map_err(|x| e(&x))?;
    if manual_y {
        let ticks = log_ticks(base, top);
        let at: Vec<_> = ticks
            .iter()
            .map(|&v| (v, cc.backend_coord(&(0.0, v))))
            .collect();
        tick_labels(page, &at, false)?;
    }
    bar_marks(&mut cc, chart, style, base)?;
    let at = |ci: usize| cc.backend_coord(&(ci as f64 + 0.5, base));
    category_names(page, chart, &(0..n).map(at).collect::<Vec<_>>())
}

/// The bars of every group, then the paper's values across them.
fn bar_marks<DB, Y>(
    cc: &mut ChartContext<'_, DB, Cartesian2d<plotters::coord::types::RangedCoordf64, Y>>,
    chart: &BarChart,
    style: &Style,
    base: f64,
) -> DrawResult
where
    DB: DrawingBackend,
    Y: Ranged<ValueType = f64>,
{
    let e = |e: &dyn std::fmt::Display| e.to_string();
    let (n, g) = (chart.categories.len(), chart.groups.len());
    let slot = 0.8 / g as f64;
    let left = move |gi: usize, ci: usize| ci as f64 + 0.1 + gi as f64 * slot;
    for (gi, (_, values)) in chart.groups.iter().enumerate() {
        let c = color(gi);
        let bars = (values.iter().take(n).enumerate())
            .filter(|(_, v)| usable(**v, style.log_y))
            .map(move |(ci, &v)| {
                let l = left(gi, ci);
                Rectangle::new([(l + slot * 0.05, base), (l + slot * 0.95, v)], c.filled())
            });
        cc.draw_series(bars).map_err(|x| e(&x))?;
        if style.log_y {
            // A zero has no place on a log axis: its slot says "0" at the floor.
            let zstyle = TextStyle::from((FONT, 14).into_font())
                .color(&c)
                .pos(Pos::new(HPos::Center, VPos::Bottom));
            let zeros: Vec<_> = (values.iter().take(n).enumerate())
                .filter(|(_, v)| **v == 0.0)
                .map(|(ci, _)| Text::new("0", (left(gi, ci) + slot * 0.5, base), zstyle.clone()))
                .collect();
            cc.draw_series(zeros).map_err(|x| e(&x))?;
        }
    }
    for (gi, values) in style.bar_reference.iter().enumerate().take(g) {
        let marks = (values.iter().take(n).enumerate())
            .filter(|(_, v)| usable(**v, style.log_y))
            .map(|(ci, &v)| {
                let l = left(gi, ci);
                PathElement::new(vec![(l, v), (l + slot, v)], BLACK.stroke_width(4))
            });
        cc.draw_series(marks).map_err(|x| e(&x))?;
    }
    Ok(())
}

/// Category names under the axis, centred on each group of bars at pixel `at` (drawn on the
/// page: the plotting area clips everything outside it). A name wider than its group is
/// wrapped after '-' or ' ' onto up to three lines, so neighbours never overprint.
fn category_names<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    chart: &BarChart,
    at: &[(i32, i32)],
) -> DrawResult {
    let style = TextStyle::from((FONT, 16).into_font()).pos(Pos::new(HPos::Center, VPos::Top));
    let slot = match at {
        [a, b, ..] => b.0 - a.0,
        _ => i32::try_from(WIDTH).map_err(|x| x.to_string())?,
    };
    for (name, &(px, py)) in chart.categories.iter().zip(at) {
        let wide = root
            .estimate_text_size(name, &style)
            .map_err(|x| x.to_string())?
            .0;
        // Too wide for its slot: wrapped after '-' or ' ' into lines that fit (at most
        // three lines fit under the axis; a longer name keeps its last line long).
        let fits = usize::try_from(slot - 8).unwrap_or(0) * name.chars().count()
            / usize::try_from(wide.max(1)).unwrap_or(1);
        let lines = if i32::try_from(wide).unwrap_or(i32::MAX) > slot - 8 {
            let mut l = wrap(name, fits.max(3));
            while l.len() > 3 {
                let last = l.pop().unwrap_or_default();
                if let Some(prev) = l.last_mut() {
                    prev.push_str(&last);
                }
            }
            l
        } else {
            vec![name.clone()]
        };
        for (k, l) in (0i32..).zip(lines) {
            root.draw(&Text::new(
                l.to_owned(),
                (px, py + 8 + 18 * k),
                style.clone(),
            ))
            .map_err(|x| x.to_string())?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line() -> LineChart {
        LineChart {
            title: "Throughput over time".into(),
            x_label: "time [s]".into(),
            y_label: "MB/s".into(),
            series: vec![
                Series {
                    label: "uniform".into(),
                    points: (0..20)
                        .map(|i| (f64::from(i), 100.0 + f64::from(i).sin() * 10.0))
                        .collect(),
                },
                Series {
                    label: "zipf 0.8".into(),
                    points: (0..20)
                        .map(|i| (f64::from(i), 80.0 + f64::from(i)))
                        .collect(),
                },
            ],
            log_x: false,
            log_y: false,
            y_range: None,
        }
    }

    fn bar() -> BarChart {
        BarChart {
            title: "Random write IOPS".into(),
            y_label: "k IOPS".into(),
            categories: vec!["uniform".into(), "two-zone 80/20".into(), "zipf 0.8".into()],
            groups: vec![
                ("dev a".into(), vec![71.0, 67.0, 67.0]),
                ("dev b".into(), vec![84.0, 79.0, f64::NAN]),
            ],
        }
    }

    fn check(path: &Path, title: &str) {
        let bytes = std::fs::read(path).unwrap();
        assert!(
            bytes.len() > 2000,
            "{} is only {} bytes",
            path.display(),
            bytes.len()
        );
        if path.extension().unwrap() == "png" {
            assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
        } else {
            let s = String::from_utf8(bytes).unwrap();
            assert!(
                s.starts_with("<svg") && s.contains(title),
                "svg lacks title"
            );
        }
    }

    #[test]
    fn renders_line_and_bar_png_svg() {
        let tmp = tempfile::tempdir().unwrap();
        // NOWA_PLOT_DIR=/some/dir keeps the rendered files for a look.
        let keep = std::env::var_os("NOWA_PLOT_DIR").map(std::path::PathBuf::from);
        let dir = keep.as_deref().unwrap_or(tmp.path());
        for ext in ["png", "svg"] {
            let p = dir.join(format!("line.{ext}"));
            render_line(&line(), &p).unwrap();
            check(&p, "Throughput over time");
            let p = dir.join(format!("bar.{ext}"));
            render_bar(&bar(), &p).unwrap();
            check(&p, "Random write IOPS");
        }
        // Log axes, fixed y range, a single point, labels omitted.
        let mut l = line();
        l.log_x = true;
        l.log_y = true;
        l.series[0].points.push((0.0, -1.0)); // skipped on log axes
        l.series.push(Series {
            label: String::new(),
            points: vec![(3.0, 50.0)],
        });
        let p = dir.join("log.png");
        render_line(&l, &p).unwrap();
        check(&p, "Throughput over time");
        let mut l = line();
        l.y_range = Some((0.0, 200.0));
        render_line(&l, &dir.join("fixed.png")).unwrap();
        // More groups than fit inside: the legend moves beside the plot, every name drawn.
        let mut b = bar();
        b.groups = (0..12)
            .map(|i| {
                (
                    format!("scheme-{i}"),
                    vec![f64::from(i) + 1.0; b.categories.len()],
                )
            })
            .collect();
        let p = dir.join("bar-wide.svg");
        render_bar(&b, &p).unwrap();
        let svg = std::fs::read_to_string(&p).unwrap();
        let names: Vec<&str> = svg.lines().filter(|l| l.starts_with("scheme-")).collect();
        assert_eq!(names.len(), 12, "each legend name once: {names:?}");
        // Beside the plot: the legend's texts start right of every bar.
        let legend_x = format!("<text x=\"{}\"", WIDTH - LEGEND_WIDTH + 34);
        assert_eq!(
            svg.matches(&legend_x).count(),
            12,
            "legend in its own column"
        );
    }

    /// Rates of 0.01-0.04 beside shares near 0.9 and a zero (a model's false-positive rate,
    /// its recall, an empty feature set): a log axis all the same, the zero marked "0" at the
    /// floor, the smallest bar clear of the floor (the floor at most half of it).
    #[test]
    fn bars_spanning_decades_with_a_zero_get_a_log_axis() {
        let dir = tempfile::tempdir().unwrap();
        let chart = BarChart {
            title: "models".into(),
            y_label: "share".into(),
            categories: vec!["VD".into(), "+ WT".into()],
            groups: vec![
                ("accuracy".into(), vec![0.9, 0.92]),
                ("recall".into(), vec![0.0, 0.4]),
                ("false-positive rate".into(), vec![0.012, 0.04]),
            ],
        };
        assert!(!spans_decades(
            chart.groups.iter().flat_map(|g| g.1.clone())
        ));
        let p = dir.path().join("z.svg");
        render_bar_styled(&chart, &Style::default(), &p).unwrap();
        let svg = std::fs::read_to_string(&p).unwrap();
        let texts: Vec<&str> = svg.lines().map(str::trim).collect();
        assert!(texts.contains(&"0"), "the zero marked");
        assert!(
            texts.contains(&"0.01"),
            "a log tick below the smallest rate"
        );
        assert!(!texts.contains(&"0.9"), "no linear ticks");
    }

    #[test]
    fn styled_bars_wrap_long_names_draw_a_subtitle_and_a_log_axis() {
        let dir = tempfile::tempdir().unwrap();
        let cats: Vec<String> = (0..10)
            .map(|i| format!("rocksdb-ycsb-capture{i}"))
            .collect();
        let chart = BarChart {
            title: "WAF".into(),
            y_label: "WAF".into(),
            categories: cats.clone(),
            groups: (0..9)
                .map(|g| {
                    (
                        format!("s{g}"),
                        (0..10).map(|c| f64::from(c * g + 1)).collect(),
                    )
                })
                .collect(),
        };
        let style = Style {
            subtitle: "16 GiB, aged 90%, seed 42".into(),
            log_y: true,
            ..Style::default()
        };
        let p = dir.path().join("b.svg");
        render_bar_styled(&chart, &style, &p).unwrap();
        let svg = std::fs::read_to_string(&p).unwrap();
        let texts: Vec<&str> = svg.lines().map(str::trim).collect();
        assert!(
            texts.contains(&"16 GiB, aged 90%, seed 42"),
            "subtitle drawn"
        );
        // Too wide for its group: every name wrapped after a '-' (each name's first line is a
        // prefix ending at a break, and the last line ends with its number).
        assert!(
            !texts.contains(&"rocksdb-ycsb-capture0"),
            "long name not wrapped"
        );
        let first_lines = texts
            .iter()
            .filter(|t| t.starts_with("rocksdb-") && t.ends_with('-'))
            .count();
        assert_eq!(first_lines, 10, "one wrapped first line per name");
        for i in 0..10 {
            let tail = format!("capture{i}");
            assert!(
                texts.iter().any(|t| t.ends_with(&tail) && t.len() < 20),
                "the end of name {i} on its own line"
            );
        }
        // Log axis: a decade tick label.
        assert!(texts.contains(&"10") && texts.contains(&"20"), "log ticks");
        // Short names stay on one line.
        let short = BarChart {
            categories: (0..3).map(|i| format!("a-{i}")).collect(),
            ..chart
        };
        render_bar_styled(&short, &Style::default(), &p).unwrap();
        let svg = std::fs::read_to_string(&p).unwrap();
        assert!(
            svg.lines().any(|l| l.trim() == "a-0"),
            "short name on one line"
        );
    }

    /// Every kind of figure this module draws, from fixed data: lines (linear, log-log with
    /// references and a spread, fractional x ticks, a dense CDF), bars (few and many groups,
    /// long names, paper marks, values over three decades).
    fn every_kind() -> Vec<(&'static str, Result<LineChart, BarChart>, Style)> {
        let sub = Style {
            subtitle: "8 GiB, OP 7% spare/logical, fill 100%, seed 42, 2+2 drive writes".into(),
            ..Style::default()
        };
        let mut loglog = line();
        loglog.log_x = true;
        loglog.log_y = true;
        loglog.series[0].points = (1..9)
            .map(|i| (0.05 * f64::from(i), 0.6 / (0.05 * f64::from(i))))
            .collect();
        let model = Series {
            label: "Lambert-W model (the paper's curve)".into(),
            points: (1..9)
                .map(|i| (0.05 * f64::from(i), 0.61 / (0.05 * f64::from(i))))
                .collect(),
        };
        let spread = Spread {
            label: "zipf 0.8".into(),
            points: (0..20)
                .map(|i| (f64::from(i), 78.0 + f64::from(i), 82.0 + f64::from(i)))
                .collect(),
        };
        let fractions = LineChart {
            log_x: true,
            series: vec![Series {
                label: "WAF".into(),
                points: vec![(0.125, 1.0), (0.25, 1.2), (0.5, 1.5), (1.0, 2.3)],
            }],
            ..line()
        };
        let cdf = LineChart {
            series: (0..9)
                .map(|k| Series {
                    label: format!("plan-pred-1/{k}"),
                    points: (0..=100)
                        .map(|p| (f64::from(p), (f64::from(p) / 100.0).powi(k + 1)))
                        .collect(),
                })
                .collect(),
            y_range: Some((0.0, 1.0)),
            ..line()
        };
        let mut wide = bar();
        wide.categories = [
            "fio",
            "compile-capture",
            "rocksdb-ycsb-capture",
            "engine-tpcc",
            "fileserver-capture",
        ]
        .map(String::from)
        .to_vec();
        wide.groups = (0..9)
            .map(|g| {
                (
                    format!("scheme-{g}"),
                    (0..5)
                        .map(|c| f64::from((c + 1) * (g + 1)).powi(2))
                        .collect(),
                )
            })
            .collect();
        let paper = Style {
            bar_reference: vec![vec![2.0, f64::NAN, 50.0, f64::NAN, 3.0]; 2],
            ..sub.clone()
        };
        vec![
            ("line", Ok(line()), sub.clone()),
            (
                "loglog",
                Ok(loglog),
                Style {
                    reference: vec![model],
                    ..sub.clone()
                },
            ),
            (
                "spread",
                Ok(line()),
                Style {
                    spread: vec![spread],
                    ..sub.clone()
                },
            ),
            (
                "fractions",
                Ok(fractions),
                Style {
                    x_ticks: vec![0.125, 0.25, 0.5, 1.0],
                    ..sub.clone()
                },
            ),
            ("cdf", Ok(cdf), sub.clone()),
            ("long-x", Ok(long_x()), sub.clone()),
            ("bar", Err(bar()), sub.clone()),
            ("bar-wide", Err(wide), paper),
            ("bar-names", Err(many_names()), long_setup()),
        ]
    }

    /// A CDF whose x description names the series it leaves out (PLAN's Figure 5 on gcc):
    /// too long for one line under the plot.
    fn long_x() -> LineChart {
        LineChart {
            x_label: "valid ratio of the GC victim (%); not drawn: baseline (all 0%), multi-stream (all 0%), autostream (all 0%), plan-nopred-1/4 (all 0%), plan-nopred-1/8 (all 0%), plan-pred-1/4 (all 0%)".into(),
            ..line()
        }
    }

    /// Eight scheme names, some hyphenated, under eight groups (SepFrozen's replay figure).
    fn many_names() -> BarChart {
        let names = [
            "nosep",
            "sepgc",
            "warcip",
            "dac",
            "dac-paper",
            "sepbit",
            "fk",
            "fk-kmeans",
        ];
        BarChart {
            title: "WAF per scheme".into(),
            y_label: "WAF".into(),
            categories: names.iter().map(|&n| n.to_owned()).collect(),
            groups: vec![(
                "log".into(),
                (0..12).map(|i| 1.5 + f64::from(i) / 10.0).collect(),
            )],
        }
    }

    /// A setup line too long for one line of the page: it is broken onto two.
    fn long_setup() -> Style {
        Style {
            subtitle: "synthetic log, 1000000 user writes (34% of versions frozen); model trained on the synthetic log of seed 43; zones of 256 pages (1 MiB; paper: 256 MiB), GC at GP 15%, cb-sepbit victims; seed 42".into(),
            ..Style::default()
        }
    }

    #[test]
    fn every_figure_kind_has_no_overprinted_text_and_no_covered_data() {
        let tmp = tempfile::tempdir().unwrap();
        let keep = std::env::var_os("NOWA_PLOT_DIR").map(std::path::PathBuf::from);
        let dir = keep.as_deref().unwrap_or(tmp.path());
        for (name, chart, style) in every_kind() {
            for ext in ["svg", "png"] {
                let p = dir.join(format!("kind-{name}.{ext}"));
                match &chart {
                    Ok(l) => render_line_styled(l, &style, &p).unwrap(),
                    Err(b) => render_bar_styled(b, &style, &p).unwrap(),
                }
            }
            crate::plot_layout::check_file(&dir.join(format!("kind-{name}.svg"))).unwrap();
        }
        // The fractional axis labels every given tick (plotters' log axis would label only 1).
        let svg = std::fs::read_to_string(dir.join("kind-fractions.svg")).unwrap();
        for t in ["0.125", "0.25", "0.5", "1"] {
            assert!(svg.lines().any(|l| l.trim() == t), "tick {t} unlabelled");
        }
        // Bars over three decades: a log axis by itself, every decade labelled.
        let svg = std::fs::read_to_string(dir.join("kind-bar-wide.svg")).unwrap();
        assert!(
            svg.lines().any(|l| l.trim() == "1000"),
            "decade ticks on the log axis"
        );
        assert!(
            svg.lines().any(|l| l.trim() == "paper"),
            "paper marks in the legend"
        );
    }

    #[test]
    fn value_axis_starts_at_zero_unless_told() {
        // Values 99.95..100: the axis spans 0..105, so noise is not blown up to full height.
        let mut l = line();
        l.series = vec![Series {
            label: "share".into(),
            points: vec![(0.0, 99.95), (1.0, 100.0), (2.0, 99.97)],
        }];
        let ys = |style: &Style| {
            let d = LineData::new(&l, style);
            axis_range(d.ys(), false, !style.y_from_data)
        };
        assert_eq!(ys(&Style::default()).0, 0.0);
        let (lo, hi) = ys(&Style {
            y_from_data: true,
            ..Style::default()
        });
        assert!(lo > 99.0 && hi < 101.0, "{lo}..{hi}");
        // Log ranges hug the data: 1.0..10.3 is not stretched to 1..100.
        let (lo, hi) = axis_range([1.0, 10.3].into_iter(), true, false);
        assert!(lo > 0.5 && hi < 20.0, "{lo}..{hi}");
        assert_eq!(log_ticks(1.0, 12.0), vec![1.0, 2.0, 5.0, 10.0]);
        assert_eq!(log_ticks(0.1, 1000.0), vec![0.1, 1.0, 10.0, 100.0, 1000.0]);
        assert_eq!(log_ticks(2.5, 4.5), vec![3.0, 4.0]);
    }

    /// A setup of three lines' length is drawn whole, on three lines, each fitting the page
    /// (the old subtitle broke it once and let the second half run off the page).
    #[test]
    fn a_long_setup_is_drawn_whole_on_as_many_lines_as_it_needs() {
        let fits = |l: &str| l.chars().count() <= 40;
        let setup = "8 GiB logical, OP 7% spare/logical; fill 100%, 2+2 drive writes; seeds 42-44, band: min-max";
        let lines = subtitle_lines(setup, &fits);
        assert_eq!(lines.len(), 3, "{lines:?}");
        assert!(lines.iter().all(|l| fits(l)), "{lines:?}");
        assert_eq!(lines.join(" "), setup, "nothing lost");
        // A part longer than a line: broken at ", " then.
        let lines = subtitle_lines(
            "a, b, c, d, e, f, g, h, i, j, k, l, m, n, o, p, q, r, s, t; u",
            &fits,
        );
        assert!(
            lines.len() >= 2 && lines.iter().all(|l| fits(l)),
            "{lines:?}"
        );
        assert_eq!(subtitle_lines("", &fits), Vec::<String>::new());
        // A long setup rendered: every line on the page (the layout check).
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("long.svg");
        let style = Style {
            subtitle: [long_setup().subtitle.as_str(); 2].join("; "),
            ..Style::default()
        };
        render_bar_styled(&many_names(), &style, &p).unwrap();
        crate::plot_layout::check_file(&p).unwrap();
    }

    /// Twelve schemes (SepFrozen's engine figures) get twelve colours a reader tells apart:
    /// every pair of the first fourteen differs by at least 60 in RGB distance, and none is
    /// grey (the layout check would not see it as data).
    #[test]
    fn fourteen_series_get_distinct_colours() {
        let c: Vec<(f64, f64, f64)> = (0..14)
            .map(|i| {
                let RGBColor(r, g, b) = color(i);
                assert!(!(r == g && g == b), "colour {i} is grey");
                (f64::from(r), f64::from(g), f64::from(b))
            })
            .collect();
        for i in 0..c.len() {
            for j in i + 1..c.len() {
                let d = ((c[i].0 - c[j].0).powi(2)
                    + (c[i].1 - c[j].1).powi(2)
                    + (c[i].2 - c[j].2).powi(2))
                .sqrt();
                assert!(
                    d >= 60.0,
                    "colours {i} and {j} alike: {:?} {:?}",
                    c[i],
                    c[j]
                );
            }
        }
    }

    #[test]
    fn legend_names_wrap() {
        assert_eq!(wrap("simulated greedy", 22), vec!["simulated greedy"]);
        assert_eq!(
            wrap("Lambert-W model (the paper's curve)", 22),
            vec!["Lambert-W model (the", "paper's curve)"]
        );
    }

    #[test]
    fn bad_inputs_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        assert!(matches!(
            render_line(&line(), &dir.path().join("x.jpg")),
            Err(PlotError::Extension(_))
        ));
        let mut l = line();
        l.series.iter_mut().for_each(|s| s.points.clear());
        assert!(matches!(
            render_line(&l, &dir.path().join("x.png")),
            Err(PlotError::Empty(_))
        ));
        let mut b = bar();
        b.categories.clear();
        assert!(matches!(
            render_bar(&b, &dir.path().join("x.svg")),
            Err(PlotError::Empty(_))
        ));
        assert!(matches!(
            render_line(&line(), &dir.path().join("no/such/dir/x.png")),
            Err(PlotError::Draw { .. })
        ));
    }

    #[test]
    fn tick_format() {
        assert_eq!(fmt_tick(0.0), "0");
        assert_eq!(fmt_tick(1500.0), "1500");
        assert_eq!(fmt_tick(2.0), "2");
        assert_eq!(fmt_tick(0.25), "0.25");
        assert_eq!(fmt_tick(12.5), "12.5");
        assert_eq!(fmt_tick(0.005), "0.005", "a small rate as a decimal");
        assert_eq!(fmt_tick(0.0002), "2.0e-4");
    }
}
