//! `kubectl_diag_events_total`: Event occurrences by namespace, involved
//! kind, reason and type, with a bounded number of series.
//!
//! NB: a counter never goes backwards and a series, once scraped, has to stay
//! for `rate()` to mean anything, so the cap cannot evict: the label sets
//! seen first keep their series, and past the cap a new label set is folded,
//! first into `reason="other"` of its namespace, kind and type, then, when
//! even that would be a new series, into the one series whose labels are all
//! `other`. Nothing is lost: the sum over the family is every occurrence.

use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::MetricType;
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;

/// The value of every label of a folded label set.
pub const OTHER: &str = "other";

/// Folded label sets remembered, at most, to count them: past it the gauge is
/// a lower bound (an 8-byte hash each: 8 MiB at most).
const MAX_FOLDED_REMEMBERED: usize = 1 << 20;

/// One series' labels.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct EventLabels {
    pub namespace: String,
    pub involved_kind: String,
    pub reason: String,
    pub type_: String,
}

impl EventLabels {
    fn other_reason(&self) -> EventLabels {
        EventLabels {
            reason: OTHER.to_string(),
            ..self.clone()
        }
    }

    fn all_other() -> EventLabels {
        EventLabels {
            namespace: OTHER.to_string(),
            involved_kind: OTHER.to_string(),
            reason: OTHER.to_string(),
            type_: OTHER.to_string(),
        }
    }

    fn digest(&self) -> u64 {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        self.hash(&mut h);
        h.finish()
    }
}

#[derive(Debug, Default)]
struct Inner {
    series: HashMap<EventLabels, u64>,
    /// Hashes of the label sets folded so far.
    folded: HashSet<u64>,
}

impl Inner {
    fn add(&mut self, labels: EventLabels, n: u64, max: usize) {
        if n == 0 {
            return;
        }
        if let Some(v) = self.series.get_mut(&labels) {
            *v += n;
            return;
        }
        // NB: a tenth of the cap stays for the `reason="other"` series and one
        // slot for the all-`other` one, so the cap holds whatever comes.
        if self.series.len() + max / 10 + 1 < max {
            self.series.insert(labels, n);
            return;
        }
        if self.folded.len() < MAX_FOLDED_REMEMBERED {
            self.folded.insert(labels.digest());
        }
        let other = labels.other_reason();
        if let Some(v) = self.series.get_mut(&other) {
            *v += n;
        } else if self.series.len() + 1 < max {
            self.series.insert(other, n);
        } else {
            *self.series.entry(EventLabels::all_other()).or_default() += n;
        }
    }
}

/// Occurrences by label set, at most `max_series` series.
#[derive(Debug)]
pub struct EventRates {
    inner: Mutex<Inner>,
    max_series: AtomicUsize,
}

impl Default for EventRates {
    fn default() -> Self {
        EventRates {
            inner: Mutex::default(),
            max_series: AtomicUsize::new(super::DEFAULT_MAX_SERIES),
        }
    }
}

impl EventRates {
    /// `--metrics-max-series`: at least 1 (the all-`other` series).
    pub fn limit(&self, max_series: usize) {
        self.max_series.store(max_series.max(1), Ordering::Relaxed);
    }

    fn inner(&self) -> std::sync::MutexGuard<'_, Inner> {
        // NB: nothing panics while holding it; a poisoned map is still right.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Counts `n` occurrences of `labels` (once their transaction committed).
    pub fn add(&self, labels: EventLabels, n: u64) {
        self.add_all([(labels, n)]);
    }

    /// Adds every pair of a committed batch, under one lock.
    pub fn add_all(&self, counted: impl IntoIterator<Item = (EventLabels, u64)>) {
        let max = self.max_series.load(Ordering::Relaxed);
        let mut inner = self.inner();
        for (labels, n) in counted {
            inner.add(labels, n, max);
        }
    }

    /// How many series there are now.
    pub fn series(&self) -> usize {
        self.inner().series.len()
    }

    /// The occurrences counted, over every series.
    pub fn total(&self) -> u64 {
        self.inner().series.values().sum()
    }

    pub fn encode_into(&self, encoder: &mut DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let inner = self.inner();
        let mut sorted: Vec<_> = inner.series.iter().collect();
        sorted.sort_unstable_by(|a, b| {
            a.0.namespace
                .cmp(&b.0.namespace)
                .then(a.0.reason.cmp(&b.0.reason))
        });
        let mut family = encoder.encode_descriptor(
            "kubectl_diag_events",
            "Event occurrences stored by this process (every count bump, once), by the Event's namespace, involved object's kind, reason and type. Past --metrics-max-series a new label set counts under reason=\"other\".",
            None,
            MetricType::Counter,
        )?;
        for (l, v) in sorted {
            let labels = [
                ("namespace", l.namespace.as_str()),
                ("involved_kind", l.involved_kind.as_str()),
                ("reason", l.reason.as_str()),
                ("type", l.type_.as_str()),
            ];
            ConstCounter::new(*v).encode(family.encode_family(&labels)?)?;
        }
        let folded = encoder.encode_descriptor(
            "kubectl_diag_events_folded_label_sets",
            "Label sets of kubectl_diag_events_total counted under reason=\"other\" for want of a series of their own (--metrics-max-series).",
            None,
            MetricType::Gauge,
        )?;
        ConstGauge::new(inner.folded.len() as u64).encode(folded)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(ns: &str, reason: &str) -> EventLabels {
        EventLabels {
            namespace: ns.into(),
            involved_kind: "Pod".into(),
            reason: reason.into(),
            type_: "Warning".into(),
        }
    }

    /// The storm: 1,000,000 occurrences of 50,000 distinct reasons.
    #[test]
    fn an_event_storm_of_fifty_thousand_reasons_keeps_the_series_at_the_cap() {
        let rates = EventRates::default();
        rates.limit(1000);
        for i in 0..1_000_000u64 {
            let reason = i % 50_000;
            rates.add(
                labels(&format!("ns-{}", reason % 7), &format!("Reason{reason}")),
                1,
            );
        }
        // 899 label sets of their own, then one `other` per namespace.
        assert_eq!(rates.series(), 899 + 7);
        assert_eq!(rates.total(), 1_000_000, "folding loses no occurrence");
        let inner = rates.inner();
        assert_eq!(inner.folded.len(), 50_000 - 899);
        // The first label sets keep their own counts.
        assert_eq!(inner.series[&labels("ns-0", "Reason0")], 20);
        let folded_in_ns3 = (899..50_000u64).filter(|r| r % 7 == 3).count() as u64;
        assert_eq!(inner.series[&labels("ns-3", OTHER)], 20 * folded_in_ns3);
    }

    #[test]
    fn past_the_cap_even_the_folded_series_fold_into_one() {
        let rates = EventRates::default();
        rates.limit(3);
        rates.add(labels("a", "One"), 1);
        rates.add(labels("b", "Two"), 2);
        rates.add(labels("c", "Three"), 4);
        rates.add(labels("d", "Four"), 8);
        let inner = rates.inner();
        assert_eq!(inner.series.len(), 3);
        assert_eq!(inner.series[&labels("b", "Two")], 2);
        assert_eq!(inner.series[&EventLabels::all_other()], 12);
        assert_eq!(inner.folded.len(), 2);
    }
}
