//! What the live cluster still holds about one object and its owner chain,
//! for a timeline with no recording (`timeline::reconstruct` turns it into
//! plain facts). It asks only for what the chain needs: the object, its
//! controllers by name, its children by their owner's label selector, and
//! the namespace's Events; never the whole cluster.

use kube::Api;
use kube::api::{DynamicObject, ListParams};
use kube::core::ApiResource;
use serde_json::Value;

use super::discovery::api_resource;
use super::event::{WireEvent, parse_k8s_time};
use super::object::WireObject;
use crate::model::EventSummary;
use crate::model::{Discovered, ManagerEntry, RecordedObject, ResourceType};
use crate::timeline::Relation;
use crate::timeline::reconstruct::LiveObject;

/// The live chain of one object.
#[derive(Debug, Default)]
pub struct Fetched {
    pub objects: Vec<LiveObject>,
    /// Its Events, which the timeline and its checks read alike.
    pub events: Vec<EventSummary>,
    /// The control plane's leader Leases (`kube-system`): whether the
    /// controllers that would act on the chain are running at all.
    pub leases: Vec<RecordedObject>,
    /// What the chain names that the apiserver says does not exist (a Pod's Node).
    pub absent: Vec<crate::model::ObjectRef>,
    /// What the checks read beside the chain, not lanes of the story:
    /// every Node when a Pod of the chain waits to be scheduled (the
    /// scheduler's message counts the Nodes that refuse it; S001 names why
    /// from the Nodes themselves: a taint, a label, a topology key), and the
    /// Pods that mount a claim being deleted (what its pvc-protection
    /// finalizer waits for).
    pub beside: Vec<RecordedObject>,
    /// What the Pods bound to each Node request and which host ports they
    /// hold, over every namespace ([`super::snapshot::bound_pods_usage`], as
    /// `check -n` asks it): read only when a Pod of the chain waits for
    /// resources or a free host port, which Pods outside the chain may hold.
    pub usage: crate::checks::scheduling_causes::Usage,
    /// The target no longer exists: the objects are only what the Events
    /// the cluster still keeps name ([`fetch_gone`]).
    pub gone: bool,
}

/// An object read beside the chain, as the checks read it.
fn recorded(
    o: WireObject,
    ar: &ApiResource,
    keep: super::object::Decode,
    now: i64,
) -> RecordedObject {
    let o = o.into_observation_with(ar, keep);
    RecordedObject {
        object: o.object,
        created: o.created,
        state: o.state,
        state_at: now,
        ..RecordedObject::default()
    }
}

/// The kinds whose objects a controller of `kind` names `<name>-…`: a
/// Deployment's ReplicaSets and their Pods, a CronJob's Jobs and theirs.
fn named_after(kind: &str) -> &'static [&'static str] {
    match kind {
        "Deployment" => &["ReplicaSet", "Pod"],
        "CronJob" => &["Job", "Pod"],
        "ReplicaSet" | "StatefulSet" | "DaemonSet" | "Job" => &["Pod"],
        _ => &[],
    }
}

/// `kind/name` no longer exists in `ns`: its story from the Events the
/// cluster still keeps (an hour's worth) about it and about what its
/// controller named after it. Each object they name becomes a lane of its
/// own, known only from Events: no creation time, deleted some time after its
/// last Event. None when no Event names any of them.
pub async fn fetch_gone(
    client: &kube::Client,
    t: &ResourceType,
    ns: &str,
    name: &str,
    now: i64,
) -> Result<Option<Fetched>, kube::Error> {
    let events: Api<WireEvent> = if ns.is_empty() {
        Api::all(client.clone())
    } else {
        Api::namespaced(client.clone(), ns)
    };
    let prefix = format!("{name}-");
    let children = named_after(&t.kind);
    let mut fetched = Fetched {
        gone: true,
        ..Fetched::default()
    };
    add_events_about(&events, &mut fetched, |i| {
        (i.kind == t.kind && i.name == name)
            || (children.contains(&i.kind.as_str()) && i.name.starts_with(&prefix))
    })
    .await?;
    if fetched.events.is_empty() {
        return Ok(None);
    }
    fetched.objects = gone_objects(&fetched.events, &t.kind, name, now);
    Ok(Some(fetched))
}

