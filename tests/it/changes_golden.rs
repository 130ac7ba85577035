//! Golden output of `kubectl diag changes` (table, wide and JSON) for an
//! hour of a recorded cluster: a memory limit cut by one manager, a scale to
//! zero by another, a rollout's controller steps and Pods replaced in bulk, a
//! Node tainted and cordoned, a ConfigMap key changed and a custom resource
//! type appearing. The recording is written through the recorder's own
//! writer with fixed times and field sets, so the writers are attributed by
//! the same code as live. `UPDATE_GOLDEN=1` rewrites the files after a
//! deliberate change.

use crate::support::golden_file;
use golden_file::golden;

use std::path::{Path, PathBuf};

use kubectl_diag::model::{
    Change, ManagerEntry, ObjectChange, ObjectObservation, ObjectRef, ObjectState, OwnerRef, Seen,
    TypeChange,
};
use kubectl_diag::store::writer::Writer;
use kubectl_diag::store::{Mode, Recording};

/// 2026-11-29T03:00:00Z
const T: i64 = 1_795_921_200_000;
const S: i64 = 1_000;
const M: i64 = 60 * S;

fn obj(api_version: &str, kind: &str, ns: &str, name: &str) -> ObjectRef {
    ObjectRef {
        api_version: api_version.into(),
        kind: kind.into(),
        namespace: ns.into(),
        name: name.into(),
        uid: format!("uid-{kind}-{name}"),
        field_path: String::new(),
    }
}

fn manager(name: &str, at: i64, fields_v1: &str) -> ManagerEntry {
    ManagerEntry {
        manager: name.into(),
        operation: "Update".into(),
        subresource: String::new(),
        time: Some(at / S * S),
        fields: 3,
        fields_v1: fields_v1.into(),
    }
}

struct Rec {
    w: Writer,
    /// The changes, stored in one batch by [`Rec::commit`].
    batch: Vec<Change>,
}

impl Rec {
    #[allow(clippy::too_many_arguments)]
    fn object(
        &mut self,
        seen: Seen,
        at: i64,
        object: &ObjectRef,
        owner: Option<&ObjectRef>,
        generation: i64,
        doc: Option<String>,
        managers: Vec<ManagerEntry>,
    ) {
        let state = ObjectState {
            generation,
            spec_digest: doc
                .as_deref()
                .map(|d| format!("{:016x}", kubectl_diag::units::fnv1a(d) as u64))
                .unwrap_or_default(),
            owners: owner
                .map(|o| {
                    vec![OwnerRef {
                        api_version: o.api_version.clone(),
                        kind: o.kind.clone(),
                        name: o.name.clone(),
                        uid: o.uid.clone(),
                        controller: true,
                    }]
                })
                .unwrap_or_default(),
            ..ObjectState::default()
        };
        self.batch.push(Change::Object(ObjectChange {
            seen,
            at,
            blind_since: None,
            writer: None,
            provenance: kubectl_diag::model::Provenance::Recorded,
            observation: Box::new(ObjectObservation {
                object: object.clone(),
                resource_version: String::new(),
                created: Some(if seen == Seen::Added { at } else { T }),
                state,
                managers,
                diff_doc: doc,
            }),
        }));
    }

    fn commit(mut self) {
        let mut b = self.w.begin().unwrap();
        for change in std::mem::take(&mut self.batch) {
            b.apply_change(&change).unwrap();
        }
        b.commit().unwrap();
    }
}

fn deployment_doc(replicas: i64, memory: &str) -> String {
    format!(
        r#"{{"spec":{{"replicas":{replicas},"template":{{"spec":{{"containers":[{{"name":"web","image":"web:1","resources":{{"limits":{{"memory":"{memory}"}}}}}}]}}}}}}}}"#
    )
}

const CREATOR: &str = r#"{"f:spec":{"f:replicas":{},"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"web\"}":{".":{},"f:image":{},"f:name":{},"f:resources":{}}}}}}}"#;
const ALICE: &str = r#"{"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"web\"}":{"f:resources":{"f:limits":{"f:memory":{}}}}}}}}}"#;
const BOB: &str = r#"{"f:spec":{"f:replicas":{}}}"#;
/// What kubectl-create still owns once bob took `replicas` (an Update moves a field's ownership).
const CREATOR_AFTER_BOB: &str = r#"{"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"web\"}":{".":{},"f:image":{},"f:name":{},"f:resources":{}}}}}}}"#;

