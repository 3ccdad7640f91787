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

/// What a chart shows beyond its data: a setup subtitle under the title, a logarithmic value
/// axis for bars (values spanning more than a decade), the legend's corner for lines (upper
/// left keeps it off CDFs, which reach 1 at the right).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Style {
    /// Second title line (device, fill, seed, run length, scale); empty: none.
    pub subtitle: String,
    /// Bars: logarithmic value axis (bars rise from the lowest decade).
    pub log_y: bool,
    /// Lines: legend in the upper left corner instead of the upper right.
    pub legend_upper_left: bool,
    /// Bars: legend in its own column beside the plot even with few groups.
    pub legend_beside: bool,
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

/// Colour-blind friendly palette (Okabe-Ito), then Palette99 for more series.
const COLORS: [RGBColor; 8] = [
    RGBColor(0, 114, 178),
    RGBColor(213, 94, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(230, 159, 0),
    RGBColor(86, 180, 233),
    RGBColor(0, 0, 0),
    RGBColor(240, 228, 66),
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
    } else if a >= 0.01 {
        let s = format!("{:.3}", v);
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        format!("{:.1e}", v)
    }
}

fn usable(v: f64, log: bool) -> bool {
    v.is_finite() && (!log || v > 0.0)
}

/// Data range of one axis with a margin; on a log axis in multiplicative terms.
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
        // Whole decades: plotters labels a log axis at powers of ten (and their multiples), so
        // a range without a decade inside would get no tick label at all.
        let lo = 10f64.powf(lo.log10().floor());
        let mut hi = 10f64.powf(hi.log10().ceil());
        if hi <= lo {
            hi = lo * 10.0;
        }
        return (lo, hi);
    }
    if from_zero && lo >= 0.0 && lo <= 0.5 * hi {
        lo = 0.0;
    }
    if hi - lo < 1e-12 * hi.abs().max(1.0) {
        let d = if hi == 0.0 { 1.0 } else { hi.abs() * 0.1 };
        return (lo - d, hi + d);
    }
    let m = (hi - lo) * 0.05;
    (if lo == 0.0 { 0.0 } else { lo - m }, hi + m)
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
pub fn render_line_styled(chart: &LineChart, style: &Style, path: &Path) -> Result<(), PlotError> {
    let format = format_of(path)?;
    let pts: Vec<Vec<(f64, f64)>> = chart
        .series
        .iter()
        .map(|s| {
            s.points
                .iter()
                .copied()
                .filter(|&(x, y)| usable(x, chart.log_x) && usable(y, chart.log_y))
                .collect()
        })
        .collect();
    if pts.iter().all(|p| p.is_empty()) {
        return Err(PlotError::Empty("no finite points in any series"));
    }
    let (x0, x1) = axis_range(pts.iter().flatten().map(|p| p.0), chart.log_x, false);
    let (y0, y1) = chart
        .y_range
        .unwrap_or_else(|| axis_range(pts.iter().flatten().map(|p| p.1), chart.log_y, true));
    if y0.partial_cmp(&y1) != Some(std::cmp::Ordering::Less) || (chart.log_y && y0 <= 0.0) {
        return Err(PlotError::Empty(
            "y range is empty (or not positive on a log axis)",
        ));
    }
    register_font();
    let res = match format {
        Format::Png => {
            let root = BitMapBackend::new(path, (WIDTH, HEIGHT)).into_drawing_area();
            line_axes(&root, chart, style, &pts, (x0, x1), (y0, y1))
                .and_then(|_| root.present().map_err(|e| e.to_string()))
        }
        Format::Svg => {
            let root = SVGBackend::new(path, (WIDTH, HEIGHT)).into_drawing_area();
            line_axes(&root, chart, style, &pts, (x0, x1), (y0, y1))
                .and_then(|_| root.present().map_err(|e| e.to_string()))
        }
    };
    res.map_err(|e| draw_err(path, e))
}

fn line_axes<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    chart: &LineChart,
    style: &Style,
    pts: &[Vec<(f64, f64)>],
    (x0, x1): (f64, f64),
    (y0, y1): (f64, f64),
) -> DrawResult {
    let area = titled(root, &chart.title, &style.subtitle)?;
    let area = &area;
    let s = style;
    match (chart.log_x, chart.log_y) {
        (false, false) => line_draw(area, chart, s, pts, x0..x1, y0..y1),
        (true, false) => line_draw(area, chart, s, pts, (x0..x1).log_scale(), y0..y1),
        (false, true) => line_draw(area, chart, s, pts, x0..x1, (y0..y1).log_scale()),
        (true, true) => line_draw(
            area,
            chart,
            s,
            pts,
            (x0..x1).log_scale(),
            (y0..y1).log_scale(),
        ),
    }
}

