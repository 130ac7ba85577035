//! The recorded scenarios of the timeline tests, shared by `timeline_golden`
//! and `timeline_screenshot`: each recording is written through the
//! recorder's own writer with fixed times, so what is read back is the same
//! on every machine; and `timeline`, which runs `kubectl-diag timeline` on one.

use std::path::{Path, PathBuf};

use kubectl_diag::model::{
    Change, Condition, ContainerState, EventChange, EventObservation, ManagerEntry, ObjectChange,
    ObjectObservation, ObjectRef, ObjectState, OwnerRef, Requirement, ResourceType, Seen, Taint,
};
use kubectl_diag::model::{Gap, GapReason};
use kubectl_diag::store::writer::Writer;
use kubectl_diag::store::{Mode, Recording};

/// 2026-11-29T03:00:00Z
const T: i64 = 1_795_921_200_000;
const S: i64 = 1_000;

fn obj(api_version: &str, kind: &str, ns: &str, name: &str, uid: &str) -> ObjectRef {
    ObjectRef {
        api_version: api_version.into(),
        kind: kind.into(),
        namespace: ns.into(),
        name: name.into(),
        uid: uid.into(),
        field_path: String::new(),
    }
}

fn owner(kind: &str, name: &str, uid: &str) -> OwnerRef {
    OwnerRef {
        api_version: "apps/v1".into(),
        kind: kind.into(),
        name: name.into(),
        uid: uid.into(),
        controller: true,
    }
}

fn cond(type_: &str, status: &str, reason: &str, message: &str) -> Condition {
    Condition {
        type_: type_.into(),
        status: status.into(),
        reason: reason.into(),
        message: message.into(),
        ..Condition::default()
    }
}

fn writer_entry(manager: &str, subresource: &str, at: i64) -> ManagerEntry {
    ManagerEntry {
        manager: manager.into(),
        operation: "Update".into(),
        subresource: subresource.into(),
        time: Some(at / 1000 * 1000),
        fields: 5,
        fields_v1: String::new(),
    }
}

/// A managedFields entry that owns `fields` (a `fieldsV1` JSON text): the
/// writer store tells who wrote a changed spec field from these.
fn owner_entry(manager: &str, at: i64, fields: &str) -> ManagerEntry {
    ManagerEntry {
        fields_v1: fields.into(),
        ..writer_entry(manager, "", at)
    }
}

struct Rec {
    w: Writer,
    /// The changes of the batch open, stored together by [`Rec::commit`].
    batch: Vec<Change>,
}

impl Rec {
    /// A new recording `file` in `dir` of the cluster `uid` ("prod-eu"), its batch open.
    fn start(dir: &Path, file: &str, uid: &str) -> (PathBuf, Rec) {
        let path = dir.join(file);
        let conn = Recording::open(&path, Mode::Write).unwrap();
        let cluster = conn.register_cluster(uid, "prod-eu", "", T).unwrap();
        let r = Rec {
            w: Writer::new(conn, cluster),
            batch: Vec::new(),
        };
        (path, r)
    }

    /// Stores the changes gathered since the last commit in one batch, and opens the next.
    fn commit(&mut self) {
        let mut b = self.w.begin().unwrap();
        for change in self.batch.drain(..) {
            b.apply_change(&change).unwrap();
        }
        b.commit().unwrap();
    }

    fn object(
        &mut self,
        seen: Seen,
        at: i64,
        object: &ObjectRef,
        created: i64,
        managers: Vec<ManagerEntry>,
        state: ObjectState,
    ) {
        self.object_doc(seen, at, object, created, managers, state, None);
    }

    /// [`Rec::object`] with the spec document the writer diffs (`{"spec":…}`).
    #[allow(clippy::too_many_arguments)]
    fn object_doc(
        &mut self,
        seen: Seen,
        at: i64,
        object: &ObjectRef,
        created: i64,
        managers: Vec<ManagerEntry>,
        state: ObjectState,
        diff_doc: Option<&str>,
    ) {
        self.batch.push(Change::Object(ObjectChange {
            seen,
            at,
            blind_since: None,
            writer: None,
            provenance: kubectl_diag::model::Provenance::Recorded,
            observation: Box::new(ObjectObservation {
                object: object.clone(),
                resource_version: String::new(),
                created: Some(created),
                state,
                managers,
                diff_doc: diff_doc.map(str::to_string),
            }),
        }));
    }

    #[allow(clippy::too_many_arguments)]
    fn event(
        &mut self,
        uid: &str,
        about: &ObjectRef,
        type_: &str,
        reason: &str,
        message: &str,
        count: i64,
        first: i64,
        last: i64,
        controller: &str,
        host: &str,
    ) {
        self.batch.push(Change::Event(EventChange::Upsert(Box::new(
            EventObservation {
                uid: uid.into(),
                namespace: about.namespace.clone(),
                name: format!("{}.{uid}", about.name),
                involved: about.clone(),
                reason: reason.into(),
                type_: type_.into(),
                message: message.into(),
                reporting_controller: controller.into(),
                source_host: host.into(),
                first,
                last,
                count,
                ..EventObservation::default()
            },
        ))));
    }
}

