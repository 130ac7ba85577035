//! Reading what the cluster already wrote about why something does not run:
//! the apiserver's refusal of a Pod (a quota, PodSecurity, a LimitRange, a
//! missing ServiceAccount, an admission webhook or policy) as the controllers
//! quote it in `FailedCreate` Events and `ReplicaFailure` conditions, and the
//! Warning reasons of the objects one level down. Pure functions over text;
//! the wording is upstream's, read from its source (kept stable 1.24–1.37
//! unless a comment says otherwise):
//!
//! - `Error creating: %v`: pkg/controller/controller_utils.go (ReplicaSet,
//!   DaemonSet, Job); `create Pod %s in StatefulSet %s failed error: %s` (`Create` in 1.37):
//!   pkg/controller/statefulset/stateful_pod_control.go.
//! - `%s %q is forbidden: %v`: apimachinery pkg/api/errors/errors.go NewForbidden.
//! - `exceeded quota: %s, requested: %s, used: %s, limited: %s` and
//!   `failed quota: %s: %v`: apiserver pkg/admission/plugin/resourcequota/controller.go.
//! - `violates PodSecurity %q: %s`: pod-security-admission admission/admission.go;
//!   checks joined `reason (detail), …` by policy/checks.go.
//! - `maximum %s usage per %s is %s, but limit is %s` (and the minimum, ratio
//!   variants; several in `[…, …]`): plugin/pkg/admission/limitranger/admission.go.
//! - `error looking up service account %s/%s: serviceaccount "%s" not found`:
//!   plugin/pkg/admission/serviceaccount/admission.go.
//! - `admission webhook %q denied the request: %s`: apiserver
//!   pkg/admission/plugin/webhook/errors/statuserror.go; `ValidatingAdmissionPolicy
//!   '%s' with binding '%s' denied request: %s`: pkg/admission/plugin/policy/validating
//!   (1.26+); `failed calling webhook %q: %v`: the webhook did not answer.

/// How long a quoted message may be on the first screen.
pub const MAX_QUOTE: usize = 240;

/// What a refusal says, in words for the first screen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// What refused: `quota`, `podsecurity`, `limitrange`, `serviceaccount`,
    /// `webhook`, `policy`, or `other`.
    pub by: &'static str,
    /// The object that states the rule (the quota's, webhook's or policy's
    /// name, the ServiceAccount that is missing, the PodSecurity level).
    pub name: String,
    /// The sentence.
    pub text: String,
}

/// Cuts `text` to [`MAX_QUOTE`] characters, with a mark when it did.
pub fn cut(text: &str) -> String {
    let text = text.trim();
    if text.chars().count() <= MAX_QUOTE {
        return text.to_string();
    }
    let kept: String = text.chars().take(MAX_QUOTE).collect();
    format!("{kept}…")
}

/// The apiserver's error inside a controller's `FailedCreate` message (or a
/// `ReplicaFailure` condition's, which quotes it bare).
pub fn api_error(message: &str) -> &str {
    // NB: client-go's aggregator rewrites the tenth similar Event's message
    // (events_cache.go: "(combined from similar events): " + the last message).
    let m = message.trim();
    let m = m
        .strip_prefix("(combined from similar events): ")
        .unwrap_or(m);
    if let Some(rest) = m.strip_prefix("Error creating: ") {
        return rest;
    }
    if let Some(rest) = m.strip_prefix("Error creating job: ") {
        return rest;
    }
    // StatefulSet: `create Pod web-0 in StatefulSet web failed error: …` (also
    // Claims); NB: the verb is capitalised in 1.37 ("Create Pod db-0 …", seen
    // on this project's test cluster), lower-case in older releases.
    if (m.starts_with("create ") || m.starts_with("Create "))
        && let Some(i) = m.find(" failed error: ")
    {
        return &m[i + " failed error: ".len()..];
    }
    m
}

/// `pods "x" is forbidden: REST` → REST.
fn forbidden_body(err: &str) -> &str {
    match err.find(" is forbidden: ") {
        Some(i) if !err[..i].contains(':') => &err[i + " is forbidden: ".len()..],
        _ => err,
    }
}

/// `a=1,b=2` → [(a, 1), (b, 2)].
fn quantities(list: &str) -> Vec<(&str, &str)> {
    list.split(',')
        .filter_map(|kv| kv.trim().split_once('='))
        .collect()
}

