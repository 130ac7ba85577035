//! Golden output of `kubectl diag check` (table), one file per incident, and
//! the first-screen rule: the cause (the taint, the label, the resource, the
//! finalizer and its object) is within the first 25 lines.
//!
//! No cluster: each incident is plain data. The objects are written as the
//! apiserver returns them (the scenario manifests of tests/scenarios and the
//! test cluster's Nodes, tests/cluster/nodes.yaml, with the status the
//! cluster gave them) and go through the same decoder, relevance filter and
//! checks as a live `check`, then the real table renderer. Times are fixed,
//! so the output is the same on every machine. `UPDATE_GOLDEN=1` rewrites the
//! files after a deliberate change.

use crate::support::golden_file;
use golden_file::golden;

use std::path::Path;

use kube::core::ApiResource;
use kubectl_diag::checks::scheduling_causes::{Origin, Usage};
use kubectl_diag::checks::{self, Options, Relevance, Snapshot};
use kubectl_diag::cli::CheckOutput;
use kubectl_diag::commands::check::{Source, render};
use kubectl_diag::k8s::object::WireObject;
use kubectl_diag::model::RecordedObject;
use kubectl_diag::render::Paint;
use serde_json::{Value, json};

/// 2026-11-30T03:00:00Z: the moment every incident is checked at.
const T: i64 = 1_796_007_600_000;
const MIN: i64 = 60_000;

/// `T - minutes`, as the apiserver writes times.
fn ago(minutes: i64) -> String {
    kubectl_diag::units::rfc3339(T - minutes * MIN)
}

