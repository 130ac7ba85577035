//! The findings of `check` as gauges: `kubectl_diag_finding{code, severity,
//! namespace, kind, name}` is the seconds since the finding began,
//! `kubectl_diag_finding_summary{…, summary}` carries its summary for an
//! alert's annotations, and `kubectl_diag_findings{code, severity}` counts
//! them. A finding that ends is simply absent from the next exposition:
//! Prometheus marks its series stale, as it expects.
//!
//! NB: the beginning is the finding's `since` where the evidence dates it;
//! where it does not, the first check of this process that found it (so the
//! value is a lower bound, 0 in a one-shot `check -o openmetrics`).

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::MetricType;
use prometheus_client::metrics::gauge::ConstGauge;

use crate::checks::{Finding, Severity};

/// A summary longer than this is cut (at a character boundary, with "…"):
/// label values are stored per sample by Prometheus.
const MAX_SUMMARY_BYTES: usize = 400;

/// One finding's identity: its code and object (and cluster, for a fleet).
type Key = (String, String, String, String, Option<String>);

#[derive(Debug, Clone)]
struct Series {
    code: &'static str,
    severity: Severity,
    namespace: String,
    kind: String,
    name: String,
    cluster: Option<String>,
    summary: String,
    seconds: i64,
}

/// The last check's findings, as they are exposed.
#[derive(Debug, Default)]
struct Published {
    /// When the checked moment was (epoch ms).
    at_ms: i64,
    /// How long the check took, when it ran in this process.
    took_ms: Option<u64>,
    series: Vec<Series>,
    /// Findings by (cluster, code, severity), every one, capped or not.
    counts: BTreeMap<(Option<String>, &'static str, Severity), u64>,
    /// Findings without a series of their own (past the cap).
    folded: usize,
}

#[derive(Debug, Default)]
struct State {
    last: Option<Published>,
    /// When this process first found each finding whose evidence does not date it.
    first_seen: HashMap<Key, i64>,
    runs: u64,
    failures: u64,
}

/// The findings exposed as gauges, at most `max_series` finding series.
#[derive(Debug)]
pub struct Findings {
    state: Mutex<State>,
    max_series: AtomicUsize,
}

impl Default for Findings {
    fn default() -> Self {
        Findings {
            state: Mutex::default(),
            max_series: AtomicUsize::new(super::DEFAULT_MAX_SERIES),
        }
    }
}

fn cut(summary: &str) -> String {
    if summary.len() <= MAX_SUMMARY_BYTES {
        return summary.to_string();
    }
    let mut end = MAX_SUMMARY_BYTES - '…'.len_utf8();
    while !summary.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &summary[..end])
}

