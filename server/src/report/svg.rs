//! The report's plots, drawn as inline SVG (nothing to fetch when the page is viewed).
//!
//! Each function returns one `<svg>` element. Marks are plain `<circle>`/`<rect>`/`<line>` with a
//! `class` naming what they show (`sample original`, `config`, `point`), so a test can count them.

use std::fmt::Write;

const W: f64 = 640.0;
const FONT: &str = r#"font-family="system-ui, sans-serif" font-size="11""#;

/// One axis' mapping from data to pixels, linear or log10.
struct Scale {
    lo: f64,
    hi: f64,
    from: f64,
    to: f64,
    log: bool,
}

impl Scale {
    fn new(lo: f64, hi: f64, from: f64, to: f64, log: bool) -> Self {
        let (lo, hi) = if log { (lo.max(f64::MIN_POSITIVE).log10(), hi.max(f64::MIN_POSITIVE).log10()) } else { (lo, hi) };
        // A degenerate range (one value) is widened so the value sits in the middle.
        let (lo, hi) = if (hi - lo).abs() < 1e-12 { (lo - 0.5, hi + 0.5) } else { (lo, hi) };
        Self { lo, hi, from, to, log }
    }

    fn at(&self, v: f64) -> f64 {
        let v = if self.log { v.max(f64::MIN_POSITIVE).log10() } else { v };
        self.from + (v - self.lo) / (self.hi - self.lo) * (self.to - self.from)
    }

    /// About five round ticks inside the range (decades on a log axis).
    fn ticks(&self) -> Vec<f64> {
        if self.log {
            return (self.lo.floor() as i32..=self.hi.ceil() as i32)
                .map(|e| 10f64.powi(e))
                .filter(|t| (self.lo..=self.hi).contains(&t.log10()))
                .collect();
        }
        let raw = (self.hi - self.lo) / 5.0;
        let mag = 10f64.powf(raw.log10().floor());
        let step = [1.0, 2.0, 5.0, 10.0].iter().map(|m| m * mag).find(|s| *s >= raw).unwrap_or(mag * 10.0);
        let mut t = (self.lo / step).ceil() * step;
        let mut out = Vec::new();
        while t <= self.hi + step * 1e-9 {
            out.push(t);
            t += step;
        }
        out
    }
}

/// A number as a short label: 3 significant digits, SI suffix for large values.
pub fn short(v: f64) -> String {
    let a = v.abs();
    let (x, suffix) = match a {
        a if a >= 1e12 => (v / 1e12, "T"),
        a if a >= 1e9 => (v / 1e9, "G"),
        a if a >= 1e6 => (v / 1e6, "M"),
        a if a >= 1e4 => (v / 1e3, "k"),
        _ => (v, ""),
    };
    let digits = if x.abs() >= 100.0 {
        0
    } else if x.abs() >= 10.0 {
        1
    } else {
        2
    };
    format!("{x:.digits$}{suffix}")
}

