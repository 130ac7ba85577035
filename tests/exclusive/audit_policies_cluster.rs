//! Issue 48: the real apiserver run under three audit policies in turn
//! (OpenShift's `Default` profile: Metadata for everything; a GKE-like
//! policy; RequestResponse), while people create, scale through the
//! subresource, patch and delete (one of them through impersonation). Each
//! person and each write is on the first screen of `changes` and of the
//! object's `timeline`, in order, with the same facts under every policy
//! wherever the policy keeps them, and no change told as someone else's.
//!
//! NB: in `tests/exclusive`, because it restarts the shared apiserver (as
//! record_apiserver_restart does).

use crate::support;

use std::path::Path;
use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use support::{TestNamespace, apply, diag, kubeconfig, kubectl, repo_root, run_ok, wait_available};

fn restart_with(policy: &str) {
    let state = kubeconfig().parent().unwrap().to_path_buf();
    let out = std::process::Command::new(repo_root().join("scripts/cluster"))
        .arg("restart-apiserver")
        .env("DIAG_CLUSTER_DIR", state)
        .env("DIAG_AUDIT_POLICY", policy)
        .output()
        .expect("running scripts/cluster");
    assert!(
        out.status.success(),
        "restart under {policy}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Puts the test cluster's own policy back, whatever happens.
struct Restore;

impl Drop for Restore {
    fn drop(&mut self) {
        restart_with("default");
    }
}

fn stdout(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Plays the story in a namespace of its own; returns its audit entries.
async fn play(policy: &str) -> (String, String) {
    let ns = TestNamespace::new("audit-policy").await;
    let n = ns.name.clone();
    let state = kubeconfig().parent().unwrap().to_path_buf();
    let (alice, bob) = (state.join("alice.kubeconfig"), state.join("bob.kubeconfig"));
    let log = state.join("logs/audit.log");
    let offset = std::fs::metadata(&log).map(|m| m.len()).unwrap_or(0);
    kubectl(&[
        "create",
        "rolebinding",
        "people",
        "--clusterrole=edit",
        "--user=alice",
        "--user=bob",
        "--user=carol@example.com",
        "-n",
        &n,
    ]);
    apply(
        &n,
        r#"apiVersion: apps/v1
kind: Deployment
metadata: {name: billing}
spec:
  replicas: 2
  selector: {matchLabels: {app: billing}}
  template:
    metadata: {labels: {app: billing}}
    spec: {containers: [{name: app, image: "billing:1"}]}
"#,
    );
    let deployments: kube::Api<Deployment> = ns.api();
    wait_available(&deployments, "billing", 2).await;
    let bob_arg = format!("--kubeconfig={}", bob.display());
    let alice_arg = format!("--kubeconfig={}", alice.display());
    kubectl(&[
        &bob_arg,
        "scale",
        "deploy/billing",
        "--replicas=0",
        "-n",
        &n,
    ]);
    std::thread::sleep(Duration::from_millis(1200));
    kubectl(&[
        &alice_arg,
        "set",
        "image",
        "deploy/billing",
        "app=billing:2",
        "-n",
        &n,
    ]);
    std::thread::sleep(Duration::from_millis(1200));
    kubectl(&[
        "delete",
        "deploy/billing",
        "--as=carol@example.com",
        "-n",
        &n,
    ]);
    std::thread::sleep(Duration::from_secs(2));
    let all = std::fs::read(&log).unwrap();
    let text = String::from_utf8_lossy(&all[offset.min(all.len() as u64) as usize..]).into_owned();
    let mine: String = text
        .lines()
        .filter(|l| l.contains(&format!("\"namespace\":\"{n}\"")))
        .map(|l| format!("{l}\n"))
        .collect();
    assert!(!mine.is_empty(), "{policy}: no audit entries of {n}");
    (n, mine)
}

/// The facts of the story a person asks for, in the order `changes` tells
/// them: (what, who) for Deployment/billing.
fn facts(dir: &Path, policy: &str, n: &str, log: &str) -> Vec<(&'static str, &'static str)> {
    let file = dir.join(format!("{policy}.log"));
    std::fs::write(&file, log).unwrap();
    let db = dir.join(format!("{policy}.db"));
    run_ok(diag(&db).args(["import", file.to_str().unwrap()]));
    let changes = stdout(&run_ok(
        diag(&db).args(["changes", "-n", n, "--since", "1h", "-o", "wide"]),
    ));
    let lines: Vec<&str> = changes
        .lines()
        .filter(|l| l.contains("Deployment/billing"))
        .collect();
    // No change is told as another's: alice never scaled, bob never set an image.
    assert!(
        !lines
            .iter()
            .any(|l| l.contains("alice") && l.contains("replicas")),
        "{policy}: bob's scale told as alice's:\n{changes}"
    );
    assert!(
        !lines
            .iter()
            .any(|l| l.contains("bob") && l.contains("billing:2")),
        "{policy}: alice's image told as bob's:\n{changes}"
    );
    assert!(!changes.contains("1970"), "{policy}:\n{changes}");
    let mut found = Vec::new();
    for l in &lines {
        let fact = if l.contains("bob (kubectl") {
            ("scaled", "bob")
        } else if l.contains("alice (kubectl-set)") {
            ("set the image", "alice")
        } else if l.contains("carol@example.com [impersonated by") && l.contains("deleted") {
            ("deleted", "carol")
        } else {
            continue;
        };
        if found.last() != Some(&fact) {
            found.push(fact);
        }
    }
    // Who deleted it, on the first screen of its timeline.
    let timeline = stdout(&run_ok(diag(&db).args([
        "timeline",
        "deploy/billing",
        "-n",
        n,
    ])));
    let screen: Vec<&str> = timeline.lines().take(25).collect();
    let at = |w: &str| {
        screen
            .iter()
            .position(|l| l.contains(w))
            .unwrap_or_else(|| panic!("{policy}: {w} not on the first screen:\n{timeline}"))
    };
    assert!(
        at("by bob (kubectl") < at("by alice (kubectl-set)"),
        "{policy}:\n{timeline}"
    );
    // The deleter: on the summary's first line (`Object: … deleted T by …`)
    // when the object is known, else in its place in time.
    let carol = at("carol@example.com [impersonated by");
    assert!(
        (carol == 0 && screen[0].contains("deleted") && screen[0].starts_with("Object:"))
            || carol > at("by alice (kubectl-set)"),
        "{policy}:\n{timeline}"
    );
    found
}

#[tokio::test]
async fn three_audit_policies_tell_the_same_people_and_writes() {
    let _alone = support::exclusive().await;
    let _restore = Restore;
    let dir = tempfile::tempdir().unwrap();
    let policies = repo_root().join("tests/fixtures/audit/policies");
    let mut told = Vec::new();
    for policy in ["openshift-default", "gke-like", "request-response"] {
        restart_with(policies.join(format!("{policy}.yaml")).to_str().unwrap());
        let (n, log) = play(policy).await;
        let level = if policy == "openshift-default" {
            "\"level\":\"Metadata\""
        } else {
            "\"level\":\"RequestResponse\""
        };
        assert!(log.contains(level), "{policy}: the policy did not apply");
        told.push((policy, facts(dir.path(), policy, &n, &log)));
    }
    let want = vec![
        ("scaled", "bob"),
        ("set the image", "alice"),
        ("deleted", "carol"),
    ];
    for (policy, facts) in &told {
        assert_eq!(facts, &want, "{policy}");
    }
}
