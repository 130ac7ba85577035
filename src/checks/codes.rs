//! The one table of checks and finding codes: every code's check, severity and
//! title live here and nowhere else. docs/checks.md explains each code; a test
//! below keeps the two in step, both ways. The names and codes are stable (they
//! are the JSON output's `check` and `code`): add, never rename.

use std::fmt;

use serde::{Serialize, Serializer};

use super::Severity;

/// A check, by the name `kubectl diag check NAME` takes and the JSON output prints.
/// Declared in the order the checks run and print.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Check {
    Controllers,
    Progress,
    Finalizers,
    Hotloop,
    Generation,
    Scheduling,
    Pods,
    Relations,
}

impl Check {
    /// Every check, in the order they run and print.
    pub const ALL: [Check; 8] = [
        Check::Controllers,
        Check::Progress,
        Check::Finalizers,
        Check::Hotloop,
        Check::Generation,
        Check::Scheduling,
        Check::Pods,
        Check::Relations,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Check::Controllers => "controllers",
            Check::Progress => "progress",
            Check::Finalizers => "finalizers",
            Check::Hotloop => "hotloop",
            Check::Generation => "generation",
            Check::Scheduling => "scheduling",
            Check::Pods => "pods",
            Check::Relations => "relations",
        }
    }

    /// The types this check reads, as full names; empty: any type at all
    /// (finalizers, generation and hot loops are found on every kind).
    pub fn reads(self) -> &'static [&'static str] {
        match self {
            // NB: from Events alone the scheduling check still finds FailedScheduling.
            Check::Scheduling => &["pods", "events"],
            Check::Pods => &["pods"],
            // NB: any of them: a Service check needs Pods, a reference check
            // the named kinds; each says nothing of a kind it could not read.
            Check::Relations => &[
                "pods",
                "services",
                "poddisruptionbudgets.policy",
                "events",
                "configmaps",
                "secrets",
            ],
            // NB: any type: a cluster whose Leases RBAC hides still gets
            // every other check (a note names what could not be listed).
            Check::Controllers
            | Check::Progress
            | Check::Finalizers
            | Check::Hotloop
            | Check::Generation => &[],
        }
    }
}

impl fmt::Display for Check {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Serialize for Check {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

/// A finding code, documented in docs/checks.md.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Code {
    C001,
    F001,
    F002,
    F003,
    H001,
    H002,
    H003,
    H004,
    G001,
    G002,
    S001,
    P001,
    P002,
    P003,
    R001,
    R002,
    R003,
    R004,
    L001,
    L002,
    L003,
    L004,
    L005,
    L006,
}

impl Code {
    pub const ALL: [Code; 24] = [
        Code::C001,
        Code::F001,
        Code::F002,
        Code::F003,
        Code::H001,
        Code::H002,
        Code::H003,
        Code::H004,
        Code::G001,
        Code::G002,
        Code::S001,
        Code::P001,
        Code::P002,
        Code::P003,
        Code::R001,
        Code::R002,
        Code::R003,
        Code::R004,
        Code::L001,
        Code::L002,
        Code::L003,
        Code::L004,
        Code::L005,
        Code::L006,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Code::C001 => "C001",
            Code::F001 => "F001",
            Code::F002 => "F002",
            Code::F003 => "F003",
            Code::H001 => "H001",
            Code::H002 => "H002",
            Code::H003 => "H003",
            Code::H004 => "H004",
            Code::G001 => "G001",
            Code::G002 => "G002",
            Code::S001 => "S001",
            Code::P001 => "P001",
            Code::P002 => "P002",
            Code::P003 => "P003",
            Code::R001 => "R001",
            Code::R002 => "R002",
            Code::R003 => "R003",
            Code::R004 => "R004",
            Code::L001 => "L001",
            Code::L002 => "L002",
            Code::L003 => "L003",
            Code::L004 => "L004",
            Code::L005 => "L005",
            Code::L006 => "L006",
        }
    }

    /// The check that reports this code.
    pub fn check(self) -> Check {
        match self {
            Code::C001 => Check::Controllers,
            Code::F001 | Code::F002 | Code::F003 => Check::Finalizers,
            Code::H001 | Code::H002 | Code::H003 | Code::H004 => Check::Hotloop,
            Code::G001 | Code::G002 => Check::Generation,
            Code::S001 => Check::Scheduling,
            Code::P001 | Code::P002 | Code::P003 => Check::Pods,
            Code::R001 | Code::R002 | Code::R003 | Code::R004 => Check::Progress,
            Code::L001 | Code::L002 | Code::L003 | Code::L004 | Code::L005 | Code::L006 => {
                Check::Relations
            }
        }
    }

    /// The severity a finding with this code has unless the check knows less
    /// (docs/checks.md names each downgrade: H003 and G001/G002 may be info).
    pub fn severity(self) -> Severity {
        match self {
            Code::F002 | Code::H001 | Code::R002 | Code::L005 | Code::L006 => Severity::Error,
            Code::C001
            | Code::F001
            | Code::F003
            | Code::H002
            | Code::H003
            | Code::H004
            | Code::G001
            | Code::G002
            | Code::S001
            | Code::P001
            | Code::P002
            | Code::P003
            | Code::R001
            | Code::R003
            | Code::R004
            | Code::L001
            | Code::L002
            | Code::L003
            | Code::L004 => Severity::Warning,
        }
    }

