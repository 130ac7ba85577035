//! `kubectl diag check` against the real cluster: one scenario per check
//! (tests/scenarios), silence on a healthy namespace, and `--at` on a
//! recording finding what was true then and is not now.

use crate::support;

use std::process::{Output, Stdio};
use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Pod};
use kube::Api;
use kube::api::{DeleteParams, DynamicObject, Patch, PatchParams, PostParams};
use serde_json::{Value, json};
use support::{
    Background, TestNamespace, apply_scenario, diag, viewer_kubeconfig, wait_available, wait_for,
    wait_until, widget_crd,
};

fn check(db: &std::path::Path, args: &[&str]) -> (Output, Value) {
    let out = diag(db)
        .arg("check")
        .args(args)
        .args(["-o", "json"])
        .output()
        .unwrap();
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "check {args:?}: {e}\nstdout: {}\nstderr: {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out, doc)
}

/// `check … -o json` while the recording may not hold the cluster yet: None until it does.
fn check_soon(db: &str, args: &[&str]) -> Option<Value> {
    let out = diag(std::path::Path::new(db))
        .arg("check")
        .args(args)
        .args(["-o", "json"])
        .output()
        .unwrap();
    serde_json::from_slice(&out.stdout).ok()
}

fn findings<'a>(doc: &'a Value, code: &str) -> Vec<&'a Value> {
    doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == code)
        .collect()
}

#[tokio::test]
async fn finalizers_finds_a_custom_resource_nobody_finalizes_and_its_stuck_namespace() {
    let ns = TestNamespace::new("chk-fin").await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("unused.db");
    let ar = widget_crd(&ns.client).await;
    apply_scenario(&ns.client, &ns.name, "stuck-finalizer.yaml").await;
    let namespaces: Api<Namespace> = Api::all(ns.client.clone());
    namespaces
        .delete(&ns.name, &DeleteParams::default())
        .await
        .unwrap();
    wait_until(
        Duration::from_secs(60),
        "the namespace to report its finalizers",
        || async {
            namespaces
                .get(&ns.name)
                .await
                .unwrap()
                .status
                .unwrap_or_default()
                .conditions
                .unwrap_or_default()
                .iter()
                .any(|c| c.type_ == "NamespaceFinalizersRemaining" && c.status == "True")
        },
    )
    .await;
    // Past --stuck-after: deletion timestamps have whole seconds.
    tokio::time::sleep(Duration::from_secs(2)).await;

    let (out, doc) = check(&db, &["finalizers", "-n", &ns.name, "--stuck-after", "1s"]);
    assert_eq!(out.status.code(), Some(1), "findings exit 1: {doc:#}");
    let widget = findings(&doc, "F001");
    assert_eq!(widget.len(), 1, "{doc:#}");
    assert_eq!(widget[0]["check"], "finalizers");
    assert_eq!(widget[0]["object"]["kind"], "Widget");
    assert_eq!(widget[0]["object"]["apiVersion"], "example.com/v1");
    assert_eq!(
        widget[0]["details"]["finalizers"][0]["finalizer"],
        "example.com/cleanup"
    );
    assert_eq!(
        widget[0]["details"]["finalizers"][0]["expected_remover"],
        "no controller found for example.com"
    );
    let namespace = findings(&doc, "F002");
    assert_eq!(namespace.len(), 1, "{doc:#}");
    assert_eq!(namespace[0]["severity"], "error");
    let summary = namespace[0]["summary"].as_str().unwrap();
    assert!(
        summary.contains(
            "Widget/stuck (example.com/cleanup; expected remover: no controller found for example.com)"
        ),
        "{summary}"
    );
    let conditions: Vec<&str> = namespace[0]["details"]["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["type"].as_str().unwrap())
        .collect();
    assert!(
        conditions.contains(&"NamespaceFinalizersRemaining"),
        "{conditions:?}"
    );
    assert!(namespace[0]["since"].is_string());

    // The operator's job, done by hand: the namespace can go.
    let widgets: Api<DynamicObject> = Api::namespaced_with(ns.client.clone(), &ns.name, &ar);
    widgets
        .patch(
            "stuck",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"finalizers": null}})),
        )
        .await
        .unwrap();
}

