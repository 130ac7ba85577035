//! `kubectl diag record`: watch Events and store every occurrence exactly
//! once, and keep the compact history of objects of the default types (and
//! `--kinds`).
//!
//! Shape: one async task per watch (per type; cluster-wide, or one per `-n`
//! namespace for namespaced types) sends plain changes through a bounded channel to one writer thread
//! ([`sink`]), which commits them in batches. Signals stop the watches; the
//! writer then drains, commits and closes the session, and the process exits 0.

pub mod flush;
pub mod retention;
pub mod serve;
pub mod sink;
pub mod watch;

use std::io::{IsTerminal, Write};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use anyhow::Context;
use kube::Api;
use tokio::sync::mpsc;

use crate::cli::{GlobalArgs, RecordArgs};
use crate::k8s::connect;
use crate::k8s::event::WireEvent;
use crate::k8s::object::WireObject;
use crate::model::{Discovered, ResourceType};
use crate::store::session;
use crate::store::writer::Writer;
use crate::store::{self, Mode};

use self::retention::Retention;
use self::sink::{Msg, Stats, now_ms};
use self::watch::{Stop, Watch, WatchStart};

/// Changes the watches may send ahead of the writer before they wait.
pub const CHANNEL_CAPACITY: usize = 20_000;
/// Events per page of a paged list. NB: Events have no watch cache, so each
/// page is read from etcd, which counts every remaining Event to answer it: on
/// 1,000,000 Events a page of 500 took 0.55 s and one of 5,000 0.75 s. Events
/// are small (a page of 5,000 is about 4.5 MB of JSON).
const EVENT_CHUNK_SIZE: u32 = 5_000;
/// Objects per page: kubectl's default. Objects come from the watch cache, and
/// a Pod can be many times the size of an Event.
const OBJECT_CHUNK_SIZE: u32 = 500;
const HEARTBEAT: Duration = Duration::from_secs(5);
const MAINTENANCE: Duration = Duration::from_secs(600);

/// The types whose history is kept unless `--events-only`, as kubectl names them.
pub const DEFAULT_KINDS: &[&str] = &[
    "pods",
    "replicasets.apps",
    "deployments.apps",
    "statefulsets.apps",
    "daemonsets.apps",
    "jobs.batch",
    "cronjobs.batch",
    "nodes",
    "namespaces",
    "persistentvolumeclaims",
    "persistentvolumes",
    "horizontalpodautoscalers.autoscaling",
    "poddisruptionbudgets.policy",
];

/// The object types to watch: the defaults the cluster serves, plus `--kinds`
/// (an unknown name is an error naming it).
pub fn object_types(
    discovered: &Discovered,
    extra: &[String],
) -> anyhow::Result<Vec<ResourceType>> {
    let mut types: Vec<ResourceType> = Vec::new();
    for name in DEFAULT_KINDS {
        if let Some(t) = discovered.resolve(name) {
            types.push(t.clone());
        }
    }
    for name in extra.iter().map(|n| n.trim()).filter(|n| !n.is_empty()) {
        let t = discovered.resolve(name).with_context(|| {
            format!(
                "--kinds {name}: this cluster serves no such resource type; `kubectl api-resources` lists them"
            )
        })?;
        if !(t.can("list") && t.can("watch")) {
            anyhow::bail!(
                "--kinds {name}: {} cannot be listed and watched (verbs: {})",
                t.full_name(),
                t.verbs.join(",")
            );
        }
        if !types.iter().any(|x| x.full_name() == t.full_name()) {
            types.push(t.clone());
        }
    }
    Ok(types)
}

/// The namespaces to watch: `-n a,b` gives two watches; none (or `-A`) one cluster-wide watch.
fn namespaces(global: &GlobalArgs) -> Vec<Option<String>> {
    match (&global.namespace, global.all_namespaces) {
        (Some(list), false) => list
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(|s| Some(s.to_string()))
            .collect(),
        _ => vec![None],
    }
}

