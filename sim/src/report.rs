//! `innosim report`: one self-contained HTML page of the benches' figures
//! beside the seeds', drawn as hand-written SVG (a grouped bar chart and a
//! line chart are all it needs, so no plotting crate). Pure functions of
//! their data: the command line runs the benches (or reads their JSON) and
//! times the wall; nothing here reads a clock.
//!
//! Every chart is an `<svg class="chart" data-chart="ID">` whose marks are
//! `<rect class="bar">` and `<polyline class="line">` elements, each with a
//! `<title>` of its value, so that a browser test can check from the DOM
//! that every chart has marks and a screenshot that they are drawn.

use std::fmt::Write as _;

/// One series of a chart: a name, a colour and one value per category
/// (`None` where it has no figure, as a seed that did not measure a row).
#[derive(Debug, Clone)]
pub struct Series {
    /// The legend's name.
    pub name: String,
    /// A CSS colour.
    pub color: &'static str,
    /// One value per category (bar chart) or per x (line chart).
    pub values: Vec<Option<f64>>,
}

/// The colours series take in order: ours first, the seeds' after.
pub const PALETTE: [&str; 6] = [
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b",
];

const WIDTH: f64 = 760.0;
const HEIGHT: f64 = 320.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 20.0;
const TOP: f64 = 40.0;
const BOTTOM: f64 = 90.0;

/// Escapes text for HTML and SVG.
pub fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A round upper bound of an axis (1, 2 or 5 times a power of ten).
fn nice_max(max: f64) -> f64 {
    if max <= 0.0 || !max.is_finite() {
        return 1.0;
    }
    let p = 10f64.powf(max.log10().floor());
    for m in [1.0, 2.0, 5.0, 10.0] {
        if m * p >= max {
            return m * p;
        }
    }
    10.0 * p
}

/// Formats a tick or a value compactly.
fn fmt_num(v: f64) -> String {
    if v == 0.0 {
        "0".into()
    } else if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else if v.abs() >= 1.0 {
        format!("{v:.2}")
            .trim_end_matches('0')
            .trim_end_matches('.')
            .into()
    } else {
        format!("{v:.4}")
            .trim_end_matches('0')
            .trim_end_matches('.')
            .into()
    }
}

fn open_svg(out: &mut String, id: &str, title: &str) {
    let _ = write!(
        out,
        r#"<svg class="chart" data-chart="{}" xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" role="img"><title>{}</title><rect x="0" y="0" width="{WIDTH}" height="{HEIGHT}" fill="white"/><text x="{}" y="22" font-size="15" font-weight="bold" text-anchor="middle">{}</text>"#,
        escape(id),
        escape(title),
        WIDTH / 2.0,
        escape(title)
    );
}

fn y_axis(out: &mut String, max: f64, label: &str) {
    let plot_h = HEIGHT - TOP - BOTTOM;
    for i in 0..=4 {
        let v = max * f64::from(i) / 4.0;
        let y = TOP + plot_h - plot_h * f64::from(i) / 4.0;
        let _ = write!(
            out,
            r##"<line x1="{LEFT}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#ddd"/><text x="{:.1}" y="{:.1}" font-size="11" text-anchor="end">{}</text>"##,
            WIDTH - RIGHT,
            LEFT - 6.0,
            y + 4.0,
            fmt_num(v)
        );
    }
    let _ = write!(
        out,
        r#"<text x="14" y="{:.1}" font-size="12" text-anchor="middle" transform="rotate(-90 14 {:.1})">{}</text>"#,
        TOP + plot_h / 2.0,
        TOP + plot_h / 2.0,
        escape(label)
    );
}

fn legend(out: &mut String, series: &[Series]) {
    let mut x = LEFT;
    for s in series {
        let _ = write!(
            out,
            r#"<rect x="{x:.1}" y="{:.1}" width="12" height="12" fill="{}"/><text x="{:.1}" y="{:.1}" font-size="12">{}</text>"#,
            HEIGHT - 22.0,
            s.color,
            x + 16.0,
            HEIGHT - 12.0,
            escape(&s.name)
        );
        x += 24.0 + 7.0 * s.name.chars().count() as f64;
    }
}