/// One lane per object the Events name, the target first: known from Events
/// only, deleted some time between its last Event and `now`.
pub fn gone_objects(
    events: &[crate::model::EventSummary],
    kind: &str,
    name: &str,
    now: i64,
) -> Vec<LiveObject> {
    let mut objects: Vec<LiveObject> = Vec::new();
    for e in events {
        let r = &e.involved;
        match objects
            .iter_mut()
            .find(|o| o.object.object.kind == r.kind && o.object.object.name == r.name)
        {
            Some(o) => {
                o.object.deleted_after = o.object.deleted_after.max(Some(e.last));
                if o.object.object.uid.is_empty() {
                    o.object.object.uid = r.uid.clone();
                }
            }
            None => {
                let target = r.kind == kind && r.name == name;
                objects.push(LiveObject {
                    object: RecordedObject {
                        object: r.clone(),
                        deleted: Some(now),
                        deleted_after: Some(e.last),
                        state_at: now,
                        ..RecordedObject::default()
                    },
                    relation: Some(if target {
                        Relation::Target
                    } else {
                        Relation::Owned
                    }),
                    depth: match (target, r.kind.as_str()) {
                        (true, _) => 0,
                        (_, "Pod") if kind == "Deployment" || kind == "CronJob" => 2,
                        _ => 1,
                    },
                    ..LiveObject::default()
                });
            }
        }
    }
    if !objects.iter().any(|o| o.relation == Some(Relation::Target)) {
        // Only its children's Events are left: the target is a lane with none.
        let first = events.iter().map(|e| e.last).max();
        objects.insert(
            0,
            LiveObject {
                object: RecordedObject {
                    object: crate::model::ObjectRef {
                        kind: kind.to_string(),
                        namespace: events[0].involved.namespace.clone(),
                        name: name.to_string(),
                        ..Default::default()
                    },
                    deleted: Some(now),
                    deleted_after: first,
                    state_at: now,
                    ..RecordedObject::default()
                },
                relation: Some(Relation::Target),
                depth: 0,
                ..LiveObject::default()
            },
        );
    }
    objects
}

/// At most this many Nodes of the chain's Pods are read.
const MAX_NODES: usize = 5;

/// At most this many PersistentVolumeClaims of the chain's Pods are read.
const MAX_CLAIMS: usize = 10;

/// At most this many ConfigMaps and Secrets the chain names are read.
const MAX_USES: usize = 10;

/// What an operator's custom resource may control: the workloads, Pods and
/// claims operators make. Listed whole in the namespace (a custom resource has
/// no selector) and kept when their controller reference names it.
const OPERATOR_CHILDREN: &[(&str, &str)] = &[
    ("apps", "Deployment"),
    ("apps", "StatefulSet"),
    ("apps", "DaemonSet"),
    ("batch", "Job"),
    ("", "Pod"),
    ("", "PersistentVolumeClaim"),
];

/// Which kinds own which, as the controllers create them.
fn child_kinds(group: &str, kind: &str) -> &'static [(&'static str, &'static str)] {
    match kind {
        "Deployment" => &[("apps", "ReplicaSet")],
        // A StatefulSet's or DaemonSet's revisions are its ControllerRevisions.
        "StatefulSet" | "DaemonSet" => &[("", "Pod"), ("apps", "ControllerRevision")],
        "ReplicaSet" | "Job" => &[("", "Pod")],
        "CronJob" => &[("batch", "Job")],
        // NB: a custom resource's group has a dot and is not Kubernetes' own
        // (`*.k8s.io`); its operator's Deployment refused by a quota is why it
        // is not Ready, two levels down.
        _ if group.contains('.') && !group.ends_with(".k8s.io") => OPERATOR_CHILDREN,
        _ => &[],
    }
}

fn type_of<'a>(discovered: &'a Discovered, group: &str, kind: &str) -> Option<&'a ResourceType> {
    discovered
        .types
        .iter()
        .find(|t| t.group == group && t.kind == kind)
}

fn group_of(api_version: &str) -> &str {
    api_version.rsplit_once('/').map_or("", |(g, _)| g)
}