    /// One sentence: what the code means (the "meaning" column of docs/checks.md).
    pub fn title(self) -> &'static str {
        match self {
            Code::C001 => {
                "A controller stopped renewing its leader-election Lease: it is not running, or cannot reach the apiserver."
            }
            Code::F001 => "An object is held by finalizers.",
            Code::F002 => "A namespace is stuck Terminating.",
            Code::F003 => {
                "A Pod is terminating, has no finalizers, and its node is NotReady or gone."
            }
            Code::H001 => {
                "Spec fight: the updates keep changing `metadata.generation` (two or more spec changes)."
            }
            Code::H002 => {
                "Status or metadata churn: many updates, generation never moves (or moved once: a rollout whose controller keeps writing)."
            }
            Code::H003 => {
                "Event storm: an Event's occurrences faster than `--rate` per minute, or the client's \"(combined from similar events)\" aggregate."
            }
            Code::H004 => {
                "Refused writes: the apiserver kept refusing one writer's writes of an object (403, 409, 422, 5xx), from an imported audit log."
            }
            Code::G001 => "`status.observedGeneration` is behind `metadata.generation`.",
            Code::G002 => "A condition's `observedGeneration` is behind `metadata.generation`.",
            Code::S001 => "A Pod that no node can take.",
            Code::P001 => {
                "A Pod's container cannot start: a bad image, a crash loop, missing configuration."
            }
            Code::P002 => {
                "A Pod failed for good and nothing will replace it: a bare Pod that exited or was evicted."
            }
            Code::P003 => {
                "A container of a running Pod exited with a failure and will not be started again (`restartPolicy: Never`): the Pod runs on without it."
            }
            Code::R001 => {
                "A workload has fewer ready (or updated) replicas than it asks for, past `--stuck-after`; the cause the cluster states, from it and what it owns."
            }
            Code::R002 => {
                "A Job failed, or runs no Pod, or a CronJob is suspended; why, from its conditions and its Pods."
            }
            Code::R003 => {
                "An object's Ready-like condition is False or Unknown (or a Stalled-like one True) past `--stuck-after`."
            }
            Code::R004 => {
                "An object its controllers keep warning about: a Warning Event that recurs and no other finding explains, quoted."
            }
            Code::L001 => {
                "A Service whose selector matches no Pod, or no ready Pod: it has no endpoints to serve."
            }
            Code::L002 => {
                "A PodDisruptionBudget allows no disruption: a cordoned Node that runs its Pods cannot drain (info when no Node is cordoned, or it selects no Pod)."
            }
            Code::L003 => "Pods preempted by a higher-priority Pod, named with its priority.",
            Code::L004 => {
                "A Pod, a workload's Pod template, an Ingress, a Gateway or a Gateway API route needs a ConfigMap, Secret, PersistentVolumeClaim, ServiceAccount, Service, IngressClass, GatewayClass or Gateway that does not exist (an Ingress with no class: a default IngressClass), or an Ingress or route sends to a port its Service does not have."
            }
            Code::L005 => {
                "An admission webhook calls a Service that does not exist or has no ready Pod: with `failurePolicy: Fail` the writes it matches are refused (warning with `Ignore`: its checks are skipped)."
            }
            Code::L006 => {
                "A claim is Lost (its PersistentVolume is gone) or a PersistentVolume Failed: neither mends by waiting."
            }
        }
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Code {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rows `| CODE | severity | meaning |` of docs/checks.md's code tables,
    /// each under its `## check` heading: (check, code, severity cell, meaning).
    fn documented() -> Vec<(String, String, String, String)> {
        let doc = include_str!("../../docs/checks.md");
        let mut heading = String::new();
        let mut rows = Vec::new();
        for line in doc.lines() {
            if let Some(h) = line.strip_prefix("## ") {
                heading = h.trim().to_string();
            }
            let cells: Vec<&str> = line.split('|').map(str::trim).collect();
            // NB: "| a | b | c |" splits into 5 cells, the first and last empty.
            if cells.len() == 5
                && cells[1].len() == 4
                && cells[1].as_bytes()[0].is_ascii_uppercase()
                && cells[1][1..].bytes().all(|b| b.is_ascii_digit())
            {
                rows.push((
                    heading.clone(),
                    cells[1].to_string(),
                    cells[2].to_string(),
                    cells[3].to_string(),
                ));
            }
        }
        rows
    }

    #[test]
    fn every_code_is_documented_under_its_check_with_its_severity_and_title() {
        let rows = documented();
        for code in Code::ALL {
            let row = rows
                .iter()
                .find(|r| r.1 == code.as_str())
                .unwrap_or_else(|| panic!("{code} is not in docs/checks.md's code tables"));
            assert_eq!(
                row.0,
                code.check().name(),
                "{code}: documented under another check"
            );
            assert!(
                row.2.starts_with(code.severity().as_str()),
                "{code}: docs/checks.md says {:?}, the code table {}",
                row.2,
                code.severity().as_str()
            );
            assert_eq!(
                row.3,
                code.title(),
                "{code}: title and docs/checks.md differ"
            );
        }
    }

    #[test]
    fn every_documented_code_exists_once() {
        let rows = documented();
        assert!(!rows.is_empty(), "no code table found in docs/checks.md");
        for (_, documented, _, _) in &rows {
            assert!(
                Code::ALL.iter().any(|c| c.as_str() == documented),
                "docs/checks.md documents {documented}, which no check reports"
            );
        }
        assert_eq!(rows.len(), Code::ALL.len(), "a code documented twice");
    }

    #[test]
    fn every_check_has_a_section_and_serializes_as_its_name() {
        let doc = include_str!("../../docs/checks.md");
        for check in Check::ALL {
            assert!(
                doc.lines().any(|l| l == format!("## {check}")),
                "docs/checks.md has no section for {check}"
            );
            assert_eq!(
                serde_json::to_string(&check).unwrap(),
                format!("\"{check}\"")
            );
        }
        for code in Code::ALL {
            assert_eq!(serde_json::to_string(&code).unwrap(), format!("\"{code}\""));
        }
    }
}