/// A white page with the title (and the subtitle, if any) over the whole width; returns the
/// area below.
fn titled<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    subtitle: &str,
) -> Result<DrawingArea<DB, Shift>, String> {
    root.fill(&WHITE).map_err(|x| x.to_string())?;
    let area = root.titled(title, (FONT, 28)).map_err(|x| x.to_string())?;
    if subtitle.is_empty() {
        return Ok(area);
    }
    area.titled(subtitle, (FONT, 15)).map_err(|x| x.to_string())
}

fn line_draw<DB, X, Y>(
    root: &DrawingArea<DB, Shift>,
    chart: &LineChart,
    style: &Style,
    pts: &[Vec<(f64, f64)>],
    xr: X,
    yr: Y,
) -> DrawResult
where
    DB: DrawingBackend,
    X: AsRangedCoord<Value = f64>,
    Y: AsRangedCoord<Value = f64>,
    X::CoordDescType: ValueFormatter<f64>,
    Y::CoordDescType: ValueFormatter<f64>,
{
    let e = |e: &dyn std::fmt::Display| e.to_string();
    let mut cc = ChartBuilder::on(root)
        .margin(16)
        .x_label_area_size(56)
        .y_label_area_size(80)
        .build_cartesian_2d(xr, yr)
        .map_err(|x| e(&x))?;
    cc.configure_mesh()
        .x_desc(&chart.x_label)
        .y_desc(&chart.y_label)
        .label_style((FONT, 16))
        .axis_desc_style((FONT, 18))
        .x_label_formatter(&|v| fmt_tick(*v))
        .y_label_formatter(&|v| fmt_tick(*v))
        .light_line_style(RGBColor(235, 235, 235))
        .bold_line_style(RGBColor(200, 200, 200))
        .draw()
        .map_err(|x| e(&x))?;
    let mut any_label = false;
    for (i, (s, p)) in chart.series.iter().zip(pts).enumerate() {
        if p.is_empty() {
            continue;
        }
        let c = color(i);
        let line = cc
            .draw_series(LineSeries::new(p.iter().copied(), c.stroke_width(2)))
            .map_err(|x| e(&x))?;
        if !s.label.is_empty() {
            any_label = true;
            line.label(s.label.clone()).legend(move |(x, y)| {
                EmptyElement::at((x, y))
                    + PathElement::new(vec![(0, 0), (20, 0)], c.stroke_width(2))
                    + Circle::new((10, 0), 4, c.filled())
            });
        }
        // Dense series get small markers so the line stays readable.
        let r = if p.len() > 150 { 2 } else { 4 };
        cc.draw_series(p.iter().map(|&(x, y)| Circle::new((x, y), r, c.filled())))
            .map_err(|x| e(&x))?;
    }
    if any_label {
        cc.configure_series_labels()
            .position(if style.legend_upper_left {
                SeriesLabelPosition::UpperLeft
            } else {
                SeriesLabelPosition::UpperRight
            })
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .label_font((FONT, 16))
            .draw()
            .map_err(|x| e(&x))?;
    }
    Ok(())
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

/// [`render_bar`] with a [`Style`] (on a log axis, values <= 0 are left out).
///
/// # Errors
/// As [`render_bar`].
pub fn render_bar_styled(chart: &BarChart, style: &Style, path: &Path) -> Result<(), PlotError> {
    let format = format_of(path)?;
    if chart.categories.is_empty() || chart.groups.is_empty() {
        return Err(PlotError::Empty(
            "a bar chart needs at least one category and one group",
        ));
    }
    let vals = chart
        .groups
        .iter()
        .flat_map(|g| g.1.iter().take(chart.categories.len()))
        .copied()
        .filter(|&v| usable(v, style.log_y));
    let (y0, y1) = if style.log_y {
        axis_range(vals, true, false)
    } else {
        let (y0, y1) = axis_range(vals.chain(std::iter::once(0.0)), false, true);
        (y0.min(0.0), y1)
    };
    register_font();
    let res = match format {
        Format::Png => {
            let root = BitMapBackend::new(path, (WIDTH, HEIGHT)).into_drawing_area();
            bar_axes(&root, chart, style, y0, y1)
                .and_then(|_| root.present().map_err(|e| e.to_string()))
        }
        Format::Svg => {
            let root = SVGBackend::new(path, (WIDTH, HEIGHT)).into_drawing_area();
            bar_axes(&root, chart, style, y0, y1)
                .and_then(|_| root.present().map_err(|e| e.to_string()))
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
    if style.log_y {
        bar_draw(root, chart, style, (y0..y1).log_scale(), y0)
    } else {
        bar_draw(root, chart, style, y0..y1, y0.max(0.0))
    }
}

fn bar_draw<DB, Y>(
    root: &DrawingArea<DB, Shift>,
    chart: &BarChart,
    style: &Style,
    yr: Y,
    base: f64,
) -> DrawResult
where
    DB: DrawingBackend,
    Y: AsRangedCoord<Value = f64>,
    Y::CoordDescType: ValueFormatter<f64>,
{
    let e = |e: &dyn std::fmt::Display| e.to_string();
    let (n, g) = (chart.categories.len(), chart.groups.len());
    // Many groups: the legend gets its own column right of the plot (inside, it hides bars);
    // the title spans the whole width (a long one does not fit over the plot alone).
    let outside = g > LEGEND_INSIDE_MAX || style.legend_beside;
    let area = titled(root, &chart.title, &style.subtitle)?;
    let (plot, side) = area.split_horizontally(if outside { WIDTH - 230 } else { WIDTH });
    let mut cc = ChartBuilder::on(&plot)
        .margin(16)
        .x_label_area_size(64)
        .y_label_area_size(80)
        .build_cartesian_2d(0.0..n as f64, yr)
        .map_err(|x| e(&x))?;
    cc.configure_mesh()
        .disable_x_mesh()
        .x_labels(0)
        .x_label_formatter(&|_| String::new())
        .y_desc(&chart.y_label)
        .label_style((FONT, 16))
        .axis_desc_style((FONT, 18))
        .y_label_formatter(&|v| fmt_tick(*v))
        .light_line_style(RGBColor(235, 235, 235))
        .bold_line_style(RGBColor(200, 200, 200))
        .draw()
        .map_err(|x| e(&x))?;
    let slot = 0.8 / g as f64;
    for (gi, (name, values)) in chart.groups.iter().enumerate() {
        let c = color(gi);
        let bars = values
            .iter()
            .take(n)
            .enumerate()
            .filter(|(_, v)| usable(**v, style.log_y))
            .map(move |(ci, &v)| {
                let left = ci as f64 + 0.1 + gi as f64 * slot;
                let corners = [(left + slot * 0.05, base), (left + slot * 0.95, v)];
                Rectangle::new(corners, c.filled())
            });
        cc.draw_series(bars)
            .map_err(|x| e(&x))?
            .label(name.clone())
            .legend(move |(x, y)| Rectangle::new([(x, y - 6), (x + 14, y + 6)], c.filled()));
    }
    let at = |ci: usize| cc.backend_coord(&(ci as f64 + 0.5, base));
    category_names(root, chart, &(0..n).map(at).collect::<Vec<_>>())?;
    if outside {
        return side_legend(&side, chart);
    }
    cc.configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font((FONT, 16))
        .draw()
        .map_err(|x| e(&x))?;
    Ok(())
}

/// Category names under the axis, centred on each group of bars at pixel `at` (drawn on the
/// root area: the plotting area clips everything outside it). A name wider than its group is
/// broken at the '-' nearest its middle onto two lines, so neighbours never overprint.
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
        let lines = match name
            .char_indices()
            .filter(|&(_, c)| c == '-')
            .min_by_key(|&(i, _)| i.abs_diff(name.len() / 2))
        {
            Some((i, _)) if i32::try_from(wide).unwrap_or(i32::MAX) > slot - 8 => {
                vec![&name[..=i], &name[i + 1..]]
            }
            _ => vec![name.as_str()],
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

/// Bar charts with more groups than this draw their legend beside the plot.
const LEGEND_INSIDE_MAX: usize = 8;

/// The legend of a bar chart in its own area: one swatch and name per group, top down.
fn side_legend<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, chart: &BarChart) -> DrawResult {
    let style = TextStyle::from((FONT, 16).into_font()).pos(Pos::new(HPos::Left, VPos::Center));
    for (gi, (name, _)) in chart.groups.iter().enumerate() {
        let y = 70 + 24 * i32::try_from(gi).map_err(|x| x.to_string())?;
        area.draw(&Rectangle::new(
            [(8, y - 7), (24, y + 7)],
            color(gi).filled(),
        ))
        .map_err(|x| x.to_string())?;
        area.draw(&Text::new(name.clone(), (32, y), style.clone()))
            .map_err(|x| x.to_string())?;
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
        let legend_x = format!("<text x=\"{}\"", WIDTH - 230 + 32);
        assert_eq!(
            svg.matches(&legend_x).count(),
            12,
            "legend in its own column"
        );
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
        // Too wide for its group: every name broken at the '-' nearest its middle.
        assert!(
            !texts.contains(&"rocksdb-ycsb-capture0"),
            "long name not wrapped"
        );
        assert_eq!(texts.iter().filter(|&&t| t == "rocksdb-ycsb-").count(), 10);
        // Log axis: a decade tick label.
        assert!(texts.contains(&"10") && texts.contains(&"100"), "log ticks");
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
    }
}