/// One object as the reconstruction reads it.
fn live_object(
    value: Value,
    ar: &ApiResource,
    relation: Relation,
    depth: u32,
    now: i64,
) -> LiveObject {
    let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
    let meta = &value["metadata"];
    let annotation = |k: &str| {
        meta["annotations"][k]
            .as_str()
            .unwrap_or_default()
            .to_string()
    };
    let managers = meta["managedFields"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|m| {
            let fields = serde_json::to_string(&m["fieldsV1"]).unwrap_or_default();
            (
                ManagerEntry {
                    manager: text(&m["manager"]),
                    operation: text(&m["operation"]),
                    subresource: text(&m["subresource"]),
                    time: m["time"].as_str().and_then(parse_k8s_time),
                    ..ManagerEntry::default()
                },
                crate::specdiff::owned_paths(&fields),
            )
        })
        .collect();
    let container_times = value["status"]["containerStatuses"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            (
                text(&c["name"]),
                c["state"]["running"]["startedAt"]
                    .as_str()
                    .and_then(parse_k8s_time),
                c["lastState"]["terminated"]["finishedAt"]
                    .as_str()
                    .and_then(parse_k8s_time),
            )
        })
        .collect();
    let last_started = value["status"]["containerStatuses"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            (
                text(&c["name"]),
                c["lastState"]["terminated"]["startedAt"]
                    .as_str()
                    .and_then(parse_k8s_time),
            )
        })
        .collect();
    let condition_updates = value["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| {
            let at = c["lastUpdateTime"].as_str().and_then(parse_k8s_time)?;
            Some((text(&c["type"]), at))
        })
        .collect();
    let deletion_grace_s = meta["deletionGracePeriodSeconds"].as_i64();
    let last_scale = value["status"]["lastScaleTime"]
        .as_str()
        .and_then(parse_k8s_time)
        .map(|t| (t, value["status"]["desiredReplicas"].as_i64()));
    let revision = annotation("deployment.kubernetes.io/revision").parse().ok();
    let revision_history = annotation("deployment.kubernetes.io/revision-history")
        .split(',')
        .filter_map(|r| r.trim().parse().ok())
        .collect();
    let change_cause = annotation("kubernetes.io/change-cause");
    let restarted_at =
        value["spec"]["template"]["metadata"]["annotations"]["kubectl.kubernetes.io/restartedAt"]
            .as_str()
            .and_then(parse_k8s_time);
    // A ControllerRevision: its number, and the template it holds (`data`
    // is the patch its controller applies: `spec.template`).
    let controller_revision = ar.kind == "ControllerRevision";
    let (revision, revision_images, restarted_at) = if controller_revision {
        let template = &value["data"]["spec"]["template"];
        (
            value["revision"].as_i64(),
            template["spec"]["containers"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|c| c["image"].as_str().map(str::to_string))
                .collect(),
            template["metadata"]["annotations"]["kubectl.kubernetes.io/restartedAt"]
                .as_str()
                .and_then(parse_k8s_time),
        )
    } else {
        (revision, Vec::new(), restarted_at)
    };
    let mut o = match serde_json::from_value::<WireObject>(value) {
        Ok(wire) => wire.into_observation(ar),
        Err(_) => crate::model::ObjectObservation::default(),
    };
    if controller_revision {
        o.state.images = revision_images;
    }
    LiveObject {
        object: RecordedObject {
            object: o.object,
            created: o.created,
            // As live `check` dates a generation's wait: its last spec write.
            generation_since: super::snapshot::spec_written(&o.managers),
            state: o.state,
            state_at: now,
            ..RecordedObject::default()
        },
        relation: Some(relation),
        depth,
        managers,
        revision,
        revision_history,
        change_cause,
        restarted_at,
        container_times,
        last_started,
        deletion_grace_s,
        last_scale,
        heartbeat: None,
        condition_updates,
        events: Vec::new(),
    }
}

fn api(client: &kube::Client, ar: &ApiResource, namespaced: bool, ns: &str) -> Api<DynamicObject> {
    if namespaced {
        Api::namespaced_with(client.clone(), ns, ar)
    } else {
        Api::all_with(client.clone(), ar)
    }
}

/// The label selector of a controller's `spec.selector.matchLabels`, for
/// listing only its children.
fn selector(value: &Value) -> Option<String> {
    let labels = value["spec"]["selector"]["matchLabels"].as_object()?;
    Some(
        labels
            .iter()
            .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
            .collect::<Vec<_>>()
            .join(","),
    )
}

/// Fetches `name` of type `t` in `ns`, its controllers, what it controls
/// (two levels down), and the Events about any of them.
pub async fn fetch(
    client: &kube::Client,
    discovered: &Discovered,
    t: &ResourceType,
    ns: &str,
    name: &str,
    now: i64,
    with_events: bool,
) -> Result<Fetched, kube::Error> {
    let ar = api_resource(t);
    let target: Value = serde_json::to_value(api(client, &ar, t.namespaced, ns).get(name).await?)
        .unwrap_or_default();
    let r = Reader {
        client,
        discovered,
        ns,
        now,
    };
    let mut fetched = Fetched::default();
    owners(r, &mut fetched, &target).await;
    owned(r, &mut fetched, target, t, &ar).await;
    scalers(r, &mut fetched, t, name).await;
    nodes(r, &mut fetched).await;
    scheduling_context(r, &mut fetched).await;
    claim_users(r, &mut fetched, t, name).await;
    claims(r, &mut fetched).await;
    uses(r, &mut fetched).await;
    selecting(r, &mut fetched).await;
    leases(r, &mut fetched).await;
    // NB: completing a recording needs no Events (the recording has the
    // ones still held), and a busy namespace holds thousands.
    if with_events {
        events(r, &mut fetched).await?;
        attach_target_events(&mut fetched);
    }
    Ok(fetched)
}

/// What each part of [`fetch`] reads with.
#[derive(Clone, Copy)]
struct Reader<'a> {
    client: &'a kube::Client,
    discovered: &'a Discovered,
    ns: &'a str,
    now: i64,
}

/// Up: the target's controllers, by name, up to four levels.
async fn owners(r: Reader<'_>, fetched: &mut Fetched, target: &Value) {
    let Reader {
        client,
        discovered,
        ns,
        now,
        ..
    } = r;
    // Up: the controllers, by name.
    let mut up = target.clone();
    for depth in 1..=4 {
        let Some(owner) = up["metadata"]["ownerReferences"]
            .as_array()
            .and_then(|refs| refs.iter().find(|r| r["controller"] == true).cloned())
        else {
            break;
        };
        let kind = owner["kind"].as_str().unwrap_or_default();
        let group = group_of(owner["apiVersion"].as_str().unwrap_or_default());
        let Some(ot) = type_of(discovered, group, kind) else {
            break;
        };
        let oar = api_resource(ot);
        let Ok(o) = api(client, &oar, ot.namespaced, ns)
            .get(owner["name"].as_str().unwrap_or_default())
            .await
        else {
            break;
        };
        let value = serde_json::to_value(o).unwrap_or_default();
        fetched.objects.push(live_object(
            value.clone(),
            &oar,
            Relation::Owner,
            depth,
            now,
        ));
        up = value;
    }
}