/// Reads the apiserver's refusal of an object (`message`: a FailedCreate
/// Event's message or a ReplicaFailure condition's). None: not a refusal.
pub fn refusal(message: &str) -> Option<Refusal> {
    let err = api_error(message);
    let body = forbidden_body(err);
    if let Some(rest) = body.strip_prefix("exceeded quota: ") {
        // exceeded quota: NAME, requested: R, used: U, limited: L
        let (name, rest) = rest.split_once(", requested: ")?;
        let (requested, rest) = rest.split_once(", used: ")?;
        let (used, limited) = rest.split_once(", limited: ")?;
        let (used, limited, requested) =
            (quantities(used), quantities(limited), quantities(requested));
        let parts: Vec<String> = limited
            .iter()
            .map(|(r, hard)| {
                let used = used.iter().find(|(u, _)| u == r).map_or("?", |(_, v)| v);
                let asked = requested
                    .iter()
                    .find(|(q, _)| q == r)
                    .map_or(String::new(), |(_, v)| format!(", requested {v}"));
                format!("{r}: used {used}, hard {hard}{asked}")
            })
            .collect();
        return Some(Refusal {
            by: "quota",
            name: name.to_string(),
            text: format!("exceeded quota {name} ({})", parts.join("; ")),
        });
    }
    if let Some(rest) = body.strip_prefix("failed quota: ") {
        let (name, why) = rest.split_once(": ").unwrap_or((rest, ""));
        return Some(Refusal {
            by: "quota",
            name: name.to_string(),
            text: cut(&format!("quota {name} refuses it: {why}")),
        });
    }
    if let Some(rest) = body.strip_prefix("violates PodSecurity ") {
        // violates PodSecurity "restricted:latest": check (detail), check (detail)
        let (level, checks) = rest.split_once(": ").unwrap_or((rest, ""));
        let level = level.trim_matches('"');
        let names = checks_of(checks);
        return Some(Refusal {
            by: "podsecurity",
            name: level.to_string(),
            text: cut(&format!(
                "PodSecurity \"{level}\" forbids: {}",
                if names.is_empty() {
                    checks.to_string()
                } else {
                    names.join(", ")
                }
            )),
        });
    }
    if let Some(rest) = body.strip_prefix("error looking up service account ") {
        let account = rest.split(':').next().unwrap_or(rest).trim();
        let missing = rest.contains("not found");
        let name = account.rsplit('/').next().unwrap_or(account);
        return Some(Refusal {
            by: "serviceaccount",
            name: name.to_string(),
            text: if missing {
                format!("ServiceAccount {account} does not exist")
            } else {
                cut(&format!("ServiceAccount lookup failed: {rest}"))
            },
        });
    }
    if let Some(rest) = body.strip_prefix("admission webhook \"") {
        let (name, why) = rest.split_once('"').unwrap_or((rest, ""));
        let why = why
            .trim_start_matches(" denied the request")
            .trim_start_matches(':')
            .trim();
        return Some(Refusal {
            by: "webhook",
            name: name.to_string(),
            text: cut(&format!("admission webhook {name} denied it: {why}")),
        });
    }
    if let Some(rest) = body.strip_prefix("ValidatingAdmissionPolicy '") {
        let (name, why) = rest.split_once('\'').unwrap_or((rest, ""));
        let why = why.split_once("denied request: ").map_or(why, |(_, w)| w);
        return Some(Refusal {
            by: "policy",
            name: name.to_string(),
            text: cut(&format!(
                "ValidatingAdmissionPolicy {name} denied it: {why}"
            )),
        });
    }
    if let Some(i) = body.find("failed calling webhook \"") {
        let rest = &body[i + "failed calling webhook \"".len()..];
        let (name, why) = rest.split_once('"').unwrap_or((rest, ""));
        return Some(Refusal {
            by: "webhook",
            name: name.to_string(),
            text: cut(&format!(
                "admission webhook {name} did not answer{}",
                why.trim_start_matches(':')
                    .trim()
                    .split_once(": ")
                    .map_or(String::new(), |(_, w)| format!(": {w}"))
            )),
        });
    }
    let limit = body.trim_start_matches('[').trim_end_matches(']');
    if limit.contains(" usage per ") || limit.contains(" max limit to request ratio per ") {
        return Some(Refusal {
            by: "limitrange",
            name: String::new(),
            text: cut(&format!("LimitRange: {}", limit.replace(".  ", ": "))),
        });
    }
    if body != err {
        // Forbidden by something no rule above knows: its words, cut, never dropped.
        return Some(Refusal {
            by: "other",
            name: String::new(),
            text: cut(&format!("refused: {body}")),
        });
    }
    None
}

