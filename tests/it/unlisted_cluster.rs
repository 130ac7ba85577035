//! Incidents no check was written for, against the real cluster with no
//! recording: the cause must still be on the first screen (25 lines) of
//! `check` at its defaults and of `timeline`, read from what the cluster
//! states (a controller's Warnings on any kind, a refusal's words, a Pod's
//! Ready condition, the Node a Pod names).

use crate::support;

use std::time::Duration;

use support::{TestNamespace, apply, kubectl, wait_until};

/// The first screen of `kubectl-diag ARGS` with no recording; `check` may exit 1.
fn first_screen(data: &std::path::Path, args: &[&str]) -> String {
    let (code, stdout, stderr) = support::diag_no_recording(data, args);
    assert!(matches!(code, Some(0 | 1)), "{args:?}: {stderr}\n{stdout}");
    stdout.lines().take(25).collect::<Vec<_>>().join("\n")
}

/// Waits until the first screen of `args` holds every text of `expected`.
async fn until_on_first_screen(data: &std::path::Path, args: &[&str], expected: &[&str]) {
    let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    let want: Vec<String> = expected.iter().map(|e| e.to_string()).collect();
    let data = data.to_path_buf();
    let mut last = String::new();
    let found = tokio::time::timeout(Duration::from_secs(120), async {
        loop {
            let a: Vec<&str> = args.iter().map(String::as_str).collect();
            last = first_screen(&data, &a);
            if want.iter().all(|w| last.contains(w.as_str())) {
                return;
            }
            tokio::time::sleep(Duration::from_secs(2)).await;
        }
    })
    .await;
    assert!(
        found.is_ok(),
        "{args:?}: not all of {expected:?} on the first screen:\n{last}"
    );
}

/// Waits until the quota controller has written `name`'s status: before
/// that, admission lets the first object through (or refuses every one).
async fn quota_counted(ns: &TestNamespace, name: &str) {
    wait_until(Duration::from_secs(30), "the quota's status", || async {
        let q: k8s_openapi::api::core::v1::ResourceQuota = ns.api().get(name).await.unwrap();
        q.status.and_then(|s| s.hard).is_some()
    })
    .await;
}