fn repo(path: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

fn yaml(path: &str) -> Vec<Value> {
    let text = std::fs::read_to_string(repo(path)).unwrap();
    serde_saphyr::from_str_multiple::<Value, _>(&text).unwrap()
}

/// The one object of a scenario manifest with this kind and name.
fn scenario(file: &str, kind: &str, name: &str) -> Value {
    yaml(&format!("tests/scenarios/{file}"))
        .into_iter()
        .find(|d| d["kind"] == kind && d["metadata"]["name"] == name)
        .unwrap_or_else(|| panic!("{file} has no {kind}/{name}"))
}

/// Merges `patch` into `doc` (objects key by key, anything else replaced).
fn merge(doc: &mut Value, patch: Value) {
    match (doc, patch) {
        (Value::Object(d), Value::Object(p)) => {
            for (k, v) in p {
                merge(d.entry(k).or_insert(Value::Null), v);
            }
        }
        (d, p) => *d = p,
    }
}

const PREEMPTION: &str =
    " preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.";

/// One incident's cluster: what the apiserver would list, plus what a
/// recording adds (when taints began, and who wrote them).
struct Cluster {
    docs: Vec<Value>,
    origins: Vec<Origin>,
    /// uid -> since when its current generation exists (live: managedFields).
    generation_since: Vec<(String, i64)>,
    /// The Warning Events the apiserver still holds.
    events: Vec<kubectl_diag::model::EventSummary>,
}

impl Cluster {
    /// The test cluster's three KWOK Nodes, Ready.
    fn new() -> Cluster {
        let mut docs = yaml("tests/cluster/nodes.yaml");
        for n in &mut docs {
            let name = n["metadata"]["name"].as_str().unwrap().to_string();
            merge(
                n,
                json!({"metadata": {"uid": format!("uid-{name}"), "creationTimestamp": ago(600)},
                       "status": {"conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                                                  "lastTransitionTime": ago(600)}]}}),
            );
        }
        Cluster {
            docs,
            origins: Vec::new(),
            generation_since: Vec::new(),
            events: Vec::new(),
        }
    }

    /// Adds `doc` in `namespace` (empty: cluster-scoped), with a uid and a creation time.
    fn add(&mut self, namespace: &str, mut doc: Value) -> &mut Cluster {
        let name = doc["metadata"]["name"].as_str().unwrap().to_string();
        let kind = doc["kind"].as_str().unwrap().to_string();
        let mut meta = json!({"uid": format!("uid-{kind}-{namespace}-{name}")});
        if doc["metadata"]["creationTimestamp"].is_null() {
            meta["creationTimestamp"] = json!(ago(60));
        }
        if !namespace.is_empty() {
            meta["namespace"] = json!(namespace);
        }
        merge(&mut doc, json!({ "metadata": meta }));
        self.docs.push(doc);
        self
    }

    /// Adds a Namespace.
    fn namespace(&mut self, name: &str) -> &mut Cluster {
        self.add(
            "",
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name},
                   "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}}),
        )
    }

    /// Taints every Node, as `kubectl taint nodes --all` did `minutes` ago.
    fn taint_all(&mut self, key: &str, value: &str, minutes: i64) -> &mut Cluster {
        for n in self.docs.iter_mut().filter(|d| d["kind"] == "Node") {
            let name = n["metadata"]["name"].as_str().unwrap().to_string();
            let taints = n["spec"]["taints"].as_array().cloned().unwrap_or_default();
            let mut taints = taints;
            taints.push(json!({"key": key, "value": value, "effect": "NoSchedule"}));
            n["spec"]["taints"] = json!(taints);
            self.origins.push(Origin {
                node: name,
                what: format!("{key}={value}:NoSchedule"),
                since: T - minutes * MIN,
                by: vec!["kubectl-taint".into()],
                owned: true,
                from_fields: false,
            });
        }
        self
    }

    /// `n` Pending Pods of ReplicaSet `rs` in `namespace`, each with `spec`,
    /// and the scheduler's `message`.
    fn pending(
        &mut self,
        namespace: &str,
        rs: &str,
        n: usize,
        spec: Value,
        message: &str,
    ) -> &mut Cluster {
        for i in 0..n {
            let pod = json!({
                "apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": format!("{rs}-{i:05x}"), "ownerReferences": [{
                    "apiVersion": "apps/v1", "kind": "ReplicaSet", "name": rs,
                    "uid": format!("uid-rs-{rs}"), "controller": true}]},
                "spec": spec.clone(),
                "status": unschedulable_status(message, 3),
            });
            self.add(namespace, pod);
        }
        self
    }

    /// The snapshot a live `check` builds of this cluster: every object
    /// decoded from its wire form, what a bound Pod requests counted, and only
    /// what a check may need kept.
    fn snapshot(&self) -> Snapshot {
        let mut all: Vec<RecordedObject> = self.docs.iter().map(decode).collect();
        for o in &mut all {
            if let Some((_, since)) = self
                .generation_since
                .iter()
                .find(|(uid, _)| *uid == o.object.uid)
            {
                o.generation_since = Some(*since);
            }
        }
        // NB: both snapshot paths see Namespaces first (Relevance needs them);
        // the apiserver lists each type by namespace and name.
        all.sort_by(|a, b| {
            (
                a.object.kind != "Namespace",
                &a.object.namespace,
                &a.object.name,
            )
                .cmp(&(
                    b.object.kind != "Namespace",
                    &b.object.namespace,
                    &b.object.name,
                ))
        });
        let mut relevance = Relevance::default();
        let mut usage = Usage::default();
        let mut objects = Vec::new();
        for o in all {
            usage.add(&o);
            if relevance.keep(&o) {
                objects.push(o);
            }
        }
        Snapshot {
            at: T,
            objects,
            has_objects: true,
            window_ms: 10 * MIN,
            origins: self.origins.clone(),
            usage,
            events: self.events.clone(),
            ..Snapshot::default()
        }
    }

    fn report(&self) -> checks::Report {
        checks::run(&self.snapshot(), &[], &Options::default())
    }

    /// `kubectl diag check` of this cluster, as a table.
    fn check(&self) -> String {
        let report = self.report();
        let source = Source {
            kind: "recording",
            cluster: "kwok-golden (7d1f4f5e-2b1c-4c55-9a43-2f0c3f1f0e11)".into(),
            at: T,
        };
        let mut out = Vec::new();
        render(
            &report,
            &source,
            CheckOutput::Table,
            &mut out,
            Paint::default(),
        )
        .unwrap();
        String::from_utf8(out).unwrap()
    }
}

/// A Pod's status as the scheduler leaves it when no node fits.
fn unschedulable_status(message: &str, minutes: i64) -> Value {
    json!({"phase": "Pending", "conditions": [{
        "type": "PodScheduled", "status": "False", "reason": "Unschedulable",
        "message": message, "lastTransitionTime": ago(minutes)}]})
}

/// The wire object as live `check` decodes it.
fn decode(doc: &Value) -> RecordedObject {
    let api_version = doc["apiVersion"].as_str().unwrap();
    let kind = doc["kind"].as_str().unwrap();
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    let ar = ApiResource {
        group: group.into(),
        version: version.into(),
        api_version: api_version.into(),
        kind: kind.into(),
        plural: format!("{}s", kind.to_lowercase()),
    };
    let wire: WireObject = serde_json::from_value(doc.clone()).unwrap();
    let o = wire.into_observation(&ar);
    RecordedObject {
        object: o.object,
        created: o.created,
        state: o.state,
        ..RecordedObject::default()
    }
}

/// The first-screen rule: each cause is within the first 25 lines. Checked
/// before the golden comparison, so a golden file never hides a cause pushed
/// off the screen.
fn first_screen(table: &str, causes: &[&str]) {
    let screen: String = table.lines().take(25).collect::<Vec<_>>().join("\n");
    for cause in causes {
        assert!(
            screen.contains(cause),
            "{cause:?} is not within the first 25 lines:\n{screen}\n--- whole output ---\n{table}"
        );
    }
}

/// A Widget with a finalizer nobody removes, in a namespace being deleted.
fn stuck_namespace(c: &mut Cluster, ns: &str) {
    c.add("", json!({"apiVersion": "v1", "kind": "Namespace",
        "metadata": {"name": ns, "deletionTimestamp": ago(12), "creationTimestamp": ago(60)},
        "spec": {"finalizers": ["kubernetes"]},
        "status": {"phase": "Terminating", "conditions": [
            {"type": "NamespaceDeletionDiscoveryFailure", "status": "False", "reason": "ResourcesDiscovered",
             "message": "All resources successfully discovered", "lastTransitionTime": ago(12)},
            {"type": "NamespaceContentRemaining", "status": "True", "reason": "SomeResourcesRemain",
             "message": "Some resources are remaining: widgets.example.com has 1 resource instances",
             "lastTransitionTime": ago(12)},
            {"type": "NamespaceFinalizersRemaining", "status": "True", "reason": "SomeFinalizersRemain",
             "message": "Some content in the namespace has finalizers remaining: example.com/cleanup in 1 resource instances",
             "lastTransitionTime": ago(12)}]}}));
}

#[test]
fn generation_lag() {
    let mut c = Cluster::new();
    c.add(
        "",
        scenario(
            "widget-crd.yaml",
            "CustomResourceDefinition",
            "widgets.example.com",
        ),
    );
    c.namespace("shop");
    let mut w = scenario("generation-lag.yaml", "Widget", "lagging");
    merge(
        &mut w,
        json!({"metadata": {"generation": 2}, "spec": {"size": 2},
               "status": {"observedGeneration": 1, "conditions": [{"type": "Ready", "status": "True",
                          "reason": "Reconciled", "observedGeneration": 1, "lastTransitionTime": ago(30)}]}}),
    );
    c.add("shop", w);
    c.generation_since
        .push(("uid-Widget-shop-lagging".into(), T - 9 * MIN));
    let table = c.check();
    first_screen(
        &table,
        &[
            "Widget/lagging",
            "generation 2 not observed for 9m (status.observedGeneration 1); expected observer: no controller found for example.com",
            "condition(s) Ready=True describe an older generation than 2",
        ],
    );
    golden("check_generation-lag.txt", &table);
}

#[test]
fn never_ready() {
    let mut c = Cluster::new();
    c.namespace("shop");
    let mut d = scenario("never-ready.yaml", "Deployment", "web");
    merge(
        &mut d,
        json!({"metadata": {"generation": 1},
               "status": {"observedGeneration": 1, "replicas": 2, "updatedReplicas": 2, "unavailableReplicas": 2,
                          "conditions": [{"type": "Available", "status": "False", "reason": "MinimumReplicasUnavailable",
                                          "message": "Deployment does not have minimum availability."}]}}),
    );
    c.add("shop", d);
    for i in 0..2 {
        c.add("shop", json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": format!("web-5d8f6c-{i}"), "ownerReferences": [{"apiVersion": "apps/v1",
                "kind": "ReplicaSet", "name": "web-5d8f6c", "uid": "uid-rs-web", "controller": true}]},
            "spec": {"nodeName": "kwok-small", "containers": [{"name": "web", "image": "web:broken"}]},
            "status": {"phase": "Pending", "containerStatuses": [{"name": "web", "ready": false, "restartCount": 0,
                "state": {"waiting": {"reason": "ImagePullBackOff", "message": "Back-off pulling image \"web:broken\""}}}]}}));
    }
    let table = c.check();
    first_screen(&table, &["ImagePullBackOff", "web:broken"]);
    golden("check_never-ready.txt", &table);
}

