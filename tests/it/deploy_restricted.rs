//! deploy/recorder.yaml passes PodSecurity "restricted": the Pod its
//! Deployment would create is admitted by a server-side dry run in a namespace
//! that enforces the restricted profile (it was rejected for a missing
//! seccompProfile), and its NetworkPolicy is valid and admits only TCP 9090.

use crate::support;

use support::{cluster_script, repo_root, uuid_suffix};

/// Deletes the namespace when the test ends, pass or fail.
struct Namespace(String);

impl Drop for Namespace {
    fn drop(&mut self) {
        let _ = std::process::Command::new(repo_root().join("scripts/cluster"))
            .args(["kubectl", "delete", "namespace", &self.0, "--wait=false"])
            .env("DIAG_CLUSTER_DIR", support::kubeconfig().parent().unwrap())
            .output();
    }
}

#[test]
fn the_recorder_pod_is_admitted_under_pod_security_restricted() {
    let ns = Namespace(format!("diag-restricted-{}", uuid_suffix()));
    let ns_name = ns.0.as_str();
    cluster_script(&["kubectl", "create", "namespace", ns_name]);
    cluster_script(&[
        "kubectl",
        "label",
        "namespace",
        ns_name,
        "pod-security.kubernetes.io/enforce=restricted",
        "pod-security.kubernetes.io/warn=restricted",
    ]);
    cluster_script(&[
        "kubectl",
        "-n",
        ns_name,
        "create",
        "serviceaccount",
        "kubectl-diag",
    ]);

    let manifest = std::fs::read_to_string(repo_root().join("deploy/recorder.yaml"))
        .unwrap()
        .replace("namespace: kubectl-diag", &format!("namespace: {ns_name}"));
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("recorder.yaml");
    std::fs::write(&file, manifest).unwrap();
    let applied = cluster_script(&[
        "kubectl",
        "apply",
        "--dry-run=server",
        "-o",
        "json",
        "-f",
        file.to_str().unwrap(),
    ]);
    let warnings = String::from_utf8_lossy(&applied.stderr);
    assert!(!warnings.contains("PodSecurity"), "{warnings}");
    let list: serde_json::Value = serde_json::from_slice(&applied.stdout).unwrap();
    let items = list["items"].as_array().unwrap();
    let of = |kind: &str| {
        items
            .iter()
            .find(|i| i["kind"] == kind)
            .unwrap_or_else(|| panic!("no {kind} in deploy/recorder.yaml"))
    };

    // PodSecurity only warns about a Deployment; it rejects the Pod. Create that
    // Pod, from the Deployment's template as the apiserver defaulted it.
    let template = &of("Deployment")["spec"]["template"];
    let pod = serde_json::json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "recorder", "namespace": ns_name, "labels": template["metadata"]["labels"]},
        "spec": template["spec"],
    });
    let pod_file = dir.path().join("pod.json");
    std::fs::write(&pod_file, pod.to_string()).unwrap();
    let created = std::process::Command::new(repo_root().join("scripts/cluster"))
        .args(["kubectl", "create", "--dry-run=server", "-f"])
        .arg(&pod_file)
        .env("DIAG_CLUSTER_DIR", support::kubeconfig().parent().unwrap())
        .output()
        .unwrap();
    assert!(
        created.status.success(),
        "the recorder's Pod is rejected under restricted:\n{}",
        String::from_utf8_lossy(&created.stderr)
    );

    // The NetworkPolicy selects the recorder's Pod and admits TCP 9090 only.
    let policy = &of("NetworkPolicy")["spec"];
    assert_eq!(
        policy["podSelector"]["matchLabels"],
        template["metadata"]["labels"]
    );
    assert_eq!(policy["policyTypes"], serde_json::json!(["Ingress"]));
    let rules = policy["ingress"].as_array().unwrap();
    assert_eq!(rules.len(), 1, "{policy}");
    assert_eq!(
        rules[0]["ports"],
        serde_json::json!([{"protocol": "TCP", "port": 9090}])
    );
    assert!(
        rules[0]["from"].as_array().is_some_and(|f| !f.is_empty()),
        "an empty `from` admits everyone: {policy}"
    );
}
