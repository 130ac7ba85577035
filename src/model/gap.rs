//! A gap: an interval in which a source could not see, and why. The recorder's
//! watches, audit imports and every reader share this one shape; its reason is
//! stored as text (`gaps.reason`) and read back into the same enum.

use std::fmt;

/// Why the evidence has a hole: the store's `gaps.reason`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum GapReason {
    /// No recorder ran (between two sessions).
    NotRunning,
    /// The position was lost (410 Gone) or a list was not one snapshot: a list
    /// filled the interval in, and deletions and intermediate versions may be missing.
    Relist,
    /// Requests failed; the watch resumed from its position, so nothing was missed
    /// if the detail says "resumed".
    Disconnected,
    /// No imported audit log covers the interval.
    NotImported,
    /// A reason this build does not know (a file written by a newer one):
    /// kept as a hole, its words in the detail.
    Unknown,
}

impl GapReason {
    /// The text stored in `gaps.reason`, which users and tests read.
    pub fn as_str(self) -> &'static str {
        match self {
            GapReason::NotRunning => "not-running",
            GapReason::Relist => "relist",
            GapReason::Disconnected => "disconnected",
            GapReason::NotImported => "not-imported",
            GapReason::Unknown => "unknown",
        }
    }

    /// The reason `text` stores; None for a text this build does not know.
    pub fn parse(text: &str) -> Option<GapReason> {
        [
            GapReason::NotRunning,
            GapReason::Relist,
            GapReason::Disconnected,
            GapReason::NotImported,
            GapReason::Unknown,
        ]
        .into_iter()
        .find(|r| r.as_str() == text)
    }
}

impl fmt::Display for GapReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An interval in which `resources` were not seen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gap {
    /// Which watches or sources were blind (`events`, `pods/shop`, `audit log`…).
    pub resources: Vec<String>,
    pub start: i64,
    pub finish: i64,
    pub reason: GapReason,
    /// What happened, and how it ended.
    pub detail: String,
}

impl Gap {
    /// A gap read back from the store: an unknown reason stays a hole, its
    /// text kept in the detail rather than lost.
    pub fn stored(resource: String, start: i64, finish: i64, reason: &str, detail: String) -> Gap {
        let (reason, detail) = match GapReason::parse(reason) {
            Some(r) => (r, detail),
            None => (GapReason::Unknown, format!("{reason}: {detail}")),
        };
        Gap {
            resources: vec![resource],
            start,
            finish,
            reason,
            detail,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_reason_reads_back_as_itself_and_an_unknown_one_stays_a_hole() {
        for r in [
            GapReason::NotRunning,
            GapReason::Relist,
            GapReason::Disconnected,
            GapReason::NotImported,
        ] {
            assert_eq!(GapReason::parse(r.as_str()), Some(r));
        }
        let g = Gap::stored("events".into(), 1, 2, "pruned", "revisions dropped".into());
        assert_eq!(g.reason, GapReason::Unknown);
        assert_eq!(g.detail, "pruned: revisions dropped");
    }
}