#[test]
fn stuck_finalizer() {
    let mut c = Cluster::new();
    c.add(
        "",
        scenario(
            "widget-crd.yaml",
            "CustomResourceDefinition",
            "widgets.example.com",
        ),
    );
    stuck_namespace(&mut c, "shop");
    let mut w = scenario("stuck-finalizer.yaml", "Widget", "stuck");
    merge(&mut w, json!({"metadata": {"deletionTimestamp": ago(12)}}));
    c.add("shop", w);
    let table = c.check();
    first_screen(
        &table,
        &[
            "Namespace/shop",
            "Widget/stuck (example.com/cleanup; expected remover: no controller found for example.com)",
            "held by finalizer(s) example.com/cleanup: expected remover of example.com/cleanup: no controller found for example.com",
        ],
    );
    golden("check_stuck-finalizer.txt", &table);
}

#[test]
fn unschedulable() {
    let mut c = Cluster::new();
    c.namespace("shop");
    let mut big = scenario("unschedulable.yaml", "Pod", "too-big");
    merge(
        &mut big,
        json!({"status": unschedulable_status(&format!("0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 Insufficient cpu.{PREEMPTION}"), 8)}),
    );
    let mut ssd = scenario("unschedulable.yaml", "Pod", "wants-ssd");
    merge(
        &mut ssd,
        json!({"status": unschedulable_status(&format!("0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 node(s) didn't match Pod's node affinity/selector.{PREEMPTION}"), 8)}),
    );
    c.add("shop", big).add("shop", ssd);
    let table = c.check();
    first_screen(
        &table,
        &[
            "Pod/too-big",
            "taint dedicated=batch:NoSchedule on 1 node (kwok-large-tainted)",
            "Insufficient cpu: the Pod requests 100 cpu; the most free on any node is 16 cpu (kwok-large-tainted)",
            "Pod/wants-ssd",
            "nodeSelector disktype=ssd: 3 of 3 nodes lack it",
        ],
    );
    golden("check_unschedulable.txt", &table);
}

