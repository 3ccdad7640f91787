//! Layout checks on the SVG files [`crate::plot`] writes: no text overprints another text, no
//! text or legend box covers a data mark, no text leaves the page. Tests render every figure
//! kind to SVG and call [`layout_problems`]; a figure a reader cannot read fails the build.
//!
//! Text extents are estimated from the font size (DejaVu Sans averages about 0.55 em per
//! character; the estimate errs wide by a little, and boxes are shrunk by one pixel before
//! comparing, so touching is not overlapping). Data marks are the coloured markers
//! (`<circle>`), coloured lines of width 2 or more (`<polyline>`: series, references, paper
//! marks; axes and grid lines are black or grey and 1 px) and coloured filled rectangles
//! (bars, legend swatches).

/// An axis-aligned pixel box.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Bounds {
    x0: f64,
    y0: f64,
    x1: f64,
    y1: f64,
}

impl Bounds {
    fn shrunk(self, d: f64) -> Self {
        Bounds {
            x0: self.x0 + d,
            y0: self.y0 + d,
            x1: self.x1 - d,
            y1: self.y1 - d,
        }
    }

    fn overlaps(&self, o: &Bounds) -> bool {
        self.x0 < o.x1 && o.x0 < self.x1 && self.y0 < o.y1 && o.y0 < self.y1
    }

    fn contains(&self, (x, y): (f64, f64)) -> bool {
        (self.x0..=self.x1).contains(&x) && (self.y0..=self.y1).contains(&y)
    }
}

/// One parsed element: its name, attributes and (for text) content.
struct Element<'a> {
    name: &'a str,
    attrs: Vec<(&'a str, &'a str)>,
    content: &'a str,
}

impl Element<'_> {
    fn attr(&self, k: &str) -> Option<&str> {
        self.attrs.iter().find(|a| a.0 == k).map(|a| a.1)
    }

    fn num(&self, k: &str) -> f64 {
        self.attr(k)
            .and_then(|v| v.trim_end_matches("px").parse().ok())
            .unwrap_or(0.0)
    }
}

fn elements(svg: &str) -> Vec<Element<'_>> {
    let mut out = Vec::new();
    for chunk in svg.split('<').skip(1) {
        let Some((tag, rest)) = chunk.split_once('>') else {
            continue;
        };
        let tag = tag.trim_end_matches('/');
        let (name, mut a) = tag.split_once(' ').unwrap_or((tag, ""));
        if name.starts_with('/') || name.starts_with('?') {
            continue;
        }
        let mut attrs = Vec::new();
        while let Some((k, v)) = a.split_once("=\"") {
            let Some((val, more)) = v.split_once('"') else {
                break;
            };
            attrs.push((k.trim(), val));
            a = more;
        }
        out.push(Element {
            name,
            attrs,
            content: rest.trim(),
        });
    }
    out
}

/// The estimated box of a `<text>` element, rotated as its transform says.
fn text_bounds(e: &Element<'_>) -> Bounds {
    let size = e.num("font-size");
    let n = e.content.chars().count() as f64;
    let w = n * 0.55 * size;
    let (x, y) = (e.num("x"), e.num("y"));
    let x0 = match e.attr("text-anchor") {
        Some("middle") => x - w / 2.0,
        Some("end") => x - w,
        _ => x,
    };
    // plotters places the text by `dy`: 0.76em = top at y, 0.5ex = centred, -0.5ex = bottom.
    let top = match e.attr("dy") {
        Some("0.76em") => y,
        Some("0.5ex") => y - 0.5 * size,
        Some("-0.5ex") => y - size,
        _ => y - 0.8 * size,
    };
    let b = Bounds {
        x0,
        y0: top,
        x1: x0 + w,
        y1: top + size,
    };
    assert!(
        b.x1 >= b.x0 && b.y1 >= b.y0,
        "a text box has no negative size"
    );
    match e.attr("transform").and_then(rotation) {
        Some((deg, cx, cy)) => rotate(b, deg, cx, cy),
        None => b,
    }
}

/// `rotate(deg, cx, cy)` of a transform attribute.
fn rotation(t: &str) -> Option<(f64, f64, f64)> {
    let inner = t.strip_prefix("rotate(")?.strip_suffix(')')?;
    let v: Vec<f64> = inner
        .split(',')
        .map(|s| s.trim().parse().ok())
        .collect::<Option<_>>()?;
    match v[..] {
        [d, x, y] => Some((d, x, y)),
        [d] => Some((d, 0.0, 0.0)),
        _ => None,
    }
}