/// A CronJob whose Jobs a ResourceQuota refuses has neither replicas nor
/// conditions: before R004, `check` said nothing of it at all.
#[tokio::test]
async fn a_cronjob_whose_jobs_a_quota_refuses_is_named_by_check_and_timeline() {
    let ns = TestNamespace::new("unl-cron").await;
    let data = tempfile::tempdir().unwrap();
    let n = ns.name.as_str();
    apply(
        n,
        r#"apiVersion: v1
kind: ResourceQuota
metadata: {name: no-jobs}
spec: {hard: {count/jobs.batch: "0"}}
"#,
    );
    // NB: the quota's status must be computed before the CronJob fires, or the
    // first Job is admitted.
    quota_counted(&ns, "no-jobs").await;
    apply(
        n,
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
    let quota =
        "not created: exceeded quota no-jobs (count/jobs.batch: used 0, hard 0, requested 1)";
    // At check's defaults (--stuck-after 5m): a refusal repeated is news at once.
    until_on_first_screen(
        data.path(),
        &["check", "-n", n, "--sample", "1s"],
        &["R004", "CronJob/nightly", "FailedCreate ×", quota],
    )
    .await;
    let timeline = first_screen(data.path(), &["timeline", "cronjob/nightly", "-n", n]);
    assert!(
        timeline.contains("Why:     FailedCreate ×") && timeline.contains(quota),
        "{timeline}"
    );
}

/// Pods the apiserver refuses for a reason no rule reads (a PriorityClass
/// that does not exist): R001 at once, at check's default --stuck-after,
/// with the apiserver's words.
#[tokio::test]
async fn a_deployment_refused_for_an_unlisted_reason_is_reported_at_once() {
    let ns = TestNamespace::new("unl-prio").await;
    let data = tempfile::tempdir().unwrap();
    let n = ns.name.as_str();
    apply(
        n,
        r#"apiVersion: apps/v1
kind: Deployment
metadata: {name: api}
spec:
  replicas: 2
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec:
      priorityClassName: does-not-exist
      containers: [{name: api, image: "api:1"}]
"#,
    );
    let words =
        "2 Pod(s) not created: refused: no PriorityClass with name does-not-exist was found";
    until_on_first_screen(
        data.path(),
        &["check", "-n", n, "--sample", "1s"],
        &["R001", "Deployment/api", "0 of 2 ready", words],
    )
    .await;
    let timeline = first_screen(data.path(), &["timeline", "deploy/api", "-n", n]);
    assert!(
        timeline.contains(&format!("Why:     {words}")),
        "{timeline}"
    );
    assert!(!timeline.contains("ready 2/2"), "{timeline}");
}

/// A claim no Pod mounts, of a StorageClass that does not exist: no workload
/// stalls, yet the PersistentVolume controller keeps saying why it is Pending.
#[tokio::test]
async fn a_claim_nobody_mounts_of_a_missing_class_is_named() {
    let ns = TestNamespace::new("unl-pvc").await;
    let data = tempfile::tempdir().unwrap();
    let n = ns.name.as_str();
    apply(
        n,
        r#"apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: scratch}
spec:
  storageClassName: gone-class
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
"#,
    );
    until_on_first_screen(
        data.path(),
        &["check", "-n", n, "--sample", "1s"],
        &[
            "R004",
            "PersistentVolumeClaim/scratch",
            "ProvisioningFailed ×",
            "storageclass.storage.k8s.io \"gone-class\" not found",
        ],
    )
    .await;
}

/// Pods that run but never get ready (a readiness probe that does not pass):
/// the Pods' Ready condition names the container, where no Event is left.
#[tokio::test]
async fn pods_running_but_not_ready_name_the_container() {
    let ns = TestNamespace::new("unl-unready").await;
    let data = tempfile::tempdir().unwrap();
    let n = ns.name.as_str();
    apply(
        n,
        r#"apiVersion: apps/v1
kind: Deployment
metadata: {name: gated}
spec:
  replicas: 1
  selector: {matchLabels: {app: gated}}
  template:
    metadata: {labels: {app: gated}}
    spec:
      containers: [{name: web, image: "web:1"}]
"#,
    );
    let pods: kube::Api<k8s_openapi::api::core::v1::Pod> = ns.api();
    let pod = support::wait_for(Duration::from_secs(60), "a running Pod", || {
        let pods = pods.clone();
        async move {
            let list = pods.list(&Default::default()).await.ok()?;
            list.items
                .into_iter()
                .find(|p| p.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running"))
                .and_then(|p| p.metadata.name)
        }
    })
    .await;
    // NB: KWOK runs no probes; the kubelet's own status is written as it
    // writes it for a container whose readiness probe fails.
    let status = r#"{"status":{"conditions":[
        {"type":"Ready","status":"False","reason":"ContainersNotReady","message":"containers with unready status: [web]"},
        {"type":"ContainersReady","status":"False","reason":"ContainersNotReady","message":"containers with unready status: [web]"},
        {"type":"PodScheduled","status":"True"},{"type":"Initialized","status":"True"}],
      "containerStatuses":[{"name":"web","image":"web:1","imageID":"","ready":false,"restartCount":0,"started":true,
        "state":{"running":{"startedAt":"2026-01-01T00:00:00Z"}}}]}}"#;
    kubectl(&[
        "patch",
        "-n",
        n,
        &format!("pod/{pod}"),
        "--subresource=status",
        "--type=merge",
        "-p",
        status,
    ]);
    let words = "running, not ready: web (its readiness or startup probe does not pass)";
    until_on_first_screen(
        data.path(),
        &["check", "-n", n, "--sample", "1s", "--stuck-after", "0s"],
        &["R001", "Deployment/gated", words],
    )
    .await;
    let timeline = first_screen(data.path(), &["timeline", "deploy/gated", "-n", n]);
    assert!(
        timeline.contains("Why:") && timeline.contains(words),
        "{timeline}"
    );
}

