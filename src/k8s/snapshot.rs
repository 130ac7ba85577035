//! The live path of `check`: one [`Snapshot`] of the cluster now. Discovery
//! of every listable type (custom resources included), paginated lists
//! decoded into small structs, the Events the checks need, and, for the
//! hot-loop check, a watch of every type for `--sample`.
//!
//! A type that RBAC forbids or whose API does not answer becomes a note in
//! the snapshot: never a crash, never silently skipped.

use std::collections::HashMap;
use std::io::IsTerminal;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use futures::StreamExt;
use kube::api::{ListParams, WatchEvent, WatchParams};
use kube::core::ApiResource;
use kube::{Api, Client};

use super::discovery::{api_resource, discover};
use super::event::WireEvent;
use super::object::WireObject;
use crate::checks::scheduling_causes::Usage;
use crate::checks::{ObjectUpdates, Snapshot};
use crate::model::EventSummary;
use crate::model::{
    ManagerEntry, ManagerMark, ObjectRef, RecordedObject, ResourceType, event, manager_marks,
    writers,
};

const PAGE: u32 = 500;
/// Lists running at once: enough to hide latency, few enough to spare the apiserver.
const PARALLEL_LISTS: usize = 8;

/// What to gather.
pub struct LiveOptions {
    /// One namespace, or None for all.
    pub namespace: Option<String>,
    /// Watch for this long to measure update rates (the hot-loop check); None skips it.
    pub sample: Option<Duration>,
    /// Also watch the kinds that churn by design.
    pub include_noisy: bool,
    pub server: String,
}

/// A type's objects and what its sample needs, or why it could not be listed.
type ListResult = Result<
    (
        Vec<RecordedObject>,
        Listed,
        Usage,
        crate::checks::relations::Index,
    ),
    kube::Error,
>;

/// One listed type: what the hot-loop sample needs to watch it.
struct Listed {
    resource: ApiResource,
    /// Listed, and so watched, as metadata only.
    metadata_only: bool,
    namespace: Option<String>,
    resource_version: String,
    /// uid -> (generation, managedFields marks) at the end of the list.
    known: HashMap<String, (i64, Vec<ManagerMark>)>,
}

// NB: straight to stderr, not through the command's `err`: it is called from the
// concurrent listing tasks, and only on a terminal (`enabled`), never into a test's writer.
fn progress(enabled: bool, text: std::fmt::Arguments<'_>) {
    if enabled {
        eprint!("\r\x1b[2K{text}");
    }
}

/// When the spec last changed, as far as managedFields tell: the latest write
/// that was not to a subresource (status, scale). Labels count too, so this
/// is a lower bound of how long a generation has waited.
pub(crate) fn spec_written(managers: &[ManagerEntry]) -> Option<i64> {
    managers
        .iter()
        .filter(|m| m.subresource.is_empty())
        .filter_map(|m| m.time)
        .max()
}

/// The request for one page of a type: whole objects, or, for the types whose
/// spec and status no check reads (`checks::metadata_only`), their metadata
/// only, so that the apiserver never sends a Secret's data.
fn list_request(
    url: &str,
    metadata_only: bool,
    params: &ListParams,
) -> Result<http::Request<Vec<u8>>, kube::Error> {
    let request = kube::core::Request::new(url);
    if metadata_only {
        request.list_metadata(params)
    } else {
        request.list(params)
    }
    .map_err(kube::Error::BuildRequest)
}

/// The watch of a type for the hot-loop sample, metadata only as its list.
fn watch_request(
    url: &str,
    metadata_only: bool,
    params: &WatchParams,
    version: &str,
) -> Result<http::Request<Vec<u8>>, kube::Error> {
    let request = kube::core::Request::new(url);
    if metadata_only {
        request.watch_metadata(params, version)
    } else {
        request.watch(params, version)
    }
    .map_err(kube::Error::BuildRequest)
}

