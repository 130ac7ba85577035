//! What Prometheus scrapes: Event occurrences by reason and the findings of
//! `check` as gauges (with the recorder's own counters, `record::serve`),
//! in the OpenMetrics text format written by `prometheus-client`, the
//! ecosystem's library for it.
//!
//! A sink of the one model like the others: it takes occurrences once their
//! transaction committed and findings once a check ran; it reads neither the
//! cluster nor the recording. Every family is bounded: `--metrics-max-series`.

pub mod events;
pub mod findings;

use prometheus_client::collector::Collector;
use prometheus_client::registry::Registry;

pub use events::{EventLabels, EventRates};
pub use findings::Findings;

/// The Content-Type of [`exposition`].
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// Series of one family at most, by default (`--metrics-max-series`).
pub const DEFAULT_MAX_SERIES: usize = 2000;

/// One OpenMetrics exposition of `collectors`, `# EOF` included.
pub fn exposition(collectors: Vec<Box<dyn Collector>>) -> Result<String, std::fmt::Error> {
    let mut registry = Registry::default();
    for c in collectors {
        registry.register_collector(c);
    }
    let mut out = String::with_capacity(4096);
    prometheus_client::encoding::text::encode(&mut out, &registry)?;
    Ok(out)
}

/// [`Findings`] as a collector of its own (`check -o openmetrics`).
impl Collector for Findings {
    fn encode(
        &self,
        mut encoder: prometheus_client::encoding::DescriptorEncoder,
    ) -> Result<(), std::fmt::Error> {
        self.encode_into(&mut encoder)
    }
}
