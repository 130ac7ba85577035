//! The recorder's first stage: everything it opens, checks and starts before
//! its first watch runs, in an order that makes a refusal cheap. A bad
//! `--kinds`, a file of another cluster or a `--ship` server that says no
//! stops it before anything is watched, and with nothing changed on disk
//! that was not already there. [`super::supervise`] runs what this returns.

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use anyhow::Context;
use kube::Api;
use tokio::sync::mpsc;

use super::RecordOptions;
use crate::k8s::connect;
use crate::k8s::event::WireEvent;
use crate::model::{Discovered, ResourceType};
use crate::ship::Destination;
use crate::ship::outbox::Registered;
use crate::store::writer::Writer;
use crate::store::{self, Mode, StoreError};

use super::sink::{self, Msg, Stats, now_ms};
use super::watch::{Watch, WatchStart};
use super::{
    CHANNEL_CAPACITY, EVENT_CHUNK_SIZE, ObjectWatch, PREFLIGHTS, ask, blind_warning, flush, types,
    watch_anyway, watches_of,
};

/// What the recorder has set up: the connection, the open session (its
/// writer thread already running), the destinations registered in the
/// outbox, and the watches that passed their preflight, each with where it
/// starts.
pub(super) struct Plan {
    pub conn: connect::Connection,
    pub cluster_uid: String,
    pub path: PathBuf,
    /// The socket readers ask for a commit through, when this recorder answers them.
    pub socket: Option<ask::Socket>,
    /// One per `--ship` destination, in the same order.
    pub registered: Vec<Registered>,
    pub stats: Arc<Stats>,
    pub tx: mpsc::Sender<Msg>,
    pub namespaces: Vec<Option<String>>,
    pub watches: Watches,
    pub writer: std::thread::JoinHandle<Result<(), StoreError>>,
}

/// The watches to run, and which object types they keep history of.
#[derive(Default)]
pub(super) struct Watches {
    pub events: Vec<(Watch<WireEvent>, WatchStart)>,
    pub objects: Vec<(ObjectWatch, WatchStart)>,
    /// The object types watched (allowed, or watched blind).
    pub kept: Vec<ResourceType>,
    /// The object types RBAC refused: asked again at each rediscovery.
    pub refused: Vec<String>,
}

pub(super) async fn plan(
    args: &RecordOptions,
    destinations: &[Destination],
    err: &mut dyn Write,
) -> anyhow::Result<Plan> {
    let conn = connect::connect(&args.target).await?;
    let cluster_uid = connect::cluster_uid(&conn).await?;
    // Which types to keep history of, before anything touches the recording:
    // a bad --kinds changes nothing on disk.
    let (discovered, chosen) = discover(&conn, args, err).await?;
    let path = args.db.clone();
    let mut db = store::Recording::open(&path, Mode::Write)?;
    let now = now_ms();
    db.refuse_if_recorded(&cluster_uid, now)?;
    let socket = bind_socket(&path, args, err).await?;
    let shares_file = socket.is_none() && store::ask::socket_path(&path).exists();
    if shares_file {
        store::ask::ask_while_busy(db.connection_mut(), &path)
            .context("setting up the wait for the other recorder of this file")?;
    }
    let cluster = db.register_cluster(&cluster_uid, &conn.context, &conn.server, now)?;
    let registered = prepare_shipping(&db, destinations, args, now, err).await?;

    let stats = Arc::new(Stats::default());
    stats
        .ship
        .destinations
        .store(destinations.len() as u64, Ordering::Relaxed);
    let (tx, rx) = mpsc::channel::<Msg>(CHANNEL_CAPACITY);
    let namespaces = args.namespaces.clone();
    let events = event_watches(&conn, &namespaces, &tx, &stats, args);
    for w in &events {
        w.preflight().await?;
    }
    if let Some(discovered) = &discovered {
        db.save_resource_types(cluster, &discovered.types)?;
    }
    let (objects, kept, refused) =
        preflight_objects(&chosen, &namespaces, &conn, &tx, &stats, args, err).await?;

    let commit_every = commit_every(args, !destinations.is_empty(), shares_file);
    let start = db.start_session(cluster, &cluster_uid, mode(args), now)?;
    // NB: before the first heartbeat, so that a recorder on another host never
    // judges this session by a window it did not declare.
    db.declare_window(start.id, commit_every.as_millis() as i64)?;
    let start_of = |resource: &str| -> Result<WatchStart, StoreError> {
        Ok(WatchStart {
            resume_from: db.load_position(cluster, resource)?,
            blind_since: start.previous_end,
            blind: None,
        })
    };
    let mut watches = Watches {
        kept,
        refused,
        ..Watches::default()
    };
    for w in events {
        let s = start_of(&w.resource)?;
        watches.events.push((w, s));
    }
    for w in objects {
        let s = start_of(w.resource())?;
        watches.objects.push((w, s));
    }
    let retention = args.retention;
    let writer = {
        let (path, stats) = (path.clone(), stats.clone());
        // NB: the writer keeps statements that borrow its connection, so it
        // is made on the thread that uses it (it is not Send; the connection is).
        std::thread::Builder::new()
            .name("diag-writer".into())
            .spawn(move || {
                let writer = Writer::new(db, cluster);
                sink::run(writer, path, start.id, rx, stats, retention, commit_every)
            })
            .context("starting the writer thread")?
    };
    Ok(Plan {
        conn,
        cluster_uid,
        path,
        socket,
        registered,
        stats,
        tx,
        namespaces,
        watches,
        writer,
    })
}