/// The type whose controller does not exist: what it leaves undone names it.
#[test]
fn widget_crd() {
    let mut c = Cluster::new();
    c.add(
        "",
        scenario(
            "widget-crd.yaml",
            "CustomResourceDefinition",
            "widgets.example.com",
        ),
    );
    c.namespace("shop");
    let mut stuck = scenario("stuck-finalizer.yaml", "Widget", "stuck");
    merge(
        &mut stuck,
        json!({"metadata": {"deletionTimestamp": ago(20)}}),
    );
    let mut lagging = scenario("generation-lag.yaml", "Widget", "lagging");
    merge(
        &mut lagging,
        json!({"metadata": {"generation": 3}, "status": {"observedGeneration": 1}}),
    );
    c.add("shop", stuck).add("shop", lagging);
    c.generation_since
        .push(("uid-Widget-shop-lagging".into(), T - 20 * MIN));
    let table = c.check();
    first_screen(
        &table,
        &[
            "Widget/stuck",
            "expected remover of example.com/cleanup: no controller found for example.com",
            "Widget/lagging",
            "expected observer: no controller found for example.com",
        ],
    );
    golden("check_widget-crd.txt", &table);
}

#[test]
fn all_nodes_tainted() {
    let mut c = Cluster::new();
    c.namespace("shop");
    c.taint_all("drill/maintenance", "true", 25);
    c.pending(
        "shop",
        "web-7c9d5b",
        3,
        json!({"containers": [{"name": "web", "image": "web:1"}]}),
        &format!("0/3 nodes are available: 3 node(s) had untolerated taint(s).{PREEMPTION}"),
    );
    let table = c.check();
    first_screen(
        &table,
        &[
            "3 Pods of ReplicaSet/web-7c9d5b",
            "taint drill/maintenance=true:NoSchedule on 3 nodes (kwok-large-tainted, kwok-medium, kwok-small) since 2026-11-30T02:35:00Z by kubectl-taint",
        ],
    );
    golden("check_all-nodes-tainted.txt", &table);
}

