//! The operators' figures in Prometheus' text format. Pure: the database
//! counts, this writes.
//!
//! Runners may be on other machines and the web service keeps no state of
//! its own, so every figure is read from the database at each scrape:
//! durations are histograms over every finished job (cumulative, so
//! Prometheus' `rate()` and `histogram_quantile()` work on them), counts
//! are gauges of now.

use std::fmt::Write;

/// Upper bounds of the duration histograms, in seconds: a 50 ms move's
/// short match to a long one, a compile, a queue that has fallen behind.
pub const SECONDS: [f64; 12] = [0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0];

/// One group of finished durations, as the database counts them: its
/// labels, and per bucket index (`width_bucket` over [`SECONDS`]: 0 below
/// the first bound, k between bound k−1 and bound k, 12 above the last)
/// how many and their sum.
#[derive(Clone, Debug, PartialEq)]
pub struct BucketCount {
    pub labels: Vec<(&'static str, String)>,
    pub bucket: usize,
    pub count: u64,
    pub sum: f64,
}

/// A histogram for one set of labels: cumulative bucket counts (one per
/// bound of [`SECONDS`]), the total count and sum.
#[derive(Clone, Debug, PartialEq)]
pub struct Histogram {
    pub labels: Vec<(&'static str, String)>,
    pub cumulative: Vec<u64>,
    pub count: u64,
    pub sum: f64,
}

/// Per-bucket counts (any order) into one histogram per label set, in the
/// order each label set first appears.
pub fn histograms(rows: &[BucketCount]) -> Vec<Histogram> {
    let mut out: Vec<Histogram> = Vec::new();
    for r in rows {
        let h = match out.iter().position(|h| h.labels == r.labels) {
            Some(i) => &mut out[i],
            None => {
                out.push(Histogram { labels: r.labels.clone(), cumulative: vec![0; SECONDS.len()], count: 0, sum: 0.0 });
                out.last_mut().expect("just pushed")
            }
        };
        // Bucket b holds values below bound b (and at or above bound b−1):
        // it counts under every bound from b on.
        for c in h.cumulative.iter_mut().skip(r.bucket) {
            *c += r.count;
        }
        h.count += r.count;
        h.sum += r.sum;
    }
    out
}

/// A label value as Prometheus' text format writes it.
fn escaped(v: &str) -> String {
    v.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n")
}

fn label_text(labels: &[(&'static str, String)], extra: Option<(&str, String)>) -> String {
    let mut parts: Vec<String> = labels.iter().map(|(k, v)| format!("{k}=\"{}\"", escaped(v))).collect();
    if let Some((k, v)) = extra {
        parts.push(format!("{k}=\"{v}\""));
    }
    if parts.is_empty() {
        String::new()
    } else {
        format!("{{{}}}", parts.join(","))
    }
}

/// A histogram family in the text format.
pub fn histogram_text(name: &str, help: &str, hs: &[Histogram]) -> String {
    let mut out = format!("# HELP {name} {help}\n# TYPE {name} histogram\n");
    for h in hs {
        for (bound, c) in SECONDS.iter().zip(&h.cumulative) {
            let _ = writeln!(out, "{name}_bucket{} {c}", label_text(&h.labels, Some(("le", bound.to_string()))));
        }
        let _ = writeln!(out, "{name}_bucket{} {}", label_text(&h.labels, Some(("le", "+Inf".into()))), h.count);
        let _ = writeln!(out, "{name}_sum{} {}", label_text(&h.labels, None), h.sum);
        let _ = writeln!(out, "{name}_count{} {}", label_text(&h.labels, None), h.count);
    }
    out
}

/// A gauge family in the text format.
pub fn gauge_text(name: &str, help: &str, values: &[(Vec<(&'static str, String)>, f64)]) -> String {
    let mut out = format!("# HELP {name} {help}\n# TYPE {name} gauge\n");
    for (labels, v) in values {
        let _ = writeln!(out, "{name}{} {v}", label_text(labels, None));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(ladder: &str, bucket: usize, count: u64, sum: f64) -> BucketCount {
        BucketCount { labels: vec![("ladder", ladder.into())], bucket, count, sum }
    }

    #[test]
    fn buckets_become_cumulative_per_label_set() {
        // Ladder a: 2 below 0.5 s, 3 between 5 and 10 s, 1 above 1800 s.
        let rows = [row("a", 0, 2, 0.4), row("b", 4, 1, 6.0), row("a", 4, 3, 21.0), row("a", SECONDS.len(), 1, 4000.0)];
        let hs = histograms(&rows);
        assert_eq!(hs.len(), 2);
        assert_eq!(hs[0].labels, vec![("ladder", "a".to_owned())]);
        assert_eq!(hs[0].cumulative, vec![2, 2, 2, 2, 5, 5, 5, 5, 5, 5, 5, 5]);
        assert_eq!((hs[0].count, hs[0].sum), (6, 4021.4));
        assert_eq!(hs[1].cumulative, vec![0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1]);
    }

    #[test]
    fn the_text_format_has_every_bucket_inf_sum_and_count() {
        let hs = histograms(&[row("say \"hi\"", 1, 2, 1.5)]);
        let text = histogram_text("koth_x_seconds", "X.", &hs);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "# HELP koth_x_seconds X.");
        assert_eq!(lines[1], "# TYPE koth_x_seconds histogram");
        assert_eq!(lines[2], r#"koth_x_seconds_bucket{ladder="say \"hi\"",le="0.5"} 0"#);
        assert_eq!(lines[3], r#"koth_x_seconds_bucket{ladder="say \"hi\"",le="1"} 2"#);
        assert_eq!(lines[2 + SECONDS.len()], r#"koth_x_seconds_bucket{ladder="say \"hi\"",le="+Inf"} 2"#);
        assert_eq!(lines[3 + SECONDS.len()], r#"koth_x_seconds_sum{ladder="say \"hi\""} 1.5"#);
        assert_eq!(lines[4 + SECONDS.len()], r#"koth_x_seconds_count{ladder="say \"hi\""} 2"#);
        assert_eq!(lines.len(), 5 + SECONDS.len());
        let g = gauge_text("koth_runners", "Runners.", &[(vec![("state", "alive".into())], 2.0), (vec![], 3.0)]);
        assert_eq!(g, "# HELP koth_runners Runners.\n# TYPE koth_runners gauge\nkoth_runners{state=\"alive\"} 2\nkoth_runners 3\n");
    }
}