/// A ready Pod of `owner` on `node`, its one container `web` running `image`.
fn running_pod(node: &str, image: &str, owner: OwnerRef) -> ObjectState {
    ObjectState {
        phase: "Running".into(),
        node_name: node.into(),
        images: vec![image.into()],
        owners: vec![owner],
        conditions: vec![cond("Ready", "True", "", "")],
        containers: vec![ContainerState {
            name: "web".into(),
            state: "running".into(),
            ready: true,
            ..ContainerState::default()
        }],
        ..ObjectState::default()
    }
}

/// A ReplicaSet of `owner` at generation 1 (observed), running `image`, wanting
/// `replicas` and, when known, with `ready` of them ready.
fn replica_set_state(
    owner: OwnerRef,
    image: &str,
    replicas: i64,
    ready: Option<i64>,
) -> ObjectState {
    let mut s = ObjectState {
        generation: 1,
        observed_generation: Some(1),
        images: vec![image.into()],
        owners: vec![owner],
        ..ObjectState::default()
    };
    s.replicas.insert("spec.replicas".into(), replicas);
    if let Some(ready) = ready {
        s.replicas.insert("readyReplicas".into(), ready);
    }
    s
}

fn deployment_state(
    generation: i64,
    observed: i64,
    image: &str,
    f: impl FnOnce(&mut ObjectState),
) -> ObjectState {
    let mut s = ObjectState {
        generation,
        observed_generation: Some(observed),
        images: vec![image.into()],
        ..ObjectState::default()
    };
    s.replicas.insert("spec.replicas".into(), 2);
    f(&mut s);
    s
}