#[test]
fn node_selector_no_node_matches() {
    let mut c = Cluster::new();
    c.namespace("shop");
    c.pending(
        "shop",
        "db-6f8b9c",
        2,
        json!({"nodeSelector": {"disktype": "ssd", "diag.test/size": "large"},
               "tolerations": [{"key": "dedicated", "operator": "Equal", "value": "batch", "effect": "NoSchedule"}],
               "containers": [{"name": "db", "image": "db:1"}]}),
        &format!("0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector.{PREEMPTION}"),
    );
    let table = c.check();
    first_screen(
        &table,
        &[
            "2 Pods of ReplicaSet/db-6f8b9c",
            "nodeSelector disktype=ssd: 3 of 3 nodes lack it (kwok-large-tainted, kwok-medium, kwok-small)",
        ],
    );
    // Only what excludes some Node is named: every Node could match one label alone.
    assert!(
        table.contains("nodeSelector diag.test/size=large: 2 of 3 nodes lack it"),
        "{table}"
    );
    golden("check_node-selector.txt", &table);
}

#[test]
fn pods_too_big() {
    let mut c = Cluster::new();
    c.namespace("shop");
    // What runs already: 12.5 of the large Node's 16 CPUs.
    c.add(
        "shop",
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "batch-0"},
        "spec": {"nodeName": "kwok-large-tainted", "containers": [{"name": "b", "image": "b:1",
                 "resources": {"requests": {"cpu": "12500m"}}}]},
        "status": {"phase": "Running"}}),
    );
    c.pending(
        "shop",
        "render-59d7f",
        4,
        json!({"tolerations": [{"operator": "Exists"}],
               "containers": [{"name": "render", "image": "render:1", "resources": {"requests": {"cpu": "8"}}}]}),
        "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.",
    );
    let table = c.check();
    first_screen(
        &table,
        &[
            "4 Pods of ReplicaSet/render-59d7f",
            "Insufficient cpu: the Pod requests 8 cpu; the most free on any node is 4 cpu (kwok-medium)",
        ],
    );
    golden("check_pods-too-big.txt", &table);
}

/// 300 Pending Pods of two Deployments once took 300 lines before any cause.
#[test]
fn three_hundred_pods_of_two_deployments() {
    let mut c = Cluster::new();
    c.namespace("shop");
    c.taint_all("drill/maintenance", "true", 40);
    c.pending(
        "shop",
        "web-5c4f8d",
        150,
        json!({"containers": [{"name": "web", "image": "web:1"}]}),
        &format!("0/3 nodes are available: 3 node(s) had untolerated taint(s).{PREEMPTION}"),
    );
    c.pending(
        "shop",
        "api-77aa6b",
        150,
        json!({"tolerations": [{"operator": "Exists"}],
               "containers": [{"name": "api", "image": "api:1", "resources": {"requests": {"memory": "128Gi"}}}]}),
        &format!("0/3 nodes are available: 3 Insufficient memory.{PREEMPTION}"),
    );
    let table = c.check();
    first_screen(
        &table,
        &[
            "SCHEDULING (300)",
            "150 Pods of ReplicaSet/web-5c4f8d",
            "taint drill/maintenance=true:NoSchedule on 3 nodes",
            "150 Pods of ReplicaSet/api-77aa6b",
            "Insufficient memory: the Pod requests 128Gi memory; the most free on any node is 64Gi memory (kwok-large-tainted)",
            "(300 unschedulable Pod(s))",
        ],
    );
    golden("check_300-pods.txt", &table);
}