async fn list_type(
    client: &Client,
    t: &ResourceType,
    namespace: Option<&str>,
    relevance: &crate::checks::Relevance,
) -> ListResult {
    let ar = api_resource(t);
    let api: Api<WireObject> = match (namespace, t.namespaced) {
        (Some(ns), true) => Api::namespaced_with(client.clone(), ns, &ar),
        _ => Api::all_with(client.clone(), &ar),
    };
    let metadata_only = crate::checks::metadata_only(&t.group, &t.plural);
    let mut params = ListParams::default().limit(PAGE);
    let mut objects = Vec::new();
    let mut known = HashMap::new();
    let mut usage = Usage::default();
    let mut index = crate::checks::relations::Index::default();
    loop {
        // NB: a PartialObjectMetadataList decodes as a list of WireObjects
        // without spec and status, which is all these types are read for.
        let page: kube::core::ObjectList<WireObject> = client
            .request(list_request(api.resource_url(), metadata_only, &params)?)
            .await?;
        for item in page.items {
            let o = item.into_observation_with(
                &ar,
                super::object::Decode {
                    lease: true,
                    ..Default::default()
                },
            );
            known.insert(
                o.object.uid.clone(),
                (o.state.generation, manager_marks(&o.managers)),
            );
            let object = RecordedObject {
                object: o.object,
                created: o.created,
                generation_since: spec_written(&o.managers),
                // NB: who wrote this state, as the recorder stores it for a
                // listed version, so findings name the same writers live as
                // recorded (issue 43).
                writers: writers(None, &o.managers),
                state: o.state,
                ..RecordedObject::default()
            };
            // What a bound Pod requests is counted before it is dropped.
            usage.add(&object);
            index.add(&object);
            // NB: only what a check may need is kept, page by page: memory follows the trouble.
            if relevance.wanted(&object) {
                objects.push(object);
            }
        }
        match page.metadata.continue_.filter(|c| !c.is_empty()) {
            Some(token) => params = params.continue_token(&token),
            None => {
                let listed = Listed {
                    resource: ar,
                    metadata_only,
                    namespace: namespace.filter(|_| t.namespaced).map(str::to_string),
                    resource_version: page.metadata.resource_version.unwrap_or_default(),
                    known,
                };
                return Ok((objects, listed, usage, index));
            }
        }
    }
}

/// What the non-terminal Pods bound to each Node request, over all
/// namespaces: for `Insufficient R` under `-n`, where the namespace's own list
/// says nothing of other namespaces' Pods. Only bound, running-or-pending Pods
/// are asked for (field selectors), page by page, and only their sums kept.
pub async fn bound_pods_usage(client: &Client) -> Result<Usage, kube::Error> {
    let ar = ApiResource::erase::<k8s_openapi::api::core::v1::Pod>(&());
    let url = {
        use kube::Resource;
        WireObject::url_path(&ar, None)
    };
    let mut params = ListParams::default()
        .limit(PAGE)
        .fields("spec.nodeName!=,status.phase!=Succeeded,status.phase!=Failed");
    let mut usage = Usage::default();
    loop {
        let page: kube::core::ObjectList<WireObject> =
            client.request(list_request(&url, false, &params)?).await?;
        for item in page.items {
            let o = item.into_observation(&ar);
            usage.add(&RecordedObject {
                object: o.object,
                state: o.state,
                ..RecordedObject::default()
            });
        }
        match page.metadata.continue_.filter(|c| !c.is_empty()) {
            Some(token) => params = params.continue_token(&token),
            None => return Ok(usage),
        }
    }
}

async fn list_events(
    client: &Client,
    namespace: Option<&str>,
    now: i64,
) -> Result<Vec<EventSummary>, kube::Error> {
    let api: Api<WireEvent> = match namespace {
        Some(ns) => Api::namespaced(client.clone(), ns),
        None => Api::all(client.clone()),
    };
    let mut params = ListParams::default().limit(PAGE);
    let mut events = Vec::new();
    loop {
        let page = api.list(&params).await?;
        for item in page.items {
            let Some(o) = item.into_observation() else {
                continue;
            };
            // Only what a check can use, by the rule a recorded check applies
            // (model::event): scheduling Events, what it reads of the hour
            // before (what explains a stall, successes, preemptions), and
            // repeated ones of the last minutes (storm candidates).
            let recent = now - o.last < 10 * 60_000;
            let recurs = o.count >= 2 || o.message.contains("(combined from similar events)");
            let kept = event::SCHEDULING.contains(&o.reason.as_str())
                || (event::looked_back(&o.type_, &o.reason) && now - o.last <= event::LOOKBACK_MS)
                || (recurs && recent);
            if !kept {
                continue;
            }
            // NB: live, the window is the Event's own life: its rate is count over first..last.
            let span = (o.last - o.first).max(60_000);
            let per_minute = o.count as f64 * 60_000.0 / span as f64;
            // Expressed per minute of the snapshot's window, which the command sets to 1 minute for events.
            let in_window = if recent { per_minute.round() as i64 } else { 0 };
            events.push(EventSummary {
                in_window,
                ..o.into()
            });
        }
        match page.metadata.continue_.filter(|c| !c.is_empty()) {
            Some(token) => params = params.continue_token(&token),
            None => return Ok(events),
        }
    }
}

