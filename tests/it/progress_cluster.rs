//! `check progress` against the real cluster (issue 28): workloads that do
//! not reach what they ask for, each for another cause the cluster states one
//! level down. For each: the cause, with the object that states it, on the
//! first 25 lines of `check` live, of `check --db`/`--at` on a recording made
//! while it happened, and of the workload's `timeline`.

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

fn a_deployment(name: &str, replicas: u32, pod_spec: &str, container: &str) -> String {
    format!(
        r#"apiVersion: apps/v1
kind: Deployment
metadata: {{name: {name}}}
spec:
  replicas: {replicas}
  selector: {{matchLabels: {{app: {name}}}}}
  template:
    metadata: {{labels: {{app: {name}}}}}
    spec:
      {pod_spec}
      containers: [{{name: main, image: "{name}:1" {container}}}]
"#
    )
}

/// Waits until `check progress` live finds what `expected` says, then reads
/// the first screens of `check` live, `check --db`, `check --at` and the
/// workload's `timeline`, each of which must hold every expected text.
async fn stalled(ns: &TestNamespace, db: &Path, workload: &str, expected: &[&str]) {
    let live = ["check", "progress", "-n", &ns.name, "--stuck-after", "1s"];
    let expected_owned: Vec<String> = expected.iter().map(|s| s.to_string()).collect();
    let db_path = db.to_path_buf();
    wait_until(
        Duration::from_secs(90),
        &format!("check progress to name {expected:?}"),
        || {
            let (db, expected) = (db_path.clone(), expected_owned.clone());
            async move {
                let screen = first_screen(&db, &live);
                expected.iter().all(|e| screen.contains(e.as_str()))
            }
        },
    )
    .await;
    let db_arg = db.to_str().unwrap();
    let at = || chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    let screens = [
        (
            "check --db",
            vec![
                "--db",
                db_arg,
                "check",
                "-n",
                &ns.name,
                "--stuck-after",
                "1s",
            ],
        ),
        (
            "check --at",
            vec![
                "--db",
                db_arg,
                "check",
                "progress",
                "-n",
                &ns.name,
                "--stuck-after",
                "1s",
                "--at",
                "NOW",
            ],
        ),
        (
            "timeline",
            vec!["--db", db_arg, "timeline", workload, "-n", &ns.name],
        ),
    ];
    for (what, args) in screens {
        // The recorder commits within a second; the Warning may be a moment behind the live one.
        let mut screen = String::new();
        for _ in 0..40 {
            // `--at` a moment that the recording has reached.
            let now = at();
            let args: Vec<&str> = args
                .iter()
                .map(|a| if *a == "NOW" { now.as_str() } else { a })
                .collect();
            screen = first_screen(db, &args);
            if expected.iter().all(|e| screen.contains(e)) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
        for e in expected {
            assert!(
                screen.contains(e),
                "{what}: {e:?} is not on the first screen:\n{screen}"
            );
        }
    }
}

async fn recording(prefix: &str) -> (TestNamespace, tempfile::TempDir, support::Background) {
    let ns = TestNamespace::new(prefix).await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("diag.db");
    let recorder = start_recorder(&db, &ns.name, &[], &format!("pods/{}", ns.name)).await;
    (ns, dir, recorder)
}

/// Issue 28's first example, and the regression named after it: the timeline
/// said "ReplicaSet … ready 2/2 after 0s" of a Deployment scaled from 2 to 5
/// that a ResourceQuota held at 2.
#[tokio::test]
async fn a_quota_blocking_a_scale_up_is_named_and_the_rollout_is_not_ready_2_of_2() {
    let (ns, dir, _recorder) = recording("prog-quota").await;
    let db = dir.path().join("diag.db");
    apply(
        &ns.name,
        "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: pods-cap}\nspec: {hard: {pods: \"2\"}}\n",
    );
    // NB: until the quota controller has written its usage, admission refuses every Pod.
    kubectl(&[
        "wait",
        "-n",
        &ns.name,
        "--for=jsonpath={.status.hard.pods}=2",
        "--timeout=30s",
        "resourcequota/pods-cap",
    ]);
    apply(&ns.name, &a_deployment("search", 2, "", ""));
    let deployments: kube::Api<k8s_openapi::api::apps::v1::Deployment> = ns.api();
    support::wait_available(&deployments, "search", 2).await;
    kubectl(&["scale", "deploy/search", "-n", &ns.name, "--replicas=5"]);
    stalled(
        &ns,
        &db,
        "deploy/search",
        &[
            "Deployment/search",
            "2 of 5 ready",
            "3 Pod(s) not created: exceeded quota pods-cap (pods: used 2, hard 2, requested 1)",
        ],
    )
    .await;
    let timeline = first_screen(
        &db,
        &[
            "--db",
            db.to_str().unwrap(),
            "timeline",
            "deploy/search",
            "-n",
            &ns.name,
        ],
    );
    let rollout = timeline
        .lines()
        .find(|l| l.starts_with("Rollout:"))
        .unwrap_or_else(|| panic!("no Rollout line:\n{timeline}"));
    assert!(
        rollout.contains("NOT ready: 2 of 5 ready") && rollout.contains("last fully ready"),
        "{rollout}"
    );
    assert!(
        timeline.contains("Why:     3 Pod(s) not created: exceeded quota pods-cap"),
        "{timeline}"
    );
    // The FailedCreate storm is the finding's evidence, not an info-level H003 of its own.
    let check = first_screen(
        &db,
        &["--db", db.to_str().unwrap(), "check", "-n", &ns.name],
    );
    assert!(!check.contains("H003"), "{check}");
}

#[tokio::test]
async fn a_namespace_enforcing_podsecurity_restricted_refusing_the_pods_is_named() {
    let (ns, dir, _recorder) = recording("prog-psa").await;
    kubectl(&[
        "label",
        "ns",
        &ns.name,
        "pod-security.kubernetes.io/enforce=restricted",
    ]);
    apply(&ns.name, &a_deployment("web", 2, "", ""));
    stalled(
        &ns,
        &dir.path().join("diag.db"),
        "deploy/web",
        &[
            "0 of 2 ready",
            "2 Pod(s) not created: PodSecurity \"restricted:latest\" forbids: allowPrivilegeEscalation != false, unrestricted capabilities, runAsNonRoot != true, seccompProfile",
        ],
    )
    .await;
}

#[tokio::test]
async fn a_limitrange_refusing_the_pods_is_quoted_with_its_bound() {
    let (ns, dir, _recorder) = recording("prog-limits").await;
    apply(
        &ns.name,
        "apiVersion: v1\nkind: LimitRange\nmetadata: {name: cpu-max}\nspec: {limits: [{type: Container, max: {cpu: 500m}}]}\n",
    );
    apply(
        &ns.name,
        &a_deployment("api", 2, "", r#", resources: {limits: {cpu: "1"}}"#),
    );
    stalled(
        &ns,
        &dir.path().join("diag.db"),
        "deploy/api",
        &[
            "0 of 2 ready",
            "LimitRange: maximum cpu usage per Container is 500m, but limit is 1",
        ],
    )
    .await;
}

#[tokio::test]
async fn a_deployment_naming_a_serviceaccount_that_does_not_exist_names_it() {
    let (ns, dir, _recorder) = recording("prog-sa").await;
    apply(
        &ns.name,
        &a_deployment("worker", 2, "serviceAccountName: worker-sa", ""),
    );
    stalled(
        &ns,
        &dir.path().join("diag.db"),
        "deploy/worker",
        &[
            "0 of 2 ready",
            &format!("ServiceAccount {}/worker-sa does not exist", ns.name),
        ],
    )
    .await;
}

#[tokio::test]
async fn a_statefulset_whose_claim_can_never_bind_names_the_claim() {
    let (ns, dir, _recorder) = recording("prog-pvc").await;
    apply(
        &ns.name,
        r#"apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  replicas: 1
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec: {containers: [{name: db, image: "db:1"}]}
  volumeClaimTemplates:
  - metadata: {name: data}
    spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
"#,
    );
    stalled(
        &ns,
        &dir.path().join("diag.db"),
        "statefulset/db",
        &[
            "StatefulSet/db",
            "0 of 1 ready",
            "FailedBinding",
            "PersistentVolumeClaim/data-db-0: no persistent volumes available for this claim and no storage class is set",
        ],
    )
    .await;
}

/// The Job's Pods fail through the KWOK stage `pod-fail` (tests/cluster/kwok/stages.yaml).
#[tokio::test]
async fn a_job_failing_past_its_backoff_limit_is_an_error_with_its_pods_exit() {
    let (ns, dir, _recorder) = recording("prog-job").await;
    apply(
        &ns.name,
        r#"apiVersion: batch/v1
kind: Job
metadata: {name: migrate}
spec:
  backoffLimit: 1
  template:
    metadata: {labels: {diag.test/fail: "true"}}
    spec: {restartPolicy: Never, containers: [{name: migrate, image: "migrate:1"}]}
"#,
    );
    stalled(
        &ns,
        &dir.path().join("diag.db"),
        "job/migrate",
        &[
            "R002",
            "Job/migrate",
            "failed (BackoffLimitExceeded): Job has reached the specified backoff limit",
            "container migrate terminated (Error, exit code 1)",
        ],
    )
    .await;
}

/// A Widget (no controller) whose status an operator would write: `status`
/// merged as given, with a Ready=False condition that went bad 20 minutes ago.
async fn a_widget_not_ready(
    prefix: &str,
    name: &str,
    mut status: serde_json::Value,
    expected: &[&str],
) {
    let (ns, dir, _recorder) = recording(prefix).await;
    let ar = support::widget_crd(&ns.client).await;
    let widgets: kube::Api<kube::api::DynamicObject> =
        kube::Api::namespaced_with(ns.client.clone(), &ns.name, &ar);
    let widget: kube::api::DynamicObject = serde_json::from_value(serde_json::json!({
        "apiVersion": "example.com/v1", "kind": "Widget",
        "metadata": {"name": name}, "spec": {"size": 1}
    }))
    .unwrap();
    widgets
        .create(&kube::api::PostParams::default(), &widget)
        .await
        .unwrap();
    let since = (chrono::Utc::now() - chrono::Duration::minutes(20))
        .to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    status["conditions"][0]["lastTransitionTime"] = serde_json::Value::String(since);
    widgets
        .patch_status(
            name,
            &kube::api::PatchParams::default(),
            &kube::api::Patch::Merge(serde_json::json!({ "status": status })),
        )
        .await
        .unwrap();
    stalled(
        &ns,
        &dir.path().join("diag.db"),
        &format!("widget/{name}"),
        expected,
    )
    .await;
}

#[tokio::test]
async fn a_custom_resource_not_ready_for_long_quotes_its_condition() {
    a_widget_not_ready(
        "prog-cr",
        "orders-db",
        serde_json::json!({"conditions": [{
            "type": "Ready", "status": "False", "reason": "BackupStoreUnreachable",
            "message": "cannot reach s3://backups: 403 Forbidden"
        }]}),
        &[
            "R003",
            "Widget/orders-db",
            "Ready=False for 20m — BackupStoreUnreachable: cannot reach s3://backups: 403 Forbidden",
        ],
    )
    .await;
}

/// Regression: a status with a field of another shape than a Deployment's
/// (`ready: false`, `replicas: "0/1"`, as many operators write) made the
/// whole status undecodable, its conditions with it: "No findings".
#[tokio::test]
async fn a_custom_resource_whose_status_has_a_bool_ready_still_quotes_its_condition() {
    a_widget_not_ready(
        "prog-crbool",
        "ledger-db",
        serde_json::json!({
            "ready": false, "replicas": "0/1",
            "conditions": [{
                "type": "Ready", "status": "False", "reason": "DiskFull",
                "message": "volume data-ledger-0 is full"
            }]
        }),
        &[
            "R003",
            "Widget/ledger-db",
            "Ready=False for 20m — DiskFull: volume data-ledger-0 is full",
        ],
    )
    .await;
}

/// R004 from a recording as from the live cluster: a CronJob has neither
/// replicas nor conditions, and a quota refuses each of its Jobs.
#[tokio::test]
async fn a_cronjob_whose_jobs_a_quota_refuses_is_r004_live_recorded_and_in_its_timeline() {
    let (ns, dir, _recorder) = recording("prog-cron").await;
    apply(
        &ns.name,
        "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: no-jobs}\nspec: {hard: {count/jobs.batch: \"0\"}}\n",
    );
    kubectl(&[
        "wait",
        "-n",
        &ns.name,
        "--for=jsonpath={.status.hard.count/jobs\\.batch}=0",
        "--timeout=30s",
        "resourcequota/no-jobs",
    ]);
    apply(
        &ns.name,
        r#"apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly}
spec:
  schedule: "* * * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: Never
          containers: [{name: report, image: "report:1"}]
"#,
    );
    stalled(
        &ns,
        &dir.path().join("diag.db"),
        "cronjob/nightly",
        &[
            "CronJob/nightly",
            "FailedCreate ×",
            "not created: exceeded quota no-jobs (count/jobs.batch: used 0, hard 0, requested 1)",
        ],
    )
    .await;
}

/// Issue 47: a suspended CronJob was "No findings" (k8sgpt flags it). It is
/// an R002 at severity info, live and from the recording; one that runs is
/// no finding, and neither is said to have "no cause stated".
#[tokio::test]
async fn a_suspended_cronjob_is_named_as_information_and_a_running_one_is_not() {
    let (ns, dir, _recorder) = recording("prog-cron-suspended").await;
    let cron = |name: &str, suspend: bool| {
        format!(
            r#"apiVersion: batch/v1
kind: CronJob
metadata: {{name: {name}}}
spec:
  schedule: "0 3 * * *"
  suspend: {suspend}
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: Never
          containers: [{{name: report, image: "report:1"}}]
"#
        )
    };
    apply(&ns.name, &cron("nightly", true));
    apply(&ns.name, &cron("hourly", false));
    let db = dir.path().join("diag.db");
    let said = "CronJob/nightly";
    let why = "suspended (spec.suspend is true): it creates no Job until resumed";
    let live = ["check", "-n", &ns.name, "--stuck-after", "1s"];
    wait_until(
        Duration::from_secs(60),
        "check to name the suspended CronJob",
        || {
            let db = db.clone();
            async move {
                let screen = first_screen(&db, &live);
                screen.contains(said) && screen.contains(why)
            }
        },
    )
    .await;
    let db_arg = db.to_str().unwrap();
    let recorded = [
        "--db",
        db_arg,
        "check",
        "-n",
        &ns.name,
        "--stuck-after",
        "1s",
    ];
    let mut screen = String::new();
    for _ in 0..40 {
        screen = first_screen(&db, &recorded);
        if screen.contains(why) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    for (what, screen) in [("live", first_screen(&db, &live)), ("--db", screen)] {
        assert!(
            screen.contains(said) && screen.contains(why) && screen.contains("R002"),
            "{what}:\n{screen}"
        );
        assert!(
            !screen.contains("CronJob/hourly") && !screen.contains("no cause stated"),
            "{what}:\n{screen}"
        );
    }
    let json = diag(&db)
        .args(["check", "-n", &ns.name, "--stuck-after", "1s", "-o", "json"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let found: Vec<&serde_json::Value> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["object"]["kind"] == "CronJob")
        .collect();
    assert_eq!(found.len(), 1, "{v}");
    assert_eq!(found[0]["severity"], "info", "{v}");
}

/// Issue 47: broken end states waited five minutes (`--stuck-after`) while a
/// peer names them at once. With the default `--stuck-after`, within 30 s of
/// the incident: a Job past its backoff limit (R002), a Deployment whose
/// image never pulls (P001 ImagePullBackOff, and the workload it holds back),
/// a bare Pod that failed (P002), each on the first screen of `check -n`.
#[tokio::test]
async fn broken_end_states_are_named_at_once_without_stuck_after() {
    let ns = TestNamespace::new("prog-at-once").await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("unused.db");
    apply(
        &ns.name,
        r#"apiVersion: batch/v1
kind: Job
metadata: {name: migrate}
spec:
  backoffLimit: 0
  template:
    metadata: {labels: {diag.test/fail: "true"}}
    spec: {restartPolicy: Never, containers: [{name: migrate, image: "migrate:1"}]}
---
apiVersion: v1
kind: Pod
metadata: {name: once, labels: {diag.test/fail: "true"}}
spec: {restartPolicy: Never, containers: [{name: once, image: "once:1"}]}
"#,
    );
    apply(
        &ns.name,
        &a_deployment("pull", 1, "", "").replace(
            "metadata: {labels: {app: pull}}",
            "metadata: {labels: {app: pull, diag.test/never-ready: \"true\"}}",
        ),
    );
    // NB: `check` alone samples hot loops for 30 s (--sample) before it prints.
    let args = ["check", "progress", "pods", "-n", ns.name.as_str()];
    let expected = [
        "R002",
        "Job/migrate",
        "P002",
        "Pod/once",
        "container once exited 1 (Error) (a bare Pod",
        "ImagePullBackOff",
    ];
    let db_path = db.clone();
    wait_until(
        Duration::from_secs(30),
        &format!("check (default --stuck-after) to name {expected:?} at once"),
        || {
            let db = db_path.clone();
            async move {
                let screen = first_screen(&db, &args);
                expected.iter().all(|e| screen.contains(e))
            }
        },
    )
    .await;
    let screen = first_screen(&db, &args);
    // No finding says it knows no cause.
    assert!(!screen.contains("no cause stated"), "{screen}");
}

/// Issue 47, k8sgpt's "the termination reason is …" for a Pod that still runs: the app container
/// of a `restartPolicy: Never` Pod exits 1 beside a sidecar that keeps running. Nothing starts it
/// again and the Pod stays Running for good (a Job waiting on such a Pod never ends), so P003 names
/// it at once, with the default `--stuck-after`: the container, its exit, the policy and what still
/// runs, live and from the recording; the Pod's timeline shows the termination, recorded and
/// reconstructed, and a Job's timeline says why it does not end. No P001 or P002: no container
/// waits, no Pod Failed.
#[tokio::test]
async fn a_container_that_exited_for_good_beside_a_sidecar_is_named_at_once() {
    let (ns, dir, _recorder) = recording("prog-exited").await;
    let db = dir.path().join("diag.db");
    let none = dir.path().join("none.db");
    apply(
        &ns.name,
        r#"apiVersion: v1
kind: Pod
metadata: {name: report, labels: {diag.test/first-fails: "true"}}
spec:
  restartPolicy: Never
  containers: [{name: report, image: "report:1"}, {name: proxy, image: "proxy:1"}]
---
apiVersion: batch/v1
kind: Job
metadata: {name: nightly}
spec:
  template:
    metadata: {labels: {diag.test/first-fails: "true"}}
    spec:
      restartPolicy: Never
      containers: [{name: export, image: "export:1"}, {name: proxy, image: "proxy:1"}]
"#,
    );
    let db_arg = db.to_str().unwrap();
    let expected = [
        "P003",
        "Pod/report",
        "container report exited 1 (Error) and will not be started again (restartPolicy Never)",
        "still running: proxy",
        "container export exited 1 (Error) and will not be started again (restartPolicy Never); still running: proxy; Job/nightly counts it only once the Pod ends",
    ];
    let screens: [(&str, &Path, Vec<&str>); 2] = [
        ("live", &none, vec!["check", "pods", "-n", &ns.name]),
        (
            "--db",
            &db,
            vec!["--db", db_arg, "check", "pods", "-n", &ns.name],
        ),
    ];
    for (what, data, args) in &screens {
        let data = data.to_path_buf();
        let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        wait_until(
            Duration::from_secs(30),
            &format!("{what} check to name {expected:?} at once"),
            || {
                let data = data.clone();
                let args = args.clone();
                async move {
                    let args: Vec<&str> = args.iter().map(String::as_str).collect();
                    let screen = first_screen(&data, &args);
                    expected.iter().all(|e| screen.contains(e))
                }
            },
        )
        .await;
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let screen = first_screen(&data, &args);
        for wrong in ["P001", "P002"] {
            assert!(!screen.contains(wrong), "{what}: {wrong} here:\n{screen}");
        }
    }
    let recorded = first_screen(
        &db,
        &["--db", db_arg, "timeline", "pod/report", "-n", &ns.name],
    );
    // NB: with no recording at all (none at the default path either), `timeline` reconstructs.
    let (code, reconstructed, stderr) =
        support::diag_no_recording(dir.path(), &["timeline", "pod/report", "-n", &ns.name]);
    assert_eq!(code, Some(0), "{stderr}\n{reconstructed}");
    let reconstructed = reconstructed
        .lines()
        .take(25)
        .collect::<Vec<_>>()
        .join("\n");
    for (what, screen) in [("recorded", &recorded), ("reconstructed", &reconstructed)] {
        assert!(
            screen.contains("report") && screen.contains("terminated (Error, exit code 1)"),
            "{what} timeline:\n{screen}"
        );
    }
    // The Job's own timeline, reconstructed, says why it does not end.
    let (code, job, stderr) =
        support::diag_no_recording(dir.path(), &["timeline", "job/nightly", "-n", &ns.name]);
    assert_eq!(code, Some(0), "{stderr}\n{job}");
    let job = job.lines().take(25).collect::<Vec<_>>().join("\n");
    assert!(
        job.contains("Check:   warning P003 Pod/nightly-")
            && job.contains("export: terminated (Error, exit code 1)"),
        "Job timeline:\n{job}"
    );
}