/// Down: the target, then its children by their owner's selector, kept
/// when it controls them.
async fn owned(
    r: Reader<'_>,
    fetched: &mut Fetched,
    target: Value,
    t: &ResourceType,
    ar: &ApiResource,
) {
    let Reader {
        client,
        discovered,
        ns,
        now,
        ..
    } = r;
    // Down: children by their owner's selector, kept when it controls them.
    let mut frontier = vec![(target.clone(), t.group.clone(), t.kind.clone())];
    fetched
        .objects
        .push(live_object(target, ar, Relation::Target, 0, now));
    // NB: three levels: a custom resource → its Deployment → ReplicaSet → Pods
    // is one more than a Deployment's own story needs.
    for depth in 1..=3 {
        let mut next = Vec::new();
        for (parent, parent_group, kind) in &frontier {
            let uid = parent["metadata"]["uid"].as_str().unwrap_or_default();
            for (group, child_kind) in child_kinds(parent_group, kind) {
                let Some(ct) = type_of(discovered, group, child_kind) else {
                    continue;
                };
                let car = api_resource(ct);
                let mut params = ListParams::default();
                if let Some(sel) = selector(parent) {
                    params = params.labels(&sel);
                }
                let Ok(list) = api(client, &car, ct.namespaced, ns).list(&params).await else {
                    continue;
                };
                for item in list.items {
                    let value = serde_json::to_value(item).unwrap_or_default();
                    let owned = value["metadata"]["ownerReferences"]
                        .as_array()
                        .is_some_and(|refs| refs.iter().any(|r| r["uid"] == uid));
                    if owned {
                        fetched.objects.push(live_object(
                            value.clone(),
                            &car,
                            Relation::Owned,
                            depth,
                            now,
                        ));
                        next.push((value, group.to_string(), child_kind.to_string()));
                    }
                }
            }
        }
        frontier = next;
    }
}

/// The HPAs that scale the target: their conditions and last scale.
async fn scalers(r: Reader<'_>, fetched: &mut Fetched, t: &ResourceType, name: &str) {
    let Reader {
        client,
        discovered,
        ns,
        now,
    } = r;
    if matches!(t.kind.as_str(), "Deployment" | "StatefulSet" | "ReplicaSet")
        && let Some(ht) = type_of(discovered, "autoscaling", "HorizontalPodAutoscaler")
    {
        let har = api_resource(ht);
        if let Ok(list) = api(client, &har, true, ns)
            .list(&ListParams::default())
            .await
        {
            for h in list.items {
                let value = serde_json::to_value(h).unwrap_or_default();
                let target = &value["spec"]["scaleTargetRef"];
                if target["kind"] == t.kind.as_str() && target["name"] == name {
                    fetched
                        .objects
                        .push(live_object(value, &har, Relation::Owner, 1, now));
                }
            }
        }
    }
}

/// The Nodes of the chain's Pods (a few), with their Leases' heartbeats.
async fn nodes(r: Reader<'_>, fetched: &mut Fetched) {
    let Reader {
        client,
        discovered,
        now,
        ..
    } = r;
    // The Nodes of the chain's Pods (a few): their conditions, NoExecute
    // taints and heartbeat.
    let mut nodes: Vec<(String, u32)> = Vec::new();
    for o in fetched
        .objects
        .iter()
        .filter(|o| o.object.object.kind == "Pod")
    {
        let node = &o.object.state.node_name;
        if !node.is_empty() && !nodes.iter().any(|(n, _)| n == node) && nodes.len() < MAX_NODES {
            nodes.push((node.clone(), o.depth + 1));
        }
    }
    if let Some(nt) = type_of(discovered, "", "Node") {
        let nar = api_resource(nt);
        let node_api = api(client, &nar, false, "");
        let lease_api = type_of(discovered, "coordination.k8s.io", "Lease").map(|lt| {
            let lar = api_resource(lt);
            (
                Api::<WireObject>::namespaced_with(client.clone(), "kube-node-lease", &lar),
                lar,
            )
        });
        for (node, depth) in nodes {
            let n = match node_api.get(&node).await {
                Ok(n) => n,
                Err(kube::Error::Api(e)) if e.code == 404 => {
                    fetched.absent.push(crate::model::ObjectRef {
                        api_version: "v1".into(),
                        kind: "Node".into(),
                        name: node,
                        ..Default::default()
                    });
                    continue;
                }
                Err(_) => continue,
            };
            let mut live = live_object(
                serde_json::to_value(n).unwrap_or_default(),
                &nar,
                Relation::Node,
                depth,
                now,
            );
            if let Some((leases, lar)) = &lease_api
                && let Ok(l) = leases.get(&node).await
            {
                let keep = super::object::Decode {
                    lease: true,
                    ..Default::default()
                };
                let lease = l
                    .into_observation_with(lar, keep)
                    .state
                    .lease
                    .unwrap_or_default();
                live.heartbeat = lease.renewed.map(|r| (r, lease.duration_s));
            }
            fetched.objects.push(live);
        }
    }
}

