//! Object history against the real apiserver: a rollout's transitions once
//! each, writers named, two managers fighting counted without bloating the
//! versions, deleted objects found by name, and deletions while blind marked
//! inside the gap.

use crate::support;

use std::path::Path;
use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Pod};
use kube::Api;
use kube::api::{DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kubectl_diag::model::{RecordedObject, Version};
use kubectl_diag::store::{self, Mode};
use serde_json::json;
use support::{Background, TestNamespace, wait_for, wait_until};

fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

async fn start_recorder(db: &Path, ns: &str, extra: &[&str]) -> Background {
    support::start_recorder(db, ns, extra, &format!("pods/{ns}")).await
}

struct Rec {
    recording: store::Recording,
    cluster: i64,
}

impl Rec {
    fn open(db: &Path) -> Rec {
        let recording = store::Recording::open(db, Mode::ReadOnly).unwrap();
        let cluster = recording
            .connection()
            .query_row("SELECT id FROM clusters", [], |r| r.get(0))
            .unwrap();
        Rec { recording, cluster }
    }

    fn named(&self, kind: &str, ns: &str, name: &str) -> Vec<RecordedObject> {
        self.recording.named(self.cluster, kind, ns, name).unwrap()
    }

    fn only(&self, kind: &str, ns: &str, name: &str) -> RecordedObject {
        let found = self.named(kind, ns, name);
        assert_eq!(found.len(), 1, "{kind} {ns}/{name}: {found:?}");
        found.into_iter().next().unwrap()
    }

    fn versions(&self, o: &RecordedObject) -> Vec<Version> {
        self.recording.versions(o.id).unwrap()
    }
}

fn deployment(ns: &str, image: &str) -> Deployment {
    serde_json::from_value(json!({
        "metadata": {"name": "web", "namespace": ns},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "web", "image": image}]}
            }
        }
    }))
    .unwrap()
}

async fn rolled_out(api: &Api<Deployment>, generation: i64) {
    wait_until(Duration::from_secs(90), "the rollout to finish", || async {
        let d = api.get("web").await.unwrap();
        let s = d.status.unwrap_or_default();
        s.observed_generation == Some(generation)
            && s.updated_replicas == Some(2)
            && s.available_replicas == Some(2)
            && s.replicas == Some(2)
    })
    .await;
}

async fn pod_names(api: &Api<Pod>) -> Vec<String> {
    api.list(&ListParams::default().labels("app=web"))
        .await
        .unwrap()
        .items
        .into_iter()
        .filter_map(|p| p.metadata.name)
        .collect()
}