fn mode(args: &RecordOptions) -> &'static str {
    if args.once { "once" } else { "watch" }
}

/// The object types to keep history of (none with `--events-only`), and the
/// discovery they were chosen from; warns about aggregated APIs that do not answer.
async fn discover(
    conn: &connect::Connection,
    args: &RecordOptions,
    err: &mut dyn Write,
) -> anyhow::Result<(Option<Discovered>, Vec<ResourceType>)> {
    if args.events_only {
        return Ok((None, Vec::new()));
    }
    let discovered = crate::k8s::discovery::discover(&conn.client)
        .await
        .map_err(|e| connect::explain(e, "discover", "API resources", None, &conn.server))?;
    let types = types::select(&discovered, &args.kinds, &args.exclude_kinds)?;
    for stale in &discovered.stale {
        // NB: an aggregated API that does not answer costs its types, not the recording.
        writeln!(
            err,
            "warning: API {} is unavailable (its aggregated server does not answer): its types are not recorded until it answers",
            stale.group_version
        )?;
    }
    Ok((Some(discovered), types))
}

/// Readers ask for a commit through a socket beside the file (`ask`). NB:
/// bound before the first write: a recorder of another cluster that answers
/// for this file holds its transaction for up to a minute, so this one asks
/// it whenever it needs the lock (the connection keeps the busy handler on
/// the writer thread) and commits within a second itself. `--once` commits
/// as it ends and answers nobody.
async fn bind_socket(
    path: &std::path::Path,
    args: &RecordOptions,
    err: &mut dyn Write,
) -> anyhow::Result<Option<ask::Socket>> {
    if args.once {
        return Ok(None);
    }
    match ask::Socket::bind(path).await {
        Ok(Some(socket)) => Ok(Some(socket)),
        Ok(None) => {
            if args.verbose {
                writeln!(
                    err,
                    "another recorder answers readers of {}: they ask it, not this one",
                    path.display()
                )?;
            }
            Ok(None)
        }
        // NB: not fatal: readers then see what was committed, at most
        // --commit-every old (a path too long for a socket address, say).
        Err(e) => {
            writeln!(
                err,
                "warning: {e}; readers see what is committed, at most --commit-every old"
            )?;
            Ok(None)
        }
    }
}

/// --ship: the schema made or checked (a refusal stops here, before any
/// watch; a server that does not answer is a warning: the outbox waits),
/// then each destination found or added in the file.
async fn prepare_shipping(
    db: &store::Recording,
    destinations: &[Destination],
    args: &RecordOptions,
    now: i64,
    err: &mut dyn Write,
) -> anyhow::Result<Vec<Registered>> {
    let retain = args.retention.max_age_ms;
    let ttl = (retain > 0).then_some(retain / 1000);
    for d in destinations {
        match d
            .prepare(
                args.ship_create_schema,
                args.ship_on_cluster.as_deref(),
                ttl,
            )
            .await
        {
            Ok(()) => {}
            Err(e) if e.retry() => writeln!(
                err,
                "warning: {e}; recording goes on and ships when it answers"
            )?,
            Err(e) => return Err(anyhow::anyhow!("--ship {e}")),
        }
    }
    let shown: Vec<String> = destinations.iter().map(|d| d.shown()).collect();
    let (registered, forgotten) = crate::ship::outbox::register(db.connection(), &shown, now)?;
    for url in forgotten {
        writeln!(
            err,
            "no longer shipping to {url} (not named by --ship): its outbox is dropped; naming it again sends everything again, which changes nothing there"
        )?;
    }
    Ok(registered)
}