/// For Pods the scheduler cannot place: what the Nodes hold and every Node.
async fn scheduling_context(r: Reader<'_>, fetched: &mut Fetched) {
    let Reader {
        client,
        discovered,
        now,
        ..
    } = r;
    // NB: the story's `Why:` is the progress finding's cause; without the
    // Nodes it could only quote the scheduler's counts ("2 node(s) didn't
    // match Pod's node affinity/selector"), not which label no Node has.
    let unscheduled: Vec<&str> = fetched
        .objects
        .iter()
        .filter(|o| o.object.object.kind == "Pod" && o.object.state.node_name.is_empty())
        .flat_map(|o| &o.object.state.conditions)
        .filter(|c| c.type_ == "PodScheduled" && c.status == "False")
        .map(|c| c.message.as_str())
        .collect();
    let waiting = !unscheduled.is_empty();
    if unscheduled
        .iter()
        .any(|m| m.contains("Insufficient ") || m.contains("free ports"))
        && let Ok(usage) = super::snapshot::bound_pods_usage(client).await
    {
        fetched.usage = usage;
    }
    if waiting && let Some(nt) = type_of(discovered, "", "Node") {
        let nar = api_resource(nt);
        let all: Api<WireObject> = Api::all_with(client.clone(), &nar);
        if let Ok(list) = all.list(&ListParams::default()).await {
            fetched.beside.extend(
                list.items
                    .into_iter()
                    .map(|n| recorded(n, &nar, Default::default(), now)),
            );
        }
    }
}

/// A claim being deleted: the Pods that still use it.
async fn claim_users(r: Reader<'_>, fetched: &mut Fetched, t: &ResourceType, name: &str) {
    let Reader {
        client,
        discovered,
        ns,
        now,
        ..
    } = r;
    // NB: a claim held by kubernetes.io/pvc-protection is deleted once no Pod
    // uses it; F001 names the Pods that still do.
    if t.kind == "PersistentVolumeClaim"
        && fetched
            .objects
            .iter()
            .any(|o| o.relation == Some(Relation::Target) && o.object.state.deletion.is_some())
        && let Some(pt) = type_of(discovered, "", "Pod")
    {
        let par = api_resource(pt);
        let pods: Api<WireObject> = Api::namespaced_with(client.clone(), ns, &par);
        if let Ok(list) = pods.list(&ListParams::default()).await {
            fetched.beside.extend(
                list.items
                    .into_iter()
                    .map(|p| recorded(p, &par, Default::default(), now))
                    .filter(|p| p.state.claims.iter().any(|c| c == name)),
            );
        }
    }
}

/// The claims the chain's Pods mount (a few).
async fn claims(r: Reader<'_>, fetched: &mut Fetched) {
    let Reader {
        client,
        discovered,
        ns,
        now,
        ..
    } = r;
    // The claims the chain's Pods mount (a few): a Pending claim and its
    // Warnings (no StorageClass, a provisioner that fails) are why a Pod
    // waits, one level below it.
    if let Some(ct) = type_of(discovered, "", "PersistentVolumeClaim") {
        let car = api_resource(ct);
        let claim_api = api(client, &car, true, ns);
        let mut claims: Vec<(String, u32)> = Vec::new();
        for o in fetched
            .objects
            .iter()
            .filter(|o| o.object.object.kind == "Pod")
        {
            for c in &o.object.state.claims {
                if !claims.iter().any(|(n, _)| n == c) && claims.len() < MAX_CLAIMS {
                    claims.push((c.clone(), o.depth + 1));
                }
            }
        }
        for (claim, depth) in claims {
            if let Ok(c) = claim_api.get(&claim).await {
                fetched.objects.push(live_object(
                    serde_json::to_value(c).unwrap_or_default(),
                    &car,
                    Relation::Claim,
                    depth,
                    now,
                ));
            }
        }
    }
}

/// The ConfigMaps and Secrets the chain names, as metadata only.
async fn uses(r: Reader<'_>, fetched: &mut Fetched) {
    let Reader {
        client,
        discovered,
        ns,
        now,
        ..
    } = r;
    // What the chain's template (or a bare Pod) names: a ConfigMap or Secret
    // edited just before a rollout is often its cause (issue 47). Read as
    // metadata only: their managedFields date each writer's last edit, and
    // neither a value nor a Secret's data ever reaches this process.
    let mut uses: Vec<(String, String, u32)> = Vec::new();
    for o in fetched.objects.iter().filter(|o| {
        matches!(o.relation, Some(Relation::Target | Relation::Owner))
            || (o.object.object.kind == "Pod" && o.object.state.refs.iter().any(|_| true))
    }) {
        for r in &o.object.state.refs {
            if let Some((kind, name)) = r.split_once('/')
                && matches!(kind, "ConfigMap" | "Secret")
                && !uses.iter().any(|(k, n, _)| k == kind && n == name)
                && uses.len() < MAX_USES
            {
                uses.push((kind.to_string(), name.to_string(), o.depth + 1));
            }
        }
    }
    for (kind, name, depth) in uses {
        let Some(ut) = type_of(discovered, "", &kind) else {
            continue;
        };
        let uar = api_resource(ut);
        let used = api(client, &uar, true, ns);
        if let Ok(m) = used.get_metadata(&name).await {
            let mut value = serde_json::to_value(m).unwrap_or_default();
            // NB: a PartialObjectMetadata names its own kind; this is the object's.
            value["apiVersion"] = Value::String(uar.api_version.clone());
            value["kind"] = Value::String(uar.kind.clone());
            fetched
                .objects
                .push(live_object(value, &uar, Relation::Uses, depth, now));
        }
    }
}

