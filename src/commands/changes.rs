//! `kubectl diag changes`: the cluster-wide feed of what changed, from the
//! recording — spec diffs with their writers, objects created and deleted in
//! bulk (folded), types that appeared or went — newest last.

use std::io::Write;

use anyhow::Context;

use crate::changes::{Item, Line};
use crate::k8s::connect::Target;
use crate::model::Which;
use crate::render::{Paint, escape};
use crate::store::{self, Mode};
use crate::units::rfc3339;

/// `changes -o`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangesOutput {
    Table,
    Wide,
    Json,
}

/// What `changes` was asked, its flags resolved once (`cli::resolve`).
#[derive(Debug, Clone)]
pub struct ChangesOptions {
    /// The cluster read live when there is no recording.
    pub target: Target,
    /// `-n`; None for every namespace.
    pub namespace: Option<String>,
    pub output: ChangesOutput,
    /// `--since`, `--until`: the window (until: now when None).
    pub since: i64,
    pub until: Option<i64>,
    /// `--kinds`, as typed (resolved against the recording's types).
    pub kinds: Vec<String>,
    /// `--cluster ID`, the only recorded cluster, or `--all-clusters`.
    pub clusters: Which,
}

pub fn run(
    history: &super::source::Source,
    args: &ChangesOptions,
    out: &mut dyn Write,
    paint: Paint,
) -> anyhow::Result<u8> {
    let since = args.since;
    let until = args
        .until
        .unwrap_or_else(|| chrono::Utc::now().timestamp_millis());
    if since > until {
        anyhow::bail!(
            "--since {} is after --until {}: nothing to show",
            rfc3339(since),
            rfc3339(until)
        );
    }
    let path = history.path().to_path_buf();
    // NB: as `timeline`: the first run is during the incident, with no
    // recording; the live cluster still says who last changed what.
    if !history.has_recording() {
        return reconstructed(args, since, until, out, paint);
    }
    let recording = store::Recording::open(&path, Mode::ReadOnly)?;
    let namespace = args.namespace.clone();
    let clusters = recording.choose_clusters(&args.clusters)?;
    let mut feeds = Vec::new();
    for (cluster, uid, label) in &clusters {
        let items = feed_of(
            &recording,
            *cluster,
            label,
            args,
            since,
            until,
            namespace.as_deref(),
        )?;
        feeds.push((uid.clone(), label.clone(), items));
    }
    if args.clusters == Which::All {
        return all_clusters(&feeds, since, until, args.output, namespace, out, paint);
    }
    let items = feeds.pop().map(|f| f.2).unwrap_or_default();
    render(&items, since, until, args.output, namespace, out, paint)?;
    Ok(crate::exit::OK)
}

/// One cluster's changes in the window, as --kinds and -n choose.
fn feed_of(
    recording: &store::Recording,
    cluster: i64,
    label: &str,
    args: &ChangesOptions,
    since: i64,
    until: i64,
    namespace: Option<&str>,
) -> anyhow::Result<Vec<Item>> {
    let mut items = recording.feed(cluster, since, until, namespace)?;
    if !args.kinds.is_empty() {
        let recorded = recording.resource_types(cluster)?;
        let builtin = crate::model::builtin_types();
        let mut kinds = Vec::new();
        for name in args
            .kinds
            .iter()
            .map(|k| k.trim())
            .filter(|k| !k.is_empty())
        {
            let t = recorded
                .resolve(name)
                .or_else(|| builtin.resolve(name))
                .with_context(|| {
                    format!(
                        "--kinds {name}: no such resource type in the recording of {label}; use a kubectl name such as deploy, node, cm, or a custom resource's plural"
                    )
                })?;
            kinds.push(t.kind.clone());
        }
        items.retain(|i| kinds.contains(&i.kind));
    }
    Ok(items)
}

