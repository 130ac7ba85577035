//! Causes along relationships other than ownership (issue 47), played on the
//! real control plane: a Service whose selector stopped matching, one whose
//! Pods are not ready, a disruption budget that keeps a cordoned Node from
//! draining, Pods preempted by a higher-priority Pod, and a Pod template that
//! needs a ConfigMap and a Secret that do not exist. Each finding must be on
//! the first 25 lines of `check` live within 30 s of the incident and of
//! `check --db` on a recording made while it happened, with the same codes
//! and objects both ways, and no finding may name what is healthy.
//!
//! NB: the Node-bound stories run on Nodes of their own (KWOK manages every
//! Node), tainted for their namespace, so no other test's Pod lands there
//! and no shared Node is cordoned; the Nodes go when the test ends.

use crate::support;

use std::path::Path;
use std::time::Duration;

use support::{TestNamespace, apply, diag, kubectl, start_recorder, wait_until};

/// The first screen (25 lines) of a command's stdout.
fn first_screen(db: &Path, args: &[&str]) -> String {
    let out = diag(db).args(args).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{args:?}: {}\n{text}",
        String::from_utf8_lossy(&out.stderr)
    );
    text.lines().take(25).collect::<Vec<_>>().join("\n")
}

/// `check relations -o json` findings as (code, kind/name, summary), sorted.
fn findings(db: &Path, args: &[&str]) -> Vec<(String, String, String)> {
    let out = diag(db)
        .args(["check", "relations", "-o", "json"])
        .args(args)
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let mut rows: Vec<(String, String, String)> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["code"].as_str().unwrap().to_string(),
                format!(
                    "{}/{}",
                    f["object"]["kind"].as_str().unwrap(),
                    f["object"]["name"].as_str().unwrap()
                ),
                f["summary"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    rows.sort();
    rows
}

/// A namespace of its own, and a recorder of it into a fresh file.
async fn recording(
    prefix: &str,
) -> (
    TestNamespace,
    tempfile::TempDir,
    std::path::PathBuf,
    support::Background,
) {
    let ns = TestNamespace::new(prefix).await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("diag.db");
    let n = ns.name.clone();
    let recorder = start_recorder(&db, &n, &[], &format!("pods/{n}")).await;
    (ns, dir, db, recorder)
}

/// A KWOK Node for one test only: tainted for its namespace.
struct OwnNode(String);

impl OwnNode {
    fn new(ns: &str, suffix: &str, cpu: &str) -> OwnNode {
        let name = format!("{ns}-{suffix}");
        apply(
            ns,
            &format!(
                r#"apiVersion: v1
kind: Node
metadata:
  name: {name}
  labels: {{kubernetes.io/hostname: {name}, diag.test/node-of: {ns}}}
  annotations: {{kwok.x-k8s.io/node: fake, node.alpha.kubernetes.io/ttl: "0"}}
spec:
  taints: [{{key: diag.test/node-of, value: {ns}, effect: NoSchedule}}]
status:
  allocatable: {{cpu: "{cpu}", memory: 4Gi, pods: "110"}}
  capacity: {{cpu: "{cpu}", memory: 4Gi, pods: "110"}}
"#
            ),
        );
        OwnNode(name)
    }

    /// The Pod spec lines that put a Pod on this Node only.
    fn placement(&self, ns: &str) -> String {
        format!(
            "nodeSelector: {{kubernetes.io/hostname: {}}}\n      tolerations: [{{key: diag.test/node-of, value: {ns}, effect: NoSchedule}}]",
            self.0
        )
    }
}

impl Drop for OwnNode {
    fn drop(&mut self) {
        let name = self.0.clone();
        support::delete_from_drop(move |client| async move {
            let api: kube::Api<k8s_openapi::api::core::v1::Node> = kube::Api::all(client);
            let _ = api.delete(&name, &Default::default()).await;
        });
    }
}

/// Waits until the live first screen of `check -n NS` holds every `expected`
/// text, within 30 s of the incident; returns that screen.
async fn live_screen(db: &Path, ns: &str, expected: &[&str]) -> String {
    let args = ["check", "-n", ns, "--sample", "1s"];
    let expected_owned: Vec<String> = expected.iter().map(|s| s.to_string()).collect();
    let db_path = db.to_path_buf();
    wait_until(
        Duration::from_secs(30),
        &format!("check -n {ns} to name {expected:?}"),
        || {
            let (db, expected) = (db_path.clone(), expected_owned.clone());
            async move {
                let screen = first_screen(&db, &args);
                expected.iter().all(|e| screen.contains(e.as_str()))
            }
        },
    )
    .await;
    first_screen(db, &args)
}

/// The recording's first screen and findings must agree with live.
async fn recorded_agrees(db: &Path, ns: &str, expected: &[&str]) {
    let db_arg = db.to_str().unwrap();
    let live = findings(db, &["-n", ns]);
    let mut screen = String::new();
    let mut recorded = Vec::new();
    for _ in 0..40 {
        screen = first_screen(db, &["--db", db_arg, "check", "-n", ns]);
        recorded = findings(db, &["--db", db_arg, "-n", ns]);
        if expected.iter().all(|e| screen.contains(e)) && recorded.len() == live.len() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    for e in expected {
        assert!(
            screen.contains(e),
            "check --db: {e:?} is not on the first screen:\n{screen}"
        );
    }
    let codes = |v: &[(String, String, String)]| {
        v.iter()
            .map(|(c, o, _)| format!("{c} {o}"))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        codes(&recorded),
        codes(&live),
        "live and --db name other findings"
    );
}

#[tokio::test]
async fn a_service_whose_selector_stopped_matching_and_one_whose_pods_are_not_ready() {
    let (ns, _dir, db, _recorder) = recording("rel-svc").await;
    let n = ns.name.as_str();
    apply(
        n,
        r#"apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web, track: stable}}
    spec: {containers: [{name: web, image: "web:1"}]}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: api}
spec:
  replicas: 1
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api, diag.test/never-ready: "true"}}
    spec: {containers: [{name: api, image: "api:1"}]}
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec: {selector: {app: web, track: stable}, ports: [{port: 80}]}
---
apiVersion: v1
kind: Service
metadata: {name: web-ok}
spec: {selector: {app: web}, ports: [{port: 80}]}
---
apiVersion: v1
kind: Service
metadata: {name: api}
spec: {selector: {app: api}, ports: [{port: 80}]}
"#,
    );
    // The incident: someone points the Service at a track no Pod has.
    kubectl(&[
        "patch",
        "service",
        "web",
        "-n",
        n,
        "--type",
        "merge",
        "-p",
        r#"{"spec":{"selector":{"track":"canary"}}}"#,
    ]);
    let expected = [
        "L001",
        "Service/web",
        "selects app=web, track=canary: no Pod matches, it has no endpoints; closest: 2 Pod(s) with app=web but track=stable",
        "Service/api",
        "1 Pod(s) match",
        "none is Ready",
    ];
    let screen = live_screen(&db, n, &expected).await;
    assert!(
        !screen.contains("web-ok"),
        "a Service that serves is no finding:\n{screen}"
    );
    recorded_agrees(&db, n, &expected).await;
    // From the recording, the change is dated and its writer named.
    let db_arg = db.to_str().unwrap();
    let recorded = findings(&db, &["--db", db_arg, "-n", n]);
    let web = recorded
        .iter()
        .find(|(_, o, _)| o == "Service/web")
        .unwrap();
    assert!(
        web.2.contains("its spec last changed") && web.2.contains("kubectl-patch"),
        "{web:?}"
    );
    // The Deployment's story names the Service's change that cut it off,
    // though no owner reference joins them.
    let screen = first_screen(
        &db,
        &["--db", db_arg, "timeline", "deployment/web", "-n", n],
    );
    assert!(
        screen.contains("Related:")
            && screen.contains(
                "Service/web changed: spec.selector.track stable → canary (by kubectl-patch)"
            ),
        "{screen}"
    );
    assert!(
        !screen.contains("Service/web-ok changed"),
        "web-ok never changed:\n{screen}"
    );
}

