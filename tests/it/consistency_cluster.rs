//! One model, one answer (issue 43): the same incidents give identical
//! `check -o json` findings live, from the recording (`--db`) and from the
//! ClickHouse store (`--store`), and identical `timeline -o json` from `--db`
//! and `--store`. Against the real control plane and a real ClickHouse engine.

use crate::support;

use std::process::{Output, Stdio};
use std::time::Duration;

use k8s_openapi::api::core::v1::{ConfigMap, Event, Pod};
use kube::api::{DeleteParams, ListParams, PostParams};
use serde_json::{Value, json};
use support::clickhouse::{Front, diag_ch};
use support::{Background, TestNamespace};

/// Every check but the hot-loop one, whose live sample watches for 30s and
/// whose recorded one reads counters: two measures by design (docs/checks.md).
const CHECKS: [&str; 7] = [
    "controllers",
    "progress",
    "finalizers",
    "generation",
    "scheduling",
    "pods",
    "relations",
];

fn run(cmd: &mut std::process::Command) -> (Output, Value) {
    let out = cmd.output().unwrap();
    let doc = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out, doc)
}

fn findings(doc: &Value) -> Vec<(String, String)> {
    support::finding_keys(doc)
}

/// Where two documents differ, as JSON pointers with both values: a failure
/// says what disagrees rather than printing two pages.
fn differences(a: &Value, b: &Value, at: &str, out: &mut Vec<String>) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for k in x.keys().chain(y.keys().filter(|k| !x.contains_key(*k))) {
                let (va, vb) = (
                    &x.get(k).cloned().unwrap_or(Value::Null),
                    &y.get(k).cloned().unwrap_or(Value::Null),
                );
                differences(va, vb, &format!("{at}/{k}"), out);
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (va, vb)) in x.iter().zip(y).enumerate() {
                differences(va, vb, &format!("{at}/{i}"), out);
            }
        }
        _ if a != b => out.push(format!("{at}: {a} ≠ {b}")),
        _ => {}
    }
}

fn check_args<'a>(ns: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["check"];
    args.extend(CHECKS);
    args.extend(["-n", ns, "--stuck-after", "1s", "-o", "json"]);
    args.extend(extra);
    args
}

async fn scheduling_attempts(pods: &kube::Api<Pod>, events: &kube::Api<Event>) -> (usize, i64) {
    let pods = pods.list(&ListParams::default()).await.unwrap().items;
    let unschedulable = pods
        .iter()
        .filter(|p| {
            p.status
                .as_ref()
                .and_then(|s| s.conditions.as_ref())
                .is_some_and(|c| {
                    c.iter()
                        .any(|c| c.type_ == "PodScheduled" && c.status == "False")
                })
        })
        .count();
    let count = occurrences_of(events, |e| e.reason.as_deref() == Some("FailedScheduling")).await;
    (unschedulable, count)
}