/// Updates of one object in a sample before its field owners are followed.
const HOT_AFTER: i64 = 2;

/// Who owns each field of `meta`, from its managedFields.
fn field_owners(
    meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
) -> crate::specdiff::FieldOwners {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::FieldsV1;
    crate::specdiff::FieldOwners::from_sets(meta.managed_fields.iter().flatten().filter_map(|f| {
        match &f.fields_v1 {
            Some(FieldsV1(serde_json::Value::String(text))) => {
                Some((f.manager.clone().unwrap_or_default(), text.as_str()))
            }
            _ => None,
        }
    }))
}

/// Watches one listed type for `sample`, counting updates per object and writer.
async fn sample_type(client: Client, listed: Listed, sample: Duration) -> Vec<ObjectUpdates> {
    let api: Api<WireObject> = match &listed.namespace {
        Some(ns) => Api::namespaced_with(client.clone(), ns, &listed.resource),
        None => Api::all_with(client.clone(), &listed.resource),
    };
    let params = WatchParams::default().timeout(sample.as_secs().max(1) as u32);
    let Ok(request) = watch_request(
        api.resource_url(),
        listed.metadata_only,
        &params,
        &listed.resource_version,
    ) else {
        return Vec::new();
    };
    // NB: bounded by the sample too: a type whose watch the apiserver never
    // answers (a CRD whose conversion webhook is gone) once hung `check`.
    let Ok(Ok(stream)) =
        tokio::time::timeout(sample, client.request_events::<WireObject>(request)).await
    else {
        return Vec::new();
    };
    let mut known = listed.known;
    let mut seen: HashMap<String, (ObjectRef, ObjectUpdates, String)> = HashMap::new();
    // Each object's field owners at its last update, and how often each field changed hands.
    let mut owners: HashMap<String, crate::specdiff::FieldOwners> = HashMap::new();
    let mut contested: HashMap<String, HashMap<String, i64>> = HashMap::new();
    let started = tokio::time::Instant::now();
    let started_ms = chrono::Utc::now().timestamp_millis();
    let deadline = started + sample;
    let mut stream = std::pin::pin!(stream);
    loop {
        let item = tokio::select! {
            item = stream.next() => item,
            _ = tokio::time::sleep_until(deadline) => break,
        };
        let Some(Ok(WatchEvent::Modified(obj))) = item else {
            if item.is_none() {
                break;
            }
            continue;
        };
        // NB: field owners only for objects already updated twice in the
        // sample: a loop makes tens, and a map of every field of every object
        // that changed once would cost the memory of a busy cluster's Pods.
        let uid = obj.metadata.uid.clone().unwrap_or_default();
        let hot = seen.get(&uid).is_some_and(|e| e.1.updates >= HOT_AFTER);
        let now_owned = hot.then(|| field_owners(&obj.metadata));
        let o = obj.into_observation(&listed.resource);
        if let Some(now_owned) = now_owned
            && let Some(before) = owners.insert(o.object.uid.clone(), now_owned)
        {
            let taken = owners[&o.object.uid].taken_since(&before);
            let counts = contested.entry(o.object.uid.clone()).or_default();
            for path in taken {
                *counts.entry(path.to_string()).or_default() += 1;
            }
        }
        let previous = known.get(&o.object.uid);
        let who = writers(previous.map(|p| p.1.as_slice()), &o.managers);
        let moved = previous.is_some_and(|p| p.0 != o.state.generation);
        let label = if who.is_empty() {
            String::new()
        } else {
            who.join(",")
        };
        let entry = seen.entry(o.object.uid.clone()).or_insert_with(|| {
            (
                o.object.clone(),
                ObjectUpdates {
                    object: o.object.clone(),
                    alternations: Some(0),
                    ..ObjectUpdates::default()
                },
                String::new(),
            )
        });
        entry.1.updates += 1;
        entry.1.generation_moves += i64::from(moved);
        // NB: live minutes count from the sample's start, not the clock's.
        let minute = started_ms + (started.elapsed().as_millis() as i64 / 60_000) * 60_000;
        match entry.1.per_minute.last_mut() {
            Some((m, n)) if *m == minute => *n += 1,
            _ => entry.1.per_minute.push((minute, 1)),
        }
        if !entry.2.is_empty() && entry.2 != label {
            entry.1.alternations = entry.1.alternations.map(|a| a + 1);
        }
        entry.2 = label.clone();
        match entry.1.managers.iter_mut().find(|(m, _)| *m == label) {
            Some((_, n)) => *n += 1,
            None => entry.1.managers.push((label, 1)),
        }
        known.insert(
            o.object.uid.clone(),
            (o.state.generation, manager_marks(&o.managers)),
        );
    }
    seen.into_values()
        .map(|(_, mut u, _)| {
            u.managers.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
            u.contested = contested
                .remove(&u.object.uid)
                .unwrap_or_default()
                .into_iter()
                .collect();
            u.contested
                .sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
            u
        })
        .collect()
}