/// A Deployment rolled to an image that never gets ready, with its ReplicaSets,
/// Pods, Node, Warnings and a gap in the recording.
pub fn recording(dir: &Path) -> PathBuf {
    let (path, mut r) = Rec::start(dir, "rollout.db", "c0ffee00-0000-4000-8000-000000000001");
    let ns = "shop";
    let deploy = obj(
        "apps/v1",
        "Deployment",
        ns,
        "web",
        "d0000000-0000-4000-8000-000000000001",
    );
    let rs_old = obj(
        "apps/v1",
        "ReplicaSet",
        ns,
        "web-7c9d8f",
        "d0000000-0000-4000-8000-000000000002",
    );
    let rs_new = obj(
        "apps/v1",
        "ReplicaSet",
        ns,
        "web-5f6b4c",
        "d0000000-0000-4000-8000-000000000003",
    );
    let pod_old = obj(
        "v1",
        "Pod",
        ns,
        "web-7c9d8f-a1b2c",
        "d0000000-0000-4000-8000-000000000004",
    );
    let pod_new = obj(
        "v1",
        "Pod",
        ns,
        "web-5f6b4c-x9y8z",
        "d0000000-0000-4000-8000-000000000005",
    );
    let pod_new2 = obj(
        "v1",
        "Pod",
        ns,
        "web-5f6b4c-q7w6e",
        "d0000000-0000-4000-8000-000000000007",
    );
    let node = obj(
        "v1",
        "Node",
        "",
        "kwok-medium",
        "d0000000-0000-4000-8000-000000000006",
    );
    let kcm = |at| vec![writer_entry("kube-controller-manager", "status", at)];

    // Before: the Node, the Deployment, its ReplicaSet and a ready Pod, found by the first list.
    r.object(
        Seen::Listed,
        T,
        &node,
        T - 86_400 * S,
        vec![writer_entry("kwok", "status", T)],
        ObjectState {
            phase: "Running".into(),
            conditions: vec![cond(
                "Ready",
                "True",
                "KubeletReady",
                "kubelet is posting ready status",
            )],
            ..ObjectState::default()
        },
    );
    r.object(
        Seen::Listed,
        T,
        &deploy,
        T - 3_600 * S,
        kcm(T),
        deployment_state(1, 1, "web:1", |s| {
            s.replicas.insert("readyReplicas".into(), 2);
            s.conditions = vec![cond(
                "Available",
                "True",
                "MinimumReplicasAvailable",
                "Deployment has minimum availability.",
            )];
        }),
    );
    let rs_state = replica_set_state(owner("Deployment", "web", &deploy.uid), "web:1", 2, Some(2));
    r.object(
        Seen::Listed,
        T,
        &rs_old,
        T - 3_600 * S,
        kcm(T),
        rs_state.clone(),
    );
    r.object(
        Seen::Listed,
        T,
        &pod_old,
        T - 3_500 * S,
        vec![writer_entry("kwok", "status", T)],
        running_pod(
            "kwok-small",
            "web:1",
            owner("ReplicaSet", "web-7c9d8f", &rs_old.uid),
        ),
    );

    // 03:01:00 someone sets the image to web:broken.
    r.object(
        Seen::Modified,
        T + 60 * S,
        &deploy,
        T - 3_600 * S,
        vec![
            writer_entry("kubectl-set", "", T + 60 * S),
            writer_entry("kube-controller-manager", "status", T),
        ],
        deployment_state(2, 1, "web:broken", |s| {
            s.replicas.insert("readyReplicas".into(), 2);
            s.conditions = vec![cond(
                "Available",
                "True",
                "MinimumReplicasAvailable",
                "Deployment has minimum availability.",
            )];
        }),
    );
    let new_rs = replica_set_state(
        owner("Deployment", "web", &deploy.uid),
        "web:broken",
        2,
        None,
    );
    r.object(
        Seen::Added,
        T + 60 * S + 200,
        &rs_new,
        T + 60 * S,
        kcm(T + 60 * S),
        new_rs,
    );
    r.event(
        "e0000000-0000-4000-8000-000000000001",
        &deploy,
        "Normal",
        "ScalingReplicaSet",
        "Scaled up replica set web-5f6b4c from 0 to 2",
        1,
        T + 60 * S + 100,
        T + 60 * S + 100,
        "deployment-controller",
        "",
    );
    r.object(
        Seen::Modified,
        T + 61 * S,
        &deploy,
        T - 3_600 * S,
        kcm(T + 61 * S),
        deployment_state(2, 2, "web:broken", |s| {
            s.replicas.insert("readyReplicas".into(), 2);
            s.replicas.insert("updatedReplicas".into(), 1);
            s.conditions = vec![
                cond(
                    "Available",
                    "True",
                    "MinimumReplicasAvailable",
                    "Deployment has minimum availability.",
                ),
                cond(
                    "Progressing",
                    "True",
                    "ReplicaSetUpdated",
                    "ReplicaSet \"web-5f6b4c\" is progressing.",
                ),
            ];
        }),
    );
    let pod_state = |node: &str, waiting: bool| ObjectState {
        phase: "Pending".into(),
        node_name: node.into(),
        images: vec!["web:broken".into()],
        owners: vec![owner("ReplicaSet", "web-5f6b4c", &rs_new.uid)],
        conditions: if waiting {
            vec![cond("Ready", "False", "ContainersNotReady", "")]
        } else {
            Vec::new()
        },
        containers: if waiting {
            vec![ContainerState {
                name: "web".into(),
                state: "waiting".into(),
                reason: "ImagePullBackOff".into(),
                ..ContainerState::default()
            }]
        } else {
            Vec::new()
        },
        ..ObjectState::default()
    };
    // Two new Pods, 50 ms apart, that go the same way: the table folds what they say alike.
    for (pod, off, scheduled_uid, failed_uid) in [
        (
            &pod_new,
            0,
            "e0000000-0000-4000-8000-000000000002",
            "e0000000-0000-4000-8000-000000000003",
        ),
        (
            &pod_new2,
            50,
            "e0000000-0000-4000-8000-000000000004",
            "e0000000-0000-4000-8000-000000000005",
        ),
    ] {
        r.object(
            Seen::Added,
            T + 60 * S + 300 + off,
            pod,
            T + 60 * S + 300 + off,
            vec![writer_entry("kube-controller-manager", "", T + 60 * S)],
            pod_state("", false),
        );
        r.event(
            scheduled_uid,
            pod,
            "Normal",
            "Scheduled",
            &format!("Successfully assigned shop/{} to kwok-medium", pod.name),
            1,
            T + 60 * S + 400 + off,
            T + 60 * S + 400 + off,
            "default-scheduler",
            "",
        );
        r.object(
            Seen::Modified,
            T + 60 * S + 500 + off,
            pod,
            T + 60 * S + 300 + off,
            vec![writer_entry("kube-scheduler", "binding", T + 60 * S)],
            pod_state("kwok-medium", false),
        );
        r.object(
            Seen::Modified,
            T + 62 * S + off,
            pod,
            T + 60 * S + 300 + off,
            vec![writer_entry("kwok", "status", T + 62 * S + off)],
            pod_state("kwok-medium", true),
        );
        r.event(
            failed_uid,
            pod,
            "Warning",
            "Failed",
            "Error: ImagePullBackOff",
            1,
            T + 62 * S + off,
            T + 62 * S + off,
            "kubelet",
            "kwok-medium",
        );
    }
    r.commit();

    // 03:03–03:05 the recorder was not running.
    r.w.recording().record_gap(r.w.cluster(), &Gap {
        resources: vec!["events".into()],
        start: T + 180 * S,
        finish: T + 300 * S,
        reason: GapReason::NotRunning,
        detail: "the recorder was not running; resumed from resourceVersion 48213: changes since were replayed".into(),
    })
    .unwrap();
    r.w.recording().record_gap(r.w.cluster(), &Gap {
        resources: vec!["pods/shop".into()],
        start: T + 180 * S,
        finish: T + 300 * S,
        reason: GapReason::NotRunning,
        detail: "the recorder was not running; resumed from resourceVersion 48213: changes since were replayed".into(),
    })
    .unwrap();

    // The pull keeps failing: the kubelet bumps the Event's count up to 9 by 03:08.
    r.event(
        "e0000000-0000-4000-8000-000000000003",
        &pod_new,
        "Warning",
        "Failed",
        "Error: ImagePullBackOff",
        9,
        T + 62 * S,
        T + 480 * S,
        "kubelet",
        "kwok-medium",
    );
    r.event(
        "e0000000-0000-4000-8000-000000000005",
        &pod_new2,
        "Warning",
        "Failed",
        "Error: ImagePullBackOff",
        9,
        T + 62 * S + 50,
        T + 480 * S,
        "kubelet",
        "kwok-medium",
    );
    // 03:11: the progress deadline passes.
    r.object(
        Seen::Modified,
        T + 661 * S,
        &deploy,
        T - 3_600 * S,
        kcm(T + 661 * S),
        deployment_state(2, 2, "web:broken", |s| {
            s.replicas.insert("readyReplicas".into(), 2);
            s.replicas.insert("updatedReplicas".into(), 1);
            s.conditions = vec![
                cond(
                    "Available",
                    "True",
                    "MinimumReplicasAvailable",
                    "Deployment has minimum availability.",
                ),
                cond(
                    "Progressing",
                    "False",
                    "ProgressDeadlineExceeded",
                    "ReplicaSet \"web-5f6b4c\" has timed out progressing.",
                ),
            ];
        }),
    );
    r.commit();
    path
}

