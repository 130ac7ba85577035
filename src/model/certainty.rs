//! How sure a told fact is. A recording's entries are what was seen; a
//! reconstruction from the live cluster dates each entry by a rule, and says
//! how far that rule proves the time.

use serde::Serialize;

/// How sure an entry's time is, for what was not seen as it happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Certainty {
    /// The apiserver keeps the time (creationTimestamp, an Event's times, a
    /// condition's lastTransitionTime).
    Exact,
    /// Only the latest of its kind is kept: when it happened is its last
    /// write, and earlier ones are gone.
    Last,
    /// Dated from another fact (a ReplicaSet's scaling Event, a revision).
    Inferred,
    /// When is not kept at all: shown when it was read.
    Gap,
}

impl Certainty {
    /// As the table and the JSON output print it.
    pub fn as_str(self) -> &'static str {
        match self {
            Certainty::Exact => "exact",
            Certainty::Last => "last",
            Certainty::Inferred => "inferred",
            Certainty::Gap => "gap",
        }
    }
}

impl std::fmt::Display for Certainty {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
