//! Who is expected to act on an object: the built-in controller for a
//! built-in kind or finalizer, or, for a custom API group, a workload that
//! looks like its operator.

use crate::model::RecordedObject;

/// The controller that observes a built-in kind (sets its observedGeneration).
pub fn for_kind(api_version: &str, kind: &str) -> Option<&'static str> {
    let group = api_version.rsplit_once('/').map_or("", |(g, _)| g);
    Some(match (group, kind) {
        ("apps", "Deployment") => "the deployment controller (kube-controller-manager)",
        ("apps", "ReplicaSet") => "the replicaset controller (kube-controller-manager)",
        ("apps", "StatefulSet") => "the statefulset controller (kube-controller-manager)",
        ("apps", "DaemonSet") => "the daemonset controller (kube-controller-manager)",
        ("batch", "Job") => "the job controller (kube-controller-manager)",
        ("batch", "CronJob") => "the cronjob controller (kube-controller-manager)",
        ("autoscaling", "HorizontalPodAutoscaler") => {
            "the horizontal-pod-autoscaler controller (kube-controller-manager)"
        }
        ("policy", "PodDisruptionBudget") => "the disruption controller (kube-controller-manager)",
        ("", "ReplicationController") => "the replication controller (kube-controller-manager)",
        _ => return None,
    })
}

/// Who removes a well-known finalizer, and when.
pub fn for_finalizer(finalizer: &str) -> Option<&'static str> {
    Some(match finalizer {
        "kubernetes" => {
            "the namespace controller (kube-controller-manager), once everything in the namespace is gone"
        }
        "foregroundDeletion" => {
            "the garbage collector (kube-controller-manager), once dependents that block owner deletion are gone"
        }
        "orphan" => {
            "the garbage collector (kube-controller-manager), after orphaning the dependents"
        }
        "kubernetes.io/pvc-protection" => {
            "the pvc-protection controller (kube-controller-manager), once no Pod uses the claim"
        }
        "kubernetes.io/pv-protection" => {
            "the pv-protection controller (kube-controller-manager), once no claim is bound to the volume"
        }
        "batch.kubernetes.io/job-tracking" => {
            "the job controller (kube-controller-manager), once it has counted the Pod"
        }
        "service.kubernetes.io/load-balancer-cleanup" => {
            "the service controller (cloud-controller-manager), once the load balancer is deleted"
        }
        "external-attacher/csi" | "kubernetes.io/csi-attacher" => {
            "the CSI external-attacher, once the volume is detached"
        }
        "kubernetes.io/legacy-service-account-token-cleaner" => {
            "the legacy-service-account-token-cleaner (kube-controller-manager)"
        }
        "resource.kubernetes.io/delete-protection" => {
            "the resourceclaim controller (kube-controller-manager)"
        }
        _ => return None,
    })
}

/// The API group a domain-qualified name belongs to: `example.com/cleanup` → `example.com`.
pub fn group_of(name: &str) -> Option<&str> {
    name.split_once('/')
        .map(|(g, _)| g)
        .filter(|g| g.contains('.'))
}

/// A running workload that looks like the operator of `group`: a Deployment,
/// StatefulSet or DaemonSet whose name or namespace contains the group's first
/// label (`cert-manager` for `cert-manager.io`). A heuristic, said as such.
pub fn operator_of<'a>(group: &str, objects: &'a [RecordedObject]) -> Option<&'a RecordedObject> {
    let label = group.split('.').next().unwrap_or(group);
    if label.len() < 3 {
        return None;
    }
    objects.iter().find(|o| {
        matches!(
            o.object.kind.as_str(),
            "Deployment" | "StatefulSet" | "DaemonSet"
        ) && o.object.api_version.starts_with("apps/")
            && o.state.deletion.is_none()
            && (o.object.name.contains(label) || o.object.namespace.contains(label))
    })
}

/// "the controller of <group> (ns/name, a guess by name)" or "no controller found for <group>".
pub fn describe_operator(group: &str, objects: &[RecordedObject]) -> String {
    match operator_of(group, objects) {
        Some(o) => format!(
            "the controller of {group}: probably {} {}/{} (matched by name)",
            o.object.kind, o.object.namespace, o.object.name
        ),
        None => format!("no controller found for {group}"),
    }
}