/// A Deployment whose Pod only a tainted Node could fit: the scheduler says so, and so does `check`.
pub fn unschedulable(dir: &Path) -> PathBuf {
    let (path, mut r) = Rec::start(
        dir,
        "unschedulable.db",
        "c0ffee00-0000-4000-8000-000000000002",
    );
    let ns = "ml";
    let node = obj(
        "v1",
        "Node",
        "",
        "gpu-1",
        "e1000000-0000-4000-8000-000000000001",
    );
    let deploy = obj(
        "apps/v1",
        "Deployment",
        ns,
        "trainer",
        "e1000000-0000-4000-8000-000000000002",
    );
    let rs = obj(
        "apps/v1",
        "ReplicaSet",
        ns,
        "trainer-6d5c",
        "e1000000-0000-4000-8000-000000000003",
    );
    let pod = obj(
        "v1",
        "Pod",
        ns,
        "trainer-6d5c-k2j4m",
        "e1000000-0000-4000-8000-000000000004",
    );
    r.object(
        Seen::Listed,
        T,
        &node,
        T - 86_400 * S,
        vec![writer_entry("kwok", "status", T)],
        ObjectState {
            conditions: vec![cond("Ready", "True", "KubeletReady", "")],
            taints: vec![Taint {
                key: "dedicated".into(),
                value: "gpu".into(),
                effect: "NoSchedule".into(),
                ..Taint::default()
            }],
            ..ObjectState::default()
        },
    );
    r.object(
        Seen::Added,
        T + 10 * S,
        &deploy,
        T + 10 * S,
        vec![writer_entry("kubectl-client-side-apply", "", T + 10 * S)],
        deployment_state(1, 1, "trainer:3", |s| {
            s.replicas.insert("spec.replicas".into(), 1);
        }),
    );
    let rs_state = replica_set_state(
        owner("Deployment", "trainer", &deploy.uid),
        "trainer:3",
        1,
        None,
    );
    r.object(
        Seen::Added,
        T + 10 * S + 100,
        &rs,
        T + 10 * S,
        vec![writer_entry("kube-controller-manager", "", T + 10 * S)],
        rs_state,
    );
    let message = "0/1 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu}. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.";
    r.object(
        Seen::Added,
        T + 10 * S + 200,
        &pod,
        T + 10 * S + 200,
        vec![writer_entry("kube-controller-manager", "", T + 10 * S)],
        ObjectState {
            phase: "Pending".into(),
            images: vec!["trainer:3".into()],
            owners: vec![owner("ReplicaSet", "trainer-6d5c", &rs.uid)],
            ..ObjectState::default()
        },
    );
    r.object(
        Seen::Modified,
        T + 10 * S + 300,
        &pod,
        T + 10 * S + 200,
        vec![writer_entry("kube-scheduler", "status", T + 10 * S)],
        ObjectState {
            phase: "Pending".into(),
            images: vec!["trainer:3".into()],
            owners: vec![owner("ReplicaSet", "trainer-6d5c", &rs.uid)],
            conditions: vec![cond("PodScheduled", "False", "Unschedulable", message)],
            ..ObjectState::default()
        },
    );
    r.event(
        "e1000000-0000-4000-8000-0000000000e1",
        &pod,
        "Warning",
        "FailedScheduling",
        message,
        4,
        T + 10 * S + 300,
        T + 400 * S,
        "default-scheduler",
        "",
    );
    r.commit();
    path
}

