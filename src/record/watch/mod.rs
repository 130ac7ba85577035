//! One watch of one resource type (Events, or objects whose history is kept),
//! cluster-wide or in one namespace: list, then watch from the list's
//! resourceVersion; resume from the last position after a dropped connection;
//! relist after 410 Gone. Every blind interval becomes a gap, and a finished
//! list of objects tells the writer which objects still exist.
//!
//! Three parts: `machine` decides (a pure state machine: every rule about
//! positions, gaps, 410s and streaming lists, unit-tested without a cluster),
//! `source` asks the apiserver (the list and watch calls behind a trait), and
//! the driver here carries the machine's actions out and sends what it
//! observed to the writer.
//!
//! NB: this is a hand-written state machine rather than kube-runtime's watcher
//! because the recorder must resume from a resourceVersion persisted by a
//! previous process, and must know exactly when it relisted (a gap in which
//! deletions and intermediate counts may be missing) versus resumed (nothing
//! missed). The watcher hides both.

mod machine;
mod source;

pub use machine::{Blind, GapReason};

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;

use futures::StreamExt;
use kube::api::ListParams;
use kube::{Api, Resource};
use tokio::sync::{mpsc, watch};

use crate::k8s::connect::{ClusterError, explain};
use crate::k8s::event::WireEvent;
use crate::k8s::object::{Decode, WireObject};
use crate::model::{Change, EventChange, ListedSet, ObjectChange, Seen};
use crate::store::session::Gap;

use self::machine::{Action, Counter, Input, Machine, Mode};
use self::source::{Items, Source};
use super::sink::{Msg, Stats, now_ms};

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
        decode: Decode,
        seen: Seen,
        at: i64,
        blind_since: Option<i64>,
    ) -> Option<Change>;
}

impl Watched for WireEvent {
    const RECONCILE: bool = false;

    fn change(self, _: &(), _: Decode, seen: Seen, at: i64, _: Option<i64>) -> Option<Change> {
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
        decode: Decode,
        seen: Seen,
        at: i64,
        blind_since: Option<i64>,
    ) -> Option<Change> {
        Some(Change::Object(ObjectChange {
            seen,
            at,
            blind_since,
            writer: None,
            provenance: crate::model::Provenance::Recorded,
            observation: Box::new(self.into_observation_with(dt, decode)),
        }))
    }
}

/// An object known by its metadata only: a Secret, whose data must not
/// cross the wire (`Api<PartialObjectMeta<_>>` asks for metadata only).
pub type MetadataOnly = kube::core::PartialObjectMeta<kube::core::DynamicObject>;

impl Watched for MetadataOnly {
    const RECONCILE: bool = true;

    fn change(
        self,
        dt: &kube::core::ApiResource,
        _: Decode,
        seen: Seen,
        at: i64,
        blind_since: Option<i64>,
    ) -> Option<Change> {
        Some(Change::Object(ObjectChange {
            seen,
            at,
            blind_since,
            writer: None,
            provenance: crate::model::Provenance::Recorded,
            observation: Box::new(crate::k8s::object::metadata_observation(self.metadata, dt)),
        }))
    }
}

impl<K: Watched> machine::Item for K
where
    K::DynamicType: Clone + Send + Sync,
{
    fn resource_version(&self) -> Option<&str> {
        self.meta().resource_version.as_deref()
    }

    fn uid(&self) -> Option<&str> {
        self.meta().uid.as_deref()
    }
}

/// Where this watch starts and what was blind before it.
pub struct WatchStart {
    /// The resourceVersion the previous session committed, if any.
    pub resume_from: Option<String>,
    /// When the previous session stopped watching: the start of a `not-running` gap.
    pub blind_since: Option<i64>,
    /// This watch replaces another of its type that could not see (its
    /// served version went, or its list failed while its watch stayed
    /// silent): blind since then, until its first list.
    pub blind: Option<Blind>,
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
    /// What decoding keeps beyond the default (`--configmap-values`).
    pub decode: Decode,
}