/// The Services and disruption budgets whose selector matches a Pod of the story.
async fn selecting(r: Reader<'_>, fetched: &mut Fetched) {
    let Reader {
        client,
        discovered,
        ns,
        now,
        ..
    } = r;
    // The Services and disruption budgets whose selector matches one of the
    // story's Pods now (issue 47: a budget tightened before a drain); their
    // writers' last edits come from managedFields. NB: a Service whose
    // selector was patched away from the Pods matches none now: only a
    // recording can tell it was theirs (L001 names the closest labels).
    let mut labels: Vec<std::collections::BTreeMap<String, String>> = fetched
        .objects
        .iter()
        .filter(|o| o.object.object.kind == "Pod" && !o.object.state.labels.is_empty())
        .map(|o| o.object.state.labels.clone())
        .collect();
    // A ReplicaSet's Pods share one label set: each is tried once.
    labels.sort();
    labels.dedup();
    if !labels.is_empty() && !ns.is_empty() {
        for (group, kind) in [("", "Service"), ("policy", "PodDisruptionBudget")] {
            let Some(st) = type_of(discovered, group, kind) else {
                continue;
            };
            let sar = api_resource(st);
            // NB: a type that cannot be listed (RBAC) leaves the edge out;
            // the story does not depend on it.
            let Ok(list) = api(client, &sar, true, ns)
                .list(&ListParams::default())
                .await
            else {
                continue;
            };
            for item in list.items {
                let mut value = serde_json::to_value(item).unwrap_or_default();
                // NB: a list's items need not name their kind.
                value["apiVersion"] = Value::String(sar.api_version.clone());
                value["kind"] = Value::String(sar.kind.clone());
                let o = live_object(value, &sar, Relation::Selects, 1, now);
                let known = fetched
                    .objects
                    .iter()
                    .any(|f| f.object.object.uid == o.object.object.uid);
                if !known && labels.iter().any(|l| o.object.state.selects(l)) {
                    fetched.objects.push(o);
                }
            }
        }
    }
}

/// The control plane's leader Leases, for C001.
async fn leases(r: Reader<'_>, fetched: &mut Fetched) {
    let Reader {
        client,
        discovered,
        now,
        ..
    } = r;
    // NB: what cannot be read here (RBAC) only leaves C001's question
    // unasked: the story itself does not depend on it.
    if let Some(lt) = type_of(discovered, "coordination.k8s.io", "Lease") {
        let lar = api_resource(lt);
        let leases: Api<WireObject> = Api::namespaced_with(client.clone(), "kube-system", &lar);
        if let Ok(list) = leases.list(&ListParams::default()).await {
            let keep = super::object::Decode {
                lease: true,
                ..Default::default()
            };
            fetched.leases = list
                .items
                .into_iter()
                .map(|l| recorded(l, &lar, keep, now))
                .collect();
        }
    }
}

/// The Events of the namespace about the story's objects.
async fn events(r: Reader<'_>, fetched: &mut Fetched) -> Result<(), kube::Error> {
    let Reader { client, ns, .. } = r;
    // The Events of the namespace about any of them, or about Pods gone
    // that their controllers named `<controller>-…`.
    let events: Api<WireEvent> = if ns.is_empty() {
        Api::all(client.clone())
    } else {
        Api::namespaced(client.clone(), ns)
    };
    let uids: std::collections::HashSet<String> = fetched
        .objects
        .iter()
        .map(|o| o.object.object.uid.clone())
        .collect();
    let prefixes: Vec<String> = fetched
        .objects
        .iter()
        .filter(|o| {
            matches!(
                o.object.object.kind.as_str(),
                "ReplicaSet" | "Job" | "StatefulSet" | "DaemonSet"
            )
        })
        .map(|o| format!("{}-", o.object.object.name))
        .collect();
    let named: std::collections::HashSet<(String, String)> = fetched
        .objects
        .iter()
        .map(|o| (o.object.object.kind.clone(), o.object.object.name.clone()))
        .collect();
    add_events_about(&events, fetched, |i| {
        (!i.uid.is_empty() && uids.contains(&i.uid))
            || named.contains(&(i.kind.clone(), i.name.clone()))
            || (i.kind == "Pod" && prefixes.iter().any(|p| i.name.starts_with(p.as_str())))
    })
    .await?;
    Ok(())
}