/// The Widget type of `tests/scenarios/widget-crd.yaml`, as discovery gives it: `timeline widget/NAME` resolves through it.
fn widget_type(r: &Rec) {
    r.w.recording()
        .save_resource_types(
            r.w.cluster(),
            &[ResourceType {
                group: "example.com".into(),
                version: "v1".into(),
                kind: "Widget".into(),
                plural: "widgets".into(),
                singular: "widget".into(),
                short_names: vec!["wg".into()],
                namespaced: true,
                verbs: Vec::new(),
            }],
        )
        .unwrap();
}

/// `tests/scenarios/stuck-finalizer.yaml`: a Widget with a finalizer nobody
/// removes (no controller serves example.com); its namespace is deleted at
/// 03:02 and stays Terminating.
pub fn stuck_finalizer(dir: &Path) -> PathBuf {
    let (path, mut r) = Rec::start(
        dir,
        "stuck-finalizer.db",
        "c0ffee00-0000-4000-8000-000000000003",
    );
    widget_type(&r);
    let ns = obj(
        "v1",
        "Namespace",
        "",
        "shop",
        "f1000000-0000-4000-8000-000000000001",
    );
    let widget = obj(
        "example.com/v1",
        "Widget",
        "shop",
        "stuck",
        "f1000000-0000-4000-8000-000000000002",
    );
    let applied = |at| {
        vec![owner_entry(
            "kubectl-client-side-apply",
            at,
            r#"{"f:metadata":{"f:finalizers":{".":{},"v:\"example.com/cleanup\"":{}}},"f:spec":{".":{},"f:size":{}}}"#,
        )]
    };
    let doc = r#"{"spec":{"size":1}}"#;
    r.object(
        Seen::Listed,
        T,
        &ns,
        T - 86_400 * S,
        vec![writer_entry("kubectl-create", "", T - 86_400 * S)],
        ObjectState {
            phase: "Active".into(),
            finalizers: vec!["kubernetes".into()],
            ..ObjectState::default()
        },
    );
    let widget_state = |deletion: Option<i64>| ObjectState {
        generation: 1,
        finalizers: vec!["example.com/cleanup".into()],
        deletion,
        ..ObjectState::default()
    };
    r.object_doc(
        Seen::Listed,
        T,
        &widget,
        T - 3_600 * S,
        applied(T - 3_600 * S),
        widget_state(None),
        Some(doc),
    );
    // 03:02:00 someone deletes the namespace; its controller deletes what is in it.
    let terminating = |conditions: Vec<Condition>| ObjectState {
        phase: "Terminating".into(),
        finalizers: vec!["kubernetes".into()],
        deletion: Some(T + 120 * S),
        conditions,
        ..ObjectState::default()
    };
    r.object(
        Seen::Modified,
        T + 120 * S,
        &ns,
        T - 86_400 * S,
        vec![writer_entry("kubectl-create", "", T - 86_400 * S)],
        terminating(Vec::new()),
    );
    r.object_doc(
        Seen::Modified,
        T + 121 * S,
        &widget,
        T - 3_600 * S,
        applied(T - 3_600 * S),
        widget_state(Some(T + 121 * S)),
        Some(doc),
    );
    r.object(
        Seen::Modified,
        T + 126 * S,
        &ns,
        T - 86_400 * S,
        vec![
            writer_entry("kubectl-create", "", T - 86_400 * S),
            writer_entry("kube-controller-manager", "status", T + 126 * S),
        ],
        terminating(vec![
            cond(
                "NamespaceContentRemaining",
                "True",
                "SomeResourcesRemain",
                "Some resources are remaining: widgets.example.com has 1 resource instances",
            ),
            cond(
                "NamespaceFinalizersRemaining",
                "True",
                "SomeFinalizersRemain",
                "Some content in the namespace has finalizers remaining: example.com/cleanup in 1 resource instances",
            ),
        ]),
    );
    r.commit();
    path
}