/// A chart's start: its frame, title and y axis, scaled to a round bound
/// over every series' values (returned).
fn open_chart(id: &str, title: &str, series: &[Series], y_label: &str) -> (String, f64) {
    let max = series
        .iter()
        .flat_map(|s| s.values.iter().flatten())
        .fold(0.0f64, |m, &v| m.max(v));
    let max = nice_max(max);
    let mut out = String::new();
    open_svg(&mut out, id, title);
    y_axis(&mut out, max, y_label);
    (out, max)
}

/// A grouped bar chart: a group per category, a bar per series.
pub fn bar_chart(
    id: &str,
    title: &str,
    categories: &[String],
    series: &[Series],
    y_label: &str,
) -> String {
    let (mut out, max) = open_chart(id, title, series, y_label);
    let plot_w = WIDTH - LEFT - RIGHT;
    let plot_h = HEIGHT - TOP - BOTTOM;
    let group_w = plot_w / categories.len().max(1) as f64;
    let bar_w = (group_w * 0.8) / series.len().max(1) as f64;
    for (c, cat) in categories.iter().enumerate() {
        let gx = LEFT + group_w * c as f64 + group_w * 0.1;
        for (k, s) in series.iter().enumerate() {
            let Some(v) = s.values.get(c).copied().flatten() else {
                continue;
            };
            let h = (v / max * plot_h).max(0.0);
            let _ = write!(
                out,
                r#"<rect class="bar" x="{:.1}" y="{:.1}" width="{:.1}" height="{h:.1}" fill="{}"><title>{}: {}: {}</title></rect>"#,
                gx + bar_w * k as f64,
                TOP + plot_h - h,
                (bar_w - 1.0).max(1.0),
                s.color,
                escape(cat),
                escape(&s.name),
                fmt_num(v)
            );
        }
        let _ = write!(
            out,
            r#"<text x="{:.1}" y="{:.1}" font-size="11" text-anchor="middle">{}</text>"#,
            gx + group_w * 0.4,
            TOP + plot_h + 16.0,
            escape(cat)
        );
    }
    legend(&mut out, series);
    out.push_str("</svg>");
    out
}

/// A line chart: a polyline per series over the shared `x` values.
pub fn line_chart(
    id: &str,
    title: &str,
    x: &[f64],
    series: &[Series],
    x_label: &str,
    y_label: &str,
) -> String {
    let (mut out, max) = open_chart(id, title, series, y_label);
    let x_max = x.iter().copied().fold(0.0f64, f64::max).max(1.0);
    let plot_w = WIDTH - LEFT - RIGHT;
    let plot_h = HEIGHT - TOP - BOTTOM;
    let px = |v: f64| LEFT + plot_w * v / x_max;
    let py = |v: f64| TOP + plot_h - plot_h * v / max;
    for &v in x {
        let _ = write!(
            out,
            r#"<text x="{:.1}" y="{:.1}" font-size="11" text-anchor="middle">{}</text>"#,
            px(v),
            TOP + plot_h + 16.0,
            fmt_num(v)
        );
    }
    let _ = write!(
        out,
        r#"<text x="{:.1}" y="{:.1}" font-size="12" text-anchor="middle">{}</text>"#,
        LEFT + plot_w / 2.0,
        TOP + plot_h + 34.0,
        escape(x_label)
    );
    for s in series {
        let points: Vec<(f64, f64)> = x
            .iter()
            .zip(&s.values)
            .filter_map(|(&xv, v)| v.map(|v| (px(xv), py(v))))
            .collect();
        if points.is_empty() {
            continue;
        }
        let list: Vec<String> = points
            .iter()
            .map(|(a, b)| format!("{a:.1},{b:.1}"))
            .collect();
        let _ = write!(
            out,
            r#"<polyline class="line" fill="none" stroke="{}" stroke-width="2.5" points="{}"><title>{}</title></polyline>"#,
            s.color,
            list.join(" "),
            escape(&s.name)
        );
        for (a, b) in points {
            let _ = write!(
                out,
                r#"<circle cx="{a:.1}" cy="{b:.1}" r="3.5" fill="{}"/>"#,
                s.color
            );
        }
    }
    legend(&mut out, series);
    out.push_str("</svg>");
    out
}