/// Why the watch stopped.
#[derive(Debug)]
pub enum Stop {
    /// Asked to stop (signal, or `--once` finished).
    Shutdown,
    /// The writer is gone (it failed); nothing more can be stored.
    WriterGone,
}

/// Why `record --once` stored no list for a watch.
#[derive(Debug, thiserror::Error)]
pub enum OnceError {
    /// The list failed; retrying is the next run's job.
    #[error(transparent)]
    List(kube::Error),
    /// The writer is gone (it failed and has its own error).
    #[error("the writer stopped")]
    WriterGone,
}

/// How the driver ended.
#[derive(Debug)]
enum End {
    Stop(Stop),
    /// `once`: the list is stored.
    Finished,
    /// `once`: the list failed.
    Failed(kube::Error),
}

impl<K: Watched> Watch<K>
where
    K::DynamicType: Clone + Send + Sync,
{
    fn plural(&self) -> String {
        K::plural(&self.dt).to_string()
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

    /// Lists once and returns (`record --once`).
    pub async fn once(&self, start: WatchStart) -> Result<(), OnceError> {
        // Nothing stops a single list but its end: this sender is never used.
        let (_never, mut shutdown) = watch::channel(false);
        let machine = Machine::new(Mode::Once, K::RECONCILE, None, start.blind_since);
        match self.drive(&self.api, machine, &mut shutdown).await {
            End::Finished => Ok(()),
            End::Failed(e) => Err(OnceError::List(e)),
            End::Stop(_) => Err(OnceError::WriterGone),
        }
    }

    /// Watches until `shutdown` turns true (or its sender is dropped). Errors
    /// are retried with backoff; each blind interval is sent to the writer as a gap.
    pub async fn run(&self, start: WatchStart, mut shutdown: watch::Receiver<bool>) -> Stop {
        let mut machine = Machine::new(
            Mode::Run,
            K::RECONCILE,
            start.resume_from,
            start.blind_since,
        );
        if let Some(blind) = start.blind {
            machine.blind = Some(blind);
        }
        match self.drive(&self.api, machine, &mut shutdown).await {
            End::Stop(stop) => stop,
            // Only `once` finishes or fails.
            End::Finished | End::Failed(_) => Stop::Shutdown,
        }
    }

    /// Runs the machine (see [`Self::steps`]); a watch that ends is not blind any more.
    async fn drive(
        &self,
        source: &impl Source<K>,
        machine: Machine,
        shutdown: &mut watch::Receiver<bool>,
    ) -> End {
        static TASKS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let task = TASKS.fetch_add(1, Ordering::Relaxed);
        let end = self.steps(source, machine, shutdown, task).await;
        self.stats.blind.cleared(&self.resource, task);
        end
    }

    /// Carries out each step's actions, then feeds the machine the answer to
    /// the request among them, or else the open watch's next item.
    async fn steps(
        &self,
        source: &impl Source<K>,
        mut machine: Machine,
        shutdown: &mut watch::Receiver<bool>,
        task: u64,
    ) -> End {
        // Whether this blind interval was warned about: once each.
        let mut warned = false;
        // Whether its requests were failing (in `Stats::blind`) until one was answered.
        let mut recovered = false;
        let mut input: Input<K, kube::Error> = Input::Start;
        let mut stream: Option<Items<K>> = None;
        loop {
            let (next, actions) = machine::step(machine, input, now_ms());
            machine = next;
            let mut answer = None;
            for action in actions {
                let done = match action {
                    Action::Change {
                        obj,
                        seen,
                        rv,
                        blind_since,
                    } => match obj.change(&self.dt, self.decode, seen, now_ms(), blind_since) {
                        Some(change) => self.change(change, rv).await,
                        None => Ok(()),
                    },
                    Action::Listed { uids, blind_since } => self.listed(uids, blind_since).await,
                    Action::Answered => {
                        recovered |= self.stats.blind.cleared(&self.resource, task);
                        Ok(())
                    }
                    Action::Gap { blind, finish } => {
                        let failing = self.stats.blind.cleared(&self.resource, task)
                            | std::mem::take(&mut recovered);
                        if failing && std::mem::take(&mut warned) {
                            eprintln!(
                                "\nwatch {}: blind from {} to {}, stored as a gap",
                                self.resource,
                                crate::units::rfc3339(blind.since),
                                crate::units::rfc3339(finish)
                            );
                        }
                        self.send(Msg::Gap(Gap {
                            resources: vec![self.resource.to_string()],
                            start: blind.since,
                            finish,
                            reason: blind.reason,
                            detail: blind.detail,
                        }))
                        .await
                    }
                    Action::SavePosition(rv) => {
                        self.send(Msg::Position {
                            resource: self.resource.clone(),
                            rv,
                        })
                        .await
                    }
                    Action::ListPage { continue_token } => {
                        stream = None;
                        let page = source.list(self.chunk_size, continue_token);
                        answer = Some(match until_shutdown(shutdown, page).await {
                            Some(Ok(page)) => Input::Page(page),
                            Some(Err(failure)) => Input::ListFailed(failure),
                            None => Input::Shutdown,
                        });
                        Ok(())
                    }
                    Action::Probe => {
                        stream = None;
                        let current = source.current_version();
                        answer = Some(match until_shutdown(shutdown, current).await {
                            Some(current) => Input::Probed(current),
                            None => Input::Shutdown,
                        });
                        Ok(())
                    }
                    Action::OpenWatch { from, streaming } => {
                        stream = None;
                        let opened = source.watch(from, streaming);
                        answer = Some(match until_shutdown(shutdown, opened).await {
                            Some(Ok(items)) => {
                                stream = Some(items);
                                Input::WatchOpened
                            }
                            Some(Err(failure)) => Input::WatchFailed(failure),
                            None => Input::Shutdown,
                        });
                        Ok(())
                    }
                    Action::Backoff { delay, error } => {
                        let now = now_ms();
                        let since = self.stats.blind.failing(&self.resource, task, now);
                        if !warned && (needs_user(&error) || now - since >= WARN_BLIND_AFTER_MS) {
                            warned = true;
                            self.warn(error, since);
                        }
                        let wait = tokio::time::sleep(delay);
                        answer = Some(match until_shutdown(shutdown, wait).await {
                            Some(()) => Input::Timer,
                            None => Input::Shutdown,
                        });
                        Ok(())
                    }
                    Action::Count(Counter::Gone410) => {
                        self.stats.gone_410.fetch_add(1, Ordering::Relaxed);
                        Ok(())
                    }
                    Action::Count(Counter::WatchRestart) => {
                        self.stats.watch_restarts.fetch_add(1, Ordering::Relaxed);
                        Ok(())
                    }
                    Action::Log(line) => {
                        self.log(format_args!("{line}"));
                        Ok(())
                    }
                    Action::Finished => return End::Finished,
                    Action::Failed(e) => return End::Failed(e),
                    Action::Stop => return End::Stop(Stop::Shutdown),
                };
                if let Err(stop) = done {
                    return End::Stop(stop);
                }
            }
            input = match (answer, stream.as_mut()) {
                (Some(answer), _) => answer,
                (None, Some(items)) => match until_shutdown(shutdown, items.next()).await {
                    Some(item) => item.unwrap_or(Input::StreamEnded),
                    None => Input::Shutdown,
                },
                // The machine waits for a watch item without an open watch:
                // as if the watch had ended, it opens another.
                (None, None) => Input::StreamEnded,
            };
        }
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

    /// Tells the writer which objects a finished list held.
    async fn listed(&self, uids: Vec<String>, blind_since: Option<i64>) -> Result<(), Stop> {
        self.change(
            Change::Listed(ListedSet {
                api_version: K::api_version(&self.dt).to_string(),
                kind: K::kind(&self.dt).to_string(),
                namespace: self.namespace.clone().unwrap_or_default(),
                uids,
                blind_since,
                at: now_ms(),
            }),
            None,
        )
        .await
    }

    /// Requests keep failing: the user hears of it once per blind interval,
    /// since only they can fix what the apiserver refuses (RBAC, a served
    /// version that went, a conversion webhook that fails).
    fn warn(&self, err: kube::Error, since: i64) {
        // NB: watch tasks write straight to stderr (unlocked, see main.rs): they
        // outlive any borrow of the command's writer.
        eprintln!(
            "\nwarning: {}; blind since {}: retrying, and the interval will be stored as a gap",
            explain(
                err,
                "watch",
                &self.plural(),
                self.namespace.as_deref(),
                &self.server
            ),
            crate::units::rfc3339(since)
        );
    }
}

/// A watch failing this long is warned about: shorter failures are an
/// apiserver restart or a dropped connection, which the recorder rides out.
const WARN_BLIND_AFTER_MS: i64 = 5_000;

/// Whether a failure is one only the user can fix, warned about at once.
fn needs_user(err: &kube::Error) -> bool {
    matches!(err, kube::Error::Api(s) if s.code == 401 || s.code == 403)
}

/// `what`, unless `shutdown` is (or turns) true or its sender is gone first.
async fn until_shutdown<F: std::future::Future>(
    shutdown: &mut watch::Receiver<bool>,
    what: F,
) -> Option<F::Output> {
    tokio::select! {
        biased;
        _ = shutdown.wait_for(|stop| *stop) => None,
        out = what => Some(out),
    }
}

#[cfg(test)]
mod tests {
    //! The driver against a scripted [`Source`]: what reaches the writer, and
    //! that a watch stops promptly. The decisions are tested in [`machine`].

    use std::collections::VecDeque;
    use std::sync::Mutex;
    use std::time::Duration;

    use futures::StreamExt;
    use kube::core::Status;

    use super::machine::{Failure, Page, RELISTED};
    use super::*;

    type Listed = Result<Page<WireEvent>, Failure<kube::Error>>;
    type Watched = Result<Vec<Input<WireEvent, kube::Error>>, Failure<kube::Error>>;

    /// Answers from a script; without one left, a request never returns.
    #[derive(Default)]
    struct Script {
        lists: Mutex<VecDeque<Listed>>,
        /// The items of each watch; after them the watch stays open and quiet.
        watches: Mutex<VecDeque<Watched>>,
        asked: Mutex<Vec<String>>,
    }

    impl Script {
        fn asked(&self) -> Vec<String> {
            self.asked.lock().unwrap().clone()
        }
    }

    impl Source<WireEvent> for Script {
        async fn list(&self, limit: u32, continue_token: Option<String>) -> Listed {
            self.asked
                .lock()
                .unwrap()
                .push(format!("list {limit} {continue_token:?}"));
            let next = self.lists.lock().unwrap().pop_front();
            match next {
                Some(answer) => answer,
                None => std::future::pending().await,
            }
        }

        async fn current_version(&self) -> Option<u64> {
            self.asked.lock().unwrap().push("probe".into());
            None
        }

        async fn watch(
            &self,
            from: String,
            streaming: bool,
        ) -> Result<Items<WireEvent>, Failure<kube::Error>> {
            self.asked
                .lock()
                .unwrap()
                .push(format!("watch {from:?} streaming={streaming}"));
            let next = self.watches.lock().unwrap().pop_front();
            match next {
                Some(answer) => answer.map(|items| {
                    futures::stream::iter(items)
                        .chain(futures::stream::pending())
                        .boxed()
                }),
                None => std::future::pending().await,
            }
        }
    }

    fn event(name: &str, rv: &str) -> WireEvent {
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": name, "uid": name, "namespace": "ns", "resourceVersion": rv},
            "reason": "Tested",
        }))
        .unwrap()
    }

    fn reset() -> kube::Error {
        kube::Error::Service("connection reset".into())
    }

    fn gone() -> Failure<kube::Error> {
        let status = Status::failure("too old resource version", "Expired").with_code(410);
        Failure {
            status: Some((410, status.message.clone())),
            continue_token: None,
            error: kube::Error::Api(status.boxed()),
        }
    }

    fn watch(tx: mpsc::Sender<Msg>) -> Watch<WireEvent> {
        let config = kube::Config::new("http://127.0.0.1:9".parse().unwrap());
        Watch {
            api: Api::all(kube::Client::try_from(config).unwrap()),
            dt: (),
            namespace: None,
            resource: "events".into(),
            server: "http://127.0.0.1:9".into(),
            tx,
            stats: Arc::default(),
            verbose: false,
            chunk_size: 500,
            decode: Decode::default(),
        }
    }

    fn describe(msg: Msg) -> String {
        match msg {
            Msg::Change { change, rv, .. } => match change {
                Change::Event(EventChange::Upsert(e)) => format!("event {} at {rv:?}", e.name),
                other => format!("{other:?}"),
            },
            Msg::Position { rv, .. } => format!("position {rv}"),
            Msg::Gap(gap) => format!("gap {}: {}", gap.reason, gap.detail),
            Msg::Tick
            | Msg::Maintain
            | Msg::ResourceTypes(_)
            | Msg::Commit(_)
            | Msg::Shipped { .. } => "timer".into(),
        }
    }

    /// Drives `machine` against `script`; once `count` messages reached the
    /// writer, asks the watch to stop. Returns how it ended and the messages.
    async fn drive(script: &Script, machine: Machine, count: usize) -> (End, Vec<String>) {
        let (tx, mut rx) = mpsc::channel(64);
        let w = watch(tx);
        let (stop, mut shutdown) = watch::channel(false);
        let writer = async {
            let mut seen = Vec::new();
            while seen.len() < count {
                match rx.recv().await {
                    Some(msg) => seen.push(describe(msg)),
                    None => break,
                }
            }
            stop.send(true).unwrap();
            seen
        };
        tokio::time::timeout(Duration::from_secs(5), async {
            tokio::join!(w.drive(script, machine, &mut shutdown), writer)
        })
        .await
        .expect("the watch ends promptly")
    }

    #[tokio::test]
    async fn shutdown_ends_a_watch_waiting_on_the_apiserver() {
        let script = Script::default();
        let machine = Machine::new(Mode::Run, false, None, None);
        let (end, seen) = drive(&script, machine, 0).await;
        assert!(matches!(end, End::Stop(Stop::Shutdown)), "{end:?}");
        assert_eq!(seen, Vec::<String>::new());
        assert_eq!(script.asked(), vec![r#"watch "" streaming=true"#]);
    }

    #[tokio::test]
    async fn a_watch_told_to_stop_before_it_starts_asks_nothing() {
        let script = Script::default();
        let (tx, _rx) = mpsc::channel(1);
        let (stop, mut shutdown) = watch::channel(false);
        stop.send(true).unwrap();
        let machine = Machine::new(Mode::Run, true, Some("4".into()), Some(0));
        let end = watch(tx).drive(&script, machine, &mut shutdown).await;
        assert!(matches!(end, End::Stop(Stop::Shutdown)), "{end:?}");
        assert_eq!(script.asked(), Vec::<String>::new());
    }

    #[tokio::test]
    async fn a_dropped_watch_that_cannot_resume_relists_and_stores_one_gap() {
        let script = Script::default();
        script.watches.lock().unwrap().extend([
            Ok(vec![
                Input::Added(event("a", "101")),
                Input::StreamFailed(reset()),
            ]),
            Err(gone()),
            Ok(vec![
                Input::Added(event("b", "150")),
                Input::Bookmark {
                    resource_version: "200".into(),
                    initial_events_end: true,
                },
                Input::Modified(event("c", "201")),
            ]),
        ]);
        let machine = Machine::new(Mode::Run, false, Some("100".into()), None);
        let (end, seen) = drive(&script, machine, 5).await;
        assert!(matches!(end, End::Stop(Stop::Shutdown)), "{end:?}");
        assert_eq!(
            seen,
            vec![
                r#"event a at Some("101")"#.to_string(),
                "event b at None".into(),
                format!("gap disconnected: ServiceError: connection reset{RELISTED}"),
                "position 200".into(),
                r#"event c at Some("201")"#.into(),
            ]
        );
        assert_eq!(
            script.asked(),
            vec![
                r#"watch "100" streaming=false"#,
                r#"watch "101" streaming=false"#,
                r#"watch "" streaming=true"#,
            ]
        );
    }

    /// Issue 44.9: a watch of Events that reconnected after an apiserver
    /// restart stayed in `Stats::blind` ("requests fail" on `/healthz`) until
    /// the next Event came; it leaves it when the watch opens again.
    #[tokio::test]
    async fn a_reconnected_quiet_watch_is_not_blind_on_healthz() {
        let script = Script::default();
        let refused = Failure {
            status: None,
            continue_token: None,
            error: reset(),
        };
        script
            .watches
            .lock()
            .unwrap()
            .extend([Err(refused), Ok(vec![])]);
        let (tx, _rx) = mpsc::channel(64);
        let w = watch(tx);
        let stats = w.stats.clone();
        let (stop, mut shutdown) = watch::channel(false);
        let machine = Machine::new(Mode::Run, false, Some("100".into()), None);
        let observe = async {
            let mut was_blind = false;
            let mut cleared = false;
            for _ in 0..200 {
                tokio::time::sleep(Duration::from_millis(10)).await;
                match stats.blind.count() {
                    0 if was_blind && script.asked().len() == 2 => {
                        cleared = true;
                        break;
                    }
                    0 => {}
                    _ => was_blind = true,
                }
            }
            stop.send(true).unwrap();
            (was_blind, cleared)
        };
        let (_, (was_blind, cleared)) = tokio::time::timeout(Duration::from_secs(5), async {
            tokio::join!(w.drive(&script, machine, &mut shutdown), observe)
        })
        .await
        .expect("the watch ends promptly");
        assert!(was_blind, "blind while its request failed");
        assert!(
            cleared,
            "not blind once the watch opened again, before any Event"
        );
    }

    #[tokio::test]
    async fn once_stores_every_page_then_the_position() {
        let script = Script::default();
        script.lists.lock().unwrap().extend([
            Ok(Page {
                items: vec![event("a", "1")],
                continue_token: Some("t".into()),
                resource_version: None,
            }),
            Ok(Page {
                items: vec![event("b", "2")],
                continue_token: None,
                resource_version: Some("9".into()),
            }),
        ]);
        let machine = Machine::new(Mode::Once, false, None, Some(0));
        let (end, seen) = drive(&script, machine, 4).await;
        assert!(matches!(end, End::Finished), "{end:?}");
        assert_eq!(
            seen,
            vec![
                "event a at None",
                "event b at None",
                "gap not-running: the recorder was not running",
                "position 9"
            ]
        );
        assert_eq!(
            script.asked(),
            vec!["list 500 None", r#"list 500 Some("t")"#]
        );
    }

    #[tokio::test]
    async fn a_gone_writer_ends_the_watch() {
        let script = Script::default();
        script
            .watches
            .lock()
            .unwrap()
            .push_back(Ok(vec![Input::Added(event("a", "5"))]));
        let (tx, rx) = mpsc::channel(1);
        drop(rx);
        let w = watch(tx);
        let (_stop, mut shutdown) = watch::channel(false);
        let machine = Machine::new(Mode::Run, false, Some("4".into()), None);
        let end = tokio::time::timeout(
            Duration::from_secs(5),
            w.drive(&script, machine, &mut shutdown),
        )
        .await
        .expect("the watch ends promptly");
        assert!(matches!(end, End::Stop(Stop::WriterGone)), "{end:?}");
    }
}