pub fn run(global: &GlobalArgs, args: &RecordArgs, err: &mut dyn Write) -> anyhow::Result<u8> {
    let retention = Retention {
        max_age_ms: args.retain,
        max_bytes: args.max_db_size,
        all_clusters: args.retain_all,
    };
    let listen = match &args.listen {
        Some(addr) => Some(addr.parse::<std::net::SocketAddr>().with_context(|| {
            format!("--listen {addr}: expected an address such as 0.0.0.0:9090")
        })?),
        None => None,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(record(global, args, retention, listen, err))
}

async fn record(
    global: &GlobalArgs,
    args: &RecordArgs,
    retention: Retention,
    listen: Option<std::net::SocketAddr>,
    err: &mut dyn Write,
) -> anyhow::Result<u8> {
    let conn = connect::connect(global).await?;
    let cluster_uid = connect::cluster_uid(&conn).await?;
    // Which types to keep history of, before anything touches the recording:
    // a bad --kinds changes nothing on disk.
    let (discovered, types) = if args.events_only {
        (None, Vec::new())
    } else {
        let discovered = crate::k8s::discovery::discover(&conn.client)
            .await
            .map_err(|e| connect::explain(e, "discover", "API resources", None, &conn.server))?;
        let types = object_types(&discovered, &args.kinds)?;
        (Some(discovered), types)
    };
    let path = crate::paths::db_path(global.db.as_ref());
    let db = store::open(&path, Mode::Write)?;
    let now = now_ms();
    let cluster =
        session::register_cluster(&db, &path, &cluster_uid, &conn.context, &conn.server, now)?;

    let stats = Arc::new(Stats::default());
    let (tx, rx) = mpsc::channel::<Msg>(CHANNEL_CAPACITY);
    let namespaces = namespaces(global);
    let event_watches: Vec<Watch<WireEvent>> = namespaces
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
            }
        })
        .collect();
    for w in &event_watches {
        w.preflight().await?;
    }

    let mut object_watches: Vec<Watch<WireObject>> = Vec::new();
    if let Some(discovered) = &discovered {
        session::save_resource_types(&db, &path, cluster, &discovered.types)?;
    }
    for t in types {
        let ar = crate::k8s::discovery::api_resource(&t);
        let scopes: Vec<Option<String>> = if t.namespaced {
            namespaces.clone()
        } else {
            vec![None]
        };
        for ns in scopes {
            let (api, resource) = match &ns {
                Some(ns) => (
                    Api::<WireObject>::namespaced_with(conn.client.clone(), ns, &ar),
                    format!("{}/{ns}", t.full_name()),
                ),
                None => (
                    Api::<WireObject>::all_with(conn.client.clone(), &ar),
                    t.full_name(),
                ),
            };
            let w = Watch {
                api,
                dt: ar.clone(),
                namespace: ns,
                resource: resource.into(),
                server: conn.server.clone(),
                tx: tx.clone(),
                stats: stats.clone(),
                verbose: args.verbose,
                chunk_size: args.chunk_size.unwrap_or(OBJECT_CHUNK_SIZE),
            };
            // NB: a type RBAC forbids costs its history, not the recording: say so and go on.
            match w.preflight().await {
                Ok(()) => object_watches.push(w),
                Err(e) => writeln!(
                    err,
                    "warning: not keeping history of {}: {e}",
                    t.full_name()
                )?,
            }
        }
    }

    let mode = if args.once { "once" } else { "watch" };
    let start = session::start_session(&db, &path, cluster, &cluster_uid, mode, now)?;
    let start_of = |resource: &str| -> Result<WatchStart, crate::store::StoreError> {
        Ok(WatchStart {
            resume_from: session::load_position(&db, &path, cluster, resource)?,
            blind_since: start.previous_end,
        })
    };
    let mut event_starts = Vec::new();
    for w in &event_watches {
        event_starts.push(start_of(&w.resource)?);
    }
    let mut object_starts = Vec::new();
    for w in &object_watches {
        object_starts.push(start_of(&w.resource)?);
    }
    let writer_thread = {
        let (path, stats) = (path.clone(), stats.clone());
        // NB: the writer keeps statements that borrow its connection, so it
        // is made on the thread that uses it (it is not Send; the connection is).
        std::thread::Builder::new()
            .name("diag-writer".into())
            .spawn(move || {
                let writer = Writer::new(db, &path, cluster);
                sink::run(writer, path, start.id, rx, stats, retention)
            })
            .context("starting the writer thread")?
    };

    let show_status = !args.quiet && std::io::stderr().is_terminal();
    let (shutdown_tx, shutdown_rx) = tokio::sync::watch::channel(false);
    let mut failure: Option<anyhow::Error> = None;

    if args.once {
        for (w, s) in event_watches.iter().zip(event_starts) {
            if let Some(f) = once(w, s, &conn.server).await {
                failure = f;
                break;
            }
        }
        if failure.is_none() {
            for (w, s) in object_watches.iter().zip(object_starts) {
                if let Some(f) = once(w, s, &conn.server).await {
                    failure = f;
                    break;
                }
            }
        }
        // Each watch holds a sender: the writer finishes once all are gone.
        drop(event_watches);
        drop(object_watches);
    } else {
        let _ = tx.send(Msg::Maintain).await;
        let ticker = {
            let tx = tx.clone();
            tokio::spawn(async move {
                let mut heartbeat = tokio::time::interval(HEARTBEAT);
                let mut maintenance = tokio::time::interval(MAINTENANCE);
                maintenance.tick().await;
                loop {
                    let msg = tokio::select! {
                        _ = heartbeat.tick() => Msg::Tick,
                        _ = maintenance.tick() => Msg::Maintain,
                    };
                    if tx.send(msg).await.is_err() {
                        break;
                    }
                }
            })
        };
        if let Some(addr) = listen {
            let listener = tokio::net::TcpListener::bind(addr)
                .await
                .with_context(|| format!("--listen {addr}: cannot listen there"))?;
            tokio::spawn(serve::serve(listener, stats.clone(), path.clone()));
        }
        let status = show_status.then(|| {
            let (stats, context) = (stats.clone(), conn.context.clone());
            tokio::spawn(async move { status_line(stats, context).await })
        });
        let mut tasks = tokio::task::JoinSet::new();
        for (w, s) in event_watches.into_iter().zip(event_starts) {
            let rx = shutdown_rx.clone();
            tasks.spawn(async move { w.run(s, rx).await });
        }
        for (w, s) in object_watches.into_iter().zip(object_starts) {
            let rx = shutdown_rx.clone();
            tasks.spawn(async move { w.run(s, rx).await });
        }
        let signal = wait_for_signal();
        tokio::pin!(signal);
        tokio::select! {
            _ = &mut signal => {}
            Some(done) = tasks.join_next() => {
                if let Ok(Stop::WriterGone) = done {
                    failure = Some(anyhow::anyhow!("the writer stopped"));
                }
            }
        }
        let _ = shutdown_tx.send(true);
        while tasks.join_next().await.is_some() {}
        ticker.abort();
        if let Some(status) = status {
            status.abort();
        }
    }
    drop(tx);
    let written = tokio::task::spawn_blocking(move || writer_thread.join())
        .await
        .context("waiting for the writer")?;
    if show_status {
        let _ = writeln!(err);
    }
    match written {
        Ok(Ok(())) => {}
        Ok(Err(store_err)) => return Err(store_err.into()),
        Err(_) => anyhow::bail!("the writer thread panicked; what was committed before is intact"),
    }
    if let Some(f) = failure {
        return Err(f);
    }
    if !args.quiet {
        writeln!(
            err,
            "recorded {} occurrence(s) in {} row(s) and {} object version(s) from {} change(s) into {}",
            stats.occurrences.load(Ordering::Relaxed),
            stats.rows.load(Ordering::Relaxed),
            stats.versions.load(Ordering::Relaxed),
            stats.changes.load(Ordering::Relaxed),
            path.display()
        )?;
    }
    Ok(crate::exit::OK)
}

