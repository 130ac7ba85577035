//! `kubectl diag timeline TYPE/NAME`: resolve the name in the recording
//! (deleted objects included), walk its owner chain, assemble one
//! chronological story and render it as a table, JSON or a self-contained
//! HTML page.

use std::io::Write;

use anyhow::Context;

use crate::k8s::connect::Target;
use crate::model::{ResourceType, builtin_types};
use crate::render::Paint;
use crate::store::timeline::Walk;
use crate::store::{Mode, Recording};
use crate::units::rfc3339;

/// `timeline -o`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimelineOutput {
    Table,
    Wide,
    Json,
    Html,
}

/// What `timeline` was asked, its flags resolved once (`cli::resolve`).
#[derive(Debug, Clone)]
pub struct TimelineOptions {
    /// The cluster read live (no recording, or one to complete).
    pub target: Target,
    /// Where a namespaced object is looked for: `-n`, else the kubeconfig
    /// context's namespace, else `default`, as kubectl does.
    pub namespace: String,
    pub output: TimelineOutput,
    /// The type as given (`deploy`, `deployments.apps`…) and the name.
    pub type_name: String,
    pub name: String,
    /// `--uid`: which incarnation of a name made more than once.
    pub uid: Option<String>,
    /// `--cluster ID`, else the only recorded cluster.
    pub cluster: Option<String>,
    /// `--since`, `--until`: the window (default: the object's life).
    pub since: Option<i64>,
    pub until: Option<i64>,
    /// `--depth`: how far down the owner chain to walk.
    pub depth: u32,
    /// Whether objects related other than by ownership are told (no `--no-related`).
    pub related: bool,
}

/// Splits `TYPE/NAME` or `TYPE NAME`.
pub fn split(object: &[String]) -> anyhow::Result<(String, String)> {
    match object {
        [one] => match one.split_once('/') {
            Some((t, n)) if !t.is_empty() && !n.is_empty() => Ok((t.to_string(), n.to_string())),
            _ => anyhow::bail!("{one}: give TYPE/NAME, such as deploy/web or pod/web-7c9d-x2"),
        },
        [t, n] => Ok((t.clone(), n.clone())),
        _ => anyhow::bail!("give one object: TYPE/NAME"),
    }
}

/// `timeline --store`: the namespaces whose rows the timeline can show (its
/// object's, where Node Events live, and "" for cluster-scoped objects), so
/// that only they are pulled from the store; None (everything) for a
/// cluster-scoped object, whose children may be in any namespace.
pub fn store_slice(args: &TimelineOptions) -> Option<Vec<String>> {
    if builtin_types()
        .resolve(&args.type_name)
        .is_some_and(|t| !t.namespaced)
    {
        return None;
    }
    Some(vec![
        args.namespace.clone(),
        String::new(),
        "default".to_string(),
    ])
}

/// What `timeline` was asked, shared by its modes: recorded (and completed
/// from the live cluster), reconstructed from the live cluster, told from an
/// audit log's writes, or from the Events the apiserver still holds.
struct Ask<'a> {
    args: &'a TimelineOptions,
    /// The type as given (`deploy`, `deployments.apps`…) and the name.
    type_name: &'a str,
    name: &'a str,
    paint: Paint,
}

/// The recording's view of the object's type and namespace.
struct InRecording<'a> {
    recording: &'a Recording,
    cluster: i64,
    label: &'a str,
    t: &'a ResourceType,
    namespace: &'a str,
}

impl InRecording<'_> {
    /// " in namespace NS", or nothing for a cluster-scoped type.
    fn where_(&self) -> String {
        if self.namespace.is_empty() {
            String::new()
        } else {
            format!(" in namespace {}", self.namespace)
        }
    }
}

pub fn run(
    history: &super::source::Source,
    args: &TimelineOptions,
    out: &mut dyn Write,
    err: &mut dyn Write,
    paint: Paint,
) -> anyhow::Result<u8> {
    let (type_name, name) = (&args.type_name, &args.name);
    if let (Some(s), Some(u)) = (args.since, args.until)
        && s > u
    {
        anyhow::bail!(
            "--since {} is after --until {}: nothing to show",
            rfc3339(s),
            rfc3339(u)
        );
    }
    let ask = Ask {
        args,
        type_name,
        name,
        paint,
    };
    // NB: most people meet kubectl-diag during the incident, with no
    // recording yet: the live cluster still holds most of the story.
    if !history.has_recording() {
        return reconstructed(&ask, None, out, err);
    }
    let recording = Recording::open(history.path(), Mode::ReadOnly)?;
    let (cluster, _, label) = recording.choose_cluster(args.cluster.as_deref())?;
    let t = resource_type(&recording, cluster, &label, type_name)?;
    let namespace = if t.namespaced {
        args.namespace.clone()
    } else {
        String::new()
    };
    let found = InRecording {
        recording: &recording,
        cluster,
        label: &label,
        t: &t,
        namespace: &namespace,
    };
    let incarnations = incarnations(&recording, cluster, &t.kind, &namespace, name)?;
    if !incarnations.is_empty() {
        return recorded(&ask, &found, &incarnations, out, err);
    }
    if let Some(code) = from_audit_writes(&ask, &found, out, err)? {
        return Ok(code);
    }
    not_recorded(&ask, &found, out, err)
}