/// A namespace held by a custom resource whose operator was uninstalled, next
/// to another stuck object elsewhere.
#[test]
fn namespace_stuck_by_a_custom_resource_finalizer() {
    let mut c = Cluster::new();
    c.namespace("shop");
    c.add("", json!({"apiVersion": "v1", "kind": "Namespace",
        "metadata": {"name": "drill", "deletionTimestamp": ago(30), "creationTimestamp": ago(120)},
        "spec": {"finalizers": ["kubernetes"]},
        "status": {"phase": "Terminating", "conditions": [
            {"type": "NamespaceContentRemaining", "status": "True", "reason": "SomeResourcesRemain",
             "message": "Some resources are remaining: databases.drill.example.com has 2 resource instances",
             "lastTransitionTime": ago(30)},
            {"type": "NamespaceFinalizersRemaining", "status": "True", "reason": "SomeFinalizersRemain",
             "message": "Some content in the namespace has finalizers remaining: drill.example.com/backup in 2 resource instances",
             "lastTransitionTime": ago(30)}]}}));
    for name in ["users", "orders"] {
        c.add("drill", json!({"apiVersion": "drill.example.com/v1", "kind": "Database",
            "metadata": {"name": name, "deletionTimestamp": ago(30), "finalizers": ["drill.example.com/backup"]},
            "spec": {"size": "10Gi"}}));
    }
    // Elsewhere: a ConfigMap nobody releases (listed before drill's objects)
    // and a claim still mounted by a running Pod.
    c.add("apps", json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "lock", "deletionTimestamp": ago(20), "finalizers": ["apps.example.com/release"]},
        "data": {"owner": "job-1"}}));
    c.add("shop", json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
        "metadata": {"name": "data", "deletionTimestamp": ago(15), "finalizers": ["kubernetes.io/pvc-protection"]},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
        "status": {"phase": "Bound"}}));
    c.add(
        "shop",
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web-0"},
        "spec": {"nodeName": "kwok-medium", "containers": [{"name": "web", "image": "web:1"}],
                 "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}]},
        "status": {"phase": "Running"}}),
    );
    let table = c.check();
    first_screen(
        &table,
        &[
            "Namespace/drill",
            "Database/orders (drill.example.com/backup; expected remover: no controller found for drill.example.com)",
            "Database/users",
            "PersistentVolumeClaim/data",
            "still used by Pod web-0",
        ],
    );
    // The namespace's line, then what holds it, by name; then the rest.
    let objects: Vec<&str> = table
        .lines()
        .filter_map(|l| l.split_whitespace().find(|w| w.contains('/')))
        .collect();
    assert_eq!(
        objects,
        [
            "Namespace/drill",
            "Database/orders",
            "Database/users",
            "ConfigMap/lock",
            "PersistentVolumeClaim/data"
        ],
        "{table}"
    );
    assert!(table.contains(" └ Database/orders "), "{table}");
    golden("check_namespace-custom-finalizer.txt", &table);
}

/// A Pod whose claim is bound to a volume in a zone no Node is in: the
/// scheduler says only "didn't match PersistentVolume's node affinity".
#[test]
fn volume_node_affinity_conflict() {
    let mut c = Cluster::new();
    for n in c.docs.iter_mut().filter(|d| d["kind"] == "Node") {
        let zone = if n["metadata"]["name"] == "kwok-small" {
            "eu-1c"
        } else {
            "eu-1b"
        };
        n["metadata"]["labels"]["topology.kubernetes.io/zone"] = json!(zone);
    }
    c.namespace("shop");
    c.add("", json!({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv-orders-0"},
        "spec": {"capacity": {"storage": "10Gi"}, "accessModes": ["ReadWriteOnce"], "storageClassName": "zonal",
                 "claimRef": {"namespace": "shop", "name": "data-orders-0"},
                 "csi": {"driver": "disk.example.com", "volumeHandle": "vol-0a1b"},
                 "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                     {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["eu-1a"]}]}]}}},
        "status": {"phase": "Bound"}}));
    c.add("shop", json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data-orders-0"},
        "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "zonal", "volumeName": "pv-orders-0",
                 "resources": {"requests": {"storage": "10Gi"}}},
        "status": {"phase": "Bound"}}));
    c.add("shop", json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "orders-0", "ownerReferences": [{"apiVersion": "apps/v1", "kind": "StatefulSet",
            "name": "orders", "uid": "uid-sts-orders", "controller": true}]},
        "spec": {"tolerations": [{"operator": "Exists"}], "containers": [{"name": "db", "image": "db:1"}],
                 "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "data-orders-0"}}]},
        "status": unschedulable_status(&format!("0/3 nodes are available: 3 node(s) didn't match PersistentVolume's node affinity.{PREEMPTION}"), 6)}));
    let table = c.check();
    first_screen(
        &table,
        &[
            "Pod/orders-0",
            "volume pv-orders-0 (claim data-orders-0) needs topology.kubernetes.io/zone=eu-1a: 3 of 3 nodes lack it (kwok-large-tainted, kwok-medium, kwok-small)",
        ],
    );
    golden("check_volume-zone.txt", &table);
    let report = c.report();
    let cause = &report.findings[0].details["causes"][0];
    assert_eq!(
        (&cause["kind"], &cause["volume"], &cause["claim"]),
        (
            &json!("volume"),
            &json!("pv-orders-0"),
            &json!("data-orders-0")
        ),
        "{cause:#}"
    );
    assert_eq!(cause["requirement"], "topology.kubernetes.io/zone=eu-1a");
    assert_eq!(
        (
            &cause["nodes"].as_array().unwrap().len(),
            &cause["of_nodes"]
        ),
        (&3, &json!(3))
    );
}

