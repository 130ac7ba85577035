//! `kubectl diag record`: watch Events and store every occurrence exactly
//! once, and keep the compact history of objects of the default types (and
//! `--kinds`).
//!
//! Shape: one async task per watch (per type; cluster-wide, or one per `-n`
//! namespace for namespaced types) sends plain changes through a bounded channel to one writer thread
//! ([`sink`]), which commits them in batches. Signals stop the watches; the
//! writer then drains, commits and closes the session, and the process exits 0.

pub mod ask;
pub mod checking;
pub mod flush;
mod options;
mod plan;
pub mod retention;
pub mod serve;
pub mod shipping;
pub mod sink;
mod supervise;
pub mod types;
pub mod watch;

use std::io::{IsTerminal, Write};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use anyhow::Context;
use kube::Api;
use tokio::sync::mpsc;

use crate::k8s::connect;
use crate::k8s::object::WireObject;
use crate::model::ResourceType;

pub use self::options::{CheckEvery, RecordOptions, destinations};
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

/// Preflight requests in flight at once when the recorder starts.
const PREFLIGHTS: usize = 16;

/// The object types being recorded, each with the switch that stops its watches.
#[derive(Default)]
struct Running {
    types: std::collections::BTreeMap<String, ResourceType>,
    stops: std::collections::HashMap<String, tokio::sync::watch::Sender<bool>>,
    /// Types the cluster serves that the recorder may not list: warned about
    /// once, tried again at each rediscovery, recorded once allowed.
    refused: std::collections::HashSet<String>,
    /// When each custom type's list last worked (see `Rediscovery::probe`).
    listed_ok: std::collections::HashMap<String, i64>,
    /// Custom types watched again because their list failed, until it works.
    probe_failed: std::collections::HashSet<String>,
}

/// kubectl's full name of the type a watch watches: its key in [`Running`].
fn full_name(ar: &kube::core::ApiResource) -> String {
    if ar.group.is_empty() {
        ar.plural.clone()
    } else {
        format!("{}.{}", ar.plural, ar.group)
    }
}

impl Running {
    /// The receiver a watch of this type stops on (one switch per type,
    /// shared by its per-namespace watches).
    fn stop_of(&mut self, ar: &kube::core::ApiResource) -> tokio::sync::watch::Receiver<bool> {
        self.stops
            .entry(full_name(ar))
            .or_insert_with(|| tokio::sync::watch::channel(false).0)
            .subscribe()
    }

    fn stop_all(&self) {
        for stop in self.stops.values() {
            let _ = stop.send(true);
        }
    }
}

/// What starting watches for a type that appeared needs.
struct Rediscovery<'a> {
    conn: &'a connect::Connection,
    namespaces: &'a [Option<String>],
    tx: &'a mpsc::Sender<Msg>,
    stats: &'a Arc<Stats>,
    args: &'a RecordOptions,
}