/// A Pod template that names a Node the cluster does not have: the Pods are
/// bound, never run, and deleted by the pod garbage collector without an
/// Event; only the Node's absence explains it.
#[tokio::test]
async fn pods_bound_to_a_node_that_does_not_exist_name_the_node() {
    let ns = TestNamespace::new("unl-ghost").await;
    let data = tempfile::tempdir().unwrap();
    let n = ns.name.as_str();
    apply(
        n,
        r#"apiVersion: apps/v1
kind: Deployment
metadata: {name: pinned}
spec:
  replicas: 1
  selector: {matchLabels: {app: pinned}}
  template:
    metadata: {labels: {app: pinned}}
    spec:
      nodeName: node-retired-last-week
      containers: [{name: app, image: "app:1"}]
"#,
    );
    let words = "bound to Node node-retired-last-week, which does not exist";
    until_on_first_screen(
        data.path(),
        &["check", "-n", n, "--sample", "1s", "--stuck-after", "0s"],
        &["R001", "Deployment/pinned", words],
    )
    .await;
    until_on_first_screen(
        data.path(),
        &["timeline", "deploy/pinned", "-n", n],
        &["Why:", words],
    )
    .await;
}

/// An operator's custom resource that only says it waits for its
/// StatefulSet, whose Pods a quota refuses: with no recording, both `check`
/// and the resource's `timeline` give the refusal beneath its words.
#[tokio::test]
async fn a_custom_resource_waiting_on_its_refused_statefulset_names_the_refusal() {
    let ns = TestNamespace::new("unl-operator").await;
    let data = tempfile::tempdir().unwrap();
    let n = ns.name.as_str();
    let ar = support::widget_crd(&ns.client).await;
    apply(
        n,
        r#"apiVersion: v1
kind: ResourceQuota
metadata: {name: pods-cap}
spec: {hard: {pods: "1"}}
"#,
    );
    let widgets: kube::Api<kube::api::DynamicObject> =
        kube::Api::namespaced_with(ns.client.clone(), n, &ar);
    let widget: kube::api::DynamicObject = serde_json::from_value(serde_json::json!({
        "apiVersion": "example.com/v1", "kind": "Widget",
        "metadata": {"name": "orders-db"}, "spec": {"size": 3}
    }))
    .unwrap();
    let widget = widgets
        .create(&kube::api::PostParams::default(), &widget)
        .await
        .unwrap();
    let uid = widget.metadata.uid.unwrap();
    // As an operator writes it: Ready=False, waiting, since a while ago.
    let since = (chrono::Utc::now() - chrono::Duration::minutes(20))
        .to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    widgets
        .patch_status(
            "orders-db",
            &kube::api::PatchParams::default(),
            &kube::api::Patch::Merge(serde_json::json!({"status": {"conditions": [{
                "type": "Ready", "status": "False", "reason": "Reconciling",
                "message": "waiting for StatefulSet orders-db to be ready",
                "lastTransitionTime": since
            }]}})),
        )
        .await
        .unwrap();
    quota_counted(&ns, "pods-cap").await;
    apply(
        n,
        &format!(
            r#"apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: orders-db
  ownerReferences: [{{apiVersion: example.com/v1, kind: Widget, name: orders-db, uid: {uid}, controller: true}}]
spec:
  serviceName: orders-db
  replicas: 3
  selector: {{matchLabels: {{app: orders-db}}}}
  template:
    metadata: {{labels: {{app: orders-db}}}}
    spec:
      containers: [{{name: pg, image: "postgres:17"}}]
"#
        ),
    );
    let words = "waiting for StatefulSet orders-db to be ready ← StatefulSet/orders-db: Pods not created: exceeded quota pods-cap (pods: used 1, hard 1, requested 1)";
    until_on_first_screen(
        data.path(),
        &["check", "-n", n, "--sample", "1s"],
        &["R003", "Widget/orders-db", words],
    )
    .await;
    until_on_first_screen(
        data.path(),
        &["timeline", "widget/orders-db", "-n", n],
        &["Why:", words],
    )
    .await;
}