/// Every listable type but Events, namespaces first (which are terminating
/// decides what else is kept), the rest [`PARALLEL_LISTS`] at a time; and
/// what decided which objects are kept.
async fn list_all(
    client: &Client,
    types: Vec<ResourceType>,
    namespace: Option<&str>,
    show: bool,
) -> (crate::checks::Relevance, Vec<(ResourceType, ListResult)>) {
    let total = types.len();
    let done = Arc::new(AtomicUsize::new(0));
    // Namespaces first: which are terminating decides what else is kept.
    let mut relevance = crate::checks::Relevance::default();
    let mut first: Vec<(ResourceType, ListResult)> = Vec::new();
    let (namespaces, types): (Vec<ResourceType>, Vec<ResourceType>) = types
        .into_iter()
        .partition(|t| t.group.is_empty() && t.plural == "namespaces");
    for t in namespaces {
        let r = list_type(client, &t, namespace, &relevance).await;
        if let Ok((objects, _, _, _)) = &r {
            for o in objects {
                relevance.keep(o);
            }
        }
        done.fetch_add(1, Ordering::Relaxed);
        first.push((t, r));
    }
    let kept = &relevance;
    let results: Vec<(ResourceType, ListResult)> =
        futures::stream::iter(types.into_iter().map(|t| {
            let done = done.clone();
            async move {
                let r = list_type(client, &t, namespace, kept).await;
                let n = done.fetch_add(1, Ordering::Relaxed) + 1;
                progress(show, format_args!("listing {n}/{total} resource types…"));
                (t, r)
            }
        }))
        .buffer_unordered(PARALLEL_LISTS)
        .collect()
        .await;
    first.extend(results);
    (relevance, first)
}

/// A type (or the Events) that could not be listed: named, and counted as
/// failing unless RBAC refused it.
fn not_examined(snapshot: &mut Snapshot, what: String, why: super::connect::ClusterError) {
    if !matches!(why, super::connect::ClusterError::Forbidden { .. }) {
        snapshot.failing.push(what.clone());
    }
    snapshot
        .unreadable
        .push(format!("{what} not examined: {why}"));
    snapshot.not_examined.push(what);
}

/// `--sample`: every watchable type's updates watched for a while (hot loops).
async fn sample_updates(
    client: &Client,
    listed: Vec<(ResourceType, Listed)>,
    options: &LiveOptions,
    sample: std::time::Duration,
    show: bool,
    snapshot: &mut Snapshot,
) {
    // NB: said once the cluster has answered (issue 27.20: it was said
    // before connecting), and always: otherwise the default `check` sits
    // silent for half a minute, which in an incident reads as a hang.
    progress(show, format_args!(""));
    eprintln!(
        "hot loops: watching every type's updates for {} (--sample); --db reads a recording's counters at once",
        crate::units::human_duration(sample.as_millis() as i64)
    );
    let noisy = crate::checks::hotloop::NOISY;
    let watches = listed
        .into_iter()
        .filter(|(t, _)| {
            t.can("watch") && (options.include_noisy || !noisy.contains(&t.kind.as_str()))
        })
        .map(|(_, l)| sample_type(client.clone(), l, sample));
    let sampled: Vec<Vec<ObjectUpdates>> = futures::future::join_all(watches).await;
    snapshot.updates = sampled.into_iter().flatten().collect();
    // NB: Event rates were computed per minute; object updates are over the sample.
    for e in snapshot.events.iter_mut() {
        e.in_window = (e.in_window as f64 * sample.as_secs_f64() / 60.0).round() as i64;
    }
    snapshot.window_ms = sample.as_millis() as i64;
}