impl Rediscovery<'_> {
    /// Discovers the types again: starts watching those that appeared, stops
    /// those that went, and tells the writer both. Err: the writer is gone.
    async fn run(
        &self,
        running: &mut Running,
        tasks: &mut tokio::task::JoinSet<Stop>,
        err: &mut dyn Write,
    ) -> Result<(), Stop> {
        let discovered = match crate::k8s::discovery::discover(&self.conn.client).await {
            Ok(d) => d,
            Err(e) => {
                if self.args.verbose {
                    let _ = writeln!(err, "discovery failed, trying again later: {e}");
                }
                return Ok(());
            }
        };
        let wanted = types::select_present(&discovered, &self.args.kinds, &self.args.exclude_kinds);
        let now = now_ms();
        let gone: Vec<ResourceType> = running
            .types
            .values()
            .filter(|t| !wanted.iter().any(|w| w.full_name() == t.full_name()))
            .cloned()
            .collect();
        let mut changed = !gone.is_empty();
        for t in gone {
            let name = t.full_name();
            if let Some(stop) = running.stops.remove(&name) {
                let _ = stop.send(true);
            }
            running.types.remove(&name);
            let _ = writeln!(err, "type {name} was removed: its history ends here");
            self.type_change(&t, now, true).await?;
        }
        running
            .refused
            .retain(|name| wanted.iter().any(|w| w.full_name() == *name));
        for t in wanted {
            let name = t.full_name();
            // NB: a CRD whose recorded version stops being served (or stops
            // being the preferred one) answers the old watch 404 for good: the
            // type is watched again through the version discovery prefers now,
            // and relisted, blind since the old watch began failing.
            let switched_from = match running.types.get(&name) {
                Some(old) if old.version == t.version => continue,
                Some(old) => Some(old.api_version()),
                None => None,
            };
            // Read before the old watches stop: a watch that ends is not blind.
            let failing_since = self.stats.blind.list();
            if let Some(old) = &switched_from {
                if let Some(stop) = running.stops.remove(&name) {
                    let _ = stop.send(true);
                }
                running.types.remove(&name);
                let _ = writeln!(
                    err,
                    "type {name}: {old} is no longer the version served first; recording it through {} from now (relisted)",
                    t.api_version()
                );
            }
            // NB: a refused type is asked again at each rediscovery (a list of
            // one object), but warned about only once.
            let was_refused = running.refused.contains(&name);
            let mut allowed = Vec::new();
            for w in self.watches_of(&t) {
                match w.preflight().await {
                    Ok(()) => allowed.push(w),
                    Err(e) if watch_anyway(&e) => {
                        let _ = writeln!(err, "{}", blind_warning(&name, &e));
                        allowed.push(w);
                    }
                    Err(e) if !was_refused => {
                        let _ = writeln!(err, "warning: not keeping history of {name}: {e}");
                    }
                    Err(_) => {}
                }
            }
            if allowed.is_empty() {
                running.refused.insert(name);
                continue;
            }
            changed = true;
            let now_allowed = running.refused.remove(&name);
            match (&switched_from, now_allowed) {
                (Some(_), _) => {}
                (None, true) => {
                    if self.args.verbose {
                        let _ =
                            writeln!(err, "type {name} may be listed now: recording it from now");
                    }
                }
                (None, false) => {
                    let _ = writeln!(err, "type {name} appeared: recording it from now");
                }
            }
            if switched_from.is_none() {
                self.type_change(&t, now, false).await?;
            }
            for w in allowed {
                let rx = running.stop_of(w.dt());
                let start = WatchStart {
                    resume_from: None,
                    blind_since: None,
                    blind: switched_from.as_ref().map(|old| watch::Blind {
                        since: failing_since
                            .iter()
                            .find(|(key, _)| key == w.resource())
                            .map_or(now, |(_, since)| *since),
                        reason: watch::GapReason::Relist,
                        detail: format!(
                            "{old} is no longer the version served first; watched through {}",
                            t.api_version()
                        ),
                    }),
                };
                tasks.spawn(w.run(start, rx));
            }
            running.types.insert(t.full_name(), t);
        }
        self.probe(running, tasks, err, now).await;
        if changed {
            self.tx
                .send(Msg::ResourceTypes(discovered.types))
                .await
                .map_err(|_| Stop::WriterGone)?;
        }
        Ok(())
    }

    fn watches_of(&self, t: &ResourceType) -> Vec<ObjectWatch> {
        watches_of(
            t,
            self.namespaces,
            self.conn,
            self.tx,
            self.stats,
            self.args,
        )
    }

    /// Lists one object of each custom resource type that is not blind now.
    ///
    /// NB: a CRD whose conversion webhook fails (its Service is gone) keeps
    /// the watch open and silent: the apiserver drops every change it cannot
    /// convert, and nothing reaches the recorder (issue 27.6). Only a list
    /// tells: a 5xx to it makes the type's watches start again, blind since
    /// the last list that worked, so that the interval is a gap and a warning
    /// (and the relist, once the webhook answers, finds what changed). Custom
    /// types only (built-in types convert in-process), once per rediscovery.
    async fn probe(
        &self,
        running: &mut Running,
        tasks: &mut tokio::task::JoinSet<Stop>,
        err: &mut dyn Write,
        now: i64,
    ) {
        let custom: Vec<ResourceType> = running
            .types
            .values()
            .filter(|t| !types::built_in_group(&t.group))
            .cloned()
            .collect();
        let blind = self.stats.blind.list();
        for t in custom {
            let name = t.full_name();
            let watches = self.watches_of(&t);
            let restarted = running.probe_failed.contains(&name);
            // A watch that is failing by itself says so; only a silent one needs the probe.
            if !restarted
                && watches
                    .iter()
                    .any(|w| blind.iter().any(|(key, _)| key == w.resource()))
            {
                continue;
            }
            let mut failed = None;
            for w in &watches {
                if let Err(e) = w.preflight().await
                    && watch_anyway(&e)
                {
                    failed = Some(e);
                    break;
                }
            }
            let since = *running.listed_ok.entry(name.clone()).or_insert(now);
            let Some(e) = failed else {
                if running.probe_failed.remove(&name) {
                    for w in &watches {
                        self.stats.blind.cleared(w.resource(), sink::PROBE);
                    }
                }
                running.listed_ok.insert(name, now);
                continue;
            };
            if restarted {
                // Already watched again, blind: its gap closes when it sees.
                continue;
            }
            running.probe_failed.insert(name.clone());
            for w in &watches {
                self.stats.blind.failing(w.resource(), sink::PROBE, since);
            }
            let _ = writeln!(
                err,
                "warning: {e}; its watch delivered nothing it could not convert: recording {name} again, blind since {}",
                crate::units::rfc3339(since)
            );
            if let Some(stop) = running.stops.remove(&name) {
                let _ = stop.send(true);
            }
            for w in watches {
                let rx = running.stop_of(w.dt());
                let start = WatchStart {
                    resume_from: None,
                    blind_since: None,
                    blind: Some(watch::Blind {
                        since,
                        reason: watch::GapReason::Disconnected,
                        detail: format!("{e}; the watch stayed open and delivered nothing"),
                    }),
                };
                tasks.spawn(w.run(start, rx));
            }
        }
    }

    async fn type_change(&self, t: &ResourceType, at: i64, removed: bool) -> Result<(), Stop> {
        let resource: Arc<str> = t.full_name().into();
        self.tx
            .send(Msg::Change {
                change: crate::model::Change::Type(crate::model::TypeChange {
                    resource: resource.to_string(),
                    api_version: t.api_version(),
                    kind: t.kind.clone(),
                    at,
                    removed,
                }),
                resource,
                rv: None,
                received: std::time::Instant::now(),
            })
            .await
            .map_err(|_| Stop::WriterGone)
    }
}

