//! One watch of one resource type (Events, or objects whose history is kept),
//! cluster-wide or in one namespace: list, then watch from the list's
//! resourceVersion; resume from the last position after a dropped connection;
//! relist after 410 Gone. Every blind interval becomes a gap, and a finished
//! list of objects tells the writer which objects still exist.
//!
//! NB: this is a small hand-written loop rather than kube-runtime's watcher
//! because the recorder must resume from a resourceVersion persisted by a
//! previous process, and must know exactly when it relisted (a gap in which
//! deletions and intermediate counts may be missing) versus resumed (nothing
//! missed). The watcher hides both.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use futures::{StreamExt, TryStreamExt};
use kube::api::{ListParams, WatchEvent, WatchParams};
use kube::{Api, Resource};
use tokio::sync::{mpsc, watch};

use crate::k8s::connect::{ClusterError, explain};
use crate::k8s::event::WireEvent;
use crate::k8s::object::WireObject;
use crate::model::{Change, EventChange, ListedSet, ObjectChange, Seen};
use crate::store::session::Gap;

use super::sink::{Msg, Stats, now_ms};

/// Server-side watch timeout; the watch is then simply renewed.
const WATCH_TIMEOUT_S: u32 = 290;
const MAX_BACKOFF: Duration = Duration::from_secs(10);
/// A streaming list must send every existing Event before its timeout, so it gets longer.
const STREAMING_LIST_TIMEOUT_S: u32 = 1800;
/// The annotation on the bookmark that ends a streaming list's initial events.
const INITIAL_EVENTS_END: &str = "k8s.io/initial-events-end";
const RELISTED: &str = "; relisted: what was deleted or changed meanwhile may be missing";
const INCONSISTENT: &str = "; the list outlived etcd compaction and was finished from newer data: \
     changes made during the list to objects listed before may be missing";

/// A wire type the recorder watches, and how it becomes a [`Change`].
pub trait Watched:
    Resource + Clone + std::fmt::Debug + serde::de::DeserializeOwned + Send + Sync + 'static
where
    Self::DynamicType: Clone + Send + Sync,
{
    /// Whether a finished list reports the uids it held, so that objects gone
    /// meanwhile are marked deleted. Events need not: their deletion is their TTL.
    const RECONCILE: bool;

    /// `blind_since`: the change is a replay of something that happened while
    /// the recorder was blind, which began then.
    fn change(
        self,
        dt: &Self::DynamicType,
        seen: Seen,
        at: i64,
        blind_since: Option<i64>,
    ) -> Option<Change>;
}

impl Watched for WireEvent {
    const RECONCILE: bool = false;

    fn change(self, _: &(), seen: Seen, at: i64, _: Option<i64>) -> Option<Change> {
        let event = Box::new(self.into_observation()?);
        Some(Change::Event(if seen == Seen::Deleted {
            EventChange::Deleted { event, at }
        } else {
            EventChange::Upsert(event)
        }))
    }
}

impl Watched for WireObject {
    const RECONCILE: bool = true;

    fn change(
        self,
        dt: &kube::core::ApiResource,
        seen: Seen,
        at: i64,
        blind_since: Option<i64>,
    ) -> Option<Change> {
        Some(Change::Object(ObjectChange {
            seen,
            at,
            blind_since,
            observation: Box::new(self.into_observation(dt)),
        }))
    }
}

/// Where this watch starts and what was blind before it.
pub struct WatchStart {
    /// The resourceVersion the previous session committed, if any.
    pub resume_from: Option<String>,
    /// When the previous session stopped watching: the start of a `not-running` gap.
    pub blind_since: Option<i64>,
}

pub struct Watch<K: Watched>
where
    K::DynamicType: Clone + Send + Sync,
{
    pub api: Api<K>,
    pub dt: K::DynamicType,
    pub namespace: Option<String>,
    /// Key of this watch in the store's positions and gaps.
    pub resource: Arc<str>,
    pub server: String,
    pub tx: mpsc::Sender<Msg>,
    pub stats: Arc<Stats>,
    /// `--verbose`: log the watch's lifecycle on stderr.
    pub verbose: bool,
    /// Objects per page of a paged list (`--chunk-size`; 0: one page). Bounds
    /// memory while catching up on many Events.
    pub chunk_size: u32,
}

/// Why the watch stopped.
#[derive(Debug)]
pub enum Stop {
    /// Asked to stop (signal, or `--once` finished).
    Shutdown,
    /// The writer is gone (it failed); nothing more can be stored.
    WriterGone,
}