fn rotate(b: Bounds, deg: f64, cx: f64, cy: f64) -> Bounds {
    let (s, c) = deg.to_radians().sin_cos();
    let corners = [(b.x0, b.y0), (b.x1, b.y0), (b.x0, b.y1), (b.x1, b.y1)];
    let pts = corners.map(|(x, y)| {
        let (dx, dy) = (x - cx, y - cy);
        (cx + dx * c - dy * s, cy + dx * s + dy * c)
    });
    let xs = pts.map(|p| p.0);
    let ys = pts.map(|p| p.1);
    Bounds {
        x0: xs.iter().copied().fold(f64::INFINITY, f64::min),
        y0: ys.iter().copied().fold(f64::INFINITY, f64::min),
        x1: xs.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        y1: ys.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    }
}

/// Black, white and greys (axes, grid, background) are not data.
fn is_data_colour(c: Option<&str>) -> bool {
    let Some(hex) = c.and_then(|c| c.strip_prefix('#')) else {
        return false;
    };
    let rgb: Vec<u8> = (0..3)
        .filter_map(|i| hex.get(2 * i..2 * i + 2))
        .filter_map(|h| u8::from_str_radix(h, 16).ok())
        .collect();
    matches!(rgb[..], [r, g, b] if !(r == g && g == b))
}

/// Coloured lines of 2 px or more (series, references) and thick black ones (paper marks).
fn is_data_line(e: &Element<'_>) -> bool {
    let w = e.num("stroke-width");
    (w >= 2.0 && is_data_colour(e.attr("stroke")))
        || (w >= 3.0 && e.attr("stroke") == Some("#000000"))
}

/// What the page holds, for the checks.
#[derive(Default)]
struct Page {
    texts: Vec<(String, Bounds)>,
    marks: Vec<Bounds>,
    segments: Vec<((f64, f64), (f64, f64))>,
    boxes: Vec<Bounds>,
    size: (f64, f64),
}

fn page(svg: &str) -> Page {
    let mut p = Page::default();
    for e in elements(svg) {
        match e.name {
            "svg" => p.size = (e.num("width"), e.num("height")),
            "text" if !e.content.is_empty() => {
                p.texts.push((e.content.to_owned(), text_bounds(&e)));
            }
            "circle" => {
                let (x, y, r) = (e.num("cx"), e.num("cy"), e.num("r"));
                p.marks.push(Bounds {
                    x0: x - r,
                    y0: y - r,
                    x1: x + r,
                    y1: y + r,
                });
            }
            "polyline" if is_data_line(&e) => {
                let pts: Vec<(f64, f64)> = (e.attr("points").unwrap_or(""))
                    .split_whitespace()
                    .filter_map(|xy| xy.split_once(','))
                    .filter_map(|(x, y)| Some((x.parse().ok()?, y.parse().ok()?)))
                    .collect();
                p.segments.extend(pts.windows(2).map(|w| (w[0], w[1])));
            }
            "rect" => {
                let (x, y) = (e.num("x"), e.num("y"));
                let b = Bounds {
                    x0: x,
                    y0: y,
                    x1: x + e.num("width"),
                    y1: y + e.num("height"),
                };
                if is_data_colour(e.attr("fill")) || e.attr("fill") == Some("#000000") {
                    p.marks.push(b);
                } else if (x, y) != (0.0, 0.0) && e.attr("fill") == Some("#FFFFFF") {
                    // A white box drawn over the plot: an inside legend's background.
                    p.boxes.push(b);
                }
            }
            _ => {}
        }
    }
    p
}

fn crosses(b: &Bounds, (a, z): ((f64, f64), (f64, f64))) -> bool {
    // Sample every 2 px or so (a page is < 2^16 px across: the count fits any integer).
    let steps = crate::round_u64(((z.0 - a.0).hypot(z.1 - a.1) / 2.0).ceil().max(1.0));
    #[expect(clippy::cast_precision_loss, reason = "a few thousand steps at most")]
    let n = steps as f64;
    (0..=steps).any(|i| {
        #[expect(clippy::cast_precision_loss, reason = "a few thousand steps at most")]
        let t = i as f64 / n;
        b.contains((a.0 + (z.0 - a.0) * t, a.1 + (z.1 - a.1) * t))
    })
}