/// Every occurrence so far of the namespace's Events that `pick` picks.
async fn occurrences_of(events: &kube::Api<Event>, pick: impl Fn(&Event) -> bool) -> i64 {
    events
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .iter()
        .filter(|e| pick(e))
        .map(|e| {
            i64::from(
                e.series
                    .as_ref()
                    .and_then(|s| s.count)
                    .or(e.count)
                    .unwrap_or(1),
            )
        })
        .sum()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_same_incidents_give_the_same_findings_live_recorded_and_stored() {
    let front = Front::start();
    let ns = TestNamespace::new("same-answer").await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("diag.db");
    let rec = Background::new(
        diag_ch(&db)
            .args(["record", "--quiet", "-n", &ns.name, "--commit-every", "1s"])
            .args(["--ship", &front.url(), "--ship-create-schema"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    support::wait_until(
        Duration::from_secs(30),
        "the recorder's first lists",
        || {
            let db = db.clone();
            async move {
                db.exists()
                    && support::open_fresh(&db)
                        .and_then(|c| {
                            c.query_row("SELECT count(*) FROM watch_positions", [], |r| {
                                r.get::<_, i64>(0)
                            })
                        })
                        .is_ok_and(|n| n > 0)
            }
        },
    )
    .await;

    // The incidents: two Pods no Node takes (a label no Node has), a claim
    // nothing binds, a Service that selects no Pod, a ConfigMap whose
    // finalizer nobody removes.
    support::apply(
        &ns.name,
        r#"apiVersion: apps/v1
kind: Deployment
metadata: {name: pinned}
spec:
  replicas: 2
  selector: {matchLabels: {app: pinned}}
  template:
    metadata: {labels: {app: pinned}}
    spec:
      nodeSelector: {disk: no-node-has-this}
      tolerations: [{key: kwok.x-k8s.io/node, operator: Exists, effect: NoSchedule}]
      containers: [{name: app, image: "registry.example/app:1"}]
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data}
spec:
  storageClassName: ""
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
---
apiVersion: v1
kind: Service
metadata: {name: front}
spec: {selector: {app: front}, ports: [{port: 80}]}
"#,
    );
    let cms: kube::Api<ConfigMap> = ns.api();
    let held: ConfigMap = serde_json::from_value(json!({
        "metadata": {"name": "held", "finalizers": ["example.com/never"]}
    }))
    .unwrap();
    cms.create(&PostParams::default(), &held).await.unwrap();
    cms.delete("held", &DeleteParams::default()).await.unwrap();
    // NB: a Normal wait that last came five minutes ago, outside `--window
    // 1m`: a live check sees it (the apiserver keeps it an hour); a recorded
    // one read it only once the rule of which Events a check reads was one.
    let events: kube::Api<Event> = ns.api();
    let ago = |m: i64| {
        (chrono::Utc::now() - chrono::Duration::minutes(m))
            .to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
    };
    let waiting: Event = serde_json::from_value(json!({
        "metadata": {"name": "data.wait"},
        "involvedObject": {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                           "namespace": ns.name, "name": "data"},
        "reason": "ExternalProvisioning", "type": "Normal", "count": 4,
        "message": "Waiting for a volume to be created either by the external provisioner 'example.com/nobody' or manually by the system administrator. If volume creation is delayed, please verify that the provisioner is running and correctly registered.",
        "firstTimestamp": ago(8), "lastTimestamp": ago(5),
        "source": {"component": "persistentvolume-controller"},
        "reportingComponent": "persistentvolume-controller"
    }))
    .unwrap();
    events
        .create(&PostParams::default(), &waiting)
        .await
        .unwrap();

    // Quiet: both Pods refused, and the scheduler's count still for 3s.
    let pods: kube::Api<Pod> = ns.api();
    let mut last = (0, -1);
    let mut still = 0;
    for _ in 0..60 {
        let now = scheduling_attempts(&pods, &events).await;
        still = if now == last && now.0 == 2 {
            still + 1
        } else {
            0
        };
        last = now;
        if still >= 3 {
            break;
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    assert!(still >= 3, "the scheduler never settled: {last:?}");
    // NB: the persistentvolume-controller says again that the claim waits at
    // every resync. An occurrence written just after the live check listed
    // the Events, in the second the check ends (Event times are whole
    // seconds), is in the recording at that moment and not in what the live
    // check read: a race of the test, not a disagreement (it failed once so).
    // Right after a repeat, the next one is a resync away: check then.
    let before = occurrences_of(&events, |_| true).await;
    for _ in 0..100 {
        if occurrences_of(&events, |_| true).await != before {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }

    let (out, live) = run(diag_ch(&db)
        .env_remove("KUBECTL_DIAG_DB")
        .args(check_args(&ns.name, &[])));
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let at = live["at"].as_str().unwrap().to_string();
    // What the recorder saw up to `at`, committed and shipped.
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert!(rec.terminate().success());

    let db_arg = db.to_str().unwrap().to_string();
    let url = front.url();
    let (_, recorded) = run(diag_ch(&db).args(check_args(
        &ns.name,
        &["--db", &db_arg, "--at", &at, "--window", "1m"],
    )));
    let (_, stored) = run(diag_ch(&db).env_remove("KUBECTL_DIAG_DB").args(check_args(
        &ns.name,
        &["--store", &url, "--at", &at, "--window", "1m"],
    )));

    // What the incidents are, in the order every source gives them, and
    // nothing else.
    let pinned: Vec<String> = {
        let mut names: Vec<String> = pods
            .list(&ListParams::default())
            .await
            .unwrap()
            .items
            .into_iter()
            .map(|p| format!("Pod/{}", p.metadata.name.unwrap()))
            .collect();
        names.sort();
        names
    };
    let want: Vec<(String, String)> = [
        ("R001", "Deployment/pinned"),
        ("R004", "PersistentVolumeClaim/data"),
        ("F001", "ConfigMap/held"),
        ("S001", pinned[0].as_str()),
        ("S001", pinned[1].as_str()),
        ("L001", "Service/front"),
    ]
    .iter()
    .map(|(c, o)| (c.to_string(), o.to_string()))
    .collect();
    assert_eq!(findings(&live), want, "live:\n{live:#}");
    // The wait outside the window is among the claim's causes.
    let claim = &live["findings"][1];
    assert!(
        claim["details"]["causes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["reason"] == "ExternalProvisioning"),
        "{claim:#}"
    );

    for (name, doc) in [("--db", &recorded), ("--store", &stored)] {
        assert_eq!(
            doc["at"].as_str().map(|a| &a[..19]),
            Some(&at[..19]),
            "{name}: the moment"
        );
        let mut differ = Vec::new();
        differences(&live["findings"], &doc["findings"], "", &mut differ);
        assert!(
            differ.is_empty(),
            "{name} differs from the live check (live ≠ {name}):\n{}",
            differ.join("\n")
        );
        assert_eq!(doc["summary"], live["summary"], "{name}: the summary");
    }

    // The timelines of the incidents, from the file and from the store.
    for target in ["deploy/pinned", "pvc/data", "service/front"] {
        let args = [
            "timeline", target, "-n", &ns.name, "--until", &at, "-o", "json",
        ];
        let file = diag_ch(&db)
            .args(args)
            .args(["--db", &db_arg])
            .output()
            .unwrap();
        let store = diag_ch(&db)
            .env_remove("KUBECTL_DIAG_DB")
            .args(args)
            .args(["--store", &url])
            .output()
            .unwrap();
        assert!(
            file.status.success(),
            "{target}: {}",
            String::from_utf8_lossy(&file.stderr)
        );
        assert!(!file.stdout.is_empty(), "{target}: printed nothing");
        assert_eq!(
            String::from_utf8_lossy(&file.stdout),
            String::from_utf8_lossy(&store.stdout),
            "{target}: the store's timeline differs from the file's\n{}",
            String::from_utf8_lossy(&store.stderr)
        );
    }
}