/// `--all-clusters`: every cluster's changes in one feed, newest last, with a
/// CLUSTER column (`cluster` in each JSON item).
fn all_clusters(
    feeds: &[(String, String, Vec<Item>)],
    since: i64,
    until: i64,
    output: ChangesOutput,
    namespace: Option<String>,
    out: &mut dyn Write,
    paint: Paint,
) -> anyhow::Result<u8> {
    if output == ChangesOutput::Json {
        #[derive(serde::Serialize)]
        struct Clustered<'a> {
            cluster: &'a str,
            cluster_uid: &'a str,
            #[serde(flatten)]
            item: &'a Item,
        }
        #[derive(serde::Serialize)]
        struct Fleet<'a> {
            #[serde(serialize_with = "crate::units::ser_rfc3339")]
            since: i64,
            #[serde(serialize_with = "crate::units::ser_rfc3339")]
            until: i64,
            items: Vec<Clustered<'a>>,
        }
        let mut items: Vec<Clustered<'_>> = feeds
            .iter()
            .flat_map(|(uid, label, items)| {
                items.iter().map(move |item| Clustered {
                    cluster: label,
                    cluster_uid: uid,
                    item,
                })
            })
            .collect();
        items.sort_by_key(|c| c.item.at);
        let text = serde_json::to_string_pretty(&Fleet {
            since,
            until,
            items,
        })?;
        writeln!(out, "{text}")?;
        return Ok(crate::exit::OK);
    }
    let mut lines: Vec<(&str, Line)> = Vec::new();
    for (_, label, items) in feeds {
        let folded = if output == ChangesOutput::Wide {
            crate::changes::lines(items)
        } else {
            crate::changes::fold(items)
        };
        lines.extend(folded.into_iter().map(|l| (label.as_str(), l)));
    }
    if lines.is_empty() {
        let scope = namespace
            .map(|n| format!(" in namespace {n}"))
            .unwrap_or_default();
        writeln!(
            out,
            "No changes recorded{scope} in {} cluster(s) between {} and {}.",
            feeds.len(),
            rfc3339(since),
            rfc3339(until)
        )?;
        return Ok(crate::exit::OK);
    }
    // NB: a stable sort: within a cluster, the fold's own order stays.
    lines.sort_by_key(|(_, l)| l.at);
    let rows = lines.iter().map(|(cluster, l)| {
        let mut row = cells(l, paint);
        row.insert(1, escape(cluster).into_owned());
        row
    });
    crate::render::plain_table(
        out,
        ["TIME (UTC)", "CLUSTER", "OBJECT", "BY", "CHANGE"],
        rows,
    )?;
    Ok(crate::exit::OK)
}

fn render(
    items: &[Item],
    since: i64,
    until: i64,
    output: ChangesOutput,
    namespace: Option<String>,
    out: &mut dyn Write,
    paint: Paint,
) -> anyhow::Result<()> {
    match output {
        ChangesOutput::Json => {
            // NB: rendered first and written as bytes, so that a closed pipe is an
            // io::Error that main recognises, not a serde_json one.
            let text = serde_json::to_string_pretty(&Feed {
                since,
                until,
                items,
            })?;
            writeln!(out, "{text}")?;
        }
        _ if items.is_empty() => {
            let scope = namespace
                .map(|n| format!(" in namespace {n}"))
                .unwrap_or_default();
            writeln!(
                out,
                "No changes recorded{scope} between {} and {}.",
                rfc3339(since),
                rfc3339(until)
            )?;
        }
        ChangesOutput::Wide => table(&crate::changes::lines(items), out, paint)?,
        _ => table(&crate::changes::fold(items), out, paint)?,
    }
    Ok(())
}

/// NB: times are RFC 3339, as in `timeline -o json` and `check -o json`;
/// they were epoch milliseconds.
#[derive(serde::Serialize)]
struct Feed<'a> {
    #[serde(serialize_with = "crate::units::ser_rfc3339")]
    since: i64,
    #[serde(serialize_with = "crate::units::ser_rfc3339")]
    until: i64,
    items: &'a [Item],
}

/// A line's cells: TIME, OBJECT, BY, CHANGE.
fn cells(l: &Line, paint: Paint) -> Vec<String> {
    vec![
        crate::units::rfc3339(l.at).replace('T', " ")[..19].to_string(),
        escape(&l.object).into_owned(),
        paint.dim(&escape(&l.by)),
        escape(&l.change).into_owned(),
    ]
}

/// The table; with a SOURCE column (before CHANGE) when some line says
/// where it comes from (`-o wide` of changes not the recorder's alone).
fn table(lines: &[Line], out: &mut dyn Write, paint: Paint) -> anyhow::Result<()> {
    // NB: CHANGE last, as kubectl puts MESSAGE last: one long diff must not
    // push every other row's writer off a 120-column screen (each row then
    // wrapped into two lines, and an hour no longer fitted the first screen).
    if lines.iter().all(|l| l.source.is_empty()) {
        let rows = lines.iter().map(|l| cells(l, paint));
        crate::render::plain_table(out, ["TIME (UTC)", "OBJECT", "BY", "CHANGE"], rows)?;
        return Ok(());
    }
    let rows = lines.iter().map(|l| {
        let mut row = cells(l, paint);
        row.insert(3, escape(&l.source).into_owned());
        row
    });
    crate::render::plain_table(
        out,
        ["TIME (UTC)", "OBJECT", "BY", "SOURCE", "CHANGE"],
        rows,
    )?;
    Ok(())
}

/// One change the live cluster still tells of, with how certain it is.
#[derive(serde::Serialize)]
struct LiveChange {
    #[serde(serialize_with = "crate::units::ser_rfc3339")]
    time: i64,
    kind: String,
    namespace: String,
    name: String,
    by: Vec<String>,
    change: String,
    certainty: &'static str,
    rule: String,
}