#[tokio::test]
async fn a_configmap_edited_before_a_restart_is_on_the_first_screen_of_the_deployments_timeline() {
    let (ns, _dir, db, _recorder) = recording("rel-cm").await;
    let n = ns.name.as_str();
    apply(
        n,
        r#"apiVersion: v1
kind: ConfigMap
metadata: {name: app-settings}
data: {LOG_LEVEL: info}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: unrelated}
data: {X: "1"}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: "web:1", envFrom: [{configMapRef: {name: app-settings}}]}]
"#,
    );
    let deployments: kube::Api<k8s_openapi::api::apps::v1::Deployment> = ns.api();
    support::wait_available(&deployments, "web", 2).await;
    // NB: managedFields times are whole seconds: an edit in the second of
    // its object's creation is told as the creation.
    tokio::time::sleep(Duration::from_secs(2)).await;
    // The incident: a person edits the settings, then restarts the app, and
    // the new Pods never get ready. An unrelated edit happens meanwhile.
    kubectl(&[
        "patch",
        "configmap",
        "app-settings",
        "-n",
        n,
        "--type",
        "merge",
        "-p",
        r#"{"data":{"LOG_LEVEL":"debug"}}"#,
    ]);
    kubectl(&[
        "patch",
        "configmap",
        "unrelated",
        "-n",
        n,
        "--type",
        "merge",
        "-p",
        r#"{"data":{"X":"2"}}"#,
    ]);
    tokio::time::sleep(Duration::from_secs(1)).await;
    kubectl(&[
        "patch",
        "deployment",
        "web",
        "-n",
        n,
        "--type",
        "merge",
        "-p",
        r#"{"spec":{"template":{"metadata":{"labels":{"diag.test/never-ready":"true"}}}}}"#,
    ]);
    let db_arg = db.to_str().unwrap().to_string();
    let args = [
        "--db",
        db_arg.as_str(),
        "timeline",
        "deployment/web",
        "-n",
        n,
    ];
    let expected = [
        "Related:",
        "ConfigMap/app-settings changed: data.LOG_LEVEL changed (by kubectl-patch)",
        "before its change at",
        "NOT ready",
    ];
    wait_until(
        Duration::from_secs(30),
        "the timeline to tell the story",
        || {
            let db = db.clone();
            let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
            async move {
                let args: Vec<&str> = args.iter().map(String::as_str).collect();
                let screen = first_screen(&db, &args);
                expected.iter().all(|e| screen.contains(e))
            }
        },
    )
    .await;
    let screen = first_screen(&db, &args);
    assert!(
        !screen.contains("unrelated"),
        "an edit the Pods never read is no part of it:\n{screen}"
    );
    // The header's order: the change, what came before it, then the outcome.
    let pos = |text: &str| {
        screen
            .find(text)
            .unwrap_or_else(|| panic!("{text:?} missing:\n{screen}"))
    };
    assert!(
        pos("Change:") < pos("Related:") && pos("Related:") < pos("Rollout:"),
        "{screen}"
    );
    // The table: the creation is one line, and the edit comes before the
    // Deployment's spec change, both on the first screen.
    let table = &screen[pos(" TIME (UTC)")..];
    assert!(
        table.contains("then within"),
        "the creation burst is folded:\n{screen}"
    );
    // NB: by line, not by padded text: the REASON column is as wide as the
    // longest reason on the screen, which varies with what else happened.
    let row = |what: &str, found: &dyn Fn(&str) -> bool| {
        table
            .lines()
            .position(found)
            .unwrap_or_else(|| panic!("{what} is not on the first screen:\n{screen}"))
    };
    let edit = row("the edit's row", &|l| l.contains("ConfigMap/app-settings"));
    let change = row("the Deployment's change row", &|l| {
        l.contains("Deployment/web") && l.contains(" SpecChanged ") && l.contains(" spec changed")
    });
    assert!(edit < change, "{screen}");
    // With no recording, the reconstruction reads the ConfigMap's metadata:
    // its last writer and when, marked as a last write, never its values.
    let data = tempfile::tempdir().unwrap();
    let (code, out, err) =
        support::diag_no_recording(data.path(), &["timeline", "deployment/web", "-n", n]);
    assert_eq!(code, Some(0), "{err}");
    let screen = out.lines().take(25).collect::<Vec<_>>().join("\n");
    assert!(
        screen.contains("ConfigMap/app-settings last write by kubectl-patch (Update) at")
            && screen.contains("owns data.LOG_LEVEL [last: earlier writes are not kept]")
            && screen.contains("before its change at"),
        "{screen}"
    );
    assert!(
        !screen.contains("unrelated") && !screen.contains("debug"),
        "{screen}"
    );
}