/// Builds the snapshot of the live cluster.
pub async fn live(
    client: &Client,
    options: &LiveOptions,
) -> Result<Snapshot, super::connect::ClusterError> {
    let show = std::io::stderr().is_terminal();
    progress(show, format_args!("discovering API resources…"));
    let discovered = discover(client).await.map_err(|e| {
        super::connect::explain(e, "discover", "API resources", None, &options.server)
    })?;
    let types: Vec<ResourceType> = discovered
        .types
        .iter()
        .filter(|t| {
            t.can("list")
                && !(t.plural == "events" && matches!(t.group.as_str(), "" | "events.k8s.io"))
        })
        .cloned()
        .collect();
    let namespace = options.namespace.as_deref();
    let (relevance, results) = list_all(client, types, namespace, show).await;
    let relevance = &relevance;

    let mut snapshot = Snapshot {
        at: chrono::Utc::now().timestamp_millis(),
        has_objects: true,
        stale_groups: discovered
            .stale
            .iter()
            .map(|g| g.group_version.clone())
            .collect(),
        ..Snapshot::default()
    };
    // NB: with -n only that namespace's Pods are listed, so what other
    // namespaces' Pods hold on each Node is unknown; sentences say so.
    snapshot.usage.only_namespace = namespace.map(str::to_string);
    let mut listed = Vec::new();
    for (t, result) in results {
        match result {
            Ok((objects, l, usage, index)) => {
                snapshot.index.merge(index);
                snapshot.examined.push(t.full_name());
                snapshot.objects.extend(objects);
                snapshot.usage.merge(usage);
                listed.push((t, l));
            }
            Err(e) => {
                let why =
                    super::connect::explain(e, "list", &t.full_name(), namespace, &options.server);
                not_examined(&mut snapshot, t.full_name(), why);
            }
        }
    }
    // NB: under -n, what other namespaces' Pods hold on each Node is asked
    // for only when some Pod here lacks resources or a free host port, and
    // only the sums (and the host ports' holders) are kept.
    let short = |o: &RecordedObject| {
        o.object.kind == "Pod"
            && o.state.node_name.is_empty()
            && o.state.conditions.iter().any(|c| {
                c.type_ == "PodScheduled"
                    && (c.message.contains("Insufficient ") || c.message.contains("free ports"))
            })
    };
    if namespace.is_some() && snapshot.objects.iter().any(short) {
        progress(
            show,
            format_args!("counting what the Pods of every namespace request on each node…"),
        );
        // A user who may not list Pods cluster-wide keeps the namespace's sums,
        // and the sentences say that other namespaces were not counted.
        if let Ok(all) = bound_pods_usage(client).await {
            snapshot.usage = all;
        }
    }
    // NB: `-n NS` still asks whether the control plane runs (C001): its
    // leader Leases live in kube-system. One small list; RBAC may refuse it,
    // which only leaves that question unasked.
    if let Some(t) = discovered
        .types
        .iter()
        .find(|t| t.group == "coordination.k8s.io" && t.plural == "leases")
        .filter(|_| namespace.is_some_and(|ns| ns != "kube-system"))
        && let Ok((objects, _, _, _)) = list_type(client, t, Some("kube-system"), relevance).await
    {
        snapshot.objects.extend(objects);
    }
    progress(show, format_args!("listing Events…"));
    match list_events(client, namespace, snapshot.at).await {
        Ok(events) => {
            snapshot.events = events;
            snapshot.examined.push("events".into());
        }
        Err(e) => {
            let why = super::connect::explain(e, "list", "events", namespace, &options.server);
            not_examined(&mut snapshot, "events".into(), why);
        }
    }
    // NB: the check's moment is when its evidence is in, the Events listed
    // last: a recording read at this moment then holds every occurrence the
    // live list did, so `check --db --at` of the same moment agrees (issue 43).
    snapshot.at = snapshot.at.max(chrono::Utc::now().timestamp_millis());
    snapshot.window_ms = 60_000;
    if let Some(sample) = options.sample {
        sample_updates(client, listed, options, sample, show, &mut snapshot).await;
    }
    progress(show, format_args!(""));
    snapshot.all_nodes = snapshot.examined.iter().any(|t| t == "nodes");
    snapshot.settle();
    Ok(snapshot)
}