/// `record --once` for one watch: None to go on, Some(failure) to stop
/// (Some(None) when the writer is gone and has its own error).
async fn once<K: watch::Watched>(
    w: &Watch<K>,
    start: WatchStart,
    server: &str,
) -> Option<Option<anyhow::Error>>
where
    K::DynamicType: Clone + Send + Sync,
{
    match w.once(start).await {
        Ok(Ok(())) => None,
        Ok(Err(e)) => Some(Some(
            connect::explain(e, "list", &K::plural(&w.dt), w.namespace.as_deref(), server).into(),
        )),
        Err(_) => Some(None),
    }
}

async fn wait_for_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    match signal(SignalKind::terminate()) {
        Ok(mut term) => {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
        }
        Err(_) => {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}

// NB: a task of its own, writing straight to stderr (unlocked, see main.rs): it
// outlives any borrow of the command's writer, like the watch tasks' warnings.
async fn status_line(stats: Arc<Stats>, context: String) {
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    let mut previous = 0u64;
    loop {
        tick.tick().await;
        let changes = stats.changes.load(Ordering::Relaxed);
        eprint!(
            "\r\x1b[2Krecording {context}: {} changes/s, {} occurrences stored, {} gap(s), lag {} ms, {:.1} MiB",
            changes - previous,
            stats.occurrences.load(Ordering::Relaxed),
            stats.gaps.load(Ordering::Relaxed),
            stats.lag_ms.load(Ordering::Relaxed),
            stats.db_bytes.load(Ordering::Relaxed) as f64 / 1048576.0,
        );
        previous = changes;
    }
}