/// The Event watches: cluster-wide, or one per `-n` namespace.
fn event_watches(
    conn: &connect::Connection,
    namespaces: &[Option<String>],
    tx: &mpsc::Sender<Msg>,
    stats: &Arc<Stats>,
    args: &RecordOptions,
) -> Vec<Watch<WireEvent>> {
    namespaces
        .iter()
        .map(|ns| {
            let (api, resource) = match ns {
                Some(ns) => (
                    Api::<WireEvent>::namespaced(conn.client.clone(), ns),
                    format!("events/{ns}"),
                ),
                None => (
                    Api::<WireEvent>::all(conn.client.clone()),
                    "events".to_string(),
                ),
            };
            Watch {
                api,
                dt: (),
                namespace: ns.clone(),
                resource: resource.into(),
                server: conn.server.clone(),
                tx: tx.clone(),
                stats: stats.clone(),
                verbose: args.verbose,
                chunk_size: args.chunk_size.unwrap_or(EVENT_CHUNK_SIZE),
                decode: crate::k8s::object::Decode::default(),
            }
        })
        .collect()
}

/// The object watches RBAC allows (or that are watched blind), the types
/// they keep, and the types refused.
///
/// NB: one LIST of one object per watch tells whether RBAC allows it; with
/// every type of a cluster that is about a hundred requests, so they go
/// PREFLIGHTS at a time instead of one after the other.
async fn preflight_objects(
    chosen: &[ResourceType],
    namespaces: &[Option<String>],
    conn: &connect::Connection,
    tx: &mpsc::Sender<Msg>,
    stats: &Arc<Stats>,
    args: &RecordOptions,
    err: &mut dyn Write,
) -> anyhow::Result<(Vec<ObjectWatch>, Vec<ResourceType>, Vec<String>)> {
    let candidates: Vec<(ResourceType, ObjectWatch)> = chosen
        .iter()
        .flat_map(|t| {
            watches_of(t, namespaces, conn, tx, stats, args)
                .into_iter()
                .map(move |w| (t.clone(), w))
        })
        .collect();
    let checked: Vec<(ResourceType, ObjectWatch, Result<(), _>)> = {
        use futures::StreamExt;
        futures::stream::iter(candidates)
            .map(|(t, w)| async move {
                let allowed = w.preflight().await;
                (t, w, allowed)
            })
            .buffered(PREFLIGHTS)
            .collect()
            .await
    };
    let mut watches = Vec::new();
    let mut kept: Vec<ResourceType> = Vec::new();
    for (t, w, allowed) in checked {
        match allowed {
            Ok(()) => {}
            // NB: a type whose list fails on the server's side (a conversion
            // webhook that is down) is watched all the same: blind, warned
            // about, a gap until it answers; it is not silently left out.
            Err(e) if watch_anyway(&e) && !args.once => {
                writeln!(err, "{}", blind_warning(&t.full_name(), &e))?;
            }
            // NB: a type RBAC forbids costs its history, not the recording: say so and go on.
            Err(e) => {
                writeln!(
                    err,
                    "warning: not keeping history of {}: {e}",
                    t.full_name()
                )?;
                continue;
            }
        }
        if !kept.iter().any(|k| k.full_name() == t.full_name()) {
            kept.push(t);
        }
        watches.push(w);
    }
    let refused: Vec<String> = chosen
        .iter()
        .map(ResourceType::full_name)
        .filter(|name| !kept.iter().any(|k| k.full_name() == *name))
        .collect();
    Ok((watches, kept, refused))
}

/// How long the writer may hold a transaction: `--commit-every`, else the
/// default (longer while shipping), and never more than a second when
/// another recorder answers for the same file.
fn commit_every(args: &RecordOptions, shipping: bool, shares_file: bool) -> Duration {
    let every = match args.commit_every {
        Some(ms) => Duration::from_millis(ms.unsigned_abs()),
        None if !shipping => flush::DEFAULT_COMMIT_EVERY,
        None => flush::DEFAULT_COMMIT_EVERY_SHIPPING,
    };
    if shares_file {
        every.min(flush::SHARED_COMMIT_EVERY)
    } else {
        every
    }
}