/// Pokes the recorder whenever a CRD or an APIService changes (one is
/// established, becomes available, or goes), so it discovers again within
/// seconds. Metadata only: a CRD's schema can be megabytes.
async fn watch_type_definitions(client: kube::Client, poke: mpsc::Sender<()>) {
    use futures::StreamExt;
    use kube::runtime::{WatchStreamExt, watcher};
    let definitions = |group: &str, kind: &str, plural: &str| {
        let ar = kube::core::ApiResource {
            group: group.into(),
            version: "v1".into(),
            api_version: format!("{group}/v1"),
            kind: kind.into(),
            plural: plural.into(),
        };
        watcher(
            Api::<kube::core::PartialObjectMeta<kube::core::DynamicObject>>::all_with(
                client.clone(),
                &ar,
            ),
            watcher::Config::default(),
        )
        .default_backoff()
        .boxed()
    };
    let mut events = futures::stream::select(
        definitions(
            "apiextensions.k8s.io",
            "CustomResourceDefinition",
            "customresourcedefinitions",
        ),
        definitions("apiregistration.k8s.io", "APIService", "apiservices"),
    );
    while let Some(event) = events.next().await {
        if let Ok(watcher::Event::Apply(_) | watcher::Event::Delete(_)) = event
            && poke.send(()).await.is_err()
        {
            return;
        }
    }
}

/// A watch of objects: whole, or through their metadata only (Secrets).
enum ObjectWatch {
    Full(Watch<WireObject>),
    Metadata(Watch<watch::MetadataOnly>),
}

impl ObjectWatch {
    fn resource(&self) -> &Arc<str> {
        match self {
            ObjectWatch::Full(w) => &w.resource,
            ObjectWatch::Metadata(w) => &w.resource,
        }
    }

    fn dt(&self) -> &kube::core::ApiResource {
        match self {
            ObjectWatch::Full(w) => &w.dt,
            ObjectWatch::Metadata(w) => &w.dt,
        }
    }

    async fn preflight(&self) -> Result<(), crate::k8s::connect::ClusterError> {
        match self {
            ObjectWatch::Full(w) => w.preflight().await,
            ObjectWatch::Metadata(w) => w.preflight().await,
        }
    }