/// An hour of cluster `prod-eu`, written as the recorder writes it.
fn recording(dir: &Path) -> PathBuf {
    let path = dir.join("diag.db");
    let conn = Recording::open(&path, Mode::Write).unwrap();
    let cluster = conn.register_cluster("uid", "prod-eu", "", T).unwrap();
    let mut r = Rec {
        w: Writer::new(conn, cluster),
        batch: Vec::new(),
    };
    let web = obj("apps/v1", "Deployment", "shop", "web");
    let creator = |at| vec![manager("kubectl-create", at, CREATOR)];
    r.object(
        Seen::Added,
        T,
        &web,
        None,
        1,
        Some(deployment_doc(3, "512Mi")),
        creator(T),
    );
    let old_rs = obj("apps/v1", "ReplicaSet", "shop", "web-7c9d");
    let rs_doc = |n: i64| Some(format!(r#"{{"spec":{{"replicas":{n}}}}}"#));
    let kcm = |at| vec![manager("kube-controller-manager", at, BOB)];
    r.object(
        Seen::Added,
        T + S,
        &old_rs,
        Some(&web),
        1,
        rs_doc(3),
        kcm(T + S),
    );
    for i in 0..3 {
        let pod = obj("v1", "Pod", "shop", &format!("web-7c9d-{i}"));
        r.object(
            Seen::Added,
            T + 2 * S + i * 100,
            &pod,
            Some(&old_rs),
            0,
            None,
            kcm(T),
        );
    }
    // 03:10 alice cuts the memory limit: a rollout follows.
    let at = T + 10 * M;
    let mut by_alice = creator(T);
    by_alice.push(manager("alice", at, ALICE));
    r.object(
        Seen::Modified,
        at,
        &web,
        None,
        2,
        Some(deployment_doc(3, "256Mi")),
        by_alice.clone(),
    );
    let new_rs = obj("apps/v1", "ReplicaSet", "shop", "web-5f6b");
    r.object(
        Seen::Added,
        at + S,
        &new_rs,
        Some(&web),
        1,
        rs_doc(1),
        kcm(at + S),
    );
    // The deployment controller's steps: new up, old down.
    let steps: [(Option<i64>, i64); 3] = [(Some(2), 2), (Some(3), 1), (None, 0)];
    for (step, (up, down)) in steps.into_iter().enumerate() {
        let t = at + (2 + step as i64) * S;
        let generation = 2 + step as i64;
        if let Some(up) = up {
            r.object(
                Seen::Modified,
                t,
                &new_rs,
                Some(&web),
                generation,
                rs_doc(up),
                kcm(t),
            );
        }
        r.object(
            Seen::Modified,
            t,
            &old_rs,
            Some(&web),
            generation,
            rs_doc(down),
            kcm(t),
        );
    }
    for i in 0..3 {
        let t = at + 5 * S + i * 100;
        let pod = obj("v1", "Pod", "shop", &format!("web-5f6b-{i}"));
        r.object(Seen::Added, t, &pod, Some(&new_rs), 0, None, kcm(t));
        let old = obj("v1", "Pod", "shop", &format!("web-7c9d-{i}"));
        r.object(Seen::Deleted, t + 50, &old, Some(&old_rs), 0, None, kcm(t));
    }
    // 03:20 a Node tainted, then cordoned.
    let node = obj("v1", "Node", "", "kwok-small");
    let node_doc = |taints: &str, cordon: bool| {
        let cordon = if cordon {
            r#","unschedulable":true"#
        } else {
            ""
        };
        Some(format!(
            r#"{{"spec":{{"taints":[{taints}]{cordon}}},"labels":{{"kubernetes.io/hostname":"kwok-small"}}}}"#
        ))
    };
    let kwok = vec![manager(
        "kwok",
        T,
        r#"{"f:metadata":{"f:labels":{"f:kubernetes.io/hostname":{}}}}"#,
    )];
    r.object(
        Seen::Listed,
        T,
        &node,
        None,
        0,
        node_doc("", false),
        kwok.clone(),
    );
    let taint = r#"{"key":"dedicated","value":"batch","effect":"NoSchedule"}"#;
    let mut tainted = kwok.clone();
    tainted.push(manager(
        "kubectl-taint",
        T + 20 * M,
        r#"{"f:spec":{"f:taints":{}}}"#,
    ));
    r.object(
        Seen::Modified,
        T + 20 * M,
        &node,
        None,
        0,
        node_doc(taint, false),
        tainted.clone(),
    );
    let mut cordoned = tainted;
    cordoned.push(manager(
        "kubectl-cordon",
        T + 21 * M,
        r#"{"f:spec":{"f:unschedulable":{}}}"#,
    ));
    r.object(
        Seen::Modified,
        T + 21 * M,
        &node,
        None,
        0,
        node_doc(taint, true),
        cordoned,
    );
    // 03:25 a ConfigMap key changed: its values are never recorded, only that it changed.
    let conf = obj("v1", "ConfigMap", "shop", "web-config");
    let cm = |v: &str| {
        Some(format!(
            r#"{{"data":{{"LOG_LEVEL":"(value not recorded)#{v}"}}}}"#
        ))
    };
    let patch = |at| {
        vec![manager(
            "kubectl-patch",
            at,
            r#"{"f:data":{"f:LOG_LEVEL":{}}}"#,
        )]
    };
    r.object(Seen::Listed, T, &conf, None, 0, cm("1"), patch(T));
    r.object(
        Seen::Modified,
        T + 25 * M,
        &conf,
        None,
        0,
        cm("2"),
        patch(T + 25 * M),
    );
    // 03:30 an operator's CRD established: its type is recorded from then on.
    r.batch.push(Change::Type(TypeChange {
        resource: "databases.drill.example.com".into(),
        api_version: "drill.example.com/v1".into(),
        kind: "Database".into(),
        at: T + 30 * M,
        removed: false,
    }));
    // 03:40 bob scales to zero.
    let at = T + 40 * M;
    let mut by_bob = by_alice;
    by_bob[0] = manager("kubectl-create", T, CREATOR_AFTER_BOB);
    by_bob.push(manager("bob", at, BOB));
    r.object(
        Seen::Modified,
        at,
        &web,
        None,
        3,
        Some(deployment_doc(0, "256Mi")),
        by_bob,
    );
    r.commit();
    path
}

fn changes(db: &Path, args: &[&str]) -> String {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kubectl-diag"))
        .args([
            "changes",
            "--since",
            "2026-11-29T02:59:00Z",
            "--until",
            "2026-11-29T04:00:00Z",
            "--db",
        ])
        .arg(db)
        .args(args)
        .env("NO_COLOR", "1")
        .env("KUBECONFIG", "/nonexistent")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn an_hour_of_changes_fits_the_first_screen_with_each_cause_and_its_writer() {
    let dir = tempfile::tempdir().unwrap();
    let db = recording(dir.path());
    let table = changes(&db, &[]);
    golden("changes_hour.txt", &table);
    assert!(
        table.lines().count() <= 25,
        "the hour fits one screen:\n{table}"
    );
    let line = |needle: &str| -> &str {
        table
            .lines()
            .find(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("no line with {needle}:\n{table}"))
    };
    // The BY cell: after the date, the time and an OBJECT without spaces.
    let by = |needle: &str| -> &str { line(needle).split_whitespace().nth(3).unwrap() };
    assert_eq!(by("limits.memory 512Mi → 256Mi"), "alice");
    assert_eq!(by("spec.replicas 3 → 0"), "bob");
    assert!(
        table
            .lines()
            .any(|l| l.contains("3 Pods of ReplicaSet web-7c9d") && l.contains("deleted")),
        "{table}"
    );
    assert_eq!(
        by("spec.taints[dedicated:NoSchedule] added"),
        "kubectl-taint"
    );
    assert_eq!(by("spec.unschedulable added: true"), "kubectl-cordon");
    assert_eq!(by("data.LOG_LEVEL changed"), "kubectl-patch");
    // A row without a long diff stays narrow, whatever the longest diff.
    for l in table
        .lines()
        .filter(|l| l.contains(" created") || l.contains(" deleted"))
    {
        assert!(l.chars().count() <= 120, "wider than 120 columns: {l}");
    }
    assert!(line("type databases.drill.example.com appeared").contains("(type)"));
}

#[test]
fn wide_and_json_keep_every_change() {
    let dir = tempfile::tempdir().unwrap();
    let db = recording(dir.path());
    let wide = changes(&db, &["-o", "wide"]);
    golden("changes_hour_wide.txt", &wide);
    assert_eq!(
        wide.matches("Pod/web-7c9d-").count(),
        6,
        "3 created and 3 deleted:\n{wide}"
    );
    let json = changes(&db, &["-o", "json"]);
    golden("changes_hour.json", &json);
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    let memory = doc["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["change"] == "spec" && i["kind"] == "Deployment")
        .unwrap();
    assert_eq!(memory["writers"][0], "alice");
    assert_eq!(
        memory["diff"][0]["p"],
        "spec.template.spec.containers[web].resources.limits.memory"
    );
    assert_eq!(memory["diff"][0]["o"], "512Mi");
    assert_eq!(memory["diff"][0]["n"], "256Mi");
}

#[test]
fn a_namespace_leaves_out_nodes_and_types_and_kinds_narrows() {
    let dir = tempfile::tempdir().unwrap();
    let db = recording(dir.path());
    let shop = changes(&db, &["-n", "shop"]);
    assert!(
        !shop.contains("Node/") && !shop.contains("(type)"),
        "{shop}"
    );
    assert!(shop.contains("shop/Deployment/web"), "{shop}");
    let nodes = changes(&db, &["--kinds", "no"]);
    assert!(
        nodes.lines().skip(1).all(|l| l.contains("Node/kwok-small")),
        "{nodes}"
    );
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kubectl-diag"))
        .args(["changes", "--kinds", "widgetz", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--kinds widgetz"));
}