fn is_gone(err: &kube::Error) -> bool {
    matches!(err, kube::Error::Api(s) if s.code == 410)
}

/// What a list collects for reconciliation: the uids it held (objects only).
#[derive(Default)]
struct Listing {
    uids: Vec<String>,
    /// When the list began, if its continue token expired and it was finished
    /// from newer data: from then until its end, the list is not one snapshot.
    inconsistent_since: Option<i64>,
}

/// The continue token a 410 carries when a paged list's token outlived etcd
/// compaction: it finishes the list from newer data (an "inconsistent" list).
fn inconsistent_continue(err: &kube::Error) -> Option<String> {
    match err {
        kube::Error::Api(s) if s.code == 410 => s
            .metadata
            .as_ref()
            .and_then(|m| m.continue_.clone())
            .filter(|c| !c.is_empty()),
        _ => None,
    }
}

/// Folds an inconsistent list into the blind interval it closes.
fn note_inconsistent(listing: &Listing, blind: &mut Option<(i64, &'static str, String)>) {
    if let Some(since) = listing.inconsistent_since {
        let gap = blind.get_or_insert_with(|| (since, "relist", "paged list".to_string()));
        gap.2.push_str(INCONSISTENT);
    }
}

impl<K: Watched> Watch<K>
where
    K::DynamicType: Clone + Send + Sync,
{
    fn plural(&self) -> String {
        K::plural(&self.dt).to_string()
    }

    fn observe(
        &self,
        obj: K,
        seen: Seen,
        listing: Option<&mut Listing>,
        replay: Option<(u64, i64)>,
    ) -> Option<(Change, Option<String>)> {
        let rv = obj.meta().resource_version.clone();
        // NB: resourceVersions are compared as numbers, as the apiserver itself
        // does (comparable resource versions, KEP-5504): a replayed change at or
        // before the version current when the watch reopened happened while blind.
        let blind_since = replay.and_then(|(until, since)| {
            rv.as_deref()
                .and_then(|v| v.parse::<u64>().ok())
                .filter(|v| *v <= until)
                .map(|_| since)
        });
        if let Some(listing) = listing
            && K::RECONCILE
        {
            listing
                .uids
                .push(obj.meta().uid.clone().unwrap_or_default());
        }
        obj.change(&self.dt, seen, now_ms(), blind_since)
            .map(|c| (c, rv))
    }

    /// Tells the writer which objects a finished list held.
    async fn listed(&self, listing: Listing, blind_since: Option<i64>) -> Result<(), Stop> {
        if !K::RECONCILE {
            return Ok(());
        }
        self.change(
            Change::Listed(ListedSet {
                api_version: K::api_version(&self.dt).to_string(),
                kind: K::kind(&self.dt).to_string(),
                namespace: self.namespace.clone().unwrap_or_default(),
                uids: listing.uids,
                blind_since,
                at: now_ms(),
            }),
            None,
        )
        .await
    }

    fn log(&self, what: std::fmt::Arguments<'_>) {
        if self.verbose {
            eprintln!(
                "{} watch {}: {what}",
                crate::units::rfc3339(now_ms()),
                self.resource
            );
        }
    }

    async fn send(&self, msg: Msg) -> Result<(), Stop> {
        self.tx.send(msg).await.map_err(|_| Stop::WriterGone)
    }

    async fn change(&self, change: Change, rv: Option<String>) -> Result<(), Stop> {
        self.send(Msg::Change {
            change,
            resource: self.resource.clone(),
            rv,
            received: Instant::now(),
        })
        .await
    }

    /// Lists every object page by page, storing each; returns the list's
    /// resourceVersion and what it held.
    async fn list(&self) -> Result<Result<(String, Listing), kube::Error>, Stop> {
        let mut params = ListParams::default();
        if self.chunk_size > 0 {
            params = params.limit(self.chunk_size);
        }
        let mut listing = Listing::default();
        let started = now_ms();
        loop {
            let page = match self.api.list(&params).await {
                Ok(page) => page,
                Err(e) => match inconsistent_continue(&e) {
                    // NB: a list of many Events (served from etcd: Events have no
                    // watch cache) can take longer than the compaction interval.
                    // Starting again would expire again; finishing from newer data
                    // completes, and the interval is recorded as a gap.
                    Some(token) => {
                        self.log(format_args!(
                            "the list's continue token expired (etcd compaction): finishing it from newer data"
                        ));
                        self.stats.gone_410.fetch_add(1, Ordering::Relaxed);
                        listing.inconsistent_since.get_or_insert(started);
                        params = params.continue_token(&token);
                        continue;
                    }
                    None => return Ok(Err(e)),
                },
            };
            for obj in page.items {
                if let Some((change, _)) = self.observe(obj, Seen::Listed, Some(&mut listing), None)
                {
                    self.change(change, None).await?;
                }
            }
            match page.metadata.continue_.filter(|c| !c.is_empty()) {
                Some(token) => params = params.continue_token(&token),
                None => {
                    return Ok(Ok((
                        page.metadata.resource_version.unwrap_or_default(),
                        listing,
                    )));
                }
            }
        }
    }

    /// Checks up front that we may list this type, so RBAC problems are
    /// known before watching instead of retried forever.
    pub async fn preflight(&self) -> Result<(), ClusterError> {
        self.api
            .list(&ListParams::default().limit(1))
            .await
            .map(|_| ())
            .map_err(|e| {
                explain(
                    e,
                    "list",
                    &self.plural(),
                    self.namespace.as_deref(),
                    &self.server,
                )
            })
    }

    async fn close_gap(&self, blind: &mut Option<(i64, &'static str, String)>) -> Result<(), Stop> {
        self.close_gap_at(blind, now_ms()).await
    }

    async fn close_gap_at(
        &self,
        blind: &mut Option<(i64, &'static str, String)>,
        finish: i64,
    ) -> Result<(), Stop> {
        if let Some((start, reason, detail)) = blind.take() {
            self.log(format_args!(
                "gap {reason} of {} ms: {detail}",
                finish.max(start) - start
            ));
            self.send(Msg::Gap(Gap {
                resource: self.resource.to_string(),
                start,
                finish: finish.max(start),
                reason,
                detail,
            }))
            .await?;
        }
        Ok(())
    }

    /// Lists once and returns (`record --once`).
    pub async fn once(&self, start: WatchStart) -> Result<Result<(), kube::Error>, Stop> {
        let mut blind = start
            .blind_since
            .map(|s| (s, "not-running", "the recorder was not running".to_string()));
        match self.list().await? {
            Ok((rv, listing)) => {
                note_inconsistent(&listing, &mut blind);
                let blind_since = blind.as_ref().map(|b| b.0);
                self.listed(listing, blind_since).await?;
                self.close_gap(&mut blind).await?;
                self.send(Msg::Position {
                    resource: self.resource.clone(),
                    rv,
                })
                .await?;
                Ok(Ok(()))
            }
            Err(e) => Ok(Err(e)),
        }
    }

    /// Watches until shutdown. Errors are retried with backoff; each blind
    /// interval is sent to the writer as a gap.
    pub async fn run(&self, start: WatchStart, mut shutdown: watch::Receiver<bool>) -> Stop {
        match self.run_inner(start, &mut shutdown).await {
            Ok(never) => match never {},
            Err(stop) => stop,
        }
    }

    async fn run_inner(
        &self,
        start: WatchStart,
        shutdown: &mut watch::Receiver<bool>,
    ) -> Result<std::convert::Infallible, Stop> {
        let mut rv = start.resume_from;
        let mut blind = start
            .blind_since
            .map(|s| (s, "not-running", "the recorder was not running".to_string()));
        let mut backoff = Duration::from_millis(250);
        let mut streaming_lists = true;
        loop {
            if *shutdown.borrow() {
                return Err(Stop::Shutdown);
            }
            // Without a position: a streaming list (one watch that first sends
            // every Event, then a bookmark, then changes) where the apiserver
            // supports it, else a paged list followed by a watch.
            let streaming = rv.is_none() && streaming_lists;
            if rv.is_none() && !streaming {
                self.log(format_args!("listing"));
                let listed = tokio::select! {
                    listed = self.list() => listed?,
                    _ = shutdown.changed() => return Err(Stop::Shutdown),
                };
                match listed {
                    Ok((list_rv, listing)) => {
                        note_inconsistent(&listing, &mut blind);
                        self.listed(listing, blind.as_ref().map(|b| b.0)).await?;
                        if let Some(b) = blind.as_mut() {
                            b.2.push_str(RELISTED);
                        }
                        self.close_gap(&mut blind).await?;
                        self.send(Msg::Position {
                            resource: self.resource.clone(),
                            rv: list_rv.clone(),
                        })
                        .await?;
                        rv = Some(list_rv);
                        backoff = Duration::from_millis(250);
                    }
                    Err(e) => {
                        self.warn_and_wait(&e, &mut backoff, shutdown).await?;
                        blind.get_or_insert_with(|| (now_ms(), "disconnected", e.to_string()));
                    }
                }
                continue;
            }
            let from = rv.clone().unwrap_or_default();
            // Resuming after a blind interval: what is current now marks the end
            // of the replay, so replayed deletions get the gap as their bounds.
            let replay = match (&blind, streaming || !K::RECONCILE) {
                (Some((since, _, _)), false) => self
                    .api
                    .list(&ListParams::default().limit(1))
                    .await
                    .ok()
                    .and_then(|l| l.metadata.resource_version)
                    .and_then(|v| v.parse::<u64>().ok())
                    .map(|until| (until, *since)),
                _ => None,
            };
            let params = if streaming {
                WatchParams::streaming_lists().timeout(STREAMING_LIST_TIMEOUT_S)
            } else {
                WatchParams::default().timeout(WATCH_TIMEOUT_S)
            };
            let stream = tokio::select! {
                s = self.api.watch(&params, &from) => s,
                _ = shutdown.changed() => return Err(Stop::Shutdown),
            };
            let stream = match stream {
                Ok(s) if streaming => {
                    self.log(format_args!("streaming list"));
                    s
                }
                Ok(s) => {
                    self.log(format_args!("watching from resourceVersion {from}"));
                    s
                }
                Err(kube::Error::Api(status))
                    if streaming
                        && (400..500).contains(&status.code)
                        && ![401, 403, 410, 429].contains(&status.code) =>
                {
                    // NB: an apiserver without the WatchList feature refuses sendInitialEvents.
                    self.log(format_args!(
                        "no streaming lists here ({}): paged lists instead",
                        status.message
                    ));
                    streaming_lists = false;
                    continue;
                }
                Err(e) if is_gone(&e) => {
                    self.stats.gone_410.fetch_add(1, Ordering::Relaxed);
                    blind.get_or_insert_with(|| {
                        (
                            now_ms(),
                            "relist",
                            "410 Gone: resourceVersion too old".into(),
                        )
                    });
                    rv = None;
                    continue;
                }
                Err(e) => {
                    blind.get_or_insert_with(|| (now_ms(), "disconnected", e.to_string()));
                    self.warn_and_wait(&e, &mut backoff, shutdown).await?;
                    continue;
                }
            };
            // The watch is open from `from`. Only its first good item proves the
            // apiserver can replay from there: a 410 may still come as an ERROR event.
            let opened_at = now_ms();
            let mut proven = false;
            // During a streaming list's initial phase the position does not move:
            // only its closing bookmark says every Event was sent.
            let mut initial = streaming;
            let mut listing = Listing::default();
            let mut stream = std::pin::pin!(stream.into_stream());
            loop {
                let item = tokio::select! {
                    item = stream.next() => item,
                    _ = shutdown.changed() => return Err(Stop::Shutdown),
                };
                let good = matches!(
                    &item,
                    None | Some(Ok(WatchEvent::Added(_)
                        | WatchEvent::Modified(_)
                        | WatchEvent::Deleted(_)
                        | WatchEvent::Bookmark(_)))
                );
                if good && !proven && !initial {
                    proven = true;
                    backoff = Duration::from_millis(250);
                    if let Some(b) = blind.as_mut() {
                        b.2.push_str(&format!(
                            "; resumed from resourceVersion {from}: changes since were replayed"
                        ));
                    }
                    self.close_gap_at(&mut blind, opened_at).await?;
                }
                match &item {
                    None => self.log(format_args!("watch ended by the server")),
                    Some(Err(e)) => self.log(format_args!(
                        "watch failed: {}",
                        crate::k8s::connect::error_chain(e)
                    )),
                    Some(Ok(WatchEvent::Error(status))) => self.log(format_args!(
                        "watch error {}: {}",
                        status.code, status.message
                    )),
                    _ => {}
                }
                match item {
                    None => break, // server-side timeout: renew from `rv`
                    Some(Ok(WatchEvent::Added(obj))) | Some(Ok(WatchEvent::Modified(obj)))
                        if initial =>
                    {
                        if let Some((change, _)) =
                            self.observe(obj, Seen::Listed, Some(&mut listing), None)
                        {
                            self.change(change, None).await?;
                        }
                    }
                    Some(Ok(WatchEvent::Added(obj))) => {
                        if let Some((change, obj_rv)) = self.observe(obj, Seen::Added, None, replay)
                        {
                            if let Some(v) = &obj_rv {
                                rv = Some(v.clone());
                            }
                            self.change(change, obj_rv).await?;
                        }
                    }
                    Some(Ok(WatchEvent::Modified(obj))) => {
                        if let Some((change, obj_rv)) =
                            self.observe(obj, Seen::Modified, None, replay)
                        {
                            if let Some(v) = &obj_rv {
                                rv = Some(v.clone());
                            }
                            self.change(change, obj_rv).await?;
                        }
                    }
                    Some(Ok(WatchEvent::Bookmark(b))) if initial => {
                        if b.metadata
                            .annotations
                            .get(INITIAL_EVENTS_END)
                            .map(String::as_str)
                            == Some("true")
                        {
                            initial = false;
                            proven = true;
                            backoff = Duration::from_millis(250);
                            self.listed(std::mem::take(&mut listing), blind.as_ref().map(|b| b.0))
                                .await?;
                            if let Some(gap) = blind.as_mut() {
                                gap.2.push_str(RELISTED);
                            }
                            self.close_gap(&mut blind).await?;
                            rv = Some(b.metadata.resource_version.clone());
                            self.send(Msg::Position {
                                resource: self.resource.clone(),
                                rv: b.metadata.resource_version,
                            })
                            .await?;
                        }
                    }
                    Some(Ok(WatchEvent::Deleted(obj))) => {
                        if let Some((change, obj_rv)) =
                            self.observe(obj, Seen::Deleted, None, replay)
                        {
                            if let Some(v) = &obj_rv {
                                rv = Some(v.clone());
                            }
                            self.change(change, obj_rv).await?;
                        }
                    }
                    Some(Ok(WatchEvent::Bookmark(b))) => {
                        rv = Some(b.metadata.resource_version.clone());
                        self.send(Msg::Position {
                            resource: self.resource.clone(),
                            rv: b.metadata.resource_version,
                        })
                        .await?;
                    }
                    Some(Ok(WatchEvent::Error(status))) if status.code == 410 => {
                        self.stats.gone_410.fetch_add(1, Ordering::Relaxed);
                        self.stats.watch_restarts.fetch_add(1, Ordering::Relaxed);
                        let what = if initial {
                            "410 Gone: the streaming list expired before its end"
                        } else {
                            "410 Gone: the watch expired"
                        };
                        blind.get_or_insert_with(|| (now_ms(), "relist", what.into()));
                        rv = None;
                        break;
                    }
                    Some(Ok(WatchEvent::Error(status))) => {
                        self.stats.watch_restarts.fetch_add(1, Ordering::Relaxed);
                        blind.get_or_insert_with(|| {
                            (now_ms(), "disconnected", status.message.clone())
                        });
                        break;
                    }
                    Some(Err(e)) => {
                        self.stats.watch_restarts.fetch_add(1, Ordering::Relaxed);
                        blind.get_or_insert_with(|| {
                            (
                                now_ms(),
                                "disconnected",
                                crate::k8s::connect::error_chain(&e),
                            )
                        });
                        break;
                    }
                }
            }
            if initial {
                // NB: a streaming list of Events is served from etcd, and it breaks
                // when it outlives the compaction interval ("continue parameter is
                // too old"); started again, it would break again and never finish.
                // A paged list can be finished from newer data, so use those.
                self.log(format_args!(
                    "the streaming list broke before its last object: paged lists from now on"
                ));
                streaming_lists = false;
            }
        }
    }

    async fn warn_and_wait(
        &self,
        err: &kube::Error,
        backoff: &mut Duration,
        shutdown: &mut watch::Receiver<bool>,
    ) -> Result<(), Stop> {
        self.log(format_args!(
            "request failed, retrying in {} ms: {}",
            backoff.as_millis(),
            crate::k8s::connect::error_chain(err)
        ));
        self.stats.watch_restarts.fetch_add(1, Ordering::Relaxed);
        if let kube::Error::Api(s) = err
            && (s.code == 401 || s.code == 403)
        {
            // NB: watch tasks write straight to stderr (unlocked, see main.rs): they
            // outlive any borrow of the command's writer.
            eprintln!(
                "\nwarning: {}",
                explain(
                    kube::Error::Api(s.clone()),
                    "watch",
                    &self.plural(),
                    self.namespace.as_deref(),
                    &self.server
                )
            );
        }
        tokio::select! {
            _ = tokio::time::sleep(*backoff) => {},
            _ = shutdown.changed() => return Err(Stop::Shutdown),
        }
        *backoff = (*backoff * 2).min(MAX_BACKOFF);
        Ok(())
    }
}