/// Gives the target the Events about it: its controller's `ScalingReplicaSet`
/// date a rollback and a scale that managedFields keep no time for
/// (`timeline::reconstruct`).
fn attach_target_events(fetched: &mut Fetched) {
    let Some(target) = fetched
        .objects
        .iter_mut()
        .find(|o| o.relation == Some(Relation::Target))
    else {
        return;
    };
    let r = &target.object.object;
    target.events = fetched
        .events
        .iter()
        .filter(|e| {
            if e.involved.uid.is_empty() || r.uid.is_empty() {
                e.involved.kind == r.kind && e.involved.name == r.name
            } else {
                e.involved.uid == r.uid
            }
        })
        .cloned()
        .collect();
}

/// Adds the Events `events` lists (page by page) whose object `about` takes.
async fn add_events_about(
    events: &Api<WireEvent>,
    fetched: &mut Fetched,
    about: impl Fn(&crate::model::ObjectRef) -> bool,
) -> Result<(), kube::Error> {
    let mut params = ListParams::default().limit(500);
    loop {
        let page = events.list(&params).await?;
        for e in page
            .items
            .into_iter()
            .filter_map(WireEvent::into_observation)
        {
            if about(&e.involved) {
                add_event(fetched, e);
            }
        }
        match page.metadata.continue_.filter(|c| !c.is_empty()) {
            Some(token) => params = params.continue_token(&token),
            None => return Ok(()),
        }
    }
}

/// One Event about the chain, as the timeline and the checks read it.
fn add_event(fetched: &mut Fetched, e: crate::model::EventObservation) {
    fetched.events.push(e.into());
}

/// A [`Fetched`] from objects and Events as the apiserver serves them, each
/// object with its place in the chain: what `fetch` would have read (the
/// golden tests of the reconstructed timeline feed it fixtures). Objects of
/// a type `types` does not know are left out, as `fetch` cannot read them.
pub fn fetched_from(
    objects: Vec<(Value, Relation, u32)>,
    events: Vec<Value>,
    types: &Discovered,
    now: i64,
) -> Fetched {
    let mut fetched = Fetched::default();
    for (value, relation, depth) in objects {
        let kind = value["kind"].as_str().unwrap_or_default().to_string();
        let group = group_of(value["apiVersion"].as_str().unwrap_or_default()).to_string();
        let Some(t) = type_of(types, &group, &kind) else {
            continue;
        };
        let ar = api_resource(t);
        if kind == "Lease" {
            if let Ok(wire) = serde_json::from_value::<WireObject>(value) {
                let keep = super::object::Decode {
                    lease: true,
                    ..Default::default()
                };
                let o = wire.into_observation_with(&ar, keep);
                fetched.leases.push(RecordedObject {
                    object: o.object,
                    created: o.created,
                    state: o.state,
                    state_at: now,
                    ..RecordedObject::default()
                });
            }
            continue;
        }
        fetched
            .objects
            .push(live_object(value, &ar, relation, depth, now));
    }
    for e in events
        .into_iter()
        .filter_map(|v| serde_json::from_value::<WireEvent>(v).ok())
        .filter_map(WireEvent::into_observation)
    {
        add_event(&mut fetched, e);
    }
    attach_target_events(&mut fetched);
    fetched
}

/// The kinds `changes` with no recording reads, and the kind of their
/// revisions: what still says who changed what.
const CHANGE_KINDS: &[(&str, &str)] = &[
    ("apps", "Deployment"),
    ("apps", "StatefulSet"),
    ("apps", "DaemonSet"),
    ("apps", "ReplicaSet"),
    ("apps", "ControllerRevision"),
    ("autoscaling", "HorizontalPodAutoscaler"),
    ("", "Node"),
];