/// The check names of a PodSecurity denial: `a (x), b (y (z))` → [a, b].
fn checks_of(list: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut depth = 0usize;
    let mut current = String::new();
    for c in list.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                let name = current.trim().to_string();
                if !name.is_empty() {
                    names.push(name);
                }
                current.clear();
            }
            c if depth == 0 => current.push(c),
            _ => {}
        }
    }
    let name = current.trim().to_string();
    if !name.is_empty() {
        names.push(name);
    }
    names
}

pub use crate::model::event::troubling;

/// How much a Warning reason explains a workload that does not reach its
/// target: lower is closer to the cause. Reasons no rule knows rank last
/// but are still quoted (the generic fallback).
pub fn rank(reason: &str) -> u8 {
    match reason {
        // The Pods are not even created.
        "FailedCreate" | "ReplicaFailure" => 0,
        // Their volumes cannot be had.
        "FailedBinding"
        | "ProvisioningFailed"
        | "ExternalProvisioning"
        | "FailedAttachVolume"
        | "FailedMount" => 1,
        // No Node takes them.
        "FailedScheduling" | "Unschedulable" => 2,
        // Their containers do not start or do not stay up.
        "Failed"
        | "BackOff"
        | "ErrImagePull"
        | "ImagePullBackOff"
        | "CrashLoopBackOff"
        | "CreateContainerConfigError"
        | "CreateContainerError"
        | "InspectFailed" => 3,
        // They start but do not get ready, or are taken away.
        "Unhealthy"
        | "ProbeWarning"
        | "Evicted"
        | "Preempted"
        | "Preempting"
        | "Killing"
        | "OOMKilling"
        | "NodeNotReady"
        | "TaintManagerEviction" => 4,
        "BackoffLimitExceeded" | "DeadlineExceeded" | "PodFailurePolicy" => 5,
        _ => 6,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The wording of each refusal as the ReplicaSet controller quotes it
    /// (examples built from the format strings cited at the top).
    #[test]
    fn an_exceeded_quota_names_the_quota_and_what_it_caps() {
        let r = refusal("Error creating: pods \"search-7d4b9c5f8-x2k4p\" is forbidden: exceeded quota: pods-cap, requested: pods=1, used: pods=2, limited: pods=2").unwrap();
        assert_eq!(r.by, "quota");
        assert_eq!(r.name, "pods-cap");
        assert_eq!(
            r.text,
            "exceeded quota pods-cap (pods: used 2, hard 2, requested 1)"
        );
        let combined = refusal("(combined from similar events): Error creating: pods \"search-64dd6f4996-6rd6w\" is forbidden: exceeded quota: pods-cap, requested: pods=1, used: pods=2, limited: pods=2").unwrap();
        assert_eq!(
            combined.text, r.text,
            "the aggregator's prefix changes nothing"
        );
        let r = refusal("pods \"w-1\" is forbidden: exceeded quota: compute, requested: limits.cpu=1,requests.memory=512Mi, used: limits.cpu=3,requests.memory=1792Mi, limited: limits.cpu=4,requests.memory=2Gi").unwrap();
        assert_eq!(
            r.text,
            "exceeded quota compute (limits.cpu: used 3, hard 4, requested 1; requests.memory: used 1792Mi, hard 2Gi, requested 512Mi)"
        );
    }

    #[test]
    fn a_quota_that_needs_limits_says_which() {
        let r = refusal("create Pod db-0 in StatefulSet db failed error: pods \"db-0\" is forbidden: failed quota: compute: must specify limits.cpu for: postgres; limits.memory for: postgres").unwrap();
        assert_eq!(r.name, "compute");
        assert_eq!(
            r.text,
            "quota compute refuses it: must specify limits.cpu for: postgres; limits.memory for: postgres"
        );
        let r137 = refusal("Create Pod db-0 in StatefulSet db failed error: pods \"db-0\" is forbidden: failed quota: compute: must specify requests.cpu for: postgres").unwrap();
        assert_eq!(
            r137.text,
            "quota compute refuses it: must specify requests.cpu for: postgres"
        );
        // ≤ 1.23 wording: the resources only.
        let r = refusal("Error creating: pods \"a-b\" is forbidden: failed quota: compute: must specify limits.cpu,limits.memory").unwrap();
        assert!(r.text.ends_with("must specify limits.cpu,limits.memory"));
    }

    #[test]
    fn a_podsecurity_denial_names_the_level_and_the_checks_it_failed() {
        let r = refusal("Error creating: pods \"web-7d4b9c5f8-x2k4p\" is forbidden: violates PodSecurity \"restricted:latest\": allowPrivilegeEscalation != false (container \"nginx\" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container \"nginx\" must set securityContext.capabilities.drop=[\"ALL\"]), runAsNonRoot != true (pod or container \"nginx\" must set securityContext.runAsNonRoot=true), seccompProfile (pod or container \"nginx\" must set securityContext.seccompProfile.type to \"RuntimeDefault\" or \"Localhost\")").unwrap();
        assert_eq!(r.by, "podsecurity");
        assert_eq!(r.name, "restricted:latest");
        assert_eq!(
            r.text,
            "PodSecurity \"restricted:latest\" forbids: allowPrivilegeEscalation != false, unrestricted capabilities, runAsNonRoot != true, seccompProfile"
        );
    }

    #[test]
    fn a_limitrange_refusal_is_quoted_with_its_bounds() {
        let r = refusal("Error creating: pods \"web-7d4b9c5f8-x2k4p\" is forbidden: maximum cpu usage per Container is 500m, but limit is 1").unwrap();
        assert_eq!(r.by, "limitrange");
        assert_eq!(
            r.text,
            "LimitRange: maximum cpu usage per Container is 500m, but limit is 1"
        );
        let r = refusal("Error creating: pods \"a\" is forbidden: [maximum cpu usage per Container is 500m, but limit is 1, minimum memory usage per Pod is 64Mi.  No request is specified]").unwrap();
        assert_eq!(
            r.text,
            "LimitRange: maximum cpu usage per Container is 500m, but limit is 1, minimum memory usage per Pod is 64Mi: No request is specified"
        );
    }

    #[test]
    fn a_missing_service_account_is_named() {
        // Mutating admission: the name is still the generateName prefix.
        let r = refusal("Error creating: pods \"web-7d4b9c5f8-\" is forbidden: error looking up service account prod/web-sa: serviceaccount \"web-sa\" not found").unwrap();
        assert_eq!(r.by, "serviceaccount");
        assert_eq!(r.name, "web-sa");
        assert_eq!(r.text, "ServiceAccount prod/web-sa does not exist");
    }

    #[test]
    fn webhooks_and_policies_are_named_with_their_words() {
        let r = refusal("Error creating: admission webhook \"vpod.gatekeeper.sh\" denied the request: [require-labels] you must provide labels: {\"team\"}").unwrap();
        assert_eq!((r.by, r.name.as_str()), ("webhook", "vpod.gatekeeper.sh"));
        assert_eq!(
            r.text,
            "admission webhook vpod.gatekeeper.sh denied it: [require-labels] you must provide labels: {\"team\"}"
        );
        let r = refusal("Error creating: pods \"w-1\" is forbidden: ValidatingAdmissionPolicy 'require-nonroot' with binding 'require-nonroot-binding' denied request: failed expression: object.spec.securityContext.runAsNonRoot == true").unwrap();
        assert_eq!((r.by, r.name.as_str()), ("policy", "require-nonroot"));
        assert_eq!(
            r.text,
            "ValidatingAdmissionPolicy require-nonroot denied it: failed expression: object.spec.securityContext.runAsNonRoot == true"
        );
        let r = refusal("Error creating: Internal error occurred: failed calling webhook \"x.example.com\": failed to call webhook: Post \"https://x.svc:443/validate?timeout=10s\": context deadline exceeded").unwrap();
        assert_eq!(r.name, "x.example.com");
        assert!(
            r.text
                .starts_with("admission webhook x.example.com did not answer: Post"),
            "{}",
            r.text
        );
    }

    #[test]
    fn an_unknown_refusal_is_quoted_cut_never_dropped() {
        let long = format!(
            "Error creating: pods \"a\" is forbidden: {}",
            "a new admission plugin says no ".repeat(20)
        );
        let r = refusal(&long).unwrap();
        assert_eq!(r.by, "other");
        assert!(
            r.text
                .starts_with("refused: a new admission plugin says no")
        );
        assert!(r.text.ends_with('…') && r.text.chars().count() <= MAX_QUOTE + 1);
        assert_eq!(refusal("Created pod: web-1"), None);
    }
}