#[tokio::test]
async fn a_budget_that_allows_no_disruption_keeps_a_cordoned_node_from_draining() {
    let ns = TestNamespace::new("rel-pdb").await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("diag.db");
    let n = ns.name.as_str();
    let node = OwnNode::new(n, "drain", "4");
    let _recorder = start_recorder(&db, n, &[], &format!("pods/{n}")).await;
    apply(
        n,
        &format!(
            r#"apiVersion: apps/v1
kind: Deployment
metadata: {{name: pg}}
spec:
  replicas: 2
  selector: {{matchLabels: {{app: pg}}}}
  template:
    metadata: {{labels: {{app: pg}}}}
    spec:
      {}
      containers: [{{name: pg, image: "pg:16"}}]
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {{name: pg}}
spec: {{minAvailable: 2, selector: {{matchLabels: {{app: pg}}}}}}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {{name: nothing}}
spec: {{maxUnavailable: 1, selector: {{matchLabels: {{app: gone}}}}}}
"#,
            node.placement(n)
        ),
    );
    // Until the budget sees both Pods healthy, it may still be computing.
    let before = live_screen(
        &db,
        n,
        &["L002", "PodDisruptionBudget/pg", "2 healthy, 2 required"],
    )
    .await;
    assert!(
        !before.contains("cannot drain"),
        "nothing is cordoned yet:\n{before}"
    );
    // Someone tightens the budget to every Pod (still 2 of 2 here).
    // NB: a second after the creation: managedFields keep whole seconds, and
    // a write in the creation's second is told as the creation.
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    kubectl(&[
        "patch",
        "pdb",
        "pg",
        "-n",
        n,
        "--type",
        "merge",
        "-p",
        r#"{"spec":{"minAvailable":"100%"}}"#,
    ]);
    kubectl(&["cordon", &node.0]);
    let expected = [
        "L002",
        "PodDisruptionBudget/pg",
        "allows 0 disruptions (2 healthy, 2 required): Node",
        "cannot drain pg-",
        "PodDisruptionBudget/nothing",
        "selects app=gone: no Pod matches, so it protects nothing",
    ];
    let screen = live_screen(&db, n, &expected).await;
    // The first screen leads with the warning, the infos after it.
    let warning = screen.find("allows 0 disruptions").unwrap();
    let info = screen.find("protects nothing").unwrap();
    assert!(warning < info, "{screen}");
    recorded_agrees(&db, n, &expected).await;
    // With no recording, the Deployment's reconstructed story walks the
    // budget that selects its Pods (issue 47), never the one that selects
    // none, and names the budget's last writer from its managedFields.
    let data = tempfile::tempdir().unwrap();
    let args = ["timeline", "deployment/pg", "-n", n, "-o", "json"];
    let (code, out, err) = support::diag_no_recording(data.path(), &args);
    assert_eq!(code, Some(0), "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let budgets: Vec<(String, String)> = v["objects"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|o| o["kind"] == "PodDisruptionBudget")
        .map(|o| {
            (
                o["name"].as_str().unwrap().to_string(),
                o["relation"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    assert_eq!(
        budgets,
        [("pg".to_string(), "selects".to_string())],
        "{out}"
    );
    let (code, out, err) =
        support::diag_no_recording(data.path(), &["timeline", "deployment/pg", "-n", n]);
    assert_eq!(code, Some(0), "{err}");
    let screen = out.lines().take(25).collect::<Vec<_>>().join("\n");
    assert!(
        screen.contains("PodDisruptionBudget/pg last write by kubectl-patch"),
        "{screen}"
    );
    assert!(!screen.contains("PodDisruptionBudget/nothing"), "{screen}");
}

#[tokio::test]
async fn pods_preempted_by_a_higher_priority_pod_name_it_and_its_priority() {
    let ns = TestNamespace::new("rel-preempt").await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("diag.db");
    let n = ns.name.as_str();
    let node = OwnNode::new(n, "small", "1");
    let class = format!("{n}-high");
    struct Class(String);
    impl Drop for Class {
        fn drop(&mut self) {
            let name = self.0.clone();
            support::delete_from_drop(move |client| async move {
                let api: kube::Api<k8s_openapi::api::scheduling::v1::PriorityClass> =
                    kube::Api::all(client);
                let _ = api.delete(&name, &Default::default()).await;
            });
        }
    }
    let _class = Class(class.clone());
    let _recorder = start_recorder(&db, n, &[], &format!("pods/{n}")).await;
    apply(
        n,
        &format!(
            r#"apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {{name: {class}}}
value: 1000000
---
apiVersion: apps/v1
kind: Deployment
metadata: {{name: batch}}
spec:
  replicas: 2
  selector: {{matchLabels: {{app: batch}}}}
  template:
    metadata: {{labels: {{app: batch}}}}
    spec:
      {}
      containers: [{{name: b, image: "batch:1", resources: {{requests: {{cpu: 400m}}}}}}]
"#,
            node.placement(n)
        ),
    );
    let client = ns.client.clone();
    let pods: kube::Api<k8s_openapi::api::core::v1::Pod> = kube::Api::namespaced(client, n);
    wait_until(Duration::from_secs(30), "both batch Pods running", || {
        let pods = pods.clone();
        async move {
            pods.list(&Default::default()).await.is_ok_and(|l| {
                l.items
                    .iter()
                    .filter(|p| {
                        p.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running")
                    })
                    .count()
                    == 2
            })
        }
    })
    .await;
    apply(
        n,
        &format!(
            r#"apiVersion: v1
kind: Pod
metadata: {{name: critical}}
spec:
  priorityClassName: {class}
  {}
  containers: [{{name: c, image: "critical:1", resources: {{requests: {{cpu: 800m}}}}}}]
"#,
            node.placement(n).replace("\n      ", "\n  ")
        ),
    );
    let expected = [
        "L003",
        &format!(
            "2 Pod(s) preempted by Pod {n}/critical (priority 1000000, class {class}) on node {}",
            node.0
        ),
    ];
    let expected: Vec<&str> = expected.iter().map(|s| s.as_ref()).collect();
    let screen = live_screen(&db, n, &expected).await;
    // The victims' replacements cannot be scheduled (S001 says so), and no
    // finding calls the preemptor a victim.
    assert!(screen.contains("S001"), "{screen}");
    let l003: Vec<_> = findings(&db, &["-n", n])
        .into_iter()
        .filter(|f| f.0 == "L003")
        .collect();
    assert_eq!(l003.len(), 1, "{l003:?}");
    assert!(l003[0].1.starts_with("Pod/batch-"), "{l003:?}");
    assert!(
        !l003[0].2.contains("gone") && !l003[0].2.contains("not among"),
        "{l003:?}"
    );
    recorded_agrees(&db, n, &expected).await;
}

#[tokio::test]
async fn a_template_that_needs_a_configmap_and_a_secret_that_do_not_exist_names_them() {
    let (ns, _dir, db, _recorder) = recording("rel-refs").await;
    let n = ns.name.as_str();
    apply(
        n,
        r#"apiVersion: v1
kind: ConfigMap
metadata: {name: present}
data: {LOG_LEVEL: info}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: app}
spec:
  replicas: 1
  selector: {matchLabels: {app: app}}
  template:
    metadata: {labels: {app: app}}
    spec:
      volumes:
      - {name: tls, secret: {secretName: app-tls}}
      - {name: extra, configMap: {name: maybe, optional: true}}
      containers:
      - name: app
        image: "app:1"
        envFrom: [{configMapRef: {name: app-settings}}, {configMapRef: {name: present}}]
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec: {selector: {app: app}, ports: [{port: 80}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: shop}
spec:
  ingressClassName: no-such-class
  rules:
  - http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}
      - {path: /api, pathType: Prefix, backend: {service: {name: api-gone, port: {number: 80}}}}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: bare}
spec:
  rules:
  - http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  serviceName: db-headless
  replicas: 1
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec: {containers: [{name: db, image: "db:1"}]}
"#,
    );
    let expected = [
        "L004",
        "Deployment/app",
        "its Pod template needs ConfigMap/app-settings, Secret/app-tls that do not exist in",
        "Ingress/shop",
        "it needs IngressClass/no-such-class, Service/api-gone that do not exist in",
        "StatefulSet/db",
        "it needs Service/db-headless that does not exist in",
        "Ingress/bare",
        "it names no IngressClass and none is marked the cluster's default",
    ];
    let screen = live_screen(&db, n, &expected).await;
    // NB: Ingress/shop names its class; only the classless one needs a default.
    assert_eq!(
        screen.matches("it names no IngressClass").count(),
        1,
        "{screen}"
    );
    assert!(
        !screen.contains("ConfigMap/present")
            && !screen.contains("ConfigMap/maybe")
            && !screen.contains("Service/web,")
            && !screen.contains("Service/web "),
        "what exists is never called missing:\n{screen}"
    );
    // NB: the recorder leaves Secrets out unless `--kinds` names them: the
    // recording cannot know that app-tls is missing, and must not say so.
    recorded_agrees(
        &db,
        n,
        &[
            "L004",
            "Deployment/app",
            "its Pod template needs ConfigMap/app-settings that does not exist in",
        ],
    )
    .await;
    let db_arg = db.to_str().unwrap();
    let recorded = findings(&db, &["--db", db_arg, "-n", n]);
    assert!(
        !recorded.iter().any(|f| f.2.contains("Secret/")),
        "{recorded:?}"
    );
    // Once they exist, the finding is gone, live and recorded.
    apply(
        n,
        r#"apiVersion: v1
kind: ConfigMap
metadata: {name: app-settings}
data: {LOG_LEVEL: debug}
---
apiVersion: v1
kind: Secret
metadata: {name: app-tls}
stringData: {tls.crt: x}
"#,
    );
    // A class marked default serves the classless Ingress: its L004 clears.
    // NB: only this test makes an Ingress without a class.
    let class = format!("{n}-default");
    let _class = ClusterScoped("ingressclass", class.clone());
    apply(
        n,
        &format!(
            r#"apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata:
  name: {class}
  annotations: {{ingressclass.kubernetes.io/is-default-class: "true"}}
spec: {{controller: example.com/ingress-controller}}
"#
        ),
    );
    wait_until(
        Duration::from_secs(30),
        "the Deployment's and the classless Ingress's L004 to clear live and recorded",
        || {
            let db = db.clone();
            let n = n.to_string();
            async move {
                let db_arg = db.to_str().unwrap().to_string();
                let app =
                    |f: &(String, String, String)| f.1 == "Deployment/app" || f.1 == "Ingress/bare";
                !findings(&db, &["-n", &n]).iter().any(app)
                    && !findings(&db, &["--db", &db_arg, "-n", &n]).iter().any(app)
            }
        },
    )
    .await;
}

/// Issue 47: a route attached to a Gateway that does not exist, sending to
/// a Service that does not exist, and a route its Gateway's controller did
/// not accept: "No findings" before. L004 names what is missing, R003 quotes
/// the controller after the Gateway it is about, live and from the
/// recording; what exists is never called missing. A route and an Ingress
/// that send to a port their Service does not have (k8sgpt's HTTPRoute port
/// row) are L004 too.
#[tokio::test]
async fn routes_whose_gateway_or_backend_is_missing_or_not_accepted_are_named() {
    install_crds(
        "gateway.networking.k8s.io",
        "v1",
        &[
            ("Gateway", "gateways", false),
            ("GatewayClass", "gatewayclasses", true),
            ("HTTPRoute", "httproutes", false),
        ],
    );
    // NB: after the CRDs: the recorder discovers the types it watches when it starts.
    let (ns, _dir, db, _recorder) = recording("rel-routes").await;
    let n = ns.name.as_str();
    // The class of the Gateway that exists; a second Gateway names one that does not.
    let class = format!("{n}-class");
    let _class = ClusterScoped("gatewayclass", class.clone());
    apply(
        n,
        &format!(
            r#"apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {{name: {class}}}
spec: {{controllerName: example.net/gateway-controller}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {{name: internal}}
spec:
  gatewayClassName: {class}
  listeners: [{{name: http, protocol: HTTP, port: 80, allowedRoutes: {{namespaces: {{from: Same}}}}}}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {{name: orphan}}
spec:
  gatewayClassName: no-such-class
  listeners: [{{name: http, protocol: HTTP, port: 80}}]
"#
        ),
    );
    apply(
        n,
        r#"---
apiVersion: v1
kind: Service
metadata: {name: api}
spec: {selector: {app: api}, ports: [{port: 80}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: web}
spec:
  parentRefs: [{name: public}]
  rules: [{backendRefs: [{name: web-svc, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: api}
spec:
  parentRefs: [{name: internal}]
  rules: [{backendRefs: [{name: api, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: legacy}
spec:
  parentRefs: [{name: internal}]
  rules: [{backendRefs: [{name: api, port: 8080}]}]
"#,
    );
    // An Ingress of a class that exists, sending to a port name Service/api does not have.
    let ingress_class = format!("{n}-nginx");
    let _ingress_class = ClusterScoped("ingressclass", ingress_class.clone());
    apply(
        n,
        &format!(
            r#"apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata: {{name: {ingress_class}}}
spec: {{controller: example.net/ingress-controller}}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {{name: shop}}
spec:
  ingressClassName: {ingress_class}
  rules: [{{http: {{paths: [{{path: /, pathType: Prefix, backend: {{service: {{name: api, port: {{name: http}}}}}}}}]}}}}]
"#
        ),
    );
    // What the Gateway's controller writes of a route it does not accept.
    let an_hour_ago = (chrono::Utc::now() - chrono::Duration::hours(1))
        .to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let status = serde_json::json!({"status": {"parents": [{
        "parentRef": {"name": "internal", "sectionName": "http"},
        "controllerName": "example.net/gateway-controller",
        "conditions": [
            {"type": "Accepted", "status": "False", "reason": "NotAllowedByListeners",
             "message": "no listener of this Gateway allows this route's kind",
             "lastTransitionTime": an_hour_ago, "observedGeneration": 1},
            {"type": "ResolvedRefs", "status": "True", "reason": "ResolvedRefs",
             "message": "", "lastTransitionTime": an_hour_ago, "observedGeneration": 1}]}]}});
    kubectl(&[
        "patch",
        "-n",
        n,
        "httproute/api",
        "--subresource=status",
        "--type=merge",
        "-p",
        &status.to_string(),
    ]);
    let expected = [
        "L004",
        "HTTPRoute/web",
        "it needs Gateway/public, Service/web-svc that do not exist in",
        "R003",
        "HTTPRoute/api",
        "Accepted=False",
        "Gateway internal, listener http: no listener of this Gateway allows this route's kind",
        "Gateway/orphan",
        "it needs GatewayClass/no-such-class that does not exist in",
        "(a GatewayClass: in the cluster)",
        "HTTPRoute/legacy",
        "it sends to port 8080 of Service/api, which has only 80: its requests fail",
        "Ingress/shop",
        "it sends to port http of Service/api, which has only 80: its requests fail",
    ];
    let screen = live_screen(&db, n, &expected).await;
    assert!(
        !screen.contains(&format!("GatewayClass/{class}")),
        "a class that exists is never called missing:\n{screen}"
    );
    // NB: Service/api selects no Pod: its L001 is right, and is no L004.
    assert!(
        !screen.contains("Gateway/internal")
            && !screen
                .lines()
                .any(|l| l.contains("L004") && l.contains("HTTPRoute/api")),
        "what exists is never called missing:\n{screen}"
    );
    // A port the Service has is never called missing, nor is a class that exists.
    assert!(
        !screen.contains("port 80 of")
            && !screen.contains(&format!("IngressClass/{ingress_class}")),
        "{screen}"
    );
    recorded_agrees(&db, n, &expected).await;
}

/// A CRD of `group` (v1alpha1 for OLM's, v1 for the Gateway API's) that
/// keeps whatever it is given (the real ones validate more; what is read of
/// them is the same fields), with a status subresource. Protected groups
/// (`*.k8s.io`) carry the approval annotation as the upstream CRDs do. Left
/// installed: other tests never list them.
fn preserving_crd(group: &str, version: &str, kind: &str, plural: &str, cluster: bool) -> String {
    let approved = if group.ends_with(".k8s.io") {
        "\n  annotations: {api-approved.kubernetes.io: \"https://github.com/kubernetes-sigs/gateway-api/pull/2466\"}"
    } else {
        ""
    };
    let scope = if cluster { "Cluster" } else { "Namespaced" };
    let singular = kind.to_lowercase();
    format!(
        r#"apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: {plural}.{group}{approved}
spec:
  group: {group}
  scope: {scope}
  names: {{plural: {plural}, singular: {singular}, kind: {kind}}}
  versions:
  - name: {version}
    served: true
    storage: true
    subresources: {{status: {{}}}}
    schema: {{openAPIV3Schema: {{type: object, x-kubernetes-preserve-unknown-fields: true}}}}
"#
    )
}

/// Installs `(kind, plural, cluster-scoped)` CRDs of `group` and waits until each is Established.
fn install_crds(group: &str, version: &str, types: &[(&str, &str, bool)]) {
    let yaml: Vec<String> = types
        .iter()
        .map(|(kind, plural, cluster)| preserving_crd(group, version, kind, plural, *cluster))
        .collect();
    support::kubectl_stdin(&["apply", "-f", "-"], &yaml.join("---\n"));
    for (_, plural, _) in types {
        kubectl(&[
            "wait",
            "--for=condition=Established",
            "--timeout=60s",
            &format!("crd/{plural}.{group}"),
        ]);
    }
}

/// Issue 47: OLM v0's failures were no finding (k8sgpt flags each): a
/// CatalogSource whose registry cannot be reached, a Subscription that
/// cannot resolve, an InstallPlan and a ClusterServiceVersion that failed. The statuses are what OLM's
/// catalog operator writes (operator-framework/api's condition types; the
/// shapes of docs.openshift.com/rosa/operators/admin/olm-status.html),
/// dated now: each is named at once, not after `--stuck-after`, live and
/// from the recording. A healthy Subscription and an InstallPlan waiting
/// for a manual approval are not.
#[tokio::test]
async fn olm_v0_failures_are_named_at_once() {
    install_crds(
        "operators.coreos.com",
        "v1alpha1",
        &[
            ("CatalogSource", "catalogsources", false),
            ("Subscription", "subscriptions", false),
            ("InstallPlan", "installplans", false),
            ("ClusterServiceVersion", "clusterserviceversions", false),
        ],
    );
    // NB: after the CRDs: the recorder discovers the types it watches when it starts.
    let (ns, _dir, db, _recorder) = recording("rel-olm").await;
    let n = ns.name.as_str();
    apply(
        n,
        r#"apiVersion: operators.coreos.com/v1alpha1
kind: CatalogSource
metadata: {name: example-catalog}
spec: {sourceType: grpc, image: "quay.io/example-org/example-catalog:v1"}
---
apiVersion: operators.coreos.com/v1alpha1
kind: Subscription
metadata: {name: etcd}
spec: {channel: alpha, name: etcd, source: example-catalog, sourceNamespace: default}
---
apiVersion: operators.coreos.com/v1alpha1
kind: Subscription
metadata: {name: healthy}
spec: {channel: stable, name: other, source: example-catalog, sourceNamespace: default}
---
apiVersion: operators.coreos.com/v1alpha1
kind: InstallPlan
metadata: {name: install-abcde}
spec: {approval: Automatic, approved: true, clusterServiceVersionNames: [etcdoperator.v0.9.4]}
---
apiVersion: operators.coreos.com/v1alpha1
kind: InstallPlan
metadata: {name: install-manual}
spec: {approval: Manual, approved: false, clusterServiceVersionNames: [other.v1.0.0]}
---
apiVersion: operators.coreos.com/v1alpha1
kind: ClusterServiceVersion
metadata: {name: etcdoperator.v0.9.4}
spec: {displayName: etcd, version: 0.9.4}
"#,
    );
    let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let status = |name: &str, status: serde_json::Value| {
        kubectl(&[
            "patch",
            "-n",
            n,
            name,
            "--subresource=status",
            "--type=merge",
            "-p",
            &serde_json::json!({ "status": status }).to_string(),
        ]);
    };
    status(
        "catalogsource/example-catalog",
        serde_json::json!({"connectionState": {
            "address": format!("example-catalog.{n}.svc:50051"),
            "lastConnect": now, "lastObservedState": "TRANSIENT_FAILURE"}}),
    );
    status(
        "subscription/etcd",
        serde_json::json!({"conditions": [{"type": "ResolutionFailed", "status": "True",
            "reason": "ConstraintsNotSatisfiable",
            "message": "no operators found in channel alpha of package etcd in the catalog referenced by subscription etcd",
            "lastTransitionTime": now}]}),
    );
    status(
        "subscription/healthy",
        serde_json::json!({"conditions": [{"type": "CatalogSourcesUnhealthy", "status": "False",
            "reason": "AllCatalogSourcesHealthy", "message": "all available catalogsources are healthy",
            "lastTransitionTime": now}]}),
    );
    status(
        "installplan/install-abcde",
        serde_json::json!({"phase": "Failed", "conditions": [{"type": "Installed", "status": "False",
            "reason": "InstallComponentFailed",
            "message": "error creating csv etcdoperator.v0.9.4: forbidden",
            "lastTransitionTime": now}]}),
    );
    status(
        "installplan/install-manual",
        serde_json::json!({"phase": "RequiresApproval"}),
    );
    // A ClusterServiceVersion's conditions are a history of phases, with no
    // type: its own phase and reason are what it says.
    status(
        "clusterserviceversion/etcdoperator.v0.9.4",
        serde_json::json!({"phase": "Failed", "reason": "TooManyOperatorGroups",
            "message": "csv created in namespace with multiple operatorgroups, can't pick one automatically",
            "lastTransitionTime": now,
            "conditions": [{"phase": "Failed", "reason": "TooManyOperatorGroups",
                "message": "csv created in namespace with multiple operatorgroups, can't pick one automatically",
                "lastTransitionTime": now}]}),
    );
    let expected = [
        "R003",
        "CatalogSource/example-catalog",
        "connectionState=TRANSIENT_FAILURE",
        "Subscription/etcd",
        "ResolutionFailed=True",
        "no operators found in channel alpha",
        "InstallPlan/install-abcde",
        "Installed=False",
        "InstallComponentFailed: error creating csv etcdoperator.v0.9.4",
        "ClusterServiceVersion/etcdoperator.v0.9.4",
        "phase=Failed",
        "TooManyOperatorGroups: csv created in namespace with multiple operatorgroups",
    ];
    let screen = live_screen(&db, n, &expected).await;
    assert!(
        !screen.contains("Subscription/healthy") && !screen.contains("InstallPlan/install-manual"),
        "a healthy Subscription and a plan awaiting approval are no finding:\n{screen}"
    );
    // The recording says the same, from its own copy of the statuses.
    let db_arg = db.to_str().unwrap().to_string();
    let mut recorded = String::new();
    for _ in 0..40 {
        recorded = first_screen(&db, &["--db", &db_arg, "check", "-n", n]);
        if expected.iter().all(|e| recorded.contains(e)) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    for e in expected {
        assert!(
            recorded.contains(e),
            "check --db: {e:?} is not on the first screen:\n{recorded}"
        );
    }
    assert!(
        !recorded.contains("Subscription/healthy")
            && !recorded.contains("InstallPlan/install-manual"),
        "{recorded}"
    );
}

/// Deletes a cluster-scoped object of `kind` when dropped (`kubectl delete`).
struct ClusterScoped(&'static str, String);

impl Drop for ClusterScoped {
    fn drop(&mut self) {
        let _ = std::process::Command::new(support::repo_root().join("scripts/cluster"))
            .args([
                "kubectl",
                "delete",
                self.0,
                &self.1,
                "--ignore-not-found",
                "--wait=false",
            ])
            .env("DIAG_CLUSTER_DIR", support::kubeconfig().parent().unwrap())
            .output();
    }
}

#[tokio::test]
async fn a_webhook_whose_service_has_no_ready_pod_is_named_and_its_refusals_are_real() {
    let ns = TestNamespace::new("rel-hook").await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("unused.db");
    let n = ns.name.as_str();
    let config = format!("{n}-gate");
    let _config = ClusterScoped("validatingwebhookconfiguration", config.clone());
    // NB: only objects labelled for this test are sent to it, so a webhook
    // that refuses does not touch any other test.
    apply(
        n,
        &format!(
            r#"apiVersion: apps/v1
kind: Deployment
metadata: {{name: gate}}
spec:
  replicas: 1
  selector: {{matchLabels: {{app: gate}}}}
  template:
    metadata: {{labels: {{app: gate, diag.test/never-ready: "true"}}}}
    spec: {{containers: [{{name: gate, image: "gate:1"}}]}}
---
apiVersion: v1
kind: Service
metadata: {{name: gate}}
spec: {{selector: {{app: gate}}, ports: [{{port: 443}}]}}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {{name: {config}}}
webhooks:
- name: gate.diag.test
  clientConfig: {{service: {{namespace: {n}, name: gate, path: /validate}}}}
  rules: [{{operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [configmaps]}}]
  objectSelector: {{matchLabels: {{diag.test/gate: {n}}}}}
  failurePolicy: Fail
  sideEffects: None
  admissionReviewVersions: [v1]
"#
        ),
    );
    let expected = [
        "L005",
        &format!("ValidatingWebhookConfiguration/{config}"),
        &format!(
            "webhook gate.diag.test: its Service {n}/gate has no ready Pod (1 match, none Ready); failurePolicy Fail: every write it matches is refused"
        ),
    ];
    let expected: Vec<&str> = expected.iter().map(|s| s.as_ref()).collect();
    let screen = live_screen(&db, n, &expected).await;
    assert!(screen.contains(" error "), "{screen}");
    // The refusal it predicts is real.
    let out = std::process::Command::new(support::repo_root().join("scripts/cluster"))
        .args(["kubectl", "create", "configmap", "probe", "-n", n])
        .args(["--dry-run=server", "-o", "name"])
        .env("DIAG_CLUSTER_DIR", support::kubeconfig().parent().unwrap())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "an unlabelled ConfigMap is not sent to it"
    );
    let labelled = format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: probe, labels: {{diag.test/gate: {n}}}}}\n"
    );
    let mut child = std::process::Command::new(support::repo_root().join("scripts/cluster"))
        .args(["kubectl", "create", "-n", n, "-f", "-"])
        .env("DIAG_CLUSTER_DIR", support::kubeconfig().parent().unwrap())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write as _;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(labelled.as_bytes())
        .unwrap();
    let refused = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(
        !refused.status.success() && err.contains("gate.diag.test"),
        "the webhook refuses the labelled ConfigMap: {err}"
    );
}

#[tokio::test]
async fn a_claim_whose_volume_was_deleted_is_lost_and_named_at_once() {
    let (ns, _dir, db, _recorder) = recording("rel-lost").await;
    let n = ns.name.as_str();
    let pv = format!("{n}-pv");
    let _pv = ClusterScoped("persistentvolume", pv.clone());
    apply(
        n,
        &format!(
            r#"apiVersion: v1
kind: PersistentVolume
metadata: {{name: {pv}}}
spec:
  capacity: {{storage: 1Gi}}
  accessModes: [ReadWriteOnce]
  storageClassName: manual-{n}
  hostPath: {{path: /tmp/{pv}}}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {{name: data}}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: manual-{n}
  volumeName: {pv}
  resources: {{requests: {{storage: 1Gi}}}}
"#
        ),
    );
    let claims: kube::Api<k8s_openapi::api::core::v1::PersistentVolumeClaim> = ns.api();
    wait_until(Duration::from_secs(30), "the claim to bind", || {
        let claims = claims.clone();
        async move {
            claims
                .get("data")
                .await
                .is_ok_and(|c| c.status.and_then(|s| s.phase).as_deref() == Some("Bound"))
        }
    })
    .await;
    // The incident: someone deletes the volume, past its protection.
    kubectl(&["delete", "pv", &pv, "--wait=false"]);
    kubectl(&[
        "patch",
        "pv",
        &pv,
        "--type",
        "merge",
        "-p",
        r#"{"metadata":{"finalizers":null}}"#,
    ]);
    let expected = [
        "L006",
        "PersistentVolumeClaim/data",
        &format!("claim Lost: its PersistentVolume {pv} no longer exists"),
    ];
    let expected: Vec<&str> = expected.iter().map(|s| s.as_ref()).collect();
    live_screen(&db, n, &expected).await;
    recorded_agrees(&db, n, &expected).await;
}