/// Every layout problem of an SVG written by [`crate::plot`], one line each (empty: none):
/// two texts overprinting, a text or a legend box over a data mark or line, a text off the
/// page.
#[must_use]
pub fn layout_problems(svg: &str) -> Vec<String> {
    let p = page(svg);
    let mut out = Vec::new();
    let near = |b: &Bounds| b.shrunk(1.0);
    for (i, (s, b)) in p.texts.iter().enumerate() {
        let b = near(b);
        for (t, c) in &p.texts[i + 1..] {
            if b.overlaps(&near(c)) {
                out.push(format!("text {s:?} overlaps text {t:?}"));
            }
        }
        if p.marks.iter().any(|m| b.overlaps(m)) || p.segments.iter().any(|&g| crosses(&b, g)) {
            out.push(format!("text {s:?} covers a data mark"));
        }
        if b.x0 < -2.0 || b.y0 < -2.0 || b.x1 > p.size.0 + 2.0 || b.y1 > p.size.1 + 2.0 {
            out.push(format!("text {s:?} leaves the page"));
        }
    }
    for b in &p.boxes {
        if p.marks.iter().any(|m| b.overlaps(m)) || p.segments.iter().any(|&g| crosses(b, g)) {
            out.push(format!("a box at ({:.0}, {:.0}) covers data", b.x0, b.y0));
        }
    }
    out
}

/// The text of every non-empty `<text>` element of an SVG written by [`crate::plot`], in
/// order (for tests that read titles, legends and axis labels).
#[must_use]
pub fn texts(svg: &str) -> Vec<String> {
    page(svg).texts.into_iter().map(|t| t.0).collect()
}

/// [`layout_problems`] of an SVG file, as one error listing them (for tests).
///
/// # Errors
/// The file cannot be read, or it has layout problems.
pub fn check_file(path: &std::path::Path) -> Result<(), String> {
    let svg = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let problems = layout_problems(&svg);
    if problems.is_empty() {
        return Ok(());
    }
    Err(format!("{}:\n  {}", path.display(), problems.join("\n  ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEAD: &str = r#"<svg width="400" height="300" viewBox="0 0 400 300" xmlns="http://www.w3.org/2000/svg">"#;

    fn text(x: u32, y: u32, s: &str) -> String {
        format!(
            "<text x=\"{x}\" y=\"{y}\" dy=\"0.76em\" text-anchor=\"middle\" font-size=\"16\" fill=\"#000000\">\n{s}\n</text>\n"
        )
    }

    #[test]
    fn overprinted_names_are_found() {
        // "compile-capture" and "rocksdb-ycsb" side by side, 60 px apart: they overprint.
        let svg = format!(
            "{HEAD}{}{}</svg>",
            text(100, 200, "compile-capture"),
            text(160, 200, "rocksdb-ycsb")
        );
        let p = layout_problems(&svg);
        assert_eq!(p.len(), 1, "{p:?}");
        assert!(p[0].contains("overlaps"), "{p:?}");
        // 200 px apart: fine.
        let svg = format!(
            "{HEAD}{}{}</svg>",
            text(100, 200, "compile-capture"),
            text(300, 200, "rocksdb-ycsb")
        );
        assert_eq!(layout_problems(&svg), Vec::<String>::new());
    }

    #[test]
    fn a_legend_over_data_is_found() {
        let line = "<polyline fill=\"none\" stroke=\"#0072B2\" stroke-width=\"2\" points=\"0,50 400,50 \"/>\n";
        let legend = "<rect x=\"250\" y=\"30\" width=\"140\" height=\"60\" opacity=\"0.85\" fill=\"#FFFFFF\" stroke=\"none\"/>\n";
        let p = layout_problems(&format!("{HEAD}{line}{legend}</svg>"));
        assert!(p.iter().any(|l| l.contains("box")), "{p:?}");
        let p = layout_problems(&format!("{HEAD}{line}{}</svg>", text(200, 44, "label")));
        assert!(p.iter().any(|l| l.contains("data mark")), "{p:?}");
        // Grey grid lines and black axes are not data.
        let grid = "<polyline fill=\"none\" stroke=\"#C8C8C8\" stroke-width=\"2\" points=\"0,50 400,50 \"/>\n";
        assert!(layout_problems(&format!("{HEAD}{grid}{}</svg>", text(200, 44, "x"))).is_empty());
    }

    #[test]
    fn rotated_and_offpage_text() {
        // The y axis description, rotated by 270 degrees about its anchor: tall, not wide.
        let svg = format!(
            "{HEAD}<text x=\"16\" y=\"150\" dy=\"0.76em\" text-anchor=\"middle\" font-size=\"14\" transform=\"rotate(270, 16, 150)\">\nWAF / WAF(uniform)\n</text>\n{}</svg>",
            text(60, 150, "1.5")
        );
        assert_eq!(layout_problems(&svg), Vec::<String>::new());
        let svg = format!("{HEAD}{}</svg>", text(395, 10, "a long label"));
        assert!(layout_problems(&svg)[0].contains("leaves the page"));
    }
}