    async fn run(self, start: WatchStart, stop: tokio::sync::watch::Receiver<bool>) -> Stop {
        match self {
            ObjectWatch::Full(w) => w.run(start, stop).await,
            ObjectWatch::Metadata(w) => w.run(start, stop).await,
        }
    }
}

/// What every object watch is made of, whatever its item type.
struct WatchParts<'a> {
    conn: &'a connect::Connection,
    ar: &'a kube::core::ApiResource,
    namespace: Option<String>,
    resource: Arc<str>,
    tx: &'a mpsc::Sender<Msg>,
    stats: &'a Arc<Stats>,
    args: &'a RecordOptions,
}

impl WatchParts<'_> {
    fn watch<K>(self) -> Watch<K>
    where
        K: watch::Watched<DynamicType = kube::core::ApiResource>
            + kube::Resource<Scope = kube::core::DynamicResourceScope>,
    {
        let client = self.conn.client.clone();
        Watch {
            api: match &self.namespace {
                Some(ns) => Api::<K>::namespaced_with(client, ns, self.ar),
                None => Api::<K>::all_with(client, self.ar),
            },
            dt: self.ar.clone(),
            namespace: self.namespace,
            resource: self.resource,
            server: self.conn.server.clone(),
            tx: self.tx.clone(),
            stats: self.stats.clone(),
            verbose: self.args.verbose,
            chunk_size: self.args.chunk_size.unwrap_or(OBJECT_CHUNK_SIZE),
            decode: crate::k8s::object::Decode {
                configmap_values: self.args.configmap_values,
                ..Default::default()
            },
        }
    }
}

/// The watches of one object type: cluster-wide, or one per `-n` namespace.
fn watches_of(
    t: &ResourceType,
    namespaces: &[Option<String>],
    conn: &connect::Connection,
    tx: &mpsc::Sender<Msg>,
    stats: &Arc<Stats>,
    args: &RecordOptions,
) -> Vec<ObjectWatch> {
    let ar = crate::k8s::discovery::api_resource(t);
    let metadata_only = types::metadata_only(t);
    let scopes: Vec<Option<String>> = if t.namespaced {
        namespaces.to_vec()
    } else {
        vec![None]
    };
    scopes
        .into_iter()
        .map(|ns| {
            let resource: Arc<str> = match &ns {
                Some(ns) => format!("{}/{ns}", t.full_name()),
                None => t.full_name(),
            }
            .into();
            let common = WatchParts {
                conn,
                ar: &ar,
                namespace: ns,
                resource,
                tx,
                stats,
                args,
            };
            if metadata_only {
                ObjectWatch::Metadata(common.watch())
            } else {
                ObjectWatch::Full(common.watch())
            }
        })
        .collect()
}

/// `--listen`: an address with a port; `:9090` (as Prometheus exporters
/// write it) means every interface.
pub fn listen_address(addr: &str) -> anyhow::Result<std::net::SocketAddr> {
    let full = match addr.strip_prefix(':') {
        Some(port) => format!("0.0.0.0:{port}"),
        None => addr.to_string(),
    };
    full.parse::<std::net::SocketAddr>().with_context(|| {
        format!(
            "--listen {}: expected an address such as 0.0.0.0:9090 or :9090",
            crate::render::escape(addr)
        )
    })
}

/// Whether a failed preflight list is the server's failure (5xx, or no
/// answer), not a refusal: the type is watched all the same, blind until the
/// server answers, rather than left out without a gap.
fn watch_anyway(e: &connect::ClusterError) -> bool {
    matches!(e, connect::ClusterError::Api { code, .. } if *code >= 500)
}

fn blind_warning(name: &str, e: &connect::ClusterError) -> String {
    format!(
        "warning: {e}; recording {name} all the same: blind until the apiserver answers, and the interval is stored as a gap"
    )
}