impl Findings {
    /// `--metrics-max-series`.
    pub fn limit(&self, max_series: usize) {
        self.max_series.store(max_series, Ordering::Relaxed);
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        // NB: nothing panics while holding it; a poisoned state is still right.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The findings of one check of the moment `at_ms` replace the last ones.
    /// When capped, the most severe and the longest-standing keep their series.
    pub fn publish(&self, findings: &[Finding], at_ms: i64, took_ms: Option<u64>) {
        let max = self.max_series.load(Ordering::Relaxed);
        let mut state = self.state();
        let mut seen = HashMap::with_capacity(findings.len());
        let mut series = Vec::with_capacity(findings.len());
        let mut counts = BTreeMap::new();
        for f in findings {
            let o = &f.object;
            let key: Key = (
                f.code.as_str().to_string(),
                o.namespace.clone(),
                o.kind.clone(),
                o.name.clone(),
                o.cluster.clone(),
            );
            *counts
                .entry((o.cluster.clone(), f.code.as_str(), f.severity))
                .or_insert(0) += 1;
            let began = match f.since_ms {
                Some(since) => since,
                None => *state.first_seen.get(&key).unwrap_or(&at_ms),
            };
            if f.since_ms.is_none() {
                seen.insert(key, began);
            }
            series.push(Series {
                code: f.code.as_str(),
                severity: f.severity,
                namespace: o.namespace.clone(),
                kind: o.kind.clone(),
                name: o.name.clone(),
                cluster: o.cluster.clone(),
                summary: cut(&f.summary),
                seconds: ((at_ms - began) / 1000).max(0),
            });
        }
        // NB: two findings of one code and object (two containers, say) are one
        // series: the longest-standing is kept, so no sample is duplicated.
        series.sort_by(|a, b| {
            (b.severity, b.seconds)
                .cmp(&(a.severity, a.seconds))
                .then_with(|| (a.code, &a.namespace, &a.name).cmp(&(b.code, &b.namespace, &b.name)))
        });
        let mut unique = std::collections::HashSet::new();
        series.retain(|s| {
            unique.insert((
                s.code,
                s.namespace.clone(),
                s.kind.clone(),
                s.name.clone(),
                s.cluster.clone(),
            ))
        });
        let folded = series.len().saturating_sub(max);
        series.truncate(max);
        state.first_seen = seen;
        state.runs += 1;
        state.last = Some(Published {
            at_ms,
            took_ms,
            series,
            counts,
            folded,
        });
    }

    /// A check that could not run: the last findings stay, the failure is counted.
    pub fn failed(&self) {
        self.state().failures += 1;
    }

    /// Finding series exposed now.
    pub fn series(&self) -> usize {
        self.state().last.as_ref().map_or(0, |p| p.series.len())
    }

    pub fn encode_into(&self, encoder: &mut DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let state = self.state();
        let empty = Published::default();
        let last = state.last.as_ref().unwrap_or(&empty);
        let labels = |s: &Series| {
            let mut l = vec![
                ("code", s.code.to_string()),
                ("severity", s.severity.as_str().to_string()),
                ("namespace", s.namespace.clone()),
                ("kind", s.kind.clone()),
                ("name", s.name.clone()),
            ];
            if let Some(c) = &s.cluster {
                l.push(("cluster", c.clone()));
            }
            l
        };
        {
            let mut family = encoder.encode_descriptor(
                "kubectl_diag_finding",
                "A finding of `kubectl diag check` at the last check: the seconds since it began (where its evidence does not date it, since this process first found it).",
                None,
                MetricType::Gauge,
            )?;
            for s in &last.series {
                let l = labels(s);
                ConstGauge::new(s.seconds).encode(family.encode_family(&l)?)?;
            }
        }
        {
            let mut family = encoder.encode_descriptor(
                "kubectl_diag_finding_summary",
                "1 for each kubectl_diag_finding series, its summary as a label (for alert annotations).",
                None,
                MetricType::Gauge,
            )?;
            for s in &last.series {
                let mut l = labels(s);
                l.push(("summary", s.summary.clone()));
                ConstGauge::new(1i64).encode(family.encode_family(&l)?)?;
            }
        }
        {
            let mut family = encoder.encode_descriptor(
                "kubectl_diag_findings",
                "Findings of the last check by code and severity, all of them (past --metrics-max-series too).",
                None,
                MetricType::Gauge,
            )?;
            for ((cluster, code, severity), n) in &last.counts {
                let mut l = vec![
                    ("code", code.to_string()),
                    ("severity", severity.as_str().to_string()),
                ];
                if let Some(c) = cluster {
                    l.push(("cluster", c.clone()));
                }
                ConstGauge::new(*n).encode(family.encode_family(&l)?)?;
            }
        }
        ConstGauge::new(last.folded as u64).encode(encoder.encode_descriptor(
            "kubectl_diag_findings_folded",
            "Findings of the last check left without a kubectl_diag_finding series of their own (--metrics-max-series); counted in kubectl_diag_findings.",
            None,
            MetricType::Gauge,
        )?)?;
        let gauge = |encoder: &mut DescriptorEncoder, name: &str, help: &str, v: f64| {
            ConstGauge::new(v).encode(encoder.encode_descriptor(
                name,
                help,
                None,
                MetricType::Gauge,
            )?)
        };
        if state.last.is_some() {
            gauge(
                encoder,
                "kubectl_diag_check_time_seconds",
                "The moment the last check evaluated (the recording's latest), as a Unix time.",
                last.at_ms as f64 / 1000.0,
            )?;
        }
        if let Some(took) = last.took_ms {
            gauge(
                encoder,
                "kubectl_diag_check_duration_seconds",
                "How long the last check took.",
                took as f64 / 1000.0,
            )?;
        }
        // NB: only where checks run in this process (the recorder's --check-every);
        // a one-shot `check -o openmetrics` has no run to count.
        if last.took_ms.is_some() || state.failures > 0 {
            for (name, help, v) in [
                (
                    "kubectl_diag_checks",
                    "Checks run by this process (--check-every).",
                    state.runs,
                ),
                (
                    "kubectl_diag_check_failures",
                    "Checks that could not run (see the recorder's log); the last findings stay exposed meanwhile.",
                    state.failures,
                ),
            ] {
                let m = encoder.encode_descriptor(name, help, None, MetricType::Counter)?;
                prometheus_client::metrics::counter::ConstCounter::new(v).encode(m)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::Code;
    use crate::model::ObjectRef;
    use std::sync::Arc;

    fn finding(code: Code, name: &str, since: Option<i64>, summary: &str) -> Finding {
        let object = ObjectRef {
            api_version: "apps/v1".into(),
            kind: "Deployment".into(),
            namespace: "shop".into(),
            name: name.into(),
            uid: format!("uid-{name}"),
            ..Default::default()
        };
        Finding::new(
            code,
            &object,
            summary.into(),
            since,
            serde_json::Value::Null,
        )
    }

    fn exposed(f: &Arc<Findings>) -> String {
        crate::metrics::exposition(vec![Box::new(f.clone())]).unwrap_or_default()
    }

    #[test]
    fn a_finding_is_the_seconds_since_it_began_with_its_summary() {
        let f = Arc::new(Findings::default());
        f.publish(
            &[finding(Code::R001, "web", Some(1_000_000), "0/2 ready")],
            1_090_000,
            Some(12),
        );
        let text = exposed(&f);
        assert!(
            text.contains("kubectl_diag_finding{code=\"R001\",severity=\"warning\",namespace=\"shop\",kind=\"Deployment\",name=\"web\"} 90\n"),
            "{text}"
        );
        assert!(text.contains("summary=\"0/2 ready\"} 1\n"), "{text}");
        assert!(
            text.contains("kubectl_diag_findings{code=\"R001\",severity=\"warning\"} 1\n"),
            "{text}"
        );
        assert!(
            text.contains("kubectl_diag_check_duration_seconds 0.012\n"),
            "{text}"
        );
        assert!(text.ends_with("# EOF\n"));
    }

    /// A finding its evidence does not date counts from the first check that found it.
    #[test]
    fn an_undated_finding_counts_from_when_this_process_first_found_it() {
        let f = Findings::default();
        f.publish(
            &[finding(Code::R003, "web", None, "Ready False")],
            1_000_000,
            None,
        );
        f.publish(
            &[finding(Code::R003, "web", None, "Ready False")],
            1_060_000,
            None,
        );
        assert_eq!(f.state().last.as_ref().unwrap().series[0].seconds, 60);
        // Once it ended, it starts again from 0.
        f.publish(&[], 1_120_000, None);
        f.publish(
            &[finding(Code::R003, "web", None, "Ready False")],
            1_180_000,
            None,
        );
        assert_eq!(f.state().last.as_ref().unwrap().series[0].seconds, 0);
    }

    #[test]
    fn past_the_cap_the_most_severe_and_oldest_keep_their_series_and_all_are_counted() {
        let f = Findings::default();
        f.limit(2);
        let findings = [
            finding(Code::R001, "young", Some(990_000), "a"),
            finding(Code::R001, "old", Some(100_000), "b"),
            finding(Code::R001, "middle", Some(500_000), "c"),
            finding(Code::R001, "bad", Some(999_000), "d").with_severity(Severity::Error),
        ];
        f.publish(&findings, 1_000_000, None);
        let state = f.state();
        let last = state.last.as_ref().unwrap();
        let names: Vec<&str> = last.series.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["bad", "old"]);
        assert_eq!(last.folded, 2);
        assert_eq!(last.counts.values().sum::<u64>(), 4);
    }

    /// Two findings of one code and object (two containers) would be one series twice.
    #[test]
    fn two_findings_of_one_code_and_object_are_one_series() {
        let f = Findings::default();
        f.publish(
            &[
                finding(Code::P001, "web", Some(900_000), "a"),
                finding(Code::P001, "web", Some(800_000), "b"),
            ],
            1_000_000,
            None,
        );
        let state = f.state();
        let last = state.last.as_ref().unwrap();
        assert_eq!(last.series.len(), 1);
        assert_eq!(last.series[0].seconds, 200);
        assert_eq!(last.counts.values().sum::<u64>(), 2);
    }

    #[test]
    fn a_long_summary_is_cut_at_a_character_boundary() {
        let long = "é".repeat(500);
        let cut = cut(&long);
        assert!(cut.len() <= MAX_SUMMARY_BYTES);
        assert!(cut.ends_with('…'));
    }
}