/// A claim of a StorageClass whose provisioner nobody runs: the only words
/// are the PersistentVolume controller's Normal `ExternalProvisioning`, two
/// levels below the Deployment, beneath the scheduler's "unbound immediate
/// PersistentVolumeClaims".
#[tokio::test]
async fn a_claim_whose_provisioner_nobody_runs_names_the_provisioner() {
    let ns = TestNamespace::new("unl-prov").await;
    let data = tempfile::tempdir().unwrap();
    let n = ns.name.as_str();
    let class = format!("fast-{}", support::uuid_suffix());
    support::kubectl_stdin(
        &["apply", "-f", "-"],
        &format!(
            "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {{name: {class}}}\nprovisioner: ebs.csi.aws.com\nvolumeBindingMode: Immediate\n"
        ),
    );
    let cleanup = class.clone();
    let _class = ClassGuard(cleanup);
    apply(
        n,
        &format!(
            r#"apiVersion: v1
kind: PersistentVolumeClaim
metadata: {{name: data}}
spec:
  storageClassName: {class}
  accessModes: [ReadWriteOnce]
  resources: {{requests: {{storage: 1Gi}}}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {{name: db}}
spec:
  replicas: 1
  selector: {{matchLabels: {{app: db}}}}
  template:
    metadata: {{labels: {{app: db}}}}
    spec:
      containers: [{{name: pg, image: "postgres:17"}}]
      volumes: [{{name: d, persistentVolumeClaim: {{claimName: data}}}}]
"#
        ),
    );
    let words = "ExternalProvisioning ×";
    let provisioner = "the external provisioner 'ebs.csi.aws.com'";
    until_on_first_screen(
        data.path(),
        &["check", "-n", n, "--sample", "1s", "--stuck-after", "0s"],
        &[
            "R001",
            "Deployment/db",
            words,
            "PersistentVolumeClaim/data",
            provisioner,
        ],
    )
    .await;
    until_on_first_screen(
        data.path(),
        &["timeline", "deploy/db", "-n", n],
        &["Why:     ExternalProvisioning", provisioner],
    )
    .await;
}

/// Deletes a test's StorageClass (cluster-scoped: the namespace's deletion does not).
struct ClassGuard(String);

impl Drop for ClassGuard {
    fn drop(&mut self) {
        support::cluster_script_from_drop(
            &["kubectl", "delete", "storageclass", &self.0, "--wait=false"],
            &[],
        );
    }
}

/// A StatefulSet whose image was changed under `updateStrategy: OnDelete`:
/// all Pods ready, none updated, no Event; its own spec is why.
#[tokio::test]
async fn a_statefulset_rollout_held_by_on_delete_says_so() {
    let ns = TestNamespace::new("unl-ondelete").await;
    let data = tempfile::tempdir().unwrap();
    let n = ns.name.as_str();
    apply(
        n,
        r#"apiVersion: apps/v1
kind: StatefulSet
metadata: {name: cache}
spec:
  serviceName: cache
  replicas: 2
  updateStrategy: {type: OnDelete}
  selector: {matchLabels: {app: cache}}
  template:
    metadata: {labels: {app: cache}}
    spec:
      containers: [{name: redis, image: "redis:7"}]
"#,
    );
    let sets: kube::Api<k8s_openapi::api::apps::v1::StatefulSet> = ns.api();
    wait_until(Duration::from_secs(60), "2 ready replicas", || async {
        let s = sets.get("cache").await.unwrap();
        s.status.and_then(|s| s.ready_replicas) == Some(2)
    })
    .await;
    kubectl(&["set", "image", "-n", n, "sts/cache", "redis=redis:8"]);
    let words = "OnDelete: a Pod takes the new template only when it is deleted (0 of 2 updated";
    until_on_first_screen(
        data.path(),
        &["check", "-n", n, "--sample", "1s", "--stuck-after", "0s"],
        &[
            "R001",
            "StatefulSet/cache",
            "rollout stuck: 0 of 2 updated",
            words,
        ],
    )
    .await;
    until_on_first_screen(
        data.path(),
        &["timeline", "sts/cache", "-n", n],
        &["Why:", words],
    )
    .await;
}

/// With no recording, a Deployment deleted after it could not run: its
/// story, and its Pods' scheduling failure, from the Events the cluster still
/// keeps; before, `timeline` only printed an error.
#[tokio::test]
async fn a_deleted_deployment_with_no_recording_is_told_from_the_events_left() {
    let ns = TestNamespace::new("unl-gone").await;
    let data = tempfile::tempdir().unwrap();
    let n = ns.name.as_str();
    apply(
        n,
        r#"apiVersion: apps/v1
kind: Deployment
metadata: {name: batch}
spec:
  replicas: 1
  selector: {matchLabels: {app: batch}}
  template:
    metadata: {labels: {app: batch}}
    spec:
      nodeSelector: {disktype: nvme}
      containers: [{name: app, image: "batch:1"}]
"#,
    );
    // The scheduler has said why before the Deployment goes.
    until_on_first_screen(
        data.path(),
        &[
            "check",
            "-n",
            n,
            "scheduling",
            "--sample",
            "1s",
            "--stuck-after",
            "0s",
        ],
        &["S001", "disktype=nvme"],
    )
    .await;
    kubectl(&["delete", "deploy/batch", "-n", n, "--wait=true"]);
    let screen = first_screen(data.path(), &["timeline", "deploy/batch", "-n", n]);
    for want in [
        "Deployment batch no longer exists: told from the Events the cluster still keeps",
        "Object:  Deployment ",
        "created ?, deleted between",
        "ScalingReplicaSet",
        "FailedScheduling",
        "node affinity/selector",
    ] {
        assert!(
            screen.contains(want),
            "{want:?} not on the first screen:\n{screen}"
        );
    }
    // A name nothing was ever about: an error naming all three places looked in.
    let (code, _, stderr) =
        support::diag_no_recording(data.path(), &["timeline", "deploy/never-was", "-n", n]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("no Deployment named never-was")
            && stderr.contains("no Event about it left")
            && stderr.contains("no recording"),
        "{stderr}"
    );
}

/// A topology spread constraint on a label no Node has: the scheduler says
/// only "(missing required label)"; the check names the label and the Nodes.
#[tokio::test]
async fn a_spread_constraint_on_a_label_no_node_has_names_the_label() {
    let ns = TestNamespace::new("unl-spread").await;
    let data = tempfile::tempdir().unwrap();
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
    metadata: {labels: {app: web}}
    spec:
      nodeSelector: {type: kwok}
      tolerations: [{key: kwok.x-k8s.io/node, operator: Exists, effect: NoSchedule}]
      topologySpreadConstraints:
      - {maxSkew: 1, topologyKey: example.com/rack, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: web}}}
      - {maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: ScheduleAnyway, labelSelector: {matchLabels: {app: web}}}
      containers: [{name: web, image: "nginx:1.25"}]