/// The namespaces to watch: `-n a,b` gives two watches (`-n a,a` one); none
/// (or `-A`) one cluster-wide watch. A name that cannot be a namespace is an
/// error naming the flag and the rule, before anything connects.
///
/// NB: `-n ''` and `-n ADV-A` recorded nothing without a word, and `-n a/b`
/// ended in a 404 from "list events".
pub fn namespaces(namespace: Option<&str>) -> anyhow::Result<Vec<Option<String>>> {
    let Some(list) = namespace else {
        return Ok(vec![None]);
    };
    let mut out: Vec<Option<String>> = Vec::new();
    for name in list.split(',').map(str::trim) {
        if let Some(why) = not_a_namespace(name) {
            anyhow::bail!(
                "-n/--namespace {:?}: {why}; a namespace name is an RFC 1123 label: at most 63 \
                 lower-case letters, digits and '-', starting and ending with a letter or digit \
                 (comma separate several; leave -n out to record every namespace)",
                crate::render::escape(list)
            );
        }
        if !out.iter().flatten().any(|n| n == name) {
            out.push(Some(name.to_string()));
        }
    }
    Ok(out)
}

/// Why `name` cannot be a namespace's name, if it cannot.
fn not_a_namespace(name: &str) -> Option<String> {
    let shown = crate::render::escape(name);
    if name.is_empty() {
        return Some("an empty name".into());
    }
    if name.len() > 63 {
        return Some(format!("{shown:?} is longer than 63 characters"));
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '-'))
    {
        return Some(format!(
            "{shown:?} holds '{}'",
            crate::render::escape(&c.to_string())
        ));
    }
    if name.starts_with('-') || name.ends_with('-') {
        return Some(format!("{shown:?} starts or ends with '-'"));
    }
    None
}

pub fn run(mut args: RecordOptions, err: &mut dyn Write) -> anyhow::Result<u8> {
    let destinations = std::mem::take(&mut args.ship);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(record(&args, destinations, err))
}

/// Plan, then supervise: everything opened and checked before the first
/// watch runs ([`plan`]), then watched until a signal or listed once, then
/// stopped in order ([`supervise`]).
async fn record(
    args: &RecordOptions,
    destinations: Vec<crate::ship::Destination>,
    err: &mut dyn Write,
) -> anyhow::Result<u8> {
    let mut plan = plan::plan(args, &destinations, err).await?;
    let destinations: Vec<Arc<crate::ship::Destination>> =
        destinations.into_iter().map(Arc::new).collect();
    let shippers = supervise::Shippers::start(&plan, &destinations, args.once);
    let show_status = !args.quiet && std::io::stderr().is_terminal();
    let watches = std::mem::take(&mut plan.watches);
    let failure = if args.once {
        supervise::once_all(watches, &plan.tx, &plan.conn.server, err).await
    } else {
        supervise::supervise(&mut plan, watches, args, show_status, err).await?
    };
    shippers.stop().await;
    supervise::finish(plan, &destinations, args, failure, show_status, err).await
}

/// How `record --once` ended for one watch.
enum Listed {
    Stored,
    Failed(connect::ClusterError),
    /// The writer is gone and has its own error.
    WriterGone,
}

/// `record --once` for one watch.
async fn once<K: watch::Watched>(w: &Watch<K>, start: WatchStart, server: &str) -> Listed
where
    K::DynamicType: Clone + Send + Sync,
{
    match w.once(start).await {
        Ok(()) => Listed::Stored,
        Err(watch::OnceError::List(e)) => Listed::Failed(connect::explain(
            e,
            "list",
            &K::plural(&w.dt),
            w.namespace.as_deref(),
            server,
        )),
        Err(watch::OnceError::WriterGone) => Listed::WriterGone,
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
        let blind = match stats.blind.count() {
            0 => String::new(),
            n => format!(" ({n} blind now)"),
        };
        eprint!(
            "\r\x1b[2Krecording {}: {} changes/s, {} occurrences stored, {} gap(s){blind}, lag {} ms, {:.1} MiB{}",
            crate::render::escape(&context),
            changes - previous,
            stats.occurrences.load(Ordering::Relaxed),
            stats.gaps.load(Ordering::Relaxed),
            stats.lag_ms.load(Ordering::Relaxed),
            stats.db_bytes.load(Ordering::Relaxed) as f64 / 1048576.0,
            ship_status(&stats.ship),
        );
        previous = changes;
    }
}

/// What `--listen` says once bound: the address, unless `-q`; with port 0 even
/// then, since the kernel chose it and this is the only place it is told.
fn listening(
    asked: std::net::SocketAddr,
    bound: std::net::SocketAddr,
    quiet: bool,
) -> Option<String> {
    (!quiet || asked.port() == 0)
        .then(|| format!("serving /healthz and /metrics on http://{bound}"))
}