/// An object the recording does not hold: reconstructed from the live
/// cluster if it has it, else the Events the apiserver still holds about
/// it, else an error naming what the recording holds instead.
fn not_recorded(
    ask: &Ask,
    found: &InRecording,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> anyhow::Result<u8> {
    let (t, namespace, name) = (found.t, found.namespace, ask.name);
    let where_ = found.where_();
    let path = found.recording.path();
    let known = found
        .recording
        .names_of_kind(found.cluster, &t.kind, namespace)?;
    let hint = if known.is_empty() {
        format!(
            "the recording holds no {} at all{where_}: was the recorder watching (record -n, --kinds)?",
            t.kind
        )
    } else {
        // NB: stored names come from imports too, which no apiserver validated.
        format!(
            "recorded {}s{where_}: {}",
            t.kind,
            crate::render::escape(&known.join(", "))
        )
    };
    let missing = format!(
        "{}/{name}: no {} named {name}{where_} in the recording {}; {hint}",
        ask.type_name,
        t.kind,
        path.display()
    );
    // NB: the recording may be of another namespace, or stopped before the
    // object was made: the live cluster may still hold it, and its story.
    let note = format!("Not in the recording {}.", path.display());
    if let Ok(code) = reconstructed(ask, Some(&note), out, err) {
        return Ok(code);
    }
    // The cluster may still hold something: say so plainly, and show it.
    let events = match live_events(&ask.args.target, t, namespace, name) {
        Ok(events) if !events.is_empty() => events,
        _ => return Err(anyhow::anyhow!(missing)),
    };
    writeln!(
        err,
        "{missing}\nnote: not in the recording; the apiserver still holds {} Event(s) about it (up to an hour old), shown below",
        events.len()
    )?;
    let now_ms = chrono::Utc::now().timestamp_millis();
    let begin = events.iter().map(|e| e.first).min().unwrap_or(now_ms);
    let timeline = crate::timeline::assemble(
        &[],
        &events,
        &[],
        &[],
        ask.args.since.unwrap_or(begin),
        ask.args.until.unwrap_or(now_ms),
    );
    render(
        ask.args.output,
        &timeline,
        &serde_json::json!({"kind": t.kind, "namespace": namespace, "name": name, "source": "apiserver"}),
        &format!("{}/{name}{where_} (from the apiserver)", t.kind),
        out,
        ask.paint,
    )?;
    Ok(crate::exit::OK)
}

/// The recorded story of the latest (or `--uid`'s) object of that name,
/// completed from the live cluster when the recording began after it was made.
fn recorded(
    ask: &Ask,
    found: &InRecording,
    incarnations: &[crate::model::RecordedObject],
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> anyhow::Result<u8> {
    let (recording, cluster, label, t) = (found.recording, found.cluster, found.label, found.t);
    let (args, name, where_) = (ask.args, ask.name, found.where_());
    let target = pick(incarnations, args.uid.as_deref(), &t.kind, name)?;
    if incarnations.len() > 1 && args.uid.is_none() {
        writeln!(
            err,
            "note: {} objects were named {}/{name}{where_}; showing the latest (uid {}). Others: {}. Pick one with --uid.",
            incarnations.len(),
            t.kind,
            target.object.uid,
            incarnations[1..]
                .iter()
                .map(|o| format!(
                    "{} (created {})",
                    o.object.uid,
                    o.created
                        .or(o.first_seen)
                        .map(rfc3339)
                        .unwrap_or_else(|| "?".into())
                ))
                .collect::<Vec<_>>()
                .join(", ")
        )?;
    }

    let now_ms = chrono::Utc::now().timestamp_millis();
    let (subjects, events, since_ms, until_ms) =
        story(recording, cluster, target.clone(), args, now_ms)?;
    let gaps = recording.gaps(cluster, since_ms, until_ms)?;
    let types = recording.type_changes(cluster, since_ms, until_ms)?;
    let mut timeline =
        crate::timeline::assemble(&subjects, &events, &gaps, &types, since_ms, until_ms);
    let completed = completion(ask, &target, &mut timeline, err)?;
    let check = check_lines(recording, cluster, &timeline, err)?;
    timeline.summary = Some(crate::timeline::summary::summarize(
        &subjects,
        &timeline,
        incarnations.len(),
        check,
    ));
    name_the_deleter(recording, cluster, &target, &mut timeline)?;

    let mut target_json = serde_json::json!({
        "apiVersion": target.object.api_version, "kind": target.object.kind,
        "namespace": target.object.namespace, "name": target.object.name, "uid": target.object.uid,
        "cluster": label,
    });
    if let Some(note) = &completed {
        target_json["completed"] = serde_json::Value::String(note.clone());
        if matches!(args.output, TimelineOutput::Table | TimelineOutput::Wide) {
            writeln!(out, "{}\n", crate::render::escape(note))?;
        }
    }
    render(
        args.output,
        &timeline,
        &target_json,
        &format!("{}/{}{where_} — {label}", t.kind, name),
        out,
        ask.paint,
    )?;
    if timeline.entries.is_empty() {
        writeln!(
            err,
            "note: nothing recorded for {}/{name} between {} and {}",
            t.kind,
            rfc3339(since_ms),
            rfc3339(until_ms)
        )?;
    }
    Ok(crate::exit::OK)
}

/// "Who deleted it?" on the first line: the deleter an imported audit log
/// names (a deletion changes no field that would name its writer).
fn name_the_deleter(
    recording: &Recording,
    cluster: i64,
    target: &crate::model::RecordedObject,
    timeline: &mut crate::timeline::Timeline,
) -> anyhow::Result<()> {
    let Some(deleted) = target.deleted else {
        return Ok(());
    };
    let o = &target.object;
    let touches = recording.touches(
        cluster,
        deleted - 60_000,
        deleted + 60_000,
        Some(&[o.name.as_str()]),
        Some(&o.namespace),
    )?;
    let none = std::collections::HashMap::new();
    let deleter = touches
        .iter()
        .filter(|t| {
            matches!(t.verb.as_str(), "delete" | "deletecollection")
                && t.subresource.is_empty()
                && crate::checks::hotloop::kind_of_resource(&none, &t.group, &t.resource) == o.kind
        })
        .min_by_key(|t| (t.at - deleted).abs());
    if let (Some(t), Some(summary)) = (deleter, timeline.summary.as_mut()) {
        summary.subject = format!("{} by {}", summary.subject, t.user);
    }
    Ok(())
}

/// The story of an object the recording knows only from an audit log's
/// writes without bodies (touches) and refusals: who did what to it, when.
/// None when it holds none.
fn from_audit_writes(
    ask: &Ask,
    found: &InRecording,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> anyhow::Result<Option<u8>> {
    let (recording, cluster, label) = (found.recording, found.cluster, found.label);
    let (t, namespace, name, args, paint) =
        (found.t, found.namespace, ask.name, ask.args, ask.paint);
    let now_ms = chrono::Utc::now().timestamp_millis();
    let (since, until) = (args.since.unwrap_or(0), args.until.unwrap_or(now_ms));
    let subject = crate::timeline::Subject {
        object: crate::model::RecordedObject {
            object: crate::model::ObjectRef {
                api_version: t.api_version(),
                kind: t.kind.clone(),
                namespace: namespace.to_string(),
                name: name.to_string(),
                ..Default::default()
            },
            ..Default::default()
        },
        relation: Some(crate::timeline::Relation::Target),
        depth: 0,
        versions: Vec::new(),
    };
    let subjects = [subject];
    let touches = recording.touches(cluster, since, until, Some(&[name]), Some(namespace))?;
    let refusals = recording.refusals(cluster, since, until, Some((&t.plural, namespace, name)))?;
    let mut events = crate::timeline::touch_lines(&subjects, &touches);
    events.extend(crate::timeline::refusal_lines(&subjects, &refusals));
    if events.is_empty() {
        return Ok(None);
    }
    let begin = events.iter().map(|e| e.first).min().unwrap_or(since);
    let end = events.iter().map(|e| e.last).max().unwrap_or(until);
    let margin = 60_000;
    let (since_ms, until_ms) = (
        args.since.unwrap_or(begin - margin),
        args.until.unwrap_or((end + margin).min(now_ms.max(end))),
    );
    let gaps = recording.gaps(cluster, since_ms, until_ms)?;
    let timeline = crate::timeline::assemble(&subjects, &events, &gaps, &[], since_ms, until_ms);
    let where_ = if namespace.is_empty() {
        String::new()
    } else {
        format!(" in namespace {namespace}")
    };
    let note = format!(
        "{}/{name}{where_}: known only from the audit log's writes of it, which hold no object \
         (Metadata level): who did what and when, not its state",
        t.kind
    );
    if matches!(args.output, TimelineOutput::Table | TimelineOutput::Wide) {
        writeln!(out, "{}\n", crate::render::escape(&note))?;
    } else {
        writeln!(err, "note: {note}")?;
    }
    render(
        args.output,
        &timeline,
        &serde_json::json!({"kind": t.kind, "namespace": namespace, "name": name,
            "cluster": label, "source": "audit log writes"}),
        &format!("{}/{name}{where_} — {label}", t.kind),
        out,
        paint,
    )?;
    Ok(Some(crate::exit::OK))
}

/// The type `type_name` names, from the recording's discovery, else kubectl's built-ins.
fn resource_type(
    recording: &Recording,
    cluster: i64,
    label: &str,
    type_name: &str,
) -> anyhow::Result<ResourceType> {
    let recorded = recording.resource_types(cluster)?;
    let builtin = builtin_types();
    match recorded
        .resolve(type_name)
        .or_else(|| builtin.resolve(type_name))
    {
        Some(t) => Ok(t.clone()),
        None => anyhow::bail!(
            "{type_name}: no such resource type in the recording of {label}; use a kubectl name such as deploy, pod, rs, sts, node, or a custom resource's plural"
        ),
    }
}

/// The recorded objects of that name, newest first.
fn incarnations(
    recording: &Recording,
    cluster: i64,
    kind: &str,
    namespace: &str,
    name: &str,
) -> anyhow::Result<Vec<crate::model::RecordedObject>> {
    let named = recording.named(cluster, kind, namespace, name)?;
    // Incarnations are the rows with a uid or a history; a reference without a uid (an
    // import of Events that gave none) is the object itself only when nothing better exists.
    let identified: Vec<_> = named
        .iter()
        .filter(|o| !o.object.uid.is_empty() || o.first_seen.is_some())
        .cloned()
        .collect();
    Ok(if identified.is_empty() {
        named
    } else {
        identified
    })
}

/// The incarnation `--uid` names, else the latest.
fn pick(
    incarnations: &[crate::model::RecordedObject],
    uid: Option<&str>,
    kind: &str,
    name: &str,
) -> anyhow::Result<crate::model::RecordedObject> {
    match uid {
        Some(uid) => incarnations
            .iter()
            .find(|o| o.object.uid == uid)
            .cloned()
            .with_context(|| {
                format!(
                    "--uid {uid}: not an incarnation of {kind}/{name}; recorded uids: {}",
                    incarnations
                        .iter()
                        .map(|o| o.object.uid.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            }),
        None => Ok(incarnations[0].clone()),
    }
}

/// The subjects of the target's timeline, their Events (with refused writes)
/// and the window shown.
fn story(
    recording: &Recording,
    cluster: i64,
    target: crate::model::RecordedObject,
    args: &TimelineOptions,
    now_ms: i64,
) -> anyhow::Result<(
    Vec<crate::timeline::Subject>,
    Vec<crate::model::EventSummary>,
    i64,
    i64,
)> {
    let (since, until) = (args.since, args.until);
    let walk = Walk {
        depth: args.depth,
        related: args.related,
    };
    let subjects = recording.subjects(cluster, target, walk)?;
    let mut events = recording.events(
        cluster,
        &subjects,
        since.unwrap_or(0),
        until.unwrap_or(now_ms),
    )?;
    let refusals =
        recording.refusals(cluster, since.unwrap_or(0), until.unwrap_or(now_ms), None)?;
    events.extend(crate::timeline::refusal_lines(&subjects, &refusals));
    let names: Vec<&str> = subjects
        .iter()
        .map(|s| s.object.object.name.as_str())
        .collect();
    let touches = recording.touches(
        cluster,
        since.unwrap_or(0),
        until.unwrap_or(now_ms),
        Some(&names),
        None,
    )?;
    events.extend(crate::timeline::touch_lines(&subjects, &touches));
    // The window is the subject's lifetime (with a margin), narrowed by --since/--until:
    // a Node older than the Deployment must not stretch the story back to its birth.
    let lifetime = crate::timeline::window::lifetime(&subjects, &events, now_ms);
    let (since_ms, until_ms) = crate::timeline::window::window(lifetime, since, until, now_ms);
    Ok((subjects, events, since_ms, until_ms))
}

/// `timeline --store`: pulls what this timeline reads, in three requests
/// rather than the slice's every Event (docs/performance.md): the slice
/// without its Events; then the Events of the objects the timeline shows;
/// then, when the slice holds object history (so a check may find a stall
/// and quote another object's Warning as its cause), the Warnings and
/// scheduling Events of the shown objects' namespaces in the hour the checks
/// read. The story is worked out on the recording as it fills, by the same
/// functions `run` uses, so the pull cannot ask for less than `run` reads.
pub fn pull_store(
    args: &TimelineOptions,
    url: &crate::ship::url::ClickHouseUrl,
    which: &crate::model::Which,
) -> anyhow::Result<crate::ship::pull::Pulled> {
    let (type_name, name) = (&args.type_name, &args.name);
    let slice = store_slice(args);
    let mut puller = crate::ship::pull::Puller::start(url, which, slice.as_deref())?;
    puller.structure()?;
    let recording = puller.recording();
    // NB: whatever `run` will refuse (no such cluster or type, no such
    // object) it refuses on this much: the Events would change nothing.
    let Ok((cluster, _, label)) = recording.choose_cluster(args.cluster.as_deref()) else {
        return Ok(puller.finish());
    };
    let Ok(t) = resource_type(recording, cluster, &label, type_name) else {
        return Ok(puller.finish());
    };
    let namespace = if t.namespaced {
        args.namespace.clone()
    } else {
        String::new()
    };
    let incarnations = incarnations(recording, cluster, &t.kind, &namespace, name)?;
    if incarnations.is_empty() {
        return Ok(puller.finish());
    }
    let Ok(target) = pick(&incarnations, args.uid.as_deref(), &t.kind, name) else {
        return Ok(puller.finish());
    };
    let now_ms = chrono::Utc::now().timestamp_millis();
    let walk = Walk {
        depth: args.depth,
        related: args.related,
    };
    let subjects = recording.subjects(cluster, target.clone(), walk)?;
    let key = |kind: &str, namespace: &str, name: &str| format!("{kind}/{namespace}/{name}");
    let mut objects: Vec<String> = subjects
        .iter()
        .map(|s| {
            let o = &s.object.object;
            key(&o.kind, &o.namespace, &o.name)
        })
        .collect();
    let mut spaces: Vec<String> = subjects
        .iter()
        .map(|s| s.object.object.namespace.clone())
        .collect();
    // The target's Namespace counts as shown in the summary (check_lines).
    if !target.object.namespace.is_empty() {
        objects.push(key("Namespace", "", &target.object.namespace));
    }
    objects.sort();
    objects.dedup();
    spaces.sort();
    spaces.dedup();
    puller.events_of(&objects)?;
    let recording = puller.recording();
    let only_imported = recording.audit_imported(cluster).unwrap_or(false)
        && !recording.ever_recorded(cluster).unwrap_or(true);
    if only_imported {
        // NB: the checks then read at the slice's latest moment, which any
        // of its Events may set: the slice's every Event, as `pull` reads them.
        puller.all_events()?;
    } else if recording.holds_history()? {
        let (_, _, _, until_ms) = story(recording, cluster, target, args, now_ms)?;
        // NB: `run` reads its "now" later, so its end is this one or after.
        puller.warnings(&spaces, until_ms - crate::model::event::LOOKBACK_MS)?;
    }
    Ok(puller.finish())
}

fn render(
    format: TimelineOutput,
    timeline: &crate::timeline::Timeline,
    target: &serde_json::Value,
    title: &str,
    out: &mut dyn Write,
    paint: Paint,
) -> anyhow::Result<()> {
    match format {
        TimelineOutput::Table => crate::render::timeline::table(timeline, out, false, paint)?,
        TimelineOutput::Wide => crate::render::timeline::table(timeline, out, true, paint)?,
        TimelineOutput::Json => crate::render::timeline::json(timeline, target, out)?,
        TimelineOutput::Html => crate::render::html::page(timeline, title, out)?,
    }
    Ok(())
}

/// The Events the apiserver still holds about an object the recording lacks
/// (empty when the cluster cannot be reached within a few seconds).
fn live_events(
    target: &Target,
    t: &ResourceType,
    namespace: &str,
    name: &str,
) -> anyhow::Result<Vec<crate::model::EventSummary>> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let fetch = async {
            let conn = crate::k8s::connect::connect(target).await?;
            crate::k8s::snapshot::events_about(&conn.client, &t.kind, namespace, name)
                .await
                .map_err(anyhow::Error::from)
        };
        tokio::time::timeout(std::time::Duration::from_secs(5), fetch)
            .await
            .unwrap_or_else(|_| Ok(Vec::new()))
    })
}

/// What `check` reports about the timeline's objects at the end of its window: the
/// checks over the recorded snapshot at that moment, kept to the objects shown
/// and the target's namespace.
fn check_lines(
    recording: &Recording,
    cluster: i64,
    t: &crate::timeline::Timeline,
    err: &mut dyn Write,
) -> std::io::Result<Vec<crate::timeline::summary::CheckLine>> {
    // NB: the hot-loop window is check's default (10 minutes back from the end).
    // A cluster known only from imported audit logs ends at its last imported
    // moment, as `check --db` sees it: "now" would be days after anything it
    // holds.
    let only_imported = recording.audit_imported(cluster).unwrap_or(false)
        && !recording.ever_recorded(cluster).unwrap_or(true);
    let at = match only_imported {
        true => recording
            .latest_time(cluster)
            .ok()
            .filter(|&l| l > 0)
            .map_or(t.until_ms, |l| l.min(t.until_ms)),
        _ => t.until_ms,
    };
    let snap = match recording.snapshot(cluster, at, 10 * 60_000) {
        Ok(snap) => snap,
        Err(e) => {
            writeln!(err, "note: the summary has no check results: {e}")?;
            return Ok(Vec::new());
        }
    };
    Ok(lines_for(&snap, t))
}

/// The check lines of a snapshot (a recording's, or the reconstruction's)
/// about the timeline's objects.
fn lines_for(
    snap: &crate::checks::Snapshot,
    t: &crate::timeline::Timeline,
) -> Vec<crate::timeline::summary::CheckLine> {
    let mut report = crate::checks::run(snap, &[], &crate::checks::Options::default());
    // NB: a timeline tells what stands at its end, however recent: a stall of
    // 30 s is not `check`'s news yet (--stuck-after), but it is this story's
    // `Why:`; so is a deletion a finalizer holds (which, and what keeps it: the
    // Pod that still mounts a claim), which before read "nothing to report".
    let now = crate::checks::Options {
        stuck_after_ms: 0,
        ..crate::checks::Options::default()
    };
    let at_end = [
        crate::checks::Check::Progress,
        crate::checks::Check::Finalizers,
    ];
    let standing = crate::checks::run(snap, &at_end, &now);
    report.findings.retain(|f| !at_end.contains(&f.check));
    report.findings.splice(0..0, standing.findings);
    crate::checks::drop_explained_storms(&mut report.findings);
    // The target's namespace counts as shown: when it is stuck Terminating
    // (F002), that is why the target is being deleted, and the finding names
    // what holds it.
    let home = t
        .objects
        .iter()
        .find(|o| o.relation == Some(crate::timeline::Relation::Target))
        .map(|o| o.namespace.as_str())
        .filter(|ns| !ns.is_empty());
    let shown = |kind: &str, namespace: &str, name: &str, uid: &str| {
        (kind == "Namespace" && namespace.is_empty() && Some(name) == home)
            || t.objects.iter().any(|o| {
                (!uid.is_empty() && o.uid == uid)
                    || (o.kind == kind && o.namespace == namespace && o.name == name)
            })
    };
    report
        .findings
        .into_iter()
        // A control-plane component that is gone belongs to every story.
        .filter(|f| {
            f.code == crate::checks::Code::C001
                || shown(
                    &f.object.kind,
                    &f.object.namespace,
                    &f.object.name,
                    &f.object.uid,
                )
        })
        .map(|f| crate::timeline::summary::CheckLine {
            code: f.code.to_string(),
            severity: f.severity.as_str().to_string(),
            object: format!("{}/{}", f.object.kind, f.object.name),
            cause: f.details["cause"].as_str().map(str::to_string),
            summary: f.summary,
        })
        .collect()
}

/// `timeline` with no recording: the story the live cluster still holds
/// (`timeline::reconstruct`), headed by what it is and how far it reaches.
fn reconstructed(
    ask: &Ask,
    // Why a recording that exists is not used (it does not hold the object).
    not_recorded: Option<&str>,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> anyhow::Result<u8> {
    let Ask {
        args,
        type_name,
        name,
        paint,
    } = *ask;
    let now = chrono::Utc::now().timestamp_millis();
    // NB: with a recording that lacks the object, a gone object keeps the
    // caller's own fallback (the Events about it, "not in the recording").
    let live = fetch_live(
        &args.target,
        type_name,
        name,
        now,
        None,
        true,
        not_recorded.is_none(),
    )?;
    present(
        &live.fetched,
        now,
        &live.context,
        &live.t.kind,
        name,
        &live.namespace,
        not_recorded,
        args,
        out,
        err,
        paint,
    )
}

/// What [`fetch_live`] read of the live cluster about one object.
struct Live {
    context: String,
    t: ResourceType,
    namespace: String,
    fetched: crate::k8s::reconstruct::Fetched,
}

/// Reads what the live cluster holds about `type_name/name` for a
/// reconstruction (`k8s::reconstruct::fetch`).
fn fetch_live(
    target: &Target,
    type_name: &str,
    name: &str,
    now: i64,
    limit: Option<std::time::Duration>,
    // Whether the namespace's Events are read too (not to complete a recording).
    with_events: bool,
    // Whether an object that is gone is told from the Events left ([`reconstruct::fetch_gone`]).
    gone: bool,
) -> anyhow::Result<Live> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let fetch = async {
        let conn = crate::k8s::connect::connect(target).await?;
        let discovered = crate::k8s::discovery::discover(&conn.client)
            .await
            .map_err(|e| {
                crate::k8s::connect::explain(e, "discover", "API resources", None, &conn.server)
            })?;
        let Some(t) = discovered.resolve(type_name).cloned() else {
            anyhow::bail!(
                "{type_name}: the cluster serves no such resource type; `kubectl api-resources` lists them"
            );
        };
        let namespace = if t.namespaced {
            conn.default_namespace.clone()
        } else {
            String::new()
        };
        let fetched = match crate::k8s::reconstruct::fetch(
            &conn.client,
            &discovered,
            &t,
            &namespace,
            name,
            now,
            with_events,
        )
        .await
        {
            Ok(fetched) => fetched,
            // NB: gone from the cluster, its Events (and its ReplicaSets' and
            // Pods') may still be kept for an hour: they tell its last story.
            Err(kube::Error::Api(s)) if s.code == 404 => {
                let gone = if gone {
                    crate::k8s::reconstruct::fetch_gone(&conn.client, &t, &namespace, name, now)
                        .await
                        .map_err(|e| {
                            crate::k8s::connect::explain(
                                e,
                                "list",
                                "events",
                                Some(&namespace),
                                &conn.server,
                            )
                        })?
                } else {
                    None
                };
                gone.ok_or_else(|| anyhow::anyhow!(
                    "{type_name}/{name}: no {} named {name}{} in the cluster, no Event about it left there (they last an hour), and no recording at {}: record one with `kubectl diag record`, or pass --db PATH",
                    t.kind,
                    if namespace.is_empty() { String::new() } else { format!(" in namespace {namespace}") },
                    crate::paths::db_path(None).display()
                ))?
            }
            Err(e) => {
                return Err(crate::k8s::connect::explain(
                    e,
                    "get",
                    &t.plural,
                    Some(&namespace),
                    &conn.server,
                )
                .into());
            }
        };
        anyhow::Ok(Live {
            context: conn.context,
            t,
            namespace,
            fetched,
        })
    };
    runtime.block_on(async {
        match limit {
            None => fetch.await,
            Some(limit) => tokio::time::timeout(limit, fetch)
                .await
                .unwrap_or_else(|_| anyhow::bail!("no answer within {limit:?}")),
        }
    })
}

/// The reconstructed story of what [`fetch_live`] read, in the window
/// `args` asks for, every entry marked with its certainty.
fn rebuild(
    fetched: &crate::k8s::reconstruct::Fetched,
    now: i64,
    args: &TimelineOptions,
) -> (
    crate::timeline::reconstruct::Reconstruction,
    crate::timeline::Timeline,
) {
    let r = crate::timeline::reconstruct::reconstruct(&fetched.objects);
    let lifetime = crate::timeline::window::lifetime(&r.subjects, &fetched.events, now);
    let (since_ms, until_ms) =
        crate::timeline::window::window(lifetime, args.since, args.until, now);
    let mut timeline =
        crate::timeline::assemble(&r.subjects, &fetched.events, &[], &[], since_ms, until_ms);
    timeline.entries.extend(
        r.extra
            .iter()
            .filter(|e| e.at_ms >= since_ms && e.at_ms <= until_ms)
            .cloned(),
    );
    crate::timeline::sort_entries(&mut timeline.entries, &timeline.objects);
    crate::timeline::reconstruct::mark(&mut timeline.entries);
    (r, timeline)
}

/// [`complete`]s a recorded story from the live cluster when the recording
/// first saw its target over 10 s after it was made (more than clock skew). Says on `err` why
/// not when the cluster cannot be read; returns the line that heads the story.
fn completion(
    ask: &Ask,
    target: &crate::model::RecordedObject,
    timeline: &mut crate::timeline::Timeline,
    err: &mut dyn Write,
) -> anyhow::Result<Option<String>> {
    let Ask {
        args,
        type_name,
        name,
        ..
    } = *ask;
    let (Some(created), Some(first_seen)) = (target.created, target.first_seen) else {
        return Ok(None);
    };
    if first_seen - created < 10_000 || timeline.since_ms >= first_seen {
        return Ok(None);
    }
    let now = chrono::Utc::now().timestamp_millis();
    // NB: reading an old recording with no cluster at hand must not stall.
    let limit = std::time::Duration::from_secs(5);
    let live = match fetch_live(
        &args.target,
        type_name,
        name,
        now,
        Some(limit),
        false,
        false,
    ) {
        Ok(live) => live,
        Err(e) => {
            writeln!(
                err,
                "note: the recording first saw {type_name}/{name} at {}, {} after it was made; the live cluster could not tell what came before: {e:#}",
                rfc3339(first_seen),
                crate::units::human_duration(first_seen - created)
            )?;
            return Ok(None);
        }
    };
    let (_, story) = rebuild(&live.fetched, now, args);
    let added = complete(timeline, &target.object.uid, first_seen, &story);
    if added == 0 {
        return Ok(None);
    }
    Ok(Some(format!(
        "The recording first saw it at {}; the {added} entries before are reconstructed from the live cluster {} at {} (certainty shown).",
        rfc3339(first_seen),
        live.context,
        rfc3339(now)
    )))
}

/// Completes a recorded story that begins after its target was made: the
/// recording first saw it at `first_seen`, so what came before (revisions,
/// last writes, conditions, lifecycle) is taken from a reconstruction of the
/// live cluster, each entry with its certainty. Events are not: the
/// recorder stores the Events the apiserver still held at its first list,
/// and a later reconstruction holds no older ones. Pure; returns how many
/// entries it added.
fn complete(
    timeline: &mut crate::timeline::Timeline,
    target_uid: &str,
    first_seen: i64,
    live: &crate::timeline::Timeline,
) -> usize {
    // NB: the same name in another cluster (a recording of prod read with
    // the context on staging) is another object: only the same uid counts.
    if !live
        .objects
        .iter()
        .any(|o| o.relation == Some(crate::timeline::Relation::Target) && o.uid == target_uid)
    {
        return 0;
    }
    let known = |e: &crate::timeline::Entry| {
        timeline
            .entries
            .iter()
            .any(|r| r.at_ms == e.at_ms && r.reason == e.reason && r.object.uid == e.object.uid)
    };
    let before: Vec<crate::timeline::Entry> = live
        .entries
        .iter()
        .filter(|e| e.at_ms < first_seen && e.at_ms >= timeline.since_ms)
        .filter(|e| e.entry != crate::timeline::EntryKind::Event)
        .filter(|e| !known(e))
        .cloned()
        .collect();
    let added = before.len();
    timeline.entries.extend(before);
    crate::timeline::sort_entries(&mut timeline.entries, &timeline.objects);
    added
}

/// The reconstruction of what [`crate::k8s::reconstruct::fetch`] read, as
/// `timeline` prints it. Pure: the golden tests feed it fixtures.
#[allow(clippy::too_many_arguments)]
fn present(
    fetched: &crate::k8s::reconstruct::Fetched,
    now: i64,
    context: &str,
    kind: &str,
    name: &str,
    namespace: &str,
    not_recorded: Option<&str>,
    args: &TimelineOptions,
    out: &mut dyn Write,
    err: &mut dyn Write,
    paint: Paint,
) -> anyhow::Result<u8> {
    let (r, mut timeline) = rebuild(fetched, now, args);
    // NB: the lanes of a target that is gone are known from Events only: no
    // state a check could judge (an empty Deployment would be "0 of 1 ready").
    let mut snap = crate::checks::Snapshot {
        at: now,
        objects: fetched
            .objects
            .iter()
            .filter(|_| !fetched.gone)
            .map(|o| o.object.clone())
            .chain(fetched.leases.iter().cloned())
            // NB: a Node or Pod of the chain (a lane) is there already.
            .chain(
                fetched
                    .beside
                    .iter()
                    .filter(|n| {
                        !fetched
                            .objects
                            .iter()
                            .any(|o| o.object.object.uid == n.object.uid)
                    })
                    .cloned(),
            )
            .collect(),
        has_objects: !fetched.gone,
        events: fetched.events.clone(),
        absent: fetched.absent.clone(),
        window_ms: 10 * 60_000,
        usage: fetched.usage.clone(),
        ..crate::checks::Snapshot::default()
    };
    snap.settle();
    let check = lines_for(&snap, &timeline);
    timeline.summary = Some(crate::timeline::summary::summarize(
        &r.subjects,
        &timeline,
        1,
        check,
    ));
    let oldest_event = fetched.events.iter().map(|e| e.first).min();
    let mut header = match not_recorded {
        Some(note) => format!(
            "{note} Reconstructed from the live cluster {context} at {}.",
            rfc3339(now)
        ),
        None => format!(
            "Reconstructed from the live cluster {context} at {}; no recording.",
            rfc3339(now)
        ),
    };
    if fetched.gone {
        header.push_str(&format!(
            " {kind} {name} no longer exists: told from the Events the cluster still keeps about it and what its controller named after it; each was deleted some time after its last Event."
        ));
    }
    match oldest_event {
        Some(t0) => header.push_str(&format!(" Events reach back to {}.", rfc3339(t0))),
        None => header.push_str(" No Events are left (the apiserver keeps them an hour)."),
    }
    if let (Some(first), Some(last)) = (r.revisions.first(), r.revisions.last()) {
        header.push_str(&format!(" Revisions {first}–{last} kept"));
        if *first > 1 {
            header.push_str(&format!(" (1–{} pruned)", first - 1));
        }
        header.push('.');
    }
    let footer = "Nothing before is known: record from now on with `kubectl diag record` (in the cluster: docs/deploy.md).";
    let where_ = if namespace.is_empty() {
        String::new()
    } else {
        format!(" in namespace {namespace}")
    };
    let target = fetched
        .objects
        .iter()
        .find(|o| o.relation == Some(crate::timeline::Relation::Target))
        .map(|o| o.object.object.clone())
        .unwrap_or_default();
    match args.output {
        TimelineOutput::Table | TimelineOutput::Wide => {
            writeln!(out, "{}\n", crate::render::escape(&header))?;
            render(
                args.output,
                &timeline,
                &serde_json::Value::Null,
                "",
                out,
                paint,
            )?;
            writeln!(out, "\n{footer}")?;
        }
        TimelineOutput::Json | TimelineOutput::Html => {
            let target_json = serde_json::json!({
                "apiVersion": target.api_version, "kind": target.kind,
                "namespace": target.namespace, "name": target.name, "uid": target.uid,
                "cluster": context, "source": "reconstructed", "reconstructed": header,
            });
            render(
                args.output,
                &timeline,
                &target_json,
                &format!("{kind}/{name}{where_} — {context} (reconstructed, no recording)"),
                out,
                paint,
            )?;
            writeln!(err, "{footer}")?;
        }
    }
    Ok(crate::exit::OK)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Compares with `tests/golden/NAME` (rewritten with `UPDATE_GOLDEN=1`).
    fn golden(name: &str, got: &str) {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/golden")
            .join(name);
        if std::env::var_os("UPDATE_GOLDEN").is_some() {
            std::fs::write(&path, got).unwrap();
        }
        let want = std::fs::read_to_string(&path)
            .unwrap_or_else(|_| panic!("{} missing: run with UPDATE_GOLDEN=1", path.display()));
        assert_eq!(
            got, want,
            "{name} differs from the golden file (UPDATE_GOLDEN=1 after a deliberate change)"
        );
    }

    /// The reconstructed timeline of a fixture (objects and Events as the
    /// apiserver serves them), as `timeline deploy/checkout -o OUTPUT` prints it.
    fn reconstructed_of(fixture: &str, output: TimelineOutput) -> String {
        let doc: serde_json::Value = serde_json::from_str(fixture).unwrap();
        let now = crate::k8s::event::parse_k8s_time(doc["now"].as_str().unwrap()).unwrap();
        let relation = |r: &str| match r {
            "Target" => crate::timeline::Relation::Target,
            "Owner" => crate::timeline::Relation::Owner,
            "Node" => crate::timeline::Relation::Node,
            _ => crate::timeline::Relation::Owned,
        };
        let objects = doc["objects"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| {
                (
                    o["object"].clone(),
                    relation(o["relation"].as_str().unwrap()),
                    o["depth"].as_u64().unwrap() as u32,
                )
            })
            .collect();
        let mut types = builtin_types();
        types.types.push(ResourceType {
            group: "coordination.k8s.io".into(),
            version: "v1".into(),
            kind: "Lease".into(),
            plural: "leases".into(),
            singular: "lease".into(),
            short_names: Vec::new(),
            namespaced: true,
            verbs: Vec::new(),
        });
        let fetched = crate::k8s::reconstruct::fetched_from(
            objects,
            doc["events"].as_array().unwrap().clone(),
            &types,
            now,
        );
        let args = TimelineOptions {
            target: Target::default(),
            namespace: "shop".into(),
            output,
            type_name: "deploy".into(),
            name: "checkout".into(),
            uid: None,
            cluster: None,
            since: None,
            until: None,
            depth: 3,
            related: true,
        };
        let (mut out, mut err) = (Vec::new(), Vec::new());
        present(
            &fetched,
            now,
            "kubectl-diag-test",
            "Deployment",
            "checkout",
            "shop",
            None,
            &args,
            &mut out,
            &mut err,
            Paint { on: false },
        )
        .unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn a_quota_blocked_rollout_reconstructed_with_no_recording() {
        let fixture = include_str!("../../tests/fixtures/reconstruct/quota-blocked-rollout.json");
        let table = reconstructed_of(fixture, TimelineOutput::Table);
        golden("timeline_reconstructed_quota-blocked.txt", &table);
        // The cause, the change and its writer on the first screen.
        let screen = table.lines().take(25).collect::<Vec<_>>().join("\n");
        for expected in [
            "exceeded quota pods-cap",
            "image shop:1 → shop:2",
            "(by ci-bot)",
            "Why:",
        ] {
            assert!(screen.contains(expected), "{expected:?}:\n{screen}");
        }
        let json = reconstructed_of(fixture, TimelineOutput::Json);
        golden("timeline_reconstructed_quota-blocked.json", &json);
    }

    fn line(
        at: i64,
        kind: crate::timeline::EntryKind,
        reason: &str,
        uid: &str,
    ) -> crate::timeline::Entry {
        let object = crate::model::ObjectRef {
            kind: "Deployment".into(),
            namespace: "shop".into(),
            name: "web".into(),
            uid: uid.into(),
            ..crate::model::ObjectRef::default()
        };
        crate::timeline::entry(
            at,
            None,
            kind,
            &object,
            "Normal",
            reason.into(),
            String::new(),
        )
    }

    fn story(uid: &str, entries: Vec<crate::timeline::Entry>) -> crate::timeline::Timeline {
        crate::timeline::Timeline {
            since: rfc3339(0),
            until: rfc3339(100_000),
            since_ms: 0,
            until_ms: 100_000,
            objects: vec![crate::timeline::ObjectLine {
                api_version: "apps/v1".into(),
                kind: "Deployment".into(),
                namespace: "shop".into(),
                name: "web".into(),
                uid: uid.into(),
                relation: Some(crate::timeline::Relation::Target),
                depth: 0,
                created: None,
                deleted: None,
                deleted_after: None,
                created_ms: None,
                deleted_ms: None,
                states: Vec::new(),
                owner_uid: None,
            }],
            entries,
            summary: None,
        }
    }

    #[test]
    fn a_late_recording_takes_only_what_came_before_it_and_no_events_from_the_live_cluster() {
        use crate::timeline::EntryKind::{Event, Transition};
        let mut recorded = story(
            "u1",
            vec![
                line(10_000, Transition, "Created", "u1"),
                line(60_000, Transition, "FirstRecorded", "u1"),
            ],
        );
        let live = story(
            "u1",
            vec![
                line(10_000, Transition, "Created", "u1"),
                line(20_000, Transition, "Revision", "u1"),
                line(25_000, Event, "ScalingReplicaSet", "u1"),
                line(70_000, Transition, "Replicas", "u1"),
            ],
        );
        assert_eq!(complete(&mut recorded, "u1", 60_000, &live), 1);
        let reasons: Vec<_> = recorded.entries.iter().map(|e| e.reason.as_str()).collect();
        assert_eq!(reasons, ["Created", "Revision", "FirstRecorded"]);
    }

    #[test]
    fn a_late_recording_of_another_object_of_that_name_is_not_completed() {
        let mut recorded = story("u1", Vec::new());
        let live = story(
            "u2",
            vec![line(
                20_000,
                crate::timeline::EntryKind::Transition,
                "Revision",
                "u2",
            )],
        );
        assert_eq!(complete(&mut recorded, "u1", 60_000, &live), 0);
        assert!(recorded.entries.is_empty());
    }
}