#[tokio::test]
async fn rollout_transitions_are_stored_once_and_deleted_pods_stay_findable() {
    let ns = TestNamespace::new("hist-roll").await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("diag.db");
    let recorder = start_recorder(&db, &ns.name, &[]).await;

    let deployments: Api<Deployment> = ns.api();
    let pods: Api<Pod> = ns.api();
    deployments
        .create(&PostParams::default(), &deployment(&ns.name, "web:1"))
        .await
        .unwrap();
    rolled_out(&deployments, 1).await;
    let old_pods = pod_names(&pods).await;
    assert_eq!(old_pods.len(), 2);
    let before_rollout = now_ms();

    deployments
        .patch(
            "web",
            &PatchParams {
                field_manager: Some("rollout-test".into()),
                ..PatchParams::default()
            },
            &Patch::Merge(json!({"spec": {"template": {"spec": {"containers": [{"name": "web", "image": "web:2"}]}}}})),
        )
        .await
        .unwrap();
    rolled_out(&deployments, 2).await;
    for name in &old_pods {
        let pods = pods.clone();
        wait_until(Duration::from_secs(60), "old Pods to disappear", || {
            let pods = pods.clone();
            async move { pods.get_opt(name).await.unwrap().is_none() }
        })
        .await;
    }
    let new_pods = pod_names(&pods).await;
    // Give the recorder a moment to receive the last changes, then stop it cleanly.
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(recorder.terminate().success());

    let rec = Rec::open(&db);
    let deploy = rec.only("Deployment", &ns.name, "web");
    let versions = rec.versions(&deploy);
    // Generation rises, and a later version shows observedGeneration catching up.
    let lagging = versions
        .iter()
        .position(|v| v.state.generation == 2 && v.state.observed_generation == Some(1))
        .unwrap_or_else(|| panic!("no version with generation 2 ahead of status: {versions:#?}"));
    assert!(
        versions[lagging]
            .writers
            .iter()
            .any(|w| w == "rollout-test"),
        "the spec change is attributed to its field manager: {:?}",
        versions[lagging].writers
    );
    let caught_up = versions[lagging..]
        .iter()
        .find(|v| v.state.observed_generation == Some(2))
        .expect("observedGeneration catches up");
    assert!(
        caught_up
            .writers
            .iter()
            .any(|w| w.starts_with("kube-controller-manager")),
        "status written by the controller: {:?}",
        caught_up.writers
    );
    assert_eq!(caught_up.state.images, vec!["web:2"]);

    // Each transition once: no two consecutive versions of any object are equal.
    for kind in ["Deployment", "ReplicaSet", "Pod"] {
        let ids: Vec<i64> = rec
            .recording
            .connection()
            .prepare(
                "SELECT o.id FROM objects o JOIN strings k ON k.id = o.kind JOIN strings n ON n.id = o.namespace \
                 WHERE k.s = ?1 AND n.s = ?2 AND o.first_seen IS NOT NULL",
            )
            .unwrap()
            .query_map([kind, ns.name.as_str()], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert!(!ids.is_empty(), "no {kind} recorded");
        for id in ids {
            let vs = rec.recording.versions(id).unwrap();
            for pair in vs.windows(2) {
                assert_ne!(
                    pair[0].state, pair[1].state,
                    "{kind} {id} stored a version twice"
                );
            }
        }
    }

    // The new ReplicaSet scaled up, the old one down to 0.
    let children = rec.recording.children(rec.cluster, &deploy.object).unwrap();
    let replica_sets: Vec<RecordedObject> = children
        .iter()
        .filter(|(_, rel)| rel == "owner")
        .map(|(id, _)| rec.recording.object(*id).unwrap().unwrap())
        .filter(|o| o.object.kind == "ReplicaSet")
        .collect();
    assert_eq!(replica_sets.len(), 2, "{replica_sets:?}");
    let mut scaled_up = false;
    let mut scaled_down = false;
    for rs in &replica_sets {
        let vs = rec.versions(rs);
        let last = &vs.last().unwrap().state;
        let desired: Vec<i64> = vs
            .iter()
            .filter_map(|v| v.state.replicas.get("spec.replicas").copied())
            .collect();
        if last.images == vec!["web:2"] {
            scaled_up =
                desired.first() < desired.last() && last.replicas.get("readyReplicas") == Some(&2);
        } else {
            scaled_down = desired.last() == Some(&0);
        }
    }
    assert!(scaled_up && scaled_down, "ReplicaSets: {replica_sets:?}");

    // A deleted Pod is found by name, with its deletion, last state and owner.
    for name in &old_pods {
        let pod = rec.only("Pod", &ns.name, name);
        assert!(pod.deleted.is_some(), "{name} is recorded as deleted");
        assert_eq!(
            pod.deleted_after, None,
            "seen deleted while watching: exact time"
        );
        let vs = rec.versions(&pod);
        assert!(
            vs.iter().any(|v| v.state.deletion.is_some()),
            "deletion started is a version"
        );
        let last = &vs.last().unwrap().state;
        assert_eq!(last.owners[0].kind, "ReplicaSet");
        assert!(!last.node_name.is_empty(), "{name} ran on a node");
        assert_eq!(last.images, vec!["web:1"]);
    }

    // Time travel: before the rollout, the old Pods; now, the new ones.
    let then = rec
        .recording
        .states_at(rec.cluster, before_rollout)
        .unwrap();
    let names_then: Vec<&str> = then
        .iter()
        .filter(|o| o.object.kind == "Pod" && o.object.namespace == ns.name)
        .map(|o| o.object.name.as_str())
        .collect();
    let mut old_sorted = old_pods.clone();
    old_sorted.sort();
    let mut then_sorted: Vec<String> = names_then.iter().map(|s| s.to_string()).collect();
    then_sorted.sort();
    assert_eq!(then_sorted, old_sorted);
    let deploy_then = then.iter().find(|o| o.id == deploy.id).unwrap();
    assert_eq!(deploy_then.state.images, vec!["web:1"]);
    let latest = rec.recording.states_at(rec.cluster, now_ms()).unwrap();
    let mut names_now: Vec<String> = latest
        .iter()
        .filter(|o| o.object.kind == "Pod" && o.object.namespace == ns.name)
        .map(|o| o.object.name.clone())
        .collect();
    names_now.sort();
    let mut new_sorted = new_pods.clone();
    new_sorted.sort();
    assert_eq!(names_now, new_sorted);
}

#[tokio::test]
async fn two_managers_fighting_show_in_the_counters_not_in_the_versions() {
    let ns = TestNamespace::new("hist-fight").await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("diag.db");
    // `cm` is resolved through discovery's short names; --kinds narrows to
    // the types it names (pods: what start_recorder waits for).
    let recorder = start_recorder(&db, &ns.name, &["--kinds", "cm,pods"]).await;

    let maps: Api<ConfigMap> = ns.api();
    maps.create(
        &PostParams::default(),
        &serde_json::from_value(json!({"metadata": {"name": "contested"}, "data": {"k": "v"}}))
            .unwrap(),
    )
    .await
    .unwrap();
    let rounds = 25;
    for i in 0..rounds {
        for (manager, value) in [("fighter-a", "a"), ("fighter-b", "b")] {
            maps.patch(
                "contested",
                &PatchParams {
                    field_manager: Some(manager.into()),
                    ..PatchParams::default()
                },
                &Patch::Merge(
                    json!({"metadata": {"labels": {"owner": value, "round": i.to_string()}}}),
                ),
            )
            .await
            .unwrap();
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(recorder.terminate().success());

    let rec = Rec::open(&db);
    let cm = rec.only("ConfigMap", &ns.name, "contested");
    let counts: Vec<_> = rec
        .recording
        .update_counts(rec.cluster, 0, now_ms())
        .unwrap()
        .into_iter()
        .filter(|c| c.object_id == cm.id)
        .collect();
    let by = |m: &str| -> i64 {
        counts
            .iter()
            .filter(|c| c.manager == m)
            .map(|c| c.updates)
            .sum()
    };
    assert_eq!(by("fighter-a"), rounds, "{counts:?}");
    assert_eq!(by("fighter-b"), rounds, "{counts:?}");
    assert!(
        counts.iter().all(|c| c.versions == 0 && c.generation == 0),
        "{counts:?}"
    );
    assert_eq!(rec.versions(&cm).len(), 1, "labels alone make no version");
    // What they fight over: the label that keeps changing hands (with `round`,
    // which both also set; the first in path order is kept).
    assert!(
        counts
            .iter()
            .any(|c| c.field.as_deref() == Some("metadata.labels.owner")),
        "{counts:?}"
    );
}

async fn create_pod(pods: &Api<Pod>, name: &str) {
    pods.create(
        &PostParams::default(),
        &serde_json::from_value(json!({
            "metadata": {"name": name},
            "spec": {"containers": [{"name": "c", "image": "busybox"}]}
        }))
        .unwrap(),
    )
    .await
    .unwrap();
}

async fn delete_pod(pods: &Api<Pod>, name: &str) {
    pods.delete(name, &DeleteParams::default()).await.unwrap();
    wait_until(Duration::from_secs(60), "the Pod to be gone", || async {
        pods.get_opt(name).await.unwrap().is_none()
    })
    .await;
}

/// Waits until the recording holds `name` as deleted.
async fn deleted(db: &Path, ns: &str, name: &str) -> RecordedObject {
    wait_for(
        Duration::from_secs(30),
        "the deletion to be recorded",
        || {
            let (db, ns, name) = (db.to_path_buf(), ns.to_string(), name.to_string());
            async move {
                Rec::open(&db)
                    .named("Pod", &ns, &name)
                    .into_iter()
                    .find(|p| p.deleted.is_some())
            }
        },
    )
    .await
}

fn assert_inside_gap(
    db: &Path,
    ns: &str,
    pod: &RecordedObject,
    stopped: i64,
    gone: i64,
    saw_terminating: bool,
) {
    let after = pod
        .deleted_after
        .unwrap_or_else(|| panic!("{} deleted while blind: a lower bound", pod.object.name));
    let at = pod.deleted.unwrap();
    assert!(
        after <= stopped + 1000 && after >= stopped - 10_000,
        "lower bound {after} is when the recorder stopped ({stopped})"
    );
    assert!(
        at >= gone,
        "upper bound {at} comes after the deletion ({gone})"
    );
    let rec = Rec::open(db);
    let last = rec.versions(pod).last().unwrap().state.clone();
    // A replay shows the Pod terminating; a relist only finds it gone.
    assert_eq!(last.deletion.is_some(), saw_terminating, "{last:?}");
    let gap: i64 = rec
        .recording
        .connection()
        .query_row(
            "SELECT count(*) FROM gaps WHERE resource = ?1 AND start <= ?2 AND finish >= ?3",
            rusqlite::params![format!("pods/{ns}"), after, gone],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(gap, 1, "the blind interval is a gap of the Pod watch");
}

#[tokio::test]
async fn pods_deleted_while_the_recorder_was_away_are_marked_deleted_inside_the_gap() {
    let ns = TestNamespace::new("hist-gap").await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("diag.db");
    let pods: Api<Pod> = ns.api();
    create_pod(&pods, "replayed").await;
    create_pod(&pods, "relisted").await;
    let recorder = start_recorder(&db, &ns.name, &[]).await;
    assert!(recorder.terminate().success());

    // Resumed: the watch replays the deletion from its saved position.
    let stopped = now_ms();
    delete_pod(&pods, "replayed").await;
    let gone = now_ms();
    let recorder = start_recorder(&db, &ns.name, &[]).await;
    let pod = deleted(&db, &ns.name, "replayed").await;
    assert!(recorder.terminate().success());
    assert_inside_gap(&db, &ns.name, &pod, stopped, gone, true);

    // Relisted: without a usable position (lost, or 410 Gone after a long
    // outage) the Pods are listed again and the missing one reconciled.
    let stopped = now_ms();
    delete_pod(&pods, "relisted").await;
    let gone = now_ms();
    support::open_fresh(&db)
        .unwrap()
        .execute(
            "DELETE FROM watch_positions WHERE resource = ?1",
            [format!("pods/{}", ns.name)],
        )
        .unwrap();
    let recorder = start_recorder(&db, &ns.name, &[]).await;
    let pod = deleted(&db, &ns.name, "relisted").await;
    assert!(recorder.terminate().success());
    assert_inside_gap(&db, &ns.name, &pod, stopped, gone, false);
    let detail: String = Rec::open(&db)
        .recording
        .connection()
        .query_row(
            "SELECT detail FROM gaps WHERE resource = ?1 ORDER BY id DESC LIMIT 1",
            [format!("pods/{}", ns.name)],
            |r| r.get(0),
        )
        .unwrap();
    assert!(detail.contains("relisted"), "{detail}");
}

/// Regression (issue 47, played on the local cluster): a Deployment scaled
/// to 0 through the scale subresource by `cost-bot` was recorded as the
/// change of `kubectl-set`, who had set its image before. That write leaves
/// no managedFields entry and `spec.replicas` no owner: with no audit log,
/// its writer is unknown, and neither the recording nor the timeline names
/// anyone; the image change is still its writer's.
#[tokio::test]
async fn a_scale_through_the_subresource_is_no_earlier_writers_change() {
    let ns = TestNamespace::new("hist-scale").await;
    let n = ns.name.as_str();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("diag.db");
    let recorder = start_recorder(&db, n, &[]).await;
    let api: Api<Deployment> = ns.api();
    api.create(&PostParams::default(), &deployment(n, "web:1"))
        .await
        .unwrap();
    rolled_out(&api, 1).await;
    support::kubectl(&[
        "set",
        "image",
        "deploy/web",
        "web=web:2",
        "--field-manager=kubectl-set",
        "-n",
        n,
    ]);
    rolled_out(&api, 2).await;
    support::kubectl(&[
        "patch",
        "deploy/web",
        "--subresource=scale",
        "--type=merge",
        "-p",
        r#"{"spec":{"replicas":0}}"#,
        "--field-manager=cost-bot",
        "-n",
        n,
    ]);
    let rec_db = db.clone();
    wait_until(Duration::from_secs(60), "the scale to 0 recorded", || {
        let db = rec_db.clone();
        let n = n.to_string();
        async move {
            let rec = Rec::open(&db);
            let d = rec.only("Deployment", &n, "web");
            rec.versions(&d)
                .iter()
                .any(|v| v.diff.iter().any(|c| c.text() == "spec.replicas 2 → 0"))
        }
    })
    .await;
    let rec = Rec::open(&db);
    let d = rec.only("Deployment", n, "web");
    let versions = rec.versions(&d);
    let scaled = versions
        .iter()
        .find(|v| v.diff.iter().any(|c| c.text() == "spec.replicas 2 → 0"))
        .unwrap();
    assert!(
        scaled.writers.is_empty(),
        "the scale is told as {:?}'s",
        scaled.writers
    );
    let imaged = versions
        .iter()
        .find(|v| v.diff.iter().any(|c| c.text().contains("web:1 → web:2")))
        .unwrap();
    assert_eq!(imaged.writers, ["kubectl-set"]);
    drop(recorder);
    let out = support::run_ok(support::diag(&db).args([
        "timeline",
        "deploy/web",
        "-n",
        n,
        "--db",
        db.to_str().unwrap(),
    ]));
    let text = String::from_utf8_lossy(&out.stdout);
    let screen: Vec<&str> = text.lines().take(25).collect();
    let line = screen
        .iter()
        .find(|l| l.starts_with("Change:") && l.contains("spec.replicas 2 → 0"))
        .unwrap_or_else(|| panic!("no scale change on the first screen:\n{text}"));
    assert!(!line.contains("(by "), "{line}");
    assert!(
        screen
            .iter()
            .any(|l| l.starts_with("Change:") && l.contains("web:2 (by kubectl-set)")),
        "{text}"
    );
    assert!(
        !screen
            .iter()
            .any(|l| l.starts_with("Stopped:") && l.contains(" by ")),
        "{text}"
    );
    assert!(
        !screen.iter().any(|l| l.contains("NOT ready: 0 of 0")),
        "{text}"
    );
}