#[tokio::test]
async fn hotloop_names_two_managers_fighting_over_one_label() {
    let ns = TestNamespace::new("chk-hot").await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("unused.db");
    let maps: Api<ConfigMap> = ns.api();
    maps.create(
        &PostParams::default(),
        // NB: with data: an object whose fields nobody owns gets no managedFields,
        // and then the apiserver does not start tracking writers on later updates.
        &serde_json::from_value(json!({"metadata": {"name": "contested"}, "data": {"k": "v"}}))
            .unwrap(),
    )
    .await
    .unwrap();
    let fighters = tokio::spawn({
        let maps = maps.clone();
        async move {
            for i in 0..120 {
                let (manager, value) = if i % 2 == 0 {
                    ("fighter-a", "a")
                } else {
                    ("fighter-b", "b")
                };
                let params = PatchParams {
                    field_manager: Some(manager.into()),
                    ..PatchParams::default()
                };
                let _ = maps
                    .patch(
                        "contested",
                        &params,
                        &Patch::Merge(json!({"metadata": {"labels": {"owner": value}}})),
                    )
                    .await;
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    });
    tokio::time::sleep(Duration::from_secs(1)).await;
    let (out, doc) = tokio::task::spawn_blocking(move || {
        check(&db, &["hotloop", "-n", &ns.name, "--sample", "6s"])
    })
    .await
    .unwrap();
    fighters.abort();
    assert_eq!(out.status.code(), Some(1), "{doc:#}");
    let hot = findings(&doc, "H002");
    assert_eq!(hot.len(), 1, "{doc:#}");
    assert_eq!(hot[0]["object"]["name"], "contested");
    let fight = hot[0]["details"]["fight"]
        .as_str()
        .unwrap_or_else(|| panic!("{doc:#}"));
    assert!(
        fight.contains("fighter-a") && fight.contains("fighter-b"),
        "{fight}"
    );
    // What they fight over: the field that keeps changing hands.
    assert!(fight.ends_with(" over metadata.labels.owner"), "{fight}");
    assert!(
        hot[0]["details"]["rate_per_minute"].as_f64().unwrap() > 100.0,
        "{doc:#}"
    );
    assert_eq!(hot[0]["details"]["generation_changes"], 0);
}

#[tokio::test]
async fn generation_finds_a_custom_resource_whose_status_stays_behind() {
    let ns = TestNamespace::new("chk-gen").await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("unused.db");
    let ar = widget_crd(&ns.client).await;
    apply_scenario(&ns.client, &ns.name, "generation-lag.yaml").await;
    let widgets: Api<DynamicObject> = Api::namespaced_with(ns.client.clone(), &ns.name, &ar);
    widgets
        .patch_status(
            "lagging",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"observedGeneration": 1, "conditions": [{
                "type": "Ready", "status": "True", "reason": "Reconciled", "message": "",
                "observedGeneration": 1, "lastTransitionTime": "2026-11-29T03:00:00Z"}]}})),
        )
        .await
        .unwrap();
    widgets
        .patch(
            "lagging",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"size": 2}})),
        )
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_secs(2)).await;

    let (out, doc) = check(&db, &["generation", "-n", &ns.name, "--lag-after", "1s"]);
    assert_eq!(out.status.code(), Some(1), "{doc:#}");
    let status = findings(&doc, "G001");
    assert_eq!(status.len(), 1, "{doc:#}");
    assert_eq!(status[0]["object"]["name"], "lagging");
    assert_eq!(status[0]["details"]["generation"], 2);
    assert_eq!(status[0]["details"]["observed_generation"], 1);
    assert_eq!(
        status[0]["details"]["expected_observer"],
        "no controller found for example.com"
    );
    assert_eq!(
        findings(&doc, "G002").len(),
        1,
        "the Ready condition is behind too: {doc:#}"
    );
}

async fn unschedulable(ns: &TestNamespace) {
    apply_scenario(&ns.client, &ns.name, "unschedulable.yaml").await;
    let pods: Api<Pod> = ns.api();
    for name in ["too-big", "wants-ssd"] {
        wait_until(
            Duration::from_secs(60),
            "the scheduler to give up on the Pod",
            || async {
                pods.get(name)
                    .await
                    .unwrap()
                    .status
                    .unwrap_or_default()
                    .conditions
                    .unwrap_or_default()
                    .iter()
                    .any(|c| {
                        c.type_ == "PodScheduled" && c.reason.as_deref() == Some("Unschedulable")
                    })
            },
        )
        .await;
    }
}

fn reason<'a>(doc: &'a Value, contains: &str) -> &'a Value {
    doc["summary"]["reasons"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["reason"].as_str().unwrap().contains(contains))
        .unwrap_or_else(|| panic!("no reason containing {contains:?}: {doc:#}"))
}