/// A Deployment whose ReplicaSet cannot create its Pods (issue 28), the
/// refusal quoted as the ReplicaSet controller writes it, `n` times.
fn refused(c: &mut Cluster, ns: &str, name: &str, want: i64, have: i64, refusal: &str) {
    let rs = format!("{name}-5d8f6c");
    c.add(
        ns,
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "generation": 2},
               "spec": {"replicas": want},
               "status": {"observedGeneration": 2, "replicas": have, "readyReplicas": have, "updatedReplicas": have,
                          "availableReplicas": have,
                          "conditions": [{"type": "Available", "status": "False", "reason": "MinimumReplicasUnavailable",
                                          "message": "Deployment does not have minimum availability.", "lastTransitionTime": ago(9)}]}}),
    );
    c.add(
        ns,
        json!({"apiVersion": "apps/v1", "kind": "ReplicaSet",
               "metadata": {"name": rs, "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment",
                            "name": name, "uid": format!("uid-Deployment-{ns}-{name}"), "controller": true}]},
               "spec": {"replicas": want},
               "status": {"replicas": have, "readyReplicas": have,
                          "conditions": [{"type": "ReplicaFailure", "status": "True", "reason": "FailedCreate",
                                          "message": refusal, "lastTransitionTime": ago(9)}]}}),
    );
    c.events.push(kubectl_diag::model::EventSummary {
        involved: kubectl_diag::model::ObjectRef {
            api_version: "apps/v1".into(),
            kind: "ReplicaSet".into(),
            namespace: ns.into(),
            name: rs.clone(),
            uid: format!("uid-ReplicaSet-{ns}-{rs}"),
            field_path: String::new(),
        },
        reason: "FailedCreate".into(),
        type_: "Warning".into(),
        message: format!("Error creating: {refusal}"),
        reporting: "replicaset-controller".into(),
        first: T - 9 * MIN,
        last: T - MIN,
        count: 14,
        in_window: 14,
        host: String::new(),
    });
}

#[test]
fn quota_blocking_a_scale_up() {
    let mut c = Cluster::new();
    c.namespace("shop");
    refused(
        &mut c,
        "shop",
        "search",
        5,
        2,
        "pods \"search-5d8f6c-x2k4p\" is forbidden: exceeded quota: pods-cap, requested: pods=1, used: pods=2, limited: pods=2",
    );
    let table = c.check();
    first_screen(
        &table,
        &[
            "Deployment/search",
            "2 of 5 ready for 9m — 3 Pod(s) not created: exceeded quota pods-cap (pods: used 2, hard 2, requested 1)",
        ],
    );
    assert!(!table.contains("H003"), "{table}");
    golden("check_quota-blocked.txt", &table);
}

#[test]
fn admission_webhook_refusing_every_pod() {
    let mut c = Cluster::new();
    c.namespace("shop");
    refused(
        &mut c,
        "shop",
        "api",
        3,
        0,
        "admission webhook \"vpod.gatekeeper.sh\" denied the request: [require-team-label] you must provide labels: {\"team\"}",
    );
    let table = c.check();
    first_screen(
        &table,
        &[
            "error     R001",
            "Deployment/api",
            "0 of 3 ready for 9m — 3 Pod(s) not created: admission webhook vpod.gatekeeper.sh denied it: [require-team-label] you must provide labels: {\"team\"}",
        ],
    );
    golden("check_webhook-refused.txt", &table);
}