"#,
    );
    until_on_first_screen(
        data.path(),
        &["check", "-n", n, "--sample", "1s"],
        &[
            "S001",
            "topology spread needs label example.com/rack: 3 of 3 nodes lack it",
        ],
    )
    .await;
    let screen = first_screen(data.path(), &["check", "-n", n, "--sample", "1s"]);
    // A constraint that only scores keeps no Pod off a Node.
    assert!(
        !screen.contains("needs label kubernetes.io/hostname"),
        "{screen}"
    );
    // The story's `Why:` names the key too (before, the reconstruction read no
    // Node but the chain's own, and quoted only the scheduler's counts).
    let args = ["timeline", "deployment/web", "-n", n];
    until_on_first_screen(data.path(), &args, &["Why:"]).await;
    let screen = first_screen(data.path(), &args);
    let why = screen.lines().find(|l| l.starts_with("Why:")).unwrap();
    assert!(
        why.contains("topology spread needs label example.com/rack: 3 of 3 nodes lack it"),
        "{screen}"
    );
}

/// A claim being deleted while a Pod still mounts it waits on its
/// kubernetes.io/pvc-protection finalizer: its timeline named nothing ("Check:
/// nothing to report") until `--stuck-after`, and never the Pod, which the
/// reconstruction did not read.
#[tokio::test]
async fn a_claim_a_running_pod_still_mounts_names_the_pod_in_its_timeline() {
    let ns = TestNamespace::new("unl-pvcheld").await;
    let data = tempfile::tempdir().unwrap();
    let n = ns.name.as_str();
    apply(
        n,
        &format!(
            r#"apiVersion: v1
kind: PersistentVolume
metadata: {{name: pv-{n}}}
spec:
  capacity: {{storage: 1Gi}}
  accessModes: [ReadWriteOnce]
  hostPath: {{path: /tmp/pv-{n}}}
  storageClassName: manual
  claimRef: {{namespace: {n}, name: data}}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {{name: data}}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: manual
  volumeName: pv-{n}
  resources: {{requests: {{storage: 1Gi}}}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {{name: db}}
spec:
  replicas: 1
  selector: {{matchLabels: {{app: db}}}}
  template:
    metadata: {{labels: {{app: db}}}}
    spec:
      nodeSelector: {{type: kwok}}
      tolerations: [{{key: kwok.x-k8s.io/node, operator: Exists, effect: NoSchedule}}]
      volumes: [{{name: d, persistentVolumeClaim: {{claimName: data}}}}]
      containers: [{{name: db, image: postgres}}]
"#
        ),
    );
    wait_until(
        Duration::from_secs(60),
        "the Pod that mounts the claim runs",
        || async {
            let pods: kube::Api<k8s_openapi::api::core::v1::Pod> = ns.api();
            pods.list(&Default::default())
                .await
                .unwrap()
                .items
                .iter()
                .any(|p| p.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running"))
        },
    )
    .await;
    kubectl(&["delete", "pvc", "data", "-n", n, "--wait=false"]);
    until_on_first_screen(
        data.path(),
        &["timeline", "pvc/data", "-n", n],
        &[
            "F001",
            "held by finalizer(s) kubernetes.io/pvc-protection",
            "still used by Pod db-",
        ],
    )
    .await;
    kubectl(&["delete", "pv", &format!("pv-{n}"), "--wait=false"]);
}

/// More replicas asking one hostPort than Nodes can give it: the scheduler
/// says "didn't have free ports for the requested pod ports", naming neither
/// the port nor the Pods that hold it; `check` and the timeline's `Why:` name both.
#[tokio::test]
async fn a_host_port_every_node_already_gives_names_the_port_and_its_holders() {
    let ns = TestNamespace::new("unl-hostport").await;
    let data = tempfile::tempdir().unwrap();
    let n = ns.name.as_str();
    // NB: a port no other test asks, so that only this test's Pods hold it.
    apply(
        n,
        r#"apiVersion: apps/v1
kind: Deployment
metadata: {name: edge}
spec:
  replicas: 3
  selector: {matchLabels: {app: edge}}
  template:
    metadata: {labels: {app: edge}}
    spec:
      nodeSelector: {type: kwok}
      tolerations: [{key: kwok.x-k8s.io/node, operator: Exists, effect: NoSchedule}]
      containers: [{name: edge, image: envoy, ports: [{containerPort: 80, hostPort: 18443}]}]
"#,
    );
    until_on_first_screen(
        data.path(),
        &["check", "-n", n, "--sample", "1s"],
        &[
            "S001",
            "hostPort 18443/TCP already taken on 2 of 3 nodes",
            &format!("by Pod {n}/edge-"),
        ],
    )
    .await;
    let args = ["timeline", "deployment/edge", "-n", n];
    until_on_first_screen(data.path(), &args, &["Why:"]).await;
    let screen = first_screen(data.path(), &args);
    let why = screen.lines().find(|l| l.starts_with("Why:")).unwrap();
    assert!(
        why.contains("hostPort 18443/TCP already taken on 2 of 3 nodes"),
        "{screen}"
    );
    // Another workload asking the same port: the holders are not of its chain
    // (before, its timeline read no Pod outside the chain and named none).
    apply(
        n,
        r#"apiVersion: apps/v1
kind: StatefulSet
metadata: {name: exporter}
spec:
  serviceName: exporter
  replicas: 1
  selector: {matchLabels: {app: exporter}}
  template:
    metadata: {labels: {app: exporter}}
    spec:
      nodeSelector: {type: kwok}
      tolerations: [{key: kwok.x-k8s.io/node, operator: Exists, effect: NoSchedule}]
      containers: [{name: e, image: node-exporter, ports: [{containerPort: 9100, hostPort: 18443}]}]
"#,
    );
    // NB: waits for the words themselves: the Why names no cause until the
    // scheduler has marked the Pod unschedulable.
    let holder =
        format!("hostPort 18443/TCP already taken on 2 of 3 nodes (kwok-medium by Pod {n}/edge-");
    let args = ["timeline", "statefulset/exporter", "-n", n];
    until_on_first_screen(data.path(), &args, &["Why:", &holder]).await;
    let screen = first_screen(data.path(), &args);
    let why = screen.lines().find(|l| l.starts_with("Why:")).unwrap();
    assert!(why.contains(&holder), "{screen}");
}