#[tokio::test]
async fn scheduling_parses_every_pods_reasons_and_aggregates_them() {
    let ns = TestNamespace::new("chk-sched").await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("unused.db");
    unschedulable(&ns).await;

    let (out, doc) = check(&db, &["scheduling", "-n", &ns.name]);
    assert_eq!(out.status.code(), Some(1), "{doc:#}");
    let pods = findings(&doc, "S001");
    assert_eq!(pods.len(), 2, "{doc:#}");
    let big = pods
        .iter()
        .find(|f| f["object"]["name"] == "too-big")
        .unwrap();
    assert_eq!(big["details"]["total_nodes"], 3);
    assert!(
        big["details"]["message"]
            .as_str()
            .unwrap()
            .starts_with("0/3 nodes are available")
    );
    assert!(big["details"]["preemption"]["total_nodes"] == 3, "{big:#}");
    assert_eq!(reason(&doc, "Insufficient cpu")["pods"], 1);
    assert_eq!(reason(&doc, "node affinity/selector")["pods"], 1);
    assert_eq!(reason(&doc, "taint")["pods"], 2);
    assert_eq!(reason(&doc, "taint")["nodes"], 1);
    // The causes, named from the Nodes themselves.
    let ssd = pods
        .iter()
        .find(|f| f["object"]["name"] == "wants-ssd")
        .unwrap();
    let summary = ssd["summary"].as_str().unwrap();
    assert!(
        summary.contains("nodeSelector disktype=ssd: 3 of 3 nodes lack it"),
        "{summary}"
    );
    assert!(
        summary.contains("taint dedicated=batch:NoSchedule on 1 node (kwok-large-tainted)"),
        "{summary}"
    );
    // Requested against the most free on any Node. Under -n the Pods of every
    // namespace are counted all the same (the admin may list them), so the
    // sentence does not say that other namespaces were left out. Other tests'
    // Pods may run meanwhile: the free amount is at most the largest Node's 16.
    let summary = big["summary"].as_str().unwrap();
    assert!(
        summary
            .contains("Insufficient cpu: the Pod requests 100 cpu; the most free on any node is "),
        "{summary}"
    );
    assert!(!summary.contains("not counted"), "{summary}");
    let cause = big["details"]["causes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["kind"] == "resources")
        .unwrap();
    assert_eq!(cause["resource"], "cpu");
    assert_eq!(cause["requested"], 100_000);
    assert!(cause["partial"].is_null(), "{cause}");
    let free = cause["most_free"].as_i64().unwrap();
    assert!((0..=16_000).contains(&free), "{cause}");
    assert!(!cause["nodes"].as_array().unwrap().is_empty(), "{cause}");
}

#[tokio::test]
async fn a_healthy_namespace_gets_no_finding_and_exit_zero() {
    let ns = TestNamespace::new("chk-ok").await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("unused.db");
    let deployments: Api<Deployment> = ns.api();
    deployments
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({
                "metadata": {"name": "fine"},
                "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "fine"}},
                    "template": {"metadata": {"labels": {"app": "fine"}},
                        "spec": {"containers": [{"name": "c", "image": "fine:1"}]}}}
            }))
            .unwrap(),
        )
        .await
        .unwrap();
    wait_available(&deployments, "fine", 2).await;
    let (out, doc) = check(
        &db,
        &[
            "-n",
            &ns.name,
            "--sample",
            "3s",
            "--stuck-after",
            "1s",
            "--lag-after",
            "1s",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{doc:#}");
    assert_eq!(doc["findings"], json!([]));
    let table = diag(&db)
        .args(["check", "scheduling", "-n", &ns.name])
        .output()
        .unwrap();
    assert_eq!(table.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&table.stdout).contains("No findings."));
}

#[tokio::test]
async fn at_on_a_recording_finds_what_was_true_then_and_is_not_now() {
    let ns = TestNamespace::new("chk-at").await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("diag.db");
    let recorder = Background::new(
        diag(&db)
            .args(["record", "--quiet", "-n", &ns.name])
            .stdout(Stdio::null())
            .spawn()
            .unwrap(),
    );
    unschedulable(&ns).await;
    let db_path = db.to_str().unwrap().to_string();
    // Wait until the recording itself holds both Pods as unschedulable.
    let then = wait_for(
        Duration::from_secs(30),
        "the recording to hold the failures",
        || {
            let db_path = db_path.clone();
            async move {
                let doc = check_soon(&db_path, &["scheduling", "--db", &db_path])?;
                (findings(&doc, "S001").len() == 2).then(|| doc["at"].as_str().unwrap().to_string())
            }
        },
    )
    .await;
    let pods: Api<Pod> = ns.api();
    for name in ["too-big", "wants-ssd"] {
        pods.delete(name, &DeleteParams::default().grace_period(0))
            .await
            .unwrap();
    }
    wait_until(
        Duration::from_secs(30),
        "the recording to see the Pods go",
        || {
            let db_path = db_path.clone();
            async move {
                check_soon(&db_path, &["scheduling", "--db", &db_path])
                    .is_some_and(|doc| findings(&doc, "S001").is_empty())
            }
        },
    )
    .await;
    assert!(recorder.terminate().success());

    let (out, now) = check(&db, &["scheduling", "--db", &db_path]);
    assert_eq!(out.status.code(), Some(0), "{now:#}");
    assert_eq!(now["source"], "recording");
    let (out, past) = check(&db, &["scheduling", "--db", &db_path, "--at", &then]);
    assert_eq!(out.status.code(), Some(1), "{past:#}");
    assert_eq!(findings(&past, "S001").len(), 2, "{past:#}");
    assert_eq!(reason(&past, "Insufficient cpu")["pods"], 1);
    // The recording's own Nodes and Pods explain it; recorded with -n, it
    // says that other namespaces' Pods were not counted.
    let big = findings(&past, "S001")
        .into_iter()
        .find(|f| f["object"]["name"] == "too-big")
        .unwrap();
    let summary = big["summary"].as_str().unwrap();
    assert!(
        summary
            .contains("Insufficient cpu: the Pod requests 100 cpu; the most free on any node is ")
            && summary.ends_with("(Pods of other namespaces not counted)"),
        "{summary}"
    );
}

/// Live `check` listed Secrets (and ConfigMaps) in full, their data in every
/// response. They are now listed and watched as metadata only
/// (`k8s::snapshot::tests::secrets_are_listed_and_watched_as_metadata_only`
/// shows the request); what the checks need of them is metadata, so a Secret
/// and a ConfigMap held by a finalizer are still found, and `--sample` watches
/// them without error.
#[tokio::test]
async fn a_live_check_over_secrets_reads_their_metadata_only_and_still_finds_them() {
    use k8s_openapi::api::core::v1::Secret;
    let ns = TestNamespace::new("chk-secret").await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("unused.db");
    let secrets: Api<Secret> = ns.api();
    let configmaps: Api<ConfigMap> = ns.api();
    let held = json!({"name": "held", "finalizers": ["example.com/hold"]});
    secrets
        .create(
            &PostParams::default(),
            &serde_json::from_value(
                json!({"metadata": held, "stringData": {"password": "hunter2-do-not-print"}}),
            )
            .unwrap(),
        )
        .await
        .unwrap();
    configmaps
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({"metadata": held, "data": {"k": "v"}})).unwrap(),
        )
        .await
        .unwrap();
    secrets
        .delete("held", &DeleteParams::default())
        .await
        .unwrap();
    configmaps
        .delete("held", &DeleteParams::default())
        .await
        .unwrap();
    // Past --stuck-after: deletion timestamps have whole seconds.
    tokio::time::sleep(Duration::from_secs(2)).await;

    let (out, doc) = check(
        &db,
        &[
            "finalizers",
            "hotloop",
            "-n",
            &ns.name,
            "--stuck-after",
            "1s",
            "--sample",
            "2s",
        ],
    );
    let f001 = findings(&doc, "F001");
    for kind in ["Secret", "ConfigMap"] {
        assert!(
            f001.iter()
                .any(|f| f["object"]["kind"] == kind && f["object"]["name"] == "held"),
            "no F001 for the {kind}: {doc:#}"
        );
    }
    assert_eq!(out.status.code(), Some(1), "{doc:#}");
    assert!(
        doc["notes"].as_array().is_none_or(|n| n
            .iter()
            .all(|n| !n.as_str().unwrap_or_default().contains("secrets"))),
        "{doc:#}"
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!text.contains("hunter2"), "{text}");

    let release = Patch::Merge(json!({"metadata": {"finalizers": null}}));
    let _ = secrets
        .patch("held", &PatchParams::default(), &release)
        .await;
    let _ = configmaps
        .patch("held", &PatchParams::default(), &release)
        .await;
}

/// A user who may list nothing got "No findings." and exit 0 over 66 notes:
/// nothing examined is not health. Now it is an error naming what was forbidden.
#[tokio::test]
async fn a_kubeconfig_that_may_list_nothing_is_an_error_not_health() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("unused.db");
    let out = diag(&db)
        .env("KUBECONFIG", viewer_kubeconfig())
        .args(["check", "--sample", "1s"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(
            "check controllers, progress, finalizers, hotloop, generation, scheduling, pods, relations examined nothing"
        ),
        "{err}"
    );
    assert!(err.contains("were forbidden: "), "{err}");
    for forbidden in ["namespaces", "pods", "events", "deployments.apps"] {
        assert!(
            err.contains(&format!(" {forbidden},")) || err.contains(&format!(" {forbidden};")),
            "{forbidden}: {err}"
        );
    }
    assert!(out.stdout.is_empty(), "no report over nothing");
    assert!(!String::from_utf8_lossy(&out.stdout).contains("No findings"));
}