/// The Events the apiserver holds about one object (by kind and name), for a
/// timeline of something the recording never saw.
pub async fn events_about(
    client: &Client,
    kind: &str,
    namespace: &str,
    name: &str,
) -> Result<Vec<crate::model::EventSummary>, kube::Error> {
    let api: Api<WireEvent> = if namespace.is_empty() {
        Api::all(client.clone())
    } else {
        Api::namespaced(client.clone(), namespace)
    };
    let fields = format!("involvedObject.kind={kind},involvedObject.name={name}");
    let list = api.list(&ListParams::default().fields(&fields)).await?;
    Ok(list
        .items
        .into_iter()
        .filter_map(WireEvent::into_observation)
        .map(EventSummary::from)
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn accept(request: &http::Request<Vec<u8>>) -> &str {
        request
            .headers()
            .get(http::header::ACCEPT)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
    }

    fn core(kind: &str, plural: &str) -> ResourceType {
        ResourceType {
            group: String::new(),
            version: "v1".into(),
            kind: kind.into(),
            plural: plural.into(),
            namespaced: true,
            verbs: vec!["list".into(), "watch".into()],
            ..ResourceType::default()
        }
    }

    /// Live `check` listed Secrets in full (their data in every response);
    /// Secrets and ConfigMaps are now asked for as metadata only, list and
    /// watch alike, and Pods, whose status the checks read, in full.
    #[test]
    fn secrets_are_listed_and_watched_as_metadata_only() {
        use kube::Resource;
        let params = ListParams::default().limit(PAGE);
        let watch = WatchParams::default();
        for (kind, plural, metadata) in [
            ("Secret", "secrets", true),
            ("ConfigMap", "configmaps", true),
            ("Pod", "pods", false),
        ] {
            let t = core(kind, plural);
            assert_eq!(crate::checks::metadata_only(&t.group, &t.plural), metadata);
            for namespace in [Some("shop"), None] {
                let url = WireObject::url_path(&api_resource(&t), namespace);
                let list = list_request(&url, metadata, &params).unwrap();
                let watched = watch_request(&url, metadata, &watch, "1").unwrap();
                assert!(list.uri().path().ends_with(plural), "{}", list.uri());
                assert_eq!(
                    accept(&list).starts_with(
                        "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"
                    ),
                    metadata,
                    "{kind} list: {}",
                    accept(&list)
                );
                // A watch's events carry one object each: PartialObjectMetadata.
                assert_eq!(
                    accept(&watched).starts_with(
                        "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"
                    ),
                    metadata,
                    "{kind} watch: {}",
                    accept(&watched)
                );
            }
        }
    }

    /// What the apiserver answers to a metadata-only list decodes as objects
    /// with their metadata, and nothing else.
    #[test]
    fn a_partial_object_metadata_list_decodes_as_wire_objects() {
        let page = r#"{"kind":"PartialObjectMetadataList","apiVersion":"meta.k8s.io/v1",
            "metadata":{"resourceVersion":"42","continue":""},
            "items":[{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1",
              "metadata":{"name":"db-password","namespace":"shop","uid":"u-1","resourceVersion":"41",
                "creationTimestamp":"2026-11-30T10:00:00Z","deletionTimestamp":"2026-11-30T11:00:00Z",
                "finalizers":["example.com/hold"]}}]}"#;
        let list: kube::core::ObjectList<WireObject> = serde_json::from_str(page).unwrap();
        let ar = api_resource(&core("Secret", "secrets"));
        let o = list.items.into_iter().next().unwrap().into_observation(&ar);
        assert_eq!(o.object.kind, "Secret");
        assert_eq!(o.object.name, "db-password");
        assert_eq!(o.object.uid, "u-1");
        assert_eq!(list.metadata.resource_version.as_deref(), Some("42"));
    }
}