/// One section of the page: a heading, what it shows, its chart, and the
/// command that measured it.
#[derive(Debug, Clone)]
pub struct Section {
    /// The heading.
    pub title: String,
    /// A paragraph (plain text).
    pub text: String,
    /// The chart's SVG.
    pub svg: String,
    /// The command that measured it.
    pub command: String,
}

/// The whole page: self-contained (inline SVG and style, no script, no
/// fetch).
pub fn page(title: &str, preamble: &str, sections: &[Section]) -> String {
    let mut out = String::new();
    let _ = write!(
        out,
        r#"<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{}</title><style>body{{font-family:sans-serif;max-width:820px;margin:24px auto;color:#222}}section{{margin:28px 0}}code{{background:#f3f3f3;padding:1px 4px}}svg{{border:1px solid #ccc}}</style></head><body><h1>{}</h1><p>{}</p>"#,
        escape(title),
        escape(title),
        escape(preamble)
    );
    for s in sections {
        let _ = write!(
            out,
            r#"<section><h2>{}</h2><p>{}</p>{}<p>Measured by <code>{}</code></p></section>"#,
            escape(&s.title),
            escape(&s.text),
            s.svg,
            escape(&s.command)
        );
    }
    out.push_str("</body></html>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(name: &str, values: &[Option<f64>]) -> Series {
        Series {
            name: name.into(),
            color: PALETTE[0],
            values: values.to_vec(),
        }
    }

    #[test]
    fn a_bar_chart_draws_a_bar_per_value_scaled_to_a_round_axis() {
        let svg = bar_chart(
            "flush",
            "a <title>",
            &["a".into(), "b".into()],
            &[
                series("ours", &[Some(50.0), Some(100.0)]),
                series("seed", &[None, Some(80.0)]),
            ],
            "trx/s",
        );
        assert!(svg.starts_with("<svg class=\"chart\" data-chart=\"flush\""));
        assert!(svg.ends_with("</svg>"));
        assert_eq!(
            svg.matches("class=\"bar\"").count(),
            3,
            "a missing value has no bar"
        );
        assert!(svg.contains("a &lt;title&gt;"), "text is escaped");
        // The axis tops at 100: the 100 bar fills the plot's height.
        let plot_h = HEIGHT - TOP - BOTTOM;
        assert!(svg.contains(&format!("height=\"{plot_h:.1}\"")), "{svg}");
        assert!(svg.contains(&format!("height=\"{:.1}\"", plot_h / 2.0)));
    }

    #[test]
    fn a_line_chart_draws_a_polyline_per_series_with_its_points() {
        let svg = line_chart(
            "scaling",
            "t",
            &[1.0, 4.0, 16.0],
            &[
                series("a", &[Some(1.0), Some(2.0), Some(3.0)]),
                series("b", &[None, Some(2.0), None]),
                series("none", &[None, None, None]),
            ],
            "clients",
            "trx/s",
        );
        assert_eq!(svg.matches("class=\"line\"").count(), 2);
        assert_eq!(svg.matches("<circle").count(), 4);
    }

    #[test]
    fn axes_round_up_and_numbers_print_short() {
        assert_eq!(nice_max(0.0), 1.0);
        assert_eq!(nice_max(7.0), 10.0);
        assert_eq!(nice_max(130.0), 200.0);
        assert_eq!(nice_max(0.03), 0.05);
        assert_eq!(fmt_num(950.4), "950");
        assert_eq!(fmt_num(4.5), "4.5");
        assert_eq!(fmt_num(0.0071), "0.0071");
    }

    #[test]
    fn a_page_holds_its_sections_and_escapes_its_text() {
        let p = page(
            "r & d",
            "pre",
            &[Section {
                title: "one".into(),
                text: "x < y".into(),
                svg: "<svg class=\"chart\"></svg>".into(),
                command: "innosim bench --flush".into(),
            }],
        );
        assert!(p.starts_with("<!DOCTYPE html>"));
        assert!(p.contains("<h1>r &amp; d</h1>"));
        assert!(p.contains("x &lt; y"));
        assert!(p.contains("<svg class=\"chart\"></svg>"));
        assert!(!p.contains("<script"));
    }
}