/// The status line's part about --ship: rows shipped, what waits, and the failure that stops it.
/// NB: the failure quotes a remote server (an OTLP receiver's `error_message`, a
/// ClickHouse exception): escaped, as this line is written to the TTY raw.
fn ship_status(ship: &crate::ship::ShipStats) -> String {
    if ship.destinations.load(Ordering::Relaxed) == 0 {
        return String::new();
    }
    let rows = ship.rows.load(Ordering::Relaxed);
    let backlog = ship.backlog.load(Ordering::Relaxed);
    let behind = ship.behind_ms() / 1000;
    let error = ship.last_error();
    let mut s = format!(", shipped {rows} row(s)");
    if backlog > 0 || behind > 0 {
        s.push_str(&format!(" ({backlog} waiting, {behind} s behind)"));
    }
    if !error.is_empty() {
        let short: String = error.chars().take(80).collect();
        s.push_str(&format!(", ship: {}", crate::render::escape(&short)));
    }
    s
}

#[cfg(test)]
mod namespace_tests {
    use super::*;

    fn ns(list: &str) -> anyhow::Result<Vec<Option<String>>> {
        namespaces(Some(list))
    }

    /// Regression (issue 27.18): `-n ''` and `-n ADV-A` recorded nothing
    /// without a word, `-n a/b` ended in a 404, and `-n x,x` watched twice.
    #[test]
    fn a_namespace_that_cannot_be_one_is_refused_and_a_repeat_watched_once() {
        assert_eq!(ns("x,x").unwrap(), [Some("x".to_string())]);
        assert_eq!(
            ns("a, b-2,a").unwrap(),
            [Some("a".to_string()), Some("b-2".to_string())]
        );
        for (list, why) in [
            ("", "an empty name"),
            ("a,,b", "an empty name"),
            ("ADV-A", "\"ADV-A\" holds 'A'"),
            ("a/b", "\"a/b\" holds '/'"),
            ("-a", "starts or ends with '-'"),
        ] {
            let err = ns(list).unwrap_err().to_string();
            assert!(err.starts_with("-n/--namespace"), "{err}");
            assert!(err.contains(why), "{list}: {err}");
            assert!(err.contains("RFC 1123 label"), "{err}");
        }
        assert!(ns(&"a".repeat(64)).is_err());
        assert!(ns(&"a".repeat(63)).is_ok());
        // NB: `-A` wins over `-n` (cli's `record_with_all_namespaces_ignores_n`).
        assert_eq!(namespaces(None).unwrap(), [None]);
    }
}

#[cfg(test)]
mod status_tests {
    use super::*;

    /// Regression (issue 44.10): `--listen 127.0.0.1:0 -q` never said which port the kernel chose.
    #[test]
    fn a_chosen_port_is_told_even_when_quiet() {
        let asked: std::net::SocketAddr = "127.0.0.1:0".parse().unwrap();
        let bound: std::net::SocketAddr = "127.0.0.1:40123".parse().unwrap();
        for quiet in [false, true] {
            assert_eq!(
                listening(asked, bound, quiet).as_deref(),
                Some("serving /healthz and /metrics on http://127.0.0.1:40123")
            );
        }
        let fixed: std::net::SocketAddr = "127.0.0.1:9090".parse().unwrap();
        assert_eq!(listening(fixed, fixed, true), None);
        assert!(listening(fixed, fixed, false).is_some());
    }

    /// Regression (issue 44.4): a receiver's error text reached the TTY raw through the status line.
    #[test]
    fn a_shipping_failure_is_escaped_in_the_status_line() {
        let ship = crate::ship::ShipStats::default();
        ship.destinations.store(1, Ordering::Relaxed);
        ship.fail("otlp+http://c:4318/v1/logs refused: rejected 1 of 2 record(s): \u{1b}]52;c;SGk=\u{7}\u{1b}[2J\r\n".into());
        let line = ship_status(&ship);
        assert!(!line.chars().any(|c| c.is_control()), "{line:?}");
        assert!(line.contains("\\x1b]52;c;SGk=\\x07"), "{line:?}");
    }
}