fn open(h: f64, label: &str) -> String {
    format!(r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {h}" width="{W}" height="{h}" role="img" aria-label="{label}">"#)
}

fn x_axis(out: &mut String, s: &Scale, y: f64, title: &str) {
    let _ = write!(out, r##"<line x1="{}" y1="{y}" x2="{}" y2="{y}" stroke="#888"/>"##, s.from, s.to);
    for t in s.ticks() {
        let x = s.at(t);
        let _ = write!(
            out,
            r##"<line x1="{x:.1}" y1="{y}" x2="{x:.1}" y2="{}" stroke="#888"/><text x="{x:.1}" y="{}" text-anchor="middle" {FONT}>{}</text>"##,
            y + 4.0,
            y + 16.0,
            short(t)
        );
    }
    let _ = write!(out, r#"<text x="{}" y="{}" text-anchor="middle" {FONT}>{title}</text>"#, (s.from + s.to) / 2.0, y + 32.0);
}

fn y_axis(out: &mut String, s: &Scale, x: f64, title: &str) {
    let _ = write!(out, r##"<line x1="{x}" y1="{}" x2="{x}" y2="{}" stroke="#888"/>"##, s.from, s.to);
    for t in s.ticks() {
        let y = s.at(t);
        let _ = write!(
            out,
            r##"<line x1="{}" y1="{y:.1}" x2="{x}" y2="{y:.1}" stroke="#888"/><text x="{}" y="{:.1}" text-anchor="end" {FONT}>{}</text>"##,
            x - 4.0,
            x - 6.0,
            y + 4.0,
            short(t)
        );
    }
    let _ = write!(
        out,
        r#"<text x="14" y="{0:.1}" text-anchor="middle" transform="rotate(-90 14 {0:.1})" {FONT}>{title}</text>"#,
        (s.from + s.to) / 2.0
    );
}

fn median(xs: &[f64]) -> Option<f64> {
    let mut v: Vec<f64> = xs.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 { v[n / 2] } else { (v[n / 2 - 1] + v[n / 2]) / 2.0 })
}

/// The interleaved timed runs as two strips (original above, candidate below), one dot per pair's
/// per-call time, the medians as ticks; the speedup and its 95% interval in the title line.
pub fn timing_strips(original: &[f64], candidate: &[f64], speedup: Option<f64>, ci: Option<[f64; 2]>) -> String {
    let all: Vec<f64> = original.iter().chain(candidate).copied().filter(|x| x.is_finite()).collect();
    let lo = all.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = all.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let pad = ((hi - lo) * 0.08).max(hi.abs() * 0.01);
    let s = Scale::new(lo - pad, hi + pad, 110.0, W - 20.0, false);
    let h = 170.0;
    let mut out = open(h, "timed runs of the original and the candidate");
    let title = match (speedup, ci) {
        (Some(sp), Some([a, b])) => format!("speedup {sp:.3}× (95% interval {a:.3}–{b:.3})"),
        (Some(sp), None) => format!("speedup {sp:.3}×"),
        _ => "no speedup measured".to_string(),
    };
    let _ = write!(out, r#"<text x="110" y="16" {FONT} font-weight="bold">{title}</text>"#);
    for (row, (name, xs, colour)) in [("original", original, "#4878a8"), ("candidate", candidate, "#d0743c")].into_iter().enumerate() {
        let y = 50.0 + row as f64 * 45.0;
        let _ = write!(out, r#"<text x="100" y="{:.1}" text-anchor="end" {FONT}>{name} (n={})</text>"#, y + 4.0, xs.len());
        for (i, x) in xs.iter().enumerate().filter(|(_, x)| x.is_finite()) {
            // Deterministic jitter: the pair's index spreads dots vertically within the strip.
            let jitter = ((i * 7919) % 17) as f64 - 8.0;
            let _ = write!(
                out,
                r#"<circle class="sample {name}" cx="{:.1}" cy="{:.1}" r="3" fill="{colour}" fill-opacity="0.55"><title>pair {}: {x:.3} µs</title></circle>"#,
                s.at(*x),
                y + jitter,
                i + 1
            );
        }
        if let Some(m) = median(xs) {
            let x = s.at(m);
            let _ = write!(
                out,
                r##"<line class="median {name}" x1="{x:.1}" y1="{:.1}" x2="{x:.1}" y2="{:.1}" stroke="#222" stroke-width="2"><title>median {m:.3} µs</title></line>"##,
                y - 13.0,
                y + 13.0
            );
        }
    }
    x_axis(&mut out, &s, 120.0, "µs per call");
    out.push_str("</svg>");
    out
}

/// One bar per measured config: its speedup over the original, with the 95% interval as a whisker
/// and a line at 1.0. `configs`: (label, speedup, interval).
pub fn config_bars(configs: &[(String, f64, Option<[f64; 2]>)]) -> String {
    let row = 22.0;
    let h = 50.0 + row * configs.len() as f64;
    let hi = configs.iter().map(|(_, s, ci)| ci.map(|c| c[1]).unwrap_or(*s)).fold(1.0f64, f64::max) * 1.05;
    let s = Scale::new(0.0, hi, 260.0, W - 20.0, false);
    let mut out = open(h, "speedup of every measured config");
    for (i, (label, sp, ci)) in configs.iter().enumerate() {
        let y = 10.0 + i as f64 * row;
        let colour = if ci.is_some_and(|c| c[0] > 1.0) { "#3c8d4f" } else { "#9aa4ad" };
        let _ = write!(out, r#"<text x="252" y="{:.1}" text-anchor="end" {FONT}>{}</text>"#, y + 13.0, super::html::escape(label));
        let _ = write!(
            out,
            r#"<rect class="config" x="{:.1}" y="{y:.1}" width="{:.1}" height="16" fill="{colour}"><title>{}: {sp:.3}×</title></rect>"#,
            s.at(0.0),
            (s.at(*sp) - s.at(0.0)).max(0.5),
            super::html::escape(label)
        );
        if let Some([a, b]) = ci {
            let _ =
                write!(out, r##"<line x1="{:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="#222"/>"##, s.at(*a), y + 8.0, s.at(*b), y + 8.0);
        }
    }
    let one = s.at(1.0);
    let _ = write!(out, r##"<line x1="{one:.1}" y1="4" x2="{one:.1}" y2="{:.1}" stroke="#c33" stroke-dasharray="4 3"/>"##, h - 40.0);
    x_axis(&mut out, &s, h - 38.0, "speedup over the original (×)");
    out.push_str("</svg>");
    out
}

/// A roofline: attainable FLOP/s = min(peak, intensity × bandwidth) on log-log axes, with each run's
/// achieved point. `points`: (label, FLOP per byte, achieved FLOP/s).
pub fn roofline(peak_flops: f64, bandwidth: f64, points: &[(String, f64, f64)]) -> String {
    let ridge = peak_flops / bandwidth;
    let xs: Vec<f64> = points.iter().map(|p| p.1).chain([ridge]).collect();
    let x_lo = xs.iter().copied().fold(f64::INFINITY, f64::min) / 10.0;
    let x_hi = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max) * 10.0;
    let y_lo = points.iter().map(|p| p.2).fold(x_lo * bandwidth, f64::min) / 10.0;
    let (h, left, bottom) = (330.0, 70.0, 280.0);
    let sx = Scale::new(x_lo, x_hi, left, W - 20.0, true);
    let sy = Scale::new(y_lo, peak_flops * 3.0, bottom, 20.0, true);
    let mut out = open(h, "roofline");
    let roof = [(x_lo, x_lo * bandwidth), (ridge, peak_flops), (x_hi, peak_flops)];
    let path: Vec<String> = roof.iter().map(|(x, y)| format!("{:.1},{:.1}", sx.at(*x), sy.at(*y))).collect();
    let _ = write!(out, r##"<polyline class="roof" points="{}" fill="none" stroke="#333" stroke-width="2"/>"##, path.join(" "));
    let _ = write!(
        out,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="end" {FONT}>peak {}FLOP/s · {}B/s</text>"#,
        W - 24.0,
        sy.at(peak_flops) - 6.0,
        short(peak_flops),
        short(bandwidth)
    );
    for (i, (label, intensity, achieved)) in points.iter().enumerate() {
        let (x, y) = (sx.at(*intensity), sy.at(*achieved));
        let share = 100.0 * achieved / (intensity * bandwidth).min(peak_flops);
        let label = super::html::escape(label);
        let _ = write!(
            out,
            r##"<circle class="point" cx="{x:.1}" cy="{y:.1}" r="5" fill="#d0743c"><title>{label}: {}FLOP/s at {intensity:.3} FLOP/B ({share:.1}% of the roof)</title></circle>"##,
            short(*achieved),
        );
        // Labels alternate above and below so two points at one intensity stay readable.
        let dy = if i % 2 == 0 { -8.0 } else { 16.0 };
        let _ = write!(out, r#"<text x="{:.1}" y="{:.1}" {FONT}>{label} {share:.1}%</text>"#, x + 8.0, y + dy);
    }
    x_axis(&mut out, &sx, bottom, "arithmetic intensity (FLOP per byte)");
    y_axis(&mut out, &sy, left, "FLOP/s");
    out.push_str("</svg>");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count(svg: &str, needle: &str) -> usize {
        svg.matches(needle).count()
    }

    #[test]
    fn one_dot_per_timed_pair_on_each_side() {
        let svg = timing_strips(&[10.0, 11.0, 10.5], &[5.0, 5.5, 5.2], Some(1.98), Some([1.9, 2.1]));
        assert_eq!(count(&svg, r#"class="sample original""#), 3);
        assert_eq!(count(&svg, r#"class="sample candidate""#), 3);
        assert!(svg.contains("1.980×") && svg.contains("1.900–2.100"));
    }

    #[test]
    fn one_bar_per_config_and_a_roof_with_every_point() {
        let bars = config_bars(&[("BM=64".into(), 1.4, Some([1.3, 1.5])), ("BM=128".into(), 0.8, None)]);
        assert_eq!(count(&bars, r#"class="config""#), 2);
        let roof = roofline(1e14, 1e12, &[("run".into(), 0.25, 2e11), ("other".into(), 50.0, 3e13)]);
        assert_eq!(count(&roof, r#"class="point""#), 2);
        assert!(roof.contains(r#"class="roof""#));
    }

    #[test]
    fn scales_survive_one_value_and_label_large_numbers_shortly() {
        let svg = timing_strips(&[7.0], &[7.0], None, None);
        assert!(!svg.contains("NaN") && !svg.contains("inf"));
        assert_eq!(short(1.5e12), "1.50T");
        assert_eq!(short(987.0), "987");
    }
}
