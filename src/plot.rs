//! A minimal log–log line chart as SVG, for benchmark scaling plots (no plotting crate
//! needed for a handful of series).

use std::fmt::Write;

/// One named series of (x, y) points; y values that are not finite and positive are skipped.
#[derive(Clone, Debug)]
pub struct Series {
    /// Legend label.
    pub name: String,
    /// Points.
    pub points: Vec<(f64, f64)>,
}

/// Ten colours; past them a series is dashed as well, so no two series look alike (a
/// bench of nine series drew three pairs in one colour).
const COLORS: [&str; 10] = [
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
    "#bcbd22", "#17becf",
];

/// Renders the series on log–log axes.
pub fn loglog_svg(title: &str, x_label: &str, y_label: &str, series: &[Series]) -> String {
    // The legend's column is as wide as its longest label (about 7 px a character at
    // 12 px): a long adapter name ran off a fixed one.
    let longest = series
        .iter()
        .map(|s| s.name.chars().count())
        .max()
        .unwrap_or(0);
    let right = (46.0 + 7.0 * longest as f64).max(180.0);
    let (w, h, left, top, bottom) = (540.0 + right, 460.0, 80.0, 40.0, 60.0);
    let good = |&(x, y): &(f64, f64)| x > 0.0 && y > 0.0 && x.is_finite() && y.is_finite();
    let all: Vec<(f64, f64)> = series
        .iter()
        .flat_map(|s| s.points.iter().copied().filter(good))
        .collect();
    let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
    for &(x, y) in &all {
        x0 = x0.min(x.log10());
        x1 = x1.max(x.log10());
        y0 = y0.min(y.log10());
        y1 = y1.max(y.log10());
    }
    if all.is_empty() {
        (x0, x1, y0, y1) = (0.0, 1.0, 0.0, 1.0);
    }
    let (x0, x1) = (x0.floor(), x1.ceil().max(x0.floor() + 1.0));
    let (y0, y1) = (y0.floor(), y1.ceil().max(y0.floor() + 1.0));
    let px = |x: f64| left + (x.log10() - x0) / (x1 - x0) * (w - left - right);
    let py = |y: f64| h - bottom - (y.log10() - y0) / (y1 - y0) * (h - top - bottom);
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="{}" y="22" font-size="15" text-anchor="middle">{title}</text>"#,
        (left + w - right) / 2.0
    );
    for d in x0 as i32..=x1 as i32 {
        let x = px(10f64.powi(d));
        let _ = writeln!(
            s,
            r##"<line x1="{x}" y1="{top}" x2="{x}" y2="{}" stroke="#ddd"/><text x="{x}" y="{}" text-anchor="middle">1e{d}</text>"##,
            h - bottom,
            h - bottom + 16.0
        );
    }
    for d in y0 as i32..=y1 as i32 {
        let y = py(10f64.powi(d));
        let _ = writeln!(
            s,
            r##"<line x1="{left}" y1="{y}" x2="{}" y2="{y}" stroke="#ddd"/><text x="{}" y="{}" text-anchor="end">1e{d}</text>"##,
            w - right,
            left - 6.0,
            y + 4.0
        );
    }
    let _ = writeln!(
        s,
        r#"<text x="{}" y="{}" text-anchor="middle">{x_label}</text>"#,
        (left + w - right) / 2.0,
        h - 18.0
    );
    let _ = writeln!(
        s,
        r#"<text x="18" y="{}" transform="rotate(-90 18 {})" text-anchor="middle">{y_label}</text>"#,
        (top + h - bottom) / 2.0,
        (top + h - bottom) / 2.0
    );
    for (k, series) in series.iter().enumerate() {
        let color = COLORS[k % COLORS.len()];
        let dash = if k >= COLORS.len() {
            r#" stroke-dasharray="6 3""#
        } else {
            ""
        };
        // Joined in the order of x, whatever order the sizes were given in.
        let mut points: Vec<(f64, f64)> = series.points.iter().copied().filter(good).collect();
        points.sort_by(|a, b| a.0.total_cmp(&b.0));
        let pts: Vec<String> = points
            .iter()
            .map(|&(x, y)| format!("{:.1},{:.1}", px(x), py(y)))
            .collect();
        if !pts.is_empty() {
            let _ = writeln!(
                s,
                r#"<polyline fill="none" stroke="{color}" stroke-width="2"{dash} points="{}"/>"#,
                pts.join(" ")
            );
            for p in &pts {
                let (x, y) = p.split_once(',').unwrap_or(("0", "0"));
                let _ = writeln!(s, r#"<circle cx="{x}" cy="{y}" r="3" fill="{color}"/>"#);
            }
        }
        let ly = top + 10.0 + 18.0 * k as f64;
        let _ = writeln!(
            s,
            r#"<line x1="{}" y1="{ly}" x2="{}" y2="{ly}" stroke="{color}" stroke-width="3"{dash}/><text x="{}" y="{}">{}</text>"#,
            w - right + 10.0,
            w - right + 30.0,
            w - right + 36.0,
            ly + 4.0,
            escaped(&series.name)
        );
    }
    s.push_str("</svg>\n");
    s
}

/// `text` with the characters XML gives meaning to written as entities.
fn escaped(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Twelve series look different from one another (ten colours, then dashed), each
    /// line joins its points in the order of x, and a long label widens the legend's
    /// column instead of running off the picture.
    #[test]
    fn series_are_told_apart_sorted_and_labelled_within_the_picture() {
        let series: Vec<Series> = (0..12)
            .map(|k| Series {
                name: format!("series {k} <{}>", "x".repeat(4 * k)),
                points: vec![(1e4, 1.0 + k as f64), (1e2, 2.0), (1e3, 3.0)],
            })
            .collect();
        let svg = loglog_svg("t", "x", "y", &series);
        let styles: Vec<(String, bool)> = svg
            .lines()
            .filter(|l| l.starts_with("<polyline"))
            .map(|l| {
                let stroke = l.split("stroke=\"").nth(1).unwrap();
                (stroke[..7].to_owned(), l.contains("stroke-dasharray"))
            })
            .collect();
        assert_eq!(styles.len(), 12);
        let mut distinct = styles.clone();
        distinct.sort();
        distinct.dedup();
        assert_eq!(distinct.len(), 12, "{styles:?}");
        // Each polyline's x coordinates increase.
        for l in svg.lines().filter(|l| l.starts_with("<polyline")) {
            let points = l
                .split("points=\"")
                .nth(1)
                .unwrap()
                .trim_end_matches("\"/>");
            let xs: Vec<f64> = points
                .split(' ')
                .map(|p| p.split(',').next().unwrap().parse().unwrap())
                .collect();
            assert!(xs.windows(2).all(|w| w[0] < w[1]), "{l}");
        }
        // The widest label fits: the picture is at least its text's width past the plot.
        let width: f64 = svg
            .split("width=\"")
            .nth(1)
            .and_then(|r| r.split('"').next())
            .unwrap()
            .parse()
            .unwrap();
        let longest = series.iter().map(|s| s.name.len()).max().unwrap() as f64;
        assert!(width >= 540.0 + 36.0 + 7.0 * longest, "{width}");
        assert!(
            svg.contains("&lt;x") && !svg.contains("<x"),
            "labels are escaped"
        );
    }
}