/// The entries of a reconstruction that are changes (who wrote what, and
/// when), as opposed to the state they led to.
const CHANGE_REASONS: &[&str] = &[
    "Revision",
    "TemplateChanged",
    "LastWrite",
    "LastScale",
    "Tainted",
];

/// `changes` with no recording: each field manager's last write, the kept
/// revisions, HPAs' last scales and NoExecute taints, from the live objects
/// (`timeline::reconstruct`), each with its certainty.
fn reconstructed(
    args: &ChangesOptions,
    since: i64,
    until: i64,
    out: &mut dyn Write,
    paint: Paint,
) -> anyhow::Result<u8> {
    if args.clusters != Which::One(None) {
        anyhow::bail!(
            "--all-clusters and --cluster read a recording, and there is none at {}: pass --db PATH or --store URL",
            crate::paths::db_path(None).display()
        );
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let now = chrono::Utc::now().timestamp_millis();
    let namespace = args.namespace.clone();
    let (context, discovered, (groups, unreadable)) = runtime.block_on(async {
        let conn = crate::k8s::connect::connect(&args.target).await?;
        let discovered = crate::k8s::discovery::discover(&conn.client)
            .await
            .map_err(|e| {
                crate::k8s::connect::explain(e, "discover", "API resources", None, &conn.server)
            })?;
        let fetched = crate::k8s::reconstruct::fetch_changes(
            &conn.client,
            &discovered,
            namespace.as_deref(),
            now,
        )
        .await;
        anyhow::Ok((conn.context, discovered, fetched))
    })?;
    let mut kinds = Vec::new();
    for name in args
        .kinds
        .iter()
        .map(|k| k.trim())
        .filter(|k| !k.is_empty())
    {
        let t = discovered.resolve(name).with_context(|| {
            format!("--kinds {name}: the cluster serves no such resource type; `kubectl api-resources` lists them")
        })?;
        kinds.push(t.kind.clone());
    }
    let mut changes: Vec<LiveChange> = groups
        .iter()
        .flat_map(|group| crate::timeline::reconstruct::reconstruct(group).extra)
        .filter(|e| CHANGE_REASONS.contains(&e.reason.as_str()))
        .filter(|e| e.at_ms >= since && e.at_ms <= until)
        .filter(|e| kinds.is_empty() || kinds.contains(&e.object.kind))
        .map(|e| LiveChange {
            time: e.at_ms,
            kind: e.object.kind.clone(),
            namespace: e.object.namespace.clone(),
            name: e.object.name.clone(),
            by: e.writers.clone(),
            change: e.message.clone(),
            certainty: e.certainty.map_or("last", |c| c.as_str()),
            rule: e.rule.clone().unwrap_or_default(),
        })
        .collect();
    changes.sort_by(|a, b| (a.time, &a.namespace, &a.name).cmp(&(b.time, &b.namespace, &b.name)));
    let header = format!(
        "Reconstructed from the live cluster {context} at {}; no recording: only each field manager's last write, the revisions still kept, HPAs' last scales and NoExecute taints are visible.",
        rfc3339(now)
    );
    match args.output {
        ChangesOutput::Json => {
            let text = serde_json::to_string_pretty(&serde_json::json!({
                "since": rfc3339(since), "until": rfc3339(until), "source": "reconstructed",
                "reconstructed": header, "notes": unreadable, "items": changes,
            }))?;
            writeln!(out, "{text}")?;
        }
        _ => {
            writeln!(out, "{}\n", escape(&header))?;
            if changes.is_empty() {
                let scope = namespace
                    .map(|n| format!(" in namespace {n}"))
                    .unwrap_or_default();
                writeln!(
                    out,
                    "No changes visible{scope} between {} and {}.",
                    rfc3339(since),
                    rfc3339(until)
                )?;
            } else {
                let rows = changes.iter().map(|c| {
                    let object = if c.namespace.is_empty() {
                        format!("{}/{}", c.kind, c.name)
                    } else {
                        format!("{}/{}/{}", c.namespace, c.kind, c.name)
                    };
                    vec![
                        rfc3339(c.time).replace('T', " ")[..19].to_string(),
                        escape(&object).into_owned(),
                        paint.dim(&escape(&c.by.join(", "))),
                        c.certainty.to_string(),
                        escape(&c.change).into_owned(),
                    ]
                });
                crate::render::plain_table(
                    out,
                    ["TIME (UTC)", "OBJECT", "BY", "CERTAINTY", "CHANGE"],
                    rows,
                )?;
            }
            for note in &unreadable {
                writeln!(out, "note: not read: {}", escape(note))?;
            }
            writeln!(
                out,
                "\nNothing before is known: record from now on with `kubectl diag record` (in the cluster: docs/deploy.md)."
            )?;
        }
    }
    Ok(crate::exit::OK)
}
