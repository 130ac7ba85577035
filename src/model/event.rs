//! An Event as every reader sees it, whatever source gave it (a recording,
//! a store, the apiserver now, a reconstruction), and the one rule for which
//! Events a check reads.
//!
//! NB: before this, a timeline's Event line and a check's Event were two
//! types filled side by side, and the rule for an Event's `source` was
//! written three times with three results (issue 43).

use super::object_ref::ObjectRef;

/// One Event about one object, summed over the reader's window.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EventSummary {
    pub involved: ObjectRef,
    pub type_: String,
    pub reason: String,
    pub message: String,
    /// `reportingController`, else `source.component`.
    pub reporting: String,
    /// `source.host` (a kubelet's Node), when the Event has one.
    pub host: String,
    pub first: i64,
    pub last: i64,
    /// The Event's own count at `last`.
    pub count: i64,
    /// Occurrences inside the reader's window (a timeline's span, a check's
    /// `--window`; live, a check's per-minute rate).
    pub in_window: i64,
}

impl EventSummary {
    /// Who reported it, as the timeline shows it: `kubelet, node-1`, the
    /// reporter alone, or the host alone.
    pub fn source(&self) -> String {
        source(&self.reporting, &self.host)
    }
}

/// Who reported an Event, from its reporter and its host: the one rule.
pub fn source(reporting: &str, host: &str) -> String {
    match (reporting.is_empty(), host.is_empty()) {
        (false, false) => format!("{reporting}, {host}"),
        (false, true) => reporting.to_string(),
        (true, _) => host.to_string(),
    }
}

/// How far back before its moment a check reads the Events that may explain
/// a stall, whatever its window: the apiserver keeps Events that long by
/// default, so a live check sees as much.
pub const LOOKBACK_MS: i64 = 3_600_000;

/// The scheduler's reasons: a check reads every one up to its moment, since
/// the last one of a Pod decides whether it is unschedulable.
pub const SCHEDULING: [&str; 2] = ["FailedScheduling", "Scheduled"];

/// Whether a check reads an Event of the [`LOOKBACK_MS`] before its moment
/// even outside its window: one that may explain a stall ([`troubling`]), a
/// controller's success (a Warning before one is mended, R004), and who
/// took a Pod's room (the scheduler's Normal `Preempted`, L003).
///
/// NB: the recorded reads call this very function from their SQL
/// (`diag_looked_back`, registered by the store), so `check --db`,
/// `--store` and a live check cannot disagree on it.
pub fn looked_back(type_: &str, reason: &str) -> bool {
    troubling(type_, reason) || success(type_, reason) || reason == "Preempted"
}

/// Whether an Event may explain a stall: every Warning, and the Normal
/// Events whose reason says a failure (the PersistentVolume controller reports
/// `FailedBinding` as Normal: pkg/controller/volume/persistentvolume/pv_controller.go),
/// or a wait that is the whole cause when it lasts: `ExternalProvisioning`,
/// "Waiting for a volume to be created either by the external provisioner
/// '%s' or manually…" (the same file), repeated while no provisioner of
/// that name runs.
pub fn troubling(type_: &str, reason: &str) -> bool {
    type_ == "Warning" || reason.starts_with("Failed") || reason == "ExternalProvisioning"
}

/// Whether a Normal Event says its controller succeeded at what it does
/// (`SuccessfulCreate`, `ProvisioningSucceeded`, `SuccessfulRescale`).
pub fn success(type_: &str, reason: &str) -> bool {
    type_ == "Normal" && (reason.starts_with("Success") || reason.ends_with("Succeeded"))
}

/// One occurrence of an Event (or several, after a count jump), with its
/// Event's fields: what `export` writes and the shippers send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Occurrence {
    pub cluster: String,
    pub event_uid: String,
    pub event_namespace: String,
    pub event_name: String,
    pub count: i64,
    /// How many occurrences this row stands for (more than 1 after a count jump).
    pub occurrences: i64,
    pub first: i64,
    pub last: i64,
    pub type_: String,
    pub reason: String,
    pub message: String,
    /// The message was cut by kubectl (a text import whose message ends in
    /// `...`): stored as printed, marked here.
    pub message_truncated: bool,
    pub object: ObjectRef,
    pub reporting_controller: String,
    pub reporting_instance: String,
    pub source_host: String,
    pub action: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_source_rule_for_every_reader() {
        assert_eq!(source("kubelet", "node-1"), "kubelet, node-1");
        assert_eq!(source("kubelet", ""), "kubelet");
        // NB: the live check once wrote ", node-1".
        assert_eq!(source("", "node-1"), "node-1");
        assert_eq!(source("", ""), "");
    }

    #[test]
    fn a_check_looks_back_for_waits_successes_and_preemptions_not_for_routine() {
        assert!(looked_back("Normal", "ExternalProvisioning"));
        assert!(looked_back("Normal", "FailedBinding"));
        assert!(looked_back("Warning", "BackOff"));
        assert!(looked_back("Normal", "SuccessfulCreate"));
        assert!(looked_back("Normal", "ProvisioningSucceeded"));
        assert!(looked_back("Normal", "Preempted"));
        assert!(!looked_back("Normal", "Pulled"));
        assert!(!looked_back("Normal", "ScalingReplicaSet"));
    }
}