/// `tests/scenarios/generation-lag.yaml`: a Widget whose status (written once,
/// at generation 1) never follows its spec, which alice changes twice.
pub fn generation_lag(dir: &Path) -> PathBuf {
    let (path, mut r) = Rec::start(
        dir,
        "generation-lag.db",
        "c0ffee00-0000-4000-8000-000000000004",
    );
    widget_type(&r);
    let widget = obj(
        "example.com/v1",
        "Widget",
        "shop",
        "lagging",
        "f2000000-0000-4000-8000-000000000001",
    );
    let created = T - 1_800 * S;
    let size = r#"{"f:spec":{"f:size":{}}}"#;
    let status = writer_entry("kubectl-patch", "status", created + 5 * S);
    let state = |generation: i64| ObjectState {
        generation,
        observed_generation: Some(1),
        conditions: vec![Condition {
            observed_generation: Some(1),
            ..cond("Ready", "True", "Reconciled", "")
        }],
        ..ObjectState::default()
    };
    r.object_doc(
        Seen::Listed,
        T,
        &widget,
        created,
        vec![
            owner_entry("kubectl-client-side-apply", created, size),
            status.clone(),
        ],
        state(1),
        Some(r#"{"spec":{"size":1}}"#),
    );
    // 03:04 and 03:06 alice edits the spec; nothing observes it.
    for (at, generation, doc) in [
        (T + 240 * S, 2, r#"{"spec":{"size":2}}"#),
        (T + 360 * S, 3, r#"{"spec":{"size":3}}"#),
    ] {
        r.object_doc(
            Seen::Modified,
            at,
            &widget,
            created,
            vec![
                writer_entry("kubectl-client-side-apply", "", created),
                owner_entry("alice", at, size),
                status.clone(),
            ],
            state(generation),
            Some(doc),
        );
    }
    r.commit();
    path
}

/// A Deployment whose memory limit alice cuts from 512Mi to 256Mi at 03:01:
/// the new ReplicaSet's Pod is OOMKilled and restarts in a crash loop, and
/// the rollout never finishes.
pub fn memory_cut(dir: &Path) -> PathBuf {
    let (path, mut r) = Rec::start(dir, "memory-cut.db", "c0ffee00-0000-4000-8000-000000000005");
    let ns = "shop";
    let deploy = obj(
        "apps/v1",
        "Deployment",
        ns,
        "web",
        "f3000000-0000-4000-8000-000000000001",
    );
    let rs_old = obj(
        "apps/v1",
        "ReplicaSet",
        ns,
        "web-6b7d9c",
        "f3000000-0000-4000-8000-000000000002",
    );
    let rs_new = obj(
        "apps/v1",
        "ReplicaSet",
        ns,
        "web-5d4f8b",
        "f3000000-0000-4000-8000-000000000003",
    );
    let pods_old = [
        obj(
            "v1",
            "Pod",
            ns,
            "web-6b7d9c-a1b2c",
            "f3000000-0000-4000-8000-000000000004",
        ),
        obj(
            "v1",
            "Pod",
            ns,
            "web-6b7d9c-d3e4f",
            "f3000000-0000-4000-8000-000000000005",
        ),
    ];
    let pod = obj(
        "v1",
        "Pod",
        ns,
        "web-5d4f8b-m4x7p",
        "f3000000-0000-4000-8000-000000000006",
    );
    let doc = |memory: &str| {
        format!(
            r#"{{"spec":{{"replicas":2,"template":{{"spec":{{"containers":[{{"name":"web","image":"web:1","resources":{{"limits":{{"memory":"{memory}"}}}}}}]}}}}}}}}"#
        )
    };
    // `kubectl create` owns `resources: {}` as present; alice's edit takes the limit.
    let creator = owner_entry(
        "kubectl-create",
        T - 3_600 * S,
        r#"{"f:spec":{"f:replicas":{},"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"web\"}":{".":{},"f:image":{},"f:name":{},"f:resources":{}}}}}}}"#,
    );
    let alice = owner_entry(
        "alice",
        T + 60 * S,
        r#"{"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"web\"}":{"f:resources":{"f:limits":{"f:memory":{}}}}}}}}}"#,
    );
    let kcm = |at| writer_entry("kube-controller-manager", "status", at);
    let available = cond(
        "Available",
        "True",
        "MinimumReplicasAvailable",
        "Deployment has minimum availability.",
    );
    r.object_doc(
        Seen::Listed,
        T,
        &deploy,
        T - 3_600 * S,
        vec![creator.clone(), kcm(T)],
        deployment_state(1, 1, "web:1", |s| {
            s.replicas.insert("readyReplicas".into(), 2);
            s.conditions = vec![available.clone()];
        }),
        Some(&doc("512Mi")),
    );
    let rs_state = replica_set_state(owner("Deployment", "web", &deploy.uid), "web:1", 2, Some(2));
    r.object(
        Seen::Listed,
        T,
        &rs_old,
        T - 3_600 * S,
        vec![kcm(T)],
        rs_state,
    );
    for p in &pods_old {
        r.object(
            Seen::Listed,
            T,
            p,
            T - 3_590 * S,
            vec![writer_entry("kubelet", "status", T)],
            running_pod(
                "kwok-small",
                "web:1",
                owner("ReplicaSet", "web-6b7d9c", &rs_old.uid),
            ),
        );
    }

    // 03:01:00 alice cuts the memory limit.
    r.object_doc(
        Seen::Modified,
        T + 60 * S,
        &deploy,
        T - 3_600 * S,
        vec![creator.clone(), alice.clone(), kcm(T)],
        deployment_state(2, 1, "web:1", |s| {
            s.replicas.insert("readyReplicas".into(), 2);
            s.conditions = vec![available.clone()];
        }),
        Some(&doc("256Mi")),
    );
    let new_rs = replica_set_state(owner("Deployment", "web", &deploy.uid), "web:1", 1, None);
    r.object(
        Seen::Added,
        T + 60 * S + 200,
        &rs_new,
        T + 60 * S,
        vec![kcm(T + 60 * S)],
        new_rs,
    );
    r.event(
        "e3000000-0000-4000-8000-000000000001",
        &deploy,
        "Normal",
        "ScalingReplicaSet",
        "Scaled up replica set web-5d4f8b from 0 to 1",
        1,
        T + 60 * S + 100,
        T + 60 * S + 100,
        "deployment-controller",
        "",
    );
    let progressing = |status: &str, reason: &str, message: &str| {
        deployment_state(2, 2, "web:1", |s| {
            s.replicas.insert("readyReplicas".into(), 2);
            s.replicas.insert("updatedReplicas".into(), 1);
            s.conditions = vec![
                available.clone(),
                cond("Progressing", status, reason, message),
            ];
        })
    };
    r.object_doc(
        Seen::Modified,
        T + 61 * S,
        &deploy,
        T - 3_600 * S,
        vec![creator.clone(), alice.clone(), kcm(T + 61 * S)],
        progressing(
            "True",
            "ReplicaSetUpdated",
            "ReplicaSet \"web-5d4f8b\" is progressing.",
        ),
        Some(&doc("256Mi")),
    );
    let created = T + 60 * S + 300;
    let pod_state = |node: &str, container: Option<ContainerState>| ObjectState {
        phase: if container.is_some() {
            "Running".into()
        } else {
            "Pending".into()
        },
        node_name: node.into(),
        images: vec!["web:1".into()],
        owners: vec![owner("ReplicaSet", "web-5d4f8b", &rs_new.uid)],
        conditions: if container.is_some() {
            vec![Condition {
                last_transition: Some(created),
                ..cond(
                    "Ready",
                    "False",
                    "ContainersNotReady",
                    "containers with unready status: [web]",
                )
            }]
        } else {
            Vec::new()
        },
        containers: container.into_iter().collect(),
        ..ObjectState::default()
    };
    let kubelet = |at| vec![writer_entry("kubelet", "status", at)];
    r.object(
        Seen::Added,
        created,
        &pod,
        created,
        vec![writer_entry("kube-controller-manager", "", T + 60 * S)],
        pod_state("", None),
    );
    r.event(
        "e3000000-0000-4000-8000-000000000002",
        &pod,
        "Normal",
        "Scheduled",
        "Successfully assigned shop/web-5d4f8b-m4x7p to kwok-medium",
        1,
        created + 100,
        created + 100,
        "default-scheduler",
        "",
    );
    r.object(
        Seen::Modified,
        created + 200,
        &pod,
        created,
        vec![writer_entry("kube-scheduler", "binding", T + 60 * S)],
        pod_state("kwok-medium", None),
    );
    // It starts, is killed for its memory 8 s later, and crash-loops from then on.
    r.object(
        Seen::Modified,
        T + 63 * S,
        &pod,
        created,
        kubelet(T + 63 * S),
        pod_state(
            "kwok-medium",
            Some(ContainerState {
                name: "web".into(),
                state: "running".into(),
                ..ContainerState::default()
            }),
        ),
    );
    r.object(
        Seen::Modified,
        T + 71 * S,
        &pod,
        created,
        kubelet(T + 71 * S),
        pod_state(
            "kwok-medium",
            Some(ContainerState {
                name: "web".into(),
                state: "terminated".into(),
                reason: "OOMKilled".into(),
                exit_code: Some(137),
                ..ContainerState::default()
            }),
        ),
    );
    for (at, restarts) in [(72, 1), (95, 2), (135, 3), (215, 4), (370, 5), (680, 6)] {
        r.object(
            Seen::Modified,
            T + at * S,
            &pod,
            created,
            kubelet(T + at * S),
            pod_state(
                "kwok-medium",
                Some(ContainerState {
                    name: "web".into(),
                    state: "waiting".into(),
                    reason: "CrashLoopBackOff".into(),
                    restarts,
                    last_reason: "OOMKilled".into(),
                    last_exit_code: Some(137),
                    ..ContainerState::default()
                }),
            ),
        );
    }
    r.event(
        "e3000000-0000-4000-8000-000000000003",
        &pod,
        "Warning",
        "BackOff",
        "Back-off restarting failed container web in pod web-5d4f8b-m4x7p_shop(f3000000-0000-4000-8000-000000000006)",
        31,
        T + 72 * S,
        T + 840 * S,
        "kubelet",
        "kwok-medium",
    );
    // 03:11:01 the progress deadline passes.
    r.object_doc(
        Seen::Modified,
        T + 661 * S,
        &deploy,
        T - 3_600 * S,
        vec![creator, alice, kcm(T + 661 * S)],
        progressing(
            "False",
            "ProgressDeadlineExceeded",
            "ReplicaSet \"web-5d4f8b\" has timed out progressing.",
        ),
        Some(&doc("256Mi")),
    );
    r.commit();
    path
}

/// A fight: from 03:05:30 on, every 5 s, widget-autoscaler sets the Widget
/// `contested`'s spec.size to 5 and argocd-controller sets it back to 3 (as
/// two field managers flipping one field do), 110 writes in all.
pub fn fight(dir: &Path) -> PathBuf {
    let (path, mut r) = Rec::start(dir, "fight.db", "c0ffee00-0000-4000-8000-000000000006");
    widget_type(&r);
    let widget = obj(
        "example.com/v1",
        "Widget",
        "shop",
        "contested",
        "f4000000-0000-4000-8000-000000000001",
    );
    let created = T - 7_200 * S;
    let argocd = |at, owns_size: bool| {
        owner_entry(
            "argocd-controller",
            at,
            if owns_size {
                r#"{"f:metadata":{"f:labels":{"f:app.kubernetes.io/instance":{}}},"f:spec":{"f:size":{}}}"#
            } else {
                r#"{"f:metadata":{"f:labels":{"f:app.kubernetes.io/instance":{}}}}"#
            },
        )
    };
    let state = |generation: i64| ObjectState {
        generation,
        ..ObjectState::default()
    };
    r.object_doc(
        Seen::Listed,
        T,
        &widget,
        created,
        vec![argocd(created, true)],
        state(1),
        Some(r#"{"spec":{"size":3}}"#),
    );
    for i in 0..110_i64 {
        let at = T + 330 * S + i * 5 * S;
        // NB: writing a field takes its ownership: the autoscaler's entry holds
        // spec.size only while its value stands, and is gone (empty) otherwise.
        let (managers, doc) = if i % 2 == 0 {
            (
                vec![
                    argocd(at - 5 * S, false),
                    owner_entry("widget-autoscaler", at, r#"{"f:spec":{"f:size":{}}}"#),
                ],
                r#"{"spec":{"size":5}}"#,
            )
        } else {
            (vec![argocd(at, true)], r#"{"spec":{"size":3}}"#)
        };
        r.object_doc(
            Seen::Modified,
            at,
            &widget,
            created,
            managers,
            state(2 + i),
            Some(doc),
        );
    }
    r.commit();
    path
}

/// A Pod `shop/web-1` (app=web) that lived from 02:50 to 03:02, and three
/// Services: `web`, which selected it all along; `late`, made at 03:05 with
/// the same selector; `relabelled`, which selected app=api until 03:06 and
/// app=web after. Only `web` ever selected the Pod while it lived (issue 47).
pub fn selectors_in_time(dir: &Path) -> PathBuf {
    let (path, mut r) = Rec::start(dir, "selectors.db", "c0ffee00-0000-4000-8000-000000000007");
    let selecting = |app: &str| ObjectState {
        pod_selector: vec![Requirement {
            key: "app".into(),
            operator: "In".into(),
            values: vec![app.into()],
        }],
        ..ObjectState::default()
    };
    let svc = |name: &str, uid: &str| obj("v1", "Service", "shop", name, uid);
    let web = svc("web", "f5000000-0000-4000-8000-000000000001");
    let late = svc("late", "f5000000-0000-4000-8000-000000000002");
    let relabelled = svc("relabelled", "f5000000-0000-4000-8000-000000000003");
    let pod = obj(
        "v1",
        "Pod",
        "shop",
        "web-1",
        "f5000000-0000-4000-8000-000000000004",
    );
    let (created, gone) = (T - 600 * S, T + 120 * S);
    r.object(
        Seen::Listed,
        T - 1_200 * S,
        &web,
        T - 3_600 * S,
        vec![],
        selecting("web"),
    );
    r.object(
        Seen::Listed,
        T - 1_200 * S,
        &relabelled,
        T - 3_600 * S,
        vec![],
        selecting("api"),
    );
    let mut labels = std::collections::BTreeMap::new();
    labels.insert("app".to_string(), "web".to_string());
    let pod_state = ObjectState {
        phase: "Running".into(),
        labels,
        ..ObjectState::default()
    };
    r.object(
        Seen::Added,
        created,
        &pod,
        created,
        vec![],
        pod_state.clone(),
    );
    r.object(Seen::Deleted, gone, &pod, created, vec![], pod_state);
    r.object(
        Seen::Added,
        T + 300 * S,
        &late,
        T + 300 * S,
        vec![],
        selecting("web"),
    );
    r.object(
        Seen::Modified,
        T + 360 * S,
        &relabelled,
        T - 3_600 * S,
        vec![],
        selecting("web"),
    );
    r.commit();
    path
}

/// `kubectl-diag timeline deploy/web -n shop` of the recording `db`, in `format`, until 03:15.
pub fn timeline(db: &Path, format: &str) -> String {
    timeline_of(db, "deploy/web", "shop", format)
}

pub fn timeline_of(db: &Path, object: &str, namespace: &str, format: &str) -> String {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kubectl-diag"))
        .args([
            "timeline",
            object,
            "-n",
            namespace,
            "--until",
            "2026-11-29T03:15:00Z",
            "-o",
            format,
            "--db",
        ])
        .arg(db)
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