/// For `changes` with no recording: each workload with its revisions, each
/// HPA and each Node, as one group per story (`namespace` None: every
/// namespace). Types that cannot be listed are named in the second value.
pub async fn fetch_changes(
    client: &kube::Client,
    discovered: &Discovered,
    namespace: Option<&str>,
    now: i64,
) -> (Vec<Vec<LiveObject>>, Vec<String>) {
    let mut all: Vec<LiveObject> = Vec::new();
    let mut unreadable = Vec::new();
    for (group, kind) in CHANGE_KINDS {
        let Some(t) = type_of(discovered, group, kind) else {
            continue;
        };
        let ar = api_resource(t);
        let api = match namespace.filter(|_| t.namespaced) {
            Some(ns) => api(client, &ar, true, ns),
            None => Api::all_with(client.clone(), &ar),
        };
        let mut params = ListParams::default().limit(500);
        loop {
            match api.list(&params).await {
                Ok(page) => {
                    for item in page.items {
                        let value = serde_json::to_value(item).unwrap_or_default();
                        all.push(live_object(value, &ar, Relation::Owned, 1, now));
                    }
                    match page.metadata.continue_.filter(|c| !c.is_empty()) {
                        Some(token) => params = params.continue_token(&token),
                        None => break,
                    }
                }
                Err(e) => {
                    unreadable.push(format!("{}: {e}", t.full_name()));
                    break;
                }
            }
        }
    }
    // One group per story: a workload (or HPA, or Node) and its revisions.
    let (revisions, mut heads): (Vec<LiveObject>, Vec<LiveObject>) =
        all.into_iter().partition(|o| {
            matches!(
                o.object.object.kind.as_str(),
                "ReplicaSet" | "ControllerRevision"
            )
        });
    let mut groups = Vec::new();
    let mut owned: std::collections::HashMap<String, Vec<LiveObject>> = Default::default();
    for r in revisions {
        match r.object.state.owners.iter().find(|w| w.controller) {
            Some(w) => owned.entry(w.uid.clone()).or_default().push(r),
            // A ReplicaSet nobody owns is its own story.
            None if r.object.object.kind == "ReplicaSet" => heads.push(r),
            None => {}
        }
    }
    for mut head in heads {
        head.relation = Some(Relation::Target);
        head.depth = 0;
        let mut group = vec![head];
        if let Some(sets) = owned.remove(&group[0].object.object.uid) {
            group.extend(sets);
        }
        groups.push(group);
    }
    (groups, unreadable)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::EventSummary;
    use crate::model::ObjectRef;

    fn line(kind: &str, name: &str, uid: &str, first: i64, last: i64) -> EventSummary {
        EventSummary {
            involved: ObjectRef {
                kind: kind.into(),
                namespace: "shop".into(),
                name: name.into(),
                uid: uid.into(),
                ..ObjectRef::default()
            },
            type_: "Normal".into(),
            reason: "R".into(),
            count: 1,
            first,
            last,
            ..EventSummary::default()
        }
    }

    #[test]
    fn the_target_keeps_the_events_about_it_to_date_a_rollback_and_a_scale() {
        let deployment = serde_json::json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "shop", "uid": "d",
                         "creationTimestamp": "2026-11-29T03:00:00Z"},
            "spec": {"replicas": 0}
        });
        let event = |kind: &str, name: &str, uid: &str, message: &str| {
            serde_json::json!({
                "apiVersion": "v1", "kind": "Event",
                "metadata": {"name": format!("{name}.1"), "namespace": "shop"},
                "involvedObject": {"kind": kind, "name": name, "namespace": "shop", "uid": uid},
                "reason": "ScalingReplicaSet", "message": message, "type": "Normal",
                "source": {"component": "deployment-controller"}, "count": 1,
                "firstTimestamp": "2026-11-29T03:05:00Z", "lastTimestamp": "2026-11-29T03:05:00Z"
            })
        };
        let fetched = fetched_from(
            vec![(deployment, Relation::Target, 0)],
            vec![
                event(
                    "Deployment",
                    "web",
                    "d",
                    "Scaled down replica set web-5d8f from 3 to 0",
                ),
                event(
                    "Deployment",
                    "api",
                    "a",
                    "Scaled up replica set api-1 from 0 to 1",
                ),
            ],
            &crate::model::builtin_types(),
            0,
        );
        let target = &fetched.objects[0];
        assert_eq!(target.events.len(), 1, "{:?}", target.events);
        assert_eq!(
            target.events[0].message,
            "Scaled down replica set web-5d8f from 3 to 0"
        );
    }

    #[test]
    fn a_gone_deployment_is_a_lane_per_object_its_events_name() {
        let events = [
            line("Deployment", "web", "d", 10, 10),
            line("ReplicaSet", "web-5d8f", "rs", 11, 11),
            line("Pod", "web-5d8f-x1", "p", 12, 40),
            line("Pod", "web-5d8f-x1", "p", 50, 60),
        ];
        let objects = gone_objects(&events, "Deployment", "web", 100);
        let lanes: Vec<(&str, Option<Relation>, u32, Option<i64>)> = objects
            .iter()
            .map(|o| {
                (
                    o.object.object.name.as_str(),
                    o.relation,
                    o.depth,
                    o.object.deleted_after,
                )
            })
            .collect();
        assert_eq!(
            lanes,
            vec![
                ("web", Some(Relation::Target), 0, Some(10)),
                ("web-5d8f", Some(Relation::Owned), 1, Some(11)),
                ("web-5d8f-x1", Some(Relation::Owned), 2, Some(60)),
            ]
        );
        assert!(
            objects
                .iter()
                .all(|o| o.object.deleted == Some(100) && o.object.created.is_none())
        );
    }

    #[test]
    fn a_gone_target_with_only_its_childrens_events_still_heads_the_story() {
        let events = [line("Pod", "nightly-29-abc", "p", 5, 9)];
        let objects = gone_objects(&events, "CronJob", "nightly", 100);
        assert_eq!(objects[0].relation, Some(Relation::Target));
        assert_eq!(objects[0].object.object.kind, "CronJob");
        assert_eq!(objects[0].object.object.namespace, "shop");
        assert_eq!(objects[0].object.deleted_after, Some(9));
        assert_eq!(
            (objects[1].depth, objects[1].relation),
            (2, Some(Relation::Owned))
        );
    }
}
