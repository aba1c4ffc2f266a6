//! The page's chart of one run over time: rows/s and requests/s from the
//! run report's `series` (cumulative counters, so a rate is the difference
//! of two samples over their time apart), beside the pace chainetl settled
//! on. Lines differ by dash as well as colour, and the figures the chart
//! shows are also written under it.

use super::{esc, took};
use crate::job::view::overview::RunLine;
use std::fmt::Write;

/// A line of the chart: its label, stroke and dash.
struct Line {
    label: &'static str,
    stroke: &'static str,
    dash: &'static str,
}

const ROWS: Line = Line {
    label: "rows/s",
    stroke: "#1a7f37",
    dash: "",
};
const REQUESTS: Line = Line {
    label: "requests/s",
    stroke: "#0969da",
    dash: "6 3",
};
const PACE: Line = Line {
    label: "pace (requests/s)",
    stroke: "#bc4c00",
    dash: "2 3",
};

/// Rates of cumulative column `c` between consecutive samples, as steps:
/// each rate held from one sample's time to the next's (a column shorter
/// than the times, from a report that lacked it, ends the steps early).
fn rates(t: &[f64], c: &[u64]) -> Vec<(f64, f64)> {
    let mut out = Vec::new();
    for i in 1..t.len().min(c.len()) {
        let (t0, t1) = (t[i - 1], t[i]);
        if t1 > t0 {
            // A counter that went down (never, cumulative) draws as 0.
            let v = ((c[i] as f64 - c[i - 1] as f64) / (t1 - t0)).max(0.0);
            out.extend([(t0, v), (t1, v)]);
        }
    }
    out
}

/// The pace as steps: each sample's held until the next (unpaced
/// samples left out).
fn pace_steps(t: &[f64], pace: &[Option<f64>]) -> Vec<(f64, f64)> {
    let mut out = Vec::new();
    for i in 0..t.len().min(pace.len()) {
        if let Some(p) = pace[i] {
            out.push((t[i], p));
            if let Some(t1) = t.get(i + 1) {
                out.push((*t1, p));
            }
        }
    }
    out
}

/// A polyline of `points` in a 1000 × 100 box, time over `span`, values
/// over `top`.
fn polyline(points: &[(f64, f64)], span: f64, top: f64, line: &Line) -> String {
    if points.is_empty() || top <= 0.0 {
        return String::new();
    }
    let mut d = String::new();
    for (t, v) in points {
        let _ = write!(d, "{:.1},{:.1} ", t / span * 1000.0, 100.0 - v / top * 92.0);
    }
    format!(
        r#"<polyline points="{}" fill="none" stroke="{}" stroke-width="2" stroke-dasharray="{}" vector-effect="non-scaling-stroke"/>"#,
        d.trim_end(),
        line.stroke,
        line.dash
    )
}

fn key(line: &Line) -> String {
    format!(
        r#"<svg width="26" height="10" aria-hidden="true"><line x1="0" y1="5" x2="26" y2="5" stroke="{}" stroke-width="2" stroke-dasharray="{}"/></svg>"#,
        line.stroke, line.dash
    )
}

/// The chart of run `r`, if its report has a series of two samples or more.
pub(super) fn chart(r: &RunLine) -> Option<String> {
    let s = r.series.as_ref()?;
    let t = &s.t;
    if t.len() < 2 {
        return None;
    }
    let rows = rates(t, &s.rows);
    let requests = rates(t, &s.requests);
    let pace = pace_steps(t, &s.pace);
    let span = t.iter().copied().fold(0.0, f64::max).max(1e-9);
    let peak = |p: &[(f64, f64)]| p.iter().map(|(_, v)| *v).fold(0.0, f64::max);
    let (rows_top, req_top, pace_top) = (peak(&rows), peak(&requests), peak(&pace));
    // Requests and the pace share a scale: the pace is what requests are held to.
    let req_scale = req_top.max(pace_top);
    let mut out = format!(
        r#"<h3>Run {} <span class="meta">{}, {}</span></h3><svg class="chart" viewBox="0 0 1000 100" preserveAspectRatio="none" role="img" aria-label="{}">"#,
        esc(&r.run_id),
        esc(&r.status),
        took(span),
        esc(&format!(
            "rows per second (peak {rows_top:.0}), requests per second (peak {req_top:.1}) and the pace over the run"
        ))
    );
    out.push_str(&polyline(&rows, span, rows_top, &ROWS));
    out.push_str(&polyline(&requests, span, req_scale, &REQUESTS));
    out.push_str(&polyline(&pace, span, req_scale, &PACE));
    out.push_str("</svg>");
    let pace_note = match pace.last() {
        Some((_, p)) => format!("{} {} (last {p:.1}; the scale of requests)", key(&PACE), PACE.label),
        None => "pace: none (unpaced: no bound set and no 429)".to_string(),
    };
    let _ = write!(
        out,
        r#"<p class="meta legend"><span>{} {} (peak {:.0}; its own scale)</span><span>{} {} (peak {:.1})</span><span>{pace_note}</span><span>{} samples, one every {} s at the end</span></p>"#,
        key(&ROWS),
        ROWS.label,
        rows_top,
        key(&REQUESTS),
        REQUESTS.label,
        req_top,
        t.len(),
        s.every_secs
    );
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::job::run::series::Series;

    #[test]
    fn rates_come_from_differences_of_cumulative_counters() {
        let t = [0.0, 2.0, 4.0, 4.0];
        let c = [0, 100, 100, 500];
        assert_eq!(rates(&t, &c), vec![(0.0, 50.0), (2.0, 50.0), (2.0, 0.0), (4.0, 0.0)]);
        assert_eq!(rates(&t, &c[..2]), vec![(0.0, 50.0), (2.0, 50.0)], "a short column");
        let pace = [None, Some(10.0), Some(5.0)];
        assert_eq!(pace_steps(&t, &pace), vec![(2.0, 10.0), (4.0, 10.0), (4.0, 5.0), (4.0, 5.0)]);
    }

    #[test]
    fn a_run_with_a_series_gets_a_chart_and_one_without_none() {
        let r = RunLine {
            run_id: "r1".into(),
            status: "succeeded".into(),
            series: Some(Series {
                every_secs: 1.0,
                t: vec![0.0, 1.0, 2.0],
                rows: vec![0, 1000, 3000],
                requests: vec![0, 10, 30],
                pace: vec![None, Some(12.0), Some(20.0)],
                ..Series::default()
            }),
            ..RunLine::default()
        };
        let c = chart(&r).unwrap();
        assert_eq!(c.matches("<polyline").count(), 3, "{c}");
        assert!(c.contains("peak 2000") && c.contains("last 20.0;"), "{c}");
        assert!(c.contains("one every 1 s"), "{c}");
        let r0 = RunLine {
            run_id: "r0".into(),
            ..RunLine::default()
        };
        assert!(chart(&r0).is_none());
    }
}
