//! The list/watch of one type as a state machine. [`step`] takes what just
//! happened (a list page, a watch item, a failure, the end of a wait, a
//! shutdown) and returns the next state and what to do, without doing any of
//! it: no I/O, no clock, no Kubernetes client. The driver in [`super`] carries
//! the actions out against the apiserver and the writer; the tests below drive
//! `step` alone, in milliseconds.
//!
//! What it keeps: every change exactly once (a watch resumes from the last
//! position, and only a 410 makes it relist); every blind interval becomes one
//! gap whose reason and detail say what may be missing; a finished list says
//! which objects still exist.

use std::time::Duration;

use crate::k8s::connect::error_chain;
use crate::model::Seen;

/// The first wait after a failed request; it doubles up to [`MAX_BACKOFF`].
pub const FIRST_BACKOFF: Duration = Duration::from_millis(250);
pub const MAX_BACKOFF: Duration = Duration::from_secs(10);
pub const RELISTED: &str = "; relisted: what was deleted or changed meanwhile may be missing";
/// Appended to a blind interval the recorder stopped in: it is stored as a gap
/// up to the stop, since nothing else would ever close it.
pub const STOPPED_BLIND: &str = "; the recorder stopped while blind";
pub const INCONSISTENT: &str = "; the list outlived etcd compaction and was finished from newer data: \
     changes made during the list to objects listed before may be missing";

pub use crate::model::GapReason;

/// An interval in which the watch saw nothing, still open: it becomes a gap
/// when the watch can see again.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Blind {
    pub since: i64,
    pub reason: GapReason,
    /// What happened, and, appended as it becomes known, how it ended.
    pub detail: String,
}

/// What the machine reads of a listed or watched object.
pub trait Item {
    fn resource_version(&self) -> Option<&str>;
    fn uid(&self) -> Option<&str>;
}

/// A failed list or watch request, as far as the machine needs to tell.
#[derive(Debug, PartialEq)]
pub struct Failure<E> {
    /// The apiserver's status code and message, when it answered with a Status.
    pub status: Option<(u16, String)>,
    /// The continue token a Status carried: with a 410 to a paged list, it
    /// finishes the list from newer data.
    pub continue_token: Option<String>,
    pub error: E,
}

impl<E> Failure<E> {
    fn code(&self) -> Option<u16> {
        self.status.as_ref().map(|(code, _)| *code)
    }
}

/// One page of a paged list.
#[derive(Debug, PartialEq)]
pub struct Page<T> {
    pub items: Vec<T>,
    pub continue_token: Option<String>,
    pub resource_version: Option<String>,
}

/// What just happened.
#[derive(Debug, PartialEq)]
pub enum Input<T, E> {
    /// The watch task begins.
    Start,
    Page(Page<T>),
    ListFailed(Failure<E>),
    /// The resourceVersion current now (after [`Action::Probe`]), if known.
    Probed(Option<u64>),
    WatchOpened,
    WatchFailed(Failure<E>),
    Added(T),
    Modified(T),
    Deleted(T),
    Bookmark {
        resource_version: String,
        /// The `k8s.io/initial-events-end` annotation: a streaming list sent every object.
        initial_events_end: bool,
    },
    /// An ERROR event in the watch stream.
    ErrorEvent {
        code: u16,
        message: String,
    },
    /// The watch stream broke (connection, decoding).
    StreamFailed(E),
    /// The server ended the watch (its timeout): it is simply renewed.
    StreamEnded,
    /// The wait after [`Action::Backoff`] is over.
    Timer,
    Shutdown,
}

/// Counters shown on the status line and /metrics.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Counter {
    Gone410,
    WatchRestart,
}

/// What to do. The driver carries the actions out in order; at most one asks
/// the apiserver or the clock for the next input, and without one the next
/// input is the open watch stream's next item.
#[derive(Debug, PartialEq)]
pub enum Action<T, E> {
    /// Store a change; `rv` is the position it brings the watch to (none during a list).
    Change {
        obj: T,
        seen: Seen,
        rv: Option<String>,
        blind_since: Option<i64>,
    },
    /// A list finished: these objects exist, the others are gone.
    Listed {
        uids: Vec<String>,
        blind_since: Option<i64>,
    },
    /// A request was answered after failed ones: the watch's requests work
    /// again (`/healthz`, `kubectl_diag_watches_blind`), though its blind
    /// interval may stay open until an item proves the resume.
    Answered,
    /// A blind interval is over: store it as a gap.
    Gap {
        blind: Blind,
        finish: i64,
    },
    SavePosition(String),
    /// Ask for a page of a paged list.
    ListPage {
        continue_token: Option<String>,
    },
    /// Ask which resourceVersion is current.
    Probe,
    /// Open a watch (dropping any open one): from a position, or as a streaming list.
    OpenWatch {
        from: String,
        streaming: bool,
    },
    /// A request failed: warn if it needs the user, wait `delay`, then [`Input::Timer`].
    Backoff {
        delay: Duration,
        error: E,
    },
    Count(Counter),
    /// A line for `--verbose`.
    Log(String),
    /// `record --once`: the list is stored.
    Finished,
    /// `record --once`: the list failed.
    Failed(E),
    /// Shut down.
    Stop,
}

/// Whether the machine lists once (`record --once`) or watches until shutdown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Once,
    Run,
}

/// What a list collected so far.
#[derive(Debug, PartialEq)]
pub struct Listing {
    /// The uids it held (objects only): the others are gone.
    uids: Vec<String>,
    started: i64,
    /// When the list began, if its continue token expired and it was finished
    /// from newer data: from then until its end, the list is not one snapshot.
    inconsistent_since: Option<i64>,
}

impl Listing {
    fn new(started: i64) -> Self {
        Listing {
            uids: Vec::new(),
            started,
            inconsistent_since: None,
        }
    }
}

/// The bounds of a replay after a blind interval: changes up to `until` (the
/// version current when the watch reopened) happened while blind, since `since`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Replay {
    until: u64,
    since: i64,
}

/// A watch opened from a position that no item has proven yet.
#[derive(Debug, PartialEq)]
pub struct Resume {
    from: String,
    opened_at: i64,
}

#[derive(Debug, PartialEq)]
pub enum Phase {
    /// Before the first request.
    Idle,
    /// A paged list: a page has been asked for.
    Paging(Listing),
    /// Resuming after a blind interval: asking what is current now, which ends
    /// the replay, so replayed deletions get the gap as their bounds.
    Probing { from: String },
    /// A watch has been asked for.
    Opening {
        from: String,
        streaming: bool,
        replay: Option<Replay>,
    },
    /// A streaming list's initial events. The position does not move: only
    /// its closing bookmark says every object was sent.
    Streaming(Listing),
    /// Watching changes.
    Watching {
        /// Until the first good item: the watch is open from `from`, but only
        /// that item proves the apiserver can replay from there (a 410 may
        /// still come as an ERROR event).
        resume: Option<Resume>,
        replay: Option<Replay>,
    },
    /// Waiting after a failed request.
    BackingOff {
        /// A failed list opens a `disconnected` gap when the wait ends (unless one is open).
        gap_after: Option<String>,
    },
    /// Stopped or finished: no more inputs.
    Done,
}

/// The whole state of one watch.
#[derive(Debug, PartialEq)]
pub struct Machine {
    pub phase: Phase,
    pub mode: Mode,
    /// Whether a finished list reports the uids it held ([`super::Watched::RECONCILE`]).
    pub reconcile: bool,
    /// The resourceVersion to resume from; none: list first.
    pub position: Option<String>,
    pub blind: Option<Blind>,
    /// The next wait after a failed request.
    pub backoff: Duration,
    /// Whether to try streaming lists; off for good once one was refused or broke.
    pub streaming_lists: bool,
    /// Whether the last request failed (it was waited after), until one is answered.
    pub failing: bool,
}

impl Machine {
    /// A watch that resumes from `resume_from`, blind since `blind_since`
    /// (the previous session's end) if that is known.
    pub fn new(
        mode: Mode,
        reconcile: bool,
        resume_from: Option<String>,
        blind_since: Option<i64>,
    ) -> Self {
        Machine {
            phase: Phase::Idle,
            mode,
            reconcile,
            position: resume_from,
            blind: blind_since.map(|since| Blind {
                since,
                reason: GapReason::NotRunning,
                detail: "the recorder was not running".to_string(),
            }),
            backoff: FIRST_BACKOFF,
            streaming_lists: true,
            failing: false,
        }
    }
}

/// One transition: `input` happened at `now` (epoch ms).
pub fn step<T: Item, E: std::error::Error>(
    mut machine: Machine,
    input: Input<T, E>,
    now: i64,
) -> (Machine, Vec<Action<T, E>>) {
    let mut out = Vec::new();
    machine.take(input, now, &mut out);
    (machine, out)
}

type Out<T, E> = Vec<Action<T, E>>;

impl Machine {
    fn take<T: Item, E: std::error::Error>(
        &mut self,
        input: Input<T, E>,
        now: i64,
        out: &mut Out<T, E>,
    ) {
        if let Input::Shutdown = input {
            self.phase = Phase::Done;
            // NB: a watch that never saw again (a type whose served version
            // went, a conversion webhook that fails) would otherwise leave no
            // trace of its blind interval: stored up to the stop.
            if let Some(b) = self.blind.as_mut() {
                b.detail.push_str(STOPPED_BLIND);
            }
            self.close_gap(now, out);
            out.push(Action::Stop);
            return;
        }
        match (std::mem::replace(&mut self.phase, Phase::Done), input) {
            (Phase::Idle, Input::Start) => match self.mode {
                Mode::Once => self.list(now, out),
                Mode::Run => self.next(now, out),
            },
            (Phase::Paging(listing), Input::Page(page)) => {
                self.answered(out);
                self.page(listing, page, now, out)
            }
            (Phase::Paging(listing), Input::ListFailed(failure)) => {
                self.list_failed(listing, failure, out)
            }
            (Phase::Probing { from }, Input::Probed(until)) => {
                let since = self.blind.as_ref().map(|b| b.since);
                let replay = until
                    .zip(since)
                    .map(|(until, since)| Replay { until, since });
                self.open(from, false, replay, out);
            }
            (
                Phase::Opening {
                    from,
                    streaming,
                    replay,
                },
                Input::WatchOpened,
            ) => {
                self.answered(out);
                if streaming {
                    out.push(Action::Log("streaming list".into()));
                    self.phase = Phase::Streaming(Listing::new(now));
                } else {
                    out.push(Action::Log(format!("watching from resourceVersion {from}")));
                    self.phase = Phase::Watching {
                        resume: Some(Resume {
                            from,
                            opened_at: now,
                        }),
                        replay,
                    };
                }
            }
            (Phase::Opening { streaming, .. }, Input::WatchFailed(failure)) => {
                self.watch_failed(streaming, failure, now, out)
            }
            (Phase::Streaming(listing), input) if is_stream(&input) => {
                log_stream(&input, out);
                self.streamed(listing, input, now, out);
            }
            (Phase::Watching { resume, replay }, input) if is_stream(&input) => {
                let resume = match resume {
                    Some(resume) if is_good(&input) => {
                        self.proven(resume, out);
                        None
                    }
                    resume => resume,
                };
                log_stream(&input, out);
                self.watched(resume, replay, input, now, out);
            }
            (Phase::BackingOff { gap_after }, Input::Timer) => {
                self.backoff = (self.backoff * 2).min(MAX_BACKOFF);
                if let Some(detail) = gap_after {
                    self.blind_from(now, GapReason::Disconnected, || detail);
                }
                self.next(now, out);
            }
            (phase, _) => {
                // The driver gives each phase only the inputs it waits for.
                debug_assert!(false, "{phase:?} does not wait for this input");
                self.phase = phase;
            }
        }
    }

    /// The next request after a list, a watch or a wait ended: a paged list,
    /// a streaming list, or a watch from the position.
    fn next<T, E>(&mut self, now: i64, out: &mut Out<T, E>) {
        match self.position.clone() {
            // Without a position: a streaming list (one watch that first sends
            // every object, then a bookmark, then changes) where the apiserver
            // supports it, else a paged list followed by a watch.
            None if self.streaming_lists => self.open(String::new(), true, None, out),
            None => {
                out.push(Action::Log("listing".into()));
                self.list(now, out);
            }
            Some(from) if self.blind.is_some() && self.reconcile => {
                self.phase = Phase::Probing { from };
                out.push(Action::Probe);
            }
            Some(from) => self.open(from, false, None, out),
        }
    }

    fn list<T, E>(&mut self, now: i64, out: &mut Out<T, E>) {
        self.phase = Phase::Paging(Listing::new(now));
        out.push(Action::ListPage {
            continue_token: None,
        });
    }

    fn open<T, E>(
        &mut self,
        from: String,
        streaming: bool,
        replay: Option<Replay>,
        out: &mut Out<T, E>,
    ) {
        out.push(Action::OpenWatch {
            from: from.clone(),
            streaming,
        });
        self.phase = Phase::Opening {
            from,
            streaming,
            replay,
        };
    }

    fn page<T: Item, E>(
        &mut self,
        mut listing: Listing,
        page: Page<T>,
        now: i64,
        out: &mut Out<T, E>,
    ) {
        for obj in page.items {
            self.listed(&mut listing, obj, out);
        }
        match page.continue_token.filter(|c| !c.is_empty()) {
            Some(token) => {
                self.phase = Phase::Paging(listing);
                out.push(Action::ListPage {
                    continue_token: Some(token),
                });
            }
            None => {
                let rv = page.resource_version.unwrap_or_default();
                self.note_inconsistent(&listing);
                self.send_listed(listing, out);
                match self.mode {
                    Mode::Once => {
                        self.close_gap(now, out);
                        out.push(Action::SavePosition(rv));
                        out.push(Action::Finished);
                    }
                    Mode::Run => {
                        self.relisted();
                        self.close_gap(now, out);
                        out.push(Action::SavePosition(rv.clone()));
                        self.position = Some(rv);
                        self.backoff = FIRST_BACKOFF;
                        self.next(now, out);
                    }
                }
            }
        }
    }

    fn list_failed<T, E: std::error::Error>(
        &mut self,
        mut listing: Listing,
        failure: Failure<E>,
        out: &mut Out<T, E>,
    ) {
        let token = match failure.code() {
            Some(410) => failure.continue_token.filter(|c| !c.is_empty()),
            _ => None,
        };
        match (token, self.mode) {
            // NB: a list of many Events (served from etcd: Events have no
            // watch cache) can take longer than the compaction interval.
            // Starting again would expire again; finishing from newer data
            // completes, and the interval is recorded as a gap.
            (Some(token), _) => {
                out.push(Action::Log(
                    "the list's continue token expired (etcd compaction): finishing it from newer data"
                        .into(),
                ));
                out.push(Action::Count(Counter::Gone410));
                listing.inconsistent_since.get_or_insert(listing.started);
                self.phase = Phase::Paging(listing);
                out.push(Action::ListPage {
                    continue_token: Some(token),
                });
            }
            (None, Mode::Once) => out.push(Action::Failed(failure.error)),
            (None, Mode::Run) => {
                let detail = failure.error.to_string();
                self.back_off(failure.error, Some(detail), out);
            }
        }
    }

    fn watch_failed<T, E: std::error::Error>(
        &mut self,
        streaming: bool,
        failure: Failure<E>,
        now: i64,
        out: &mut Out<T, E>,
    ) {
        match &failure.status {
            // NB: an apiserver without the WatchList feature refuses sendInitialEvents.
            Some((code, message))
                if streaming
                    && (400..500).contains(code)
                    && ![401, 403, 410, 429].contains(code) =>
            {
                out.push(Action::Log(format!(
                    "no streaming lists here ({message}): paged lists instead"
                )));
                self.streaming_lists = false;
                self.next(now, out);
            }
            Some((410, _)) => {
                out.push(Action::Count(Counter::Gone410));
                self.blind_from(now, GapReason::Relist, || {
                    "410 Gone: resourceVersion too old".into()
                });
                self.position = None;
                self.next(now, out);
            }
            _ => {
                self.blind_from(now, GapReason::Disconnected, || failure.error.to_string());
                self.back_off(failure.error, None, out);
            }
        }
    }

    fn back_off<T, E: std::error::Error>(
        &mut self,
        error: E,
        gap_after: Option<String>,
        out: &mut Out<T, E>,
    ) {
        out.push(Action::Log(format!(
            "request failed, retrying in {} ms: {}",
            self.backoff.as_millis(),
            error_chain(&error)
        )));
        out.push(Action::Count(Counter::WatchRestart));
        out.push(Action::Backoff {
            delay: self.backoff,
            error,
        });
        self.failing = true;
        self.phase = Phase::BackingOff { gap_after };
    }

    /// An item of a streaming list's initial events (or what ends them).
    fn streamed<T: Item, E: std::error::Error>(
        &mut self,
        mut listing: Listing,
        input: Input<T, E>,
        now: i64,
        out: &mut Out<T, E>,
    ) {
        match input {
            Input::Added(obj) | Input::Modified(obj) => {
                self.listed(&mut listing, obj, out);
                self.phase = Phase::Streaming(listing);
            }
            // Not sent before the initial-events-end bookmark; taken as it comes.
            Input::Deleted(obj) => {
                out.push(self.changed(obj, Seen::Deleted, None));
                self.phase = Phase::Streaming(listing);
            }
            Input::Bookmark {
                resource_version,
                initial_events_end: true,
            } => {
                self.backoff = FIRST_BACKOFF;
                out.push(Action::Log(format!(
                    "streaming list ended after {} ms",
                    now - listing.started
                )));
                self.send_listed(listing, out);
                self.relisted();
                self.close_gap(now, out);
                self.position = Some(resource_version.clone());
                out.push(Action::SavePosition(resource_version));
                self.phase = Phase::Watching {
                    resume: None,
                    replay: None,
                };
            }
            Input::Bookmark { .. } => self.phase = Phase::Streaming(listing),
            input => {
                self.broke(
                    input,
                    "410 Gone: the streaming list expired before its end",
                    now,
                    out,
                );
                // NB: a streaming list of Events is served from etcd, and it breaks
                // when it outlives the compaction interval ("continue parameter is
                // too old"); started again, it would break again and never finish.
                // A paged list can be finished from newer data, so use those.
                out.push(Action::Log(
                    "the streaming list broke before its last object: paged lists from now on"
                        .into(),
                ));
                self.streaming_lists = false;
                self.next(now, out);
            }
        }
    }

    /// An item of a watch past its initial events.
    fn watched<T: Item, E: std::error::Error>(
        &mut self,
        resume: Option<Resume>,
        replay: Option<Replay>,
        input: Input<T, E>,
        now: i64,
        out: &mut Out<T, E>,
    ) {
        let seen = match &input {
            Input::Added(_) => Some(Seen::Added),
            Input::Modified(_) => Some(Seen::Modified),
            Input::Deleted(_) => Some(Seen::Deleted),
            _ => None,
        };
        match (input, seen) {
            (Input::Added(obj) | Input::Modified(obj) | Input::Deleted(obj), Some(seen)) => {
                out.push(self.changed(obj, seen, replay.as_ref()));
            }
            (
                Input::Bookmark {
                    resource_version, ..
                },
                _,
            ) => {
                self.position = Some(resource_version.clone());
                out.push(Action::SavePosition(resource_version));
            }
            (input, _) => {
                self.broke(input, "410 Gone: the watch expired", now, out);
                return self.next(now, out);
            }
        }
        self.phase = Phase::Watching { resume, replay };
    }

    /// The watch stream ended or failed: counts, and the gap it opens.
    fn broke<T, E: std::error::Error>(
        &mut self,
        input: Input<T, E>,
        expired: &str,
        now: i64,
        out: &mut Out<T, E>,
    ) {
        match input {
            Input::ErrorEvent { code: 410, .. } => {
                out.push(Action::Count(Counter::Gone410));
                out.push(Action::Count(Counter::WatchRestart));
                self.blind_from(now, GapReason::Relist, || expired.into());
                self.position = None;
            }
            Input::ErrorEvent { message, .. } => {
                out.push(Action::Count(Counter::WatchRestart));
                self.blind_from(now, GapReason::Disconnected, || message);
            }
            Input::StreamFailed(e) => {
                out.push(Action::Count(Counter::WatchRestart));
                self.blind_from(now, GapReason::Disconnected, || error_chain(&e));
            }
            _ => {}
        }
    }

    /// The first good item of a watch opened from a position: the apiserver
    /// replayed from there, so the blind interval ended when the watch opened.
    fn proven<T, E>(&mut self, resume: Resume, out: &mut Out<T, E>) {
        self.backoff = FIRST_BACKOFF;
        if let Some(b) = self.blind.as_mut() {
            b.detail.push_str(&format!(
                "; resumed from resourceVersion {}: changes since were replayed",
                resume.from
            ));
        }
        self.close_gap(resume.opened_at, out);
    }

    /// A request was answered: if requests had been failing, they work again.
    /// NB: not when the gap closes: a watch of Events resumed after an
    /// apiserver restart proves its resume only with its first item, the next
    /// Event, minutes later; until then it read as "requests fail" (issue 44.9).
    fn answered<T, E>(&mut self, out: &mut Out<T, E>) {
        if std::mem::take(&mut self.failing) {
            out.push(Action::Answered);
        }
    }

    /// An object of a list: stored as listed, and remembered as existing.
    fn listed<T: Item, E>(&self, listing: &mut Listing, obj: T, out: &mut Out<T, E>) {
        if self.reconcile {
            listing
                .uids
                .push(obj.uid().map(str::to_owned).unwrap_or_default());
        }
        out.push(Action::Change {
            obj,
            seen: Seen::Listed,
            rv: None,
            blind_since: None,
        });
    }

    /// A watched change; it moves the position.
    fn changed<T: Item, E>(&mut self, obj: T, seen: Seen, replay: Option<&Replay>) -> Action<T, E> {
        let rv = obj.resource_version().map(str::to_owned);
        // NB: resourceVersions are compared as numbers, as the apiserver itself
        // does (comparable resource versions, KEP-5504): a replayed change at or
        // before the version current when the watch reopened happened while blind.
        let blind_since = replay.and_then(|r| {
            rv.as_deref()
                .and_then(|v| v.parse::<u64>().ok())
                .filter(|v| *v <= r.until)
                .map(|_| r.since)
        });
        if let Some(v) = &rv {
            self.position = Some(v.clone());
        }
        Action::Change {
            obj,
            seen,
            rv,
            blind_since,
        }
    }

    fn send_listed<T, E>(&self, listing: Listing, out: &mut Out<T, E>) {
        if self.reconcile {
            out.push(Action::Listed {
                uids: listing.uids,
                blind_since: self.blind.as_ref().map(|b| b.since),
            });
        }
    }

    /// Folds an inconsistent list into the blind interval it closes.
    fn note_inconsistent(&mut self, listing: &Listing) {
        if let Some(since) = listing.inconsistent_since {
            self.blind_from(since, GapReason::Relist, || "paged list".into());
            if let Some(b) = self.blind.as_mut() {
                b.detail.push_str(INCONSISTENT);
            }
        }
    }

    /// A list (not a resumed watch) ends the blind interval.
    fn relisted(&mut self) {
        if let Some(b) = self.blind.as_mut() {
            b.detail.push_str(RELISTED);
        }
    }

    /// Opens a blind interval, unless one is open: the first cause is the one kept.
    fn blind_from(&mut self, since: i64, reason: GapReason, detail: impl FnOnce() -> String) {
        self.blind.get_or_insert_with(|| Blind {
            since,
            reason,
            detail: detail(),
        });
    }

    fn close_gap<T, E>(&mut self, finish: i64, out: &mut Out<T, E>) {
        if let Some(blind) = self.blind.take() {
            let finish = finish.max(blind.since);
            out.push(Action::Log(format!(
                "gap {} of {} ms: {}",
                blind.reason.as_str(),
                finish - blind.since,
                blind.detail
            )));
            out.push(Action::Gap { blind, finish });
        }
    }
}

fn is_stream<T, E>(input: &Input<T, E>) -> bool {
    matches!(
        input,
        Input::Added(_)
            | Input::Modified(_)
            | Input::Deleted(_)
            | Input::Bookmark { .. }
            | Input::ErrorEvent { .. }
            | Input::StreamFailed(_)
            | Input::StreamEnded
    )
}

/// An item that shows the watch works: a change, a bookmark, or the server's
/// own end of the watch.
fn is_good<T, E>(input: &Input<T, E>) -> bool {
    matches!(
        input,
        Input::Added(_)
            | Input::Modified(_)
            | Input::Deleted(_)
            | Input::Bookmark { .. }
            | Input::StreamEnded
    )
}

fn log_stream<T, E: std::error::Error>(input: &Input<T, E>, out: &mut Out<T, E>) {
    let line = match input {
        Input::StreamEnded => "watch ended by the server".to_string(),
        Input::StreamFailed(e) => format!("watch failed: {}", error_chain(e)),
        Input::ErrorEvent { code, message } => format!("watch error {code}: {message}"),
        _ => return,
    };
    out.push(Action::Log(line));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An object as the machine sees it.
    #[derive(Debug, PartialEq)]
    struct Obj {
        uid: &'static str,
        rv: &'static str,
    }

    impl Item for Obj {
        fn resource_version(&self) -> Option<&str> {
            Some(self.rv)
        }
        fn uid(&self) -> Option<&str> {
            Some(self.uid)
        }
    }

    #[derive(Debug, PartialEq, thiserror::Error)]
    #[error("{0}")]
    struct Oops(&'static str);

    type In = Input<Obj, Oops>;
    type Act = Action<Obj, Oops>;

    fn obj(uid: &'static str, rv: &'static str) -> Obj {
        Obj { uid, rv }
    }

    fn status(code: u16, message: &'static str) -> Failure<Oops> {
        Failure {
            status: Some((code, message.into())),
            continue_token: None,
            error: Oops(message),
        }
    }

    fn unreachable() -> Failure<Oops> {
        Failure {
            status: None,
            continue_token: None,
            error: Oops("connection refused"),
        }
    }

    fn page(items: Vec<Obj>, continue_token: Option<&str>, rv: Option<&str>) -> In {
        Input::Page(Page {
            items,
            continue_token: continue_token.map(Into::into),
            resource_version: rv.map(Into::into),
        })
    }

    fn bookmark(rv: &str, initial_events_end: bool) -> In {
        Input::Bookmark {
            resource_version: rv.into(),
            initial_events_end,
        }
    }

    /// One watch of objects (or of Events: `reconcile` false) and a clock.
    struct Run {
        machine: Option<Machine>,
        now: i64,
    }

    impl Run {
        fn new(mode: Mode, reconcile: bool, resume_from: Option<&str>, blind: Option<i64>) -> Run {
            Run {
                machine: Some(Machine::new(
                    mode,
                    reconcile,
                    resume_from.map(Into::into),
                    blind,
                )),
                now: 1_000,
            }
        }

        fn objects(resume_from: Option<&str>) -> Run {
            Run::new(Mode::Run, true, resume_from, None)
        }

        /// Feeds `input` at `at` and returns the actions.
        fn at(&mut self, at: i64, input: In) -> Vec<Act> {
            self.now = at;
            self.feed(input)
        }

        fn feed(&mut self, input: In) -> Vec<Act> {
            let (machine, actions) = step(self.machine.take().unwrap(), input, self.now);
            self.machine = Some(machine);
            actions
        }

        fn m(&self) -> &Machine {
            self.machine.as_ref().unwrap()
        }

        fn m_mut(&mut self) -> &mut Machine {
            self.machine.as_mut().unwrap()
        }

        /// Watching from `rv`, the resume proven.
        fn watching(rv: &str) -> Run {
            let mut run = Run::objects(Some(rv));
            run.feed(Input::Start);
            run.feed(Input::WatchOpened);
            run.feed(bookmark(rv, false));
            assert!(matches!(
                run.m().phase,
                Phase::Watching { resume: None, .. }
            ));
            run
        }
    }

    /// The actions that ask for something, in order.
    fn requests(actions: &[Act]) -> Vec<&Act> {
        actions
            .iter()
            .filter(|a| {
                matches!(
                    a,
                    Action::ListPage { .. }
                        | Action::Probe
                        | Action::OpenWatch { .. }
                        | Action::Backoff { .. }
                        | Action::Stop
                        | Action::Finished
                        | Action::Failed(_)
                )
            })
            .collect()
    }

    fn gaps(actions: &[Act]) -> Vec<(&'static str, i64, i64, &str)> {
        actions
            .iter()
            .filter_map(|a| match a {
                Action::Gap { blind, finish } => Some((
                    blind.reason.as_str(),
                    blind.since,
                    *finish,
                    blind.detail.as_str(),
                )),
                _ => None,
            })
            .collect()
    }

    fn logs(actions: &[Act]) -> Vec<&str> {
        actions
            .iter()
            .filter_map(|a| match a {
                Action::Log(line) => Some(line.as_str()),
                _ => None,
            })
            .collect()
    }

    fn open(from: &str, streaming: bool) -> Act {
        Action::OpenWatch {
            from: from.into(),
            streaming,
        }
    }

    fn list_page(token: Option<&str>) -> Act {
        Action::ListPage {
            continue_token: token.map(Into::into),
        }
    }

    fn backoff_ms(actions: &[Act]) -> Option<u128> {
        actions.iter().find_map(|a| match a {
            Action::Backoff { delay, .. } => Some(delay.as_millis()),
            _ => None,
        })
    }

    #[test]
    fn gap_reasons_are_the_stored_strings() {
        assert_eq!(GapReason::NotRunning.as_str(), "not-running");
        assert_eq!(GapReason::Relist.as_str(), "relist");
        assert_eq!(GapReason::Disconnected.as_str(), "disconnected");
    }

    #[test]
    fn gone_on_resume_relists_and_records_a_relist_gap() {
        let mut run = Run::objects(Some("100"));
        // Not blind: no probe, straight to the watch.
        assert_eq!(run.feed(Input::Start), vec![open("100", false)]);
        let actions = run.at(2_000, Input::WatchFailed(status(410, "too old")));
        assert_eq!(actions[0], Action::Count(Counter::Gone410));
        assert_eq!(requests(&actions), vec![&open("", true)]);
        assert_eq!(run.m().position, None);
        run.feed(Input::WatchOpened);
        run.feed(Input::Added(obj("a", "150")));
        let actions = run.at(3_000, bookmark("160", true));
        assert_eq!(
            gaps(&actions),
            vec![(
                "relist",
                2_000,
                3_000,
                "410 Gone: resourceVersion too old; relisted: what was deleted or changed meanwhile may be missing"
            )]
        );
        assert!(actions.contains(&Action::SavePosition("160".into())));
    }

    #[test]
    fn gone_as_an_error_event_mid_watch_relists_with_a_paged_list() {
        let mut run = Run::watching("100");
        run.m_mut().streaming_lists = false;
        let actions = run.at(
            2_000,
            Input::ErrorEvent {
                code: 410,
                message: "too old resource version".into(),
            },
        );
        assert_eq!(
            logs(&actions),
            vec!["watch error 410: too old resource version", "listing"]
        );
        assert!(actions.contains(&Action::Count(Counter::Gone410)));
        assert!(actions.contains(&Action::Count(Counter::WatchRestart)));
        assert_eq!(requests(&actions), vec![&list_page(None)]);
        let actions = run.at(2_500, page(vec![obj("a", "90")], None, Some("300")));
        assert_eq!(
            actions[0],
            Action::Change {
                obj: obj("a", "90"),
                seen: Seen::Listed,
                rv: None,
                blind_since: None
            }
        );
        assert_eq!(
            actions[1],
            Action::Listed {
                uids: vec!["a".into()],
                blind_since: Some(2_000)
            }
        );
        assert_eq!(
            gaps(&actions),
            vec![(
                "relist",
                2_000,
                2_500,
                "410 Gone: the watch expired; relisted: what was deleted or changed meanwhile may be missing"
            )]
        );
        assert_eq!(
            requests(&actions),
            vec![&open("300", false)],
            "no longer blind: no probe"
        );
        assert_eq!(run.m().position.as_deref(), Some("300"));
    }

    #[test]
    fn continue_token_expired_mid_list_finishes_the_list_from_the_token_and_says_inconsistent() {
        let mut run = Run::objects(None);
        run.m_mut().streaming_lists = false;
        assert_eq!(
            requests(&run.at(1_000, Input::Start)),
            vec![&list_page(None)]
        );
        let actions = run.at(1_100, page(vec![obj("a", "1")], Some("t1"), None));
        assert_eq!(requests(&actions), vec![&list_page(Some("t1"))]);
        let expired = Failure {
            continue_token: Some("t2".into()),
            ..status(410, "The provided continue parameter is too old")
        };
        let actions = run.at(1_200, Input::ListFailed(expired));
        assert_eq!(
            actions,
            vec![
                Action::Log(
                    "the list's continue token expired (etcd compaction): finishing it from newer data"
                        .into()
                ),
                Action::Count(Counter::Gone410),
                list_page(Some("t2")),
            ]
        );
        let actions = run.at(1_300, page(vec![obj("b", "7")], None, Some("200")));
        assert!(actions.contains(&Action::Listed {
            uids: vec!["a".into(), "b".into()],
            blind_since: Some(1_000)
        }));
        assert_eq!(
            gaps(&actions),
            vec![(
                "relist",
                1_000,
                1_300,
                "paged list; the list outlived etcd compaction and was finished from newer data: \
                 changes made during the list to objects listed before may be missing; \
                 relisted: what was deleted or changed meanwhile may be missing"
            )]
        );
        assert!(actions.contains(&Action::SavePosition("200".into())));
    }

    #[test]
    fn a_410_without_a_continue_token_is_a_failed_list() {
        let mut run = Run::objects(None);
        run.m_mut().streaming_lists = false;
        run.feed(Input::Start);
        let actions = run.feed(Input::ListFailed(status(410, "gone")));
        assert_eq!(backoff_ms(&actions), Some(250));
    }

    #[test]
    fn refused_streaming_list_falls_back_to_paged_lists() {
        let mut run = Run::objects(None);
        assert_eq!(run.feed(Input::Start), vec![open("", true)]);
        let actions = run.feed(Input::WatchFailed(status(
            422,
            "sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled",
        )));
        assert_eq!(
            logs(&actions),
            vec![
                "no streaming lists here (sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled): paged lists instead",
                "listing"
            ]
        );
        assert_eq!(requests(&actions), vec![&list_page(None)]);
        assert!(!run.m().streaming_lists);
    }

    #[test]
    fn streaming_list_refusals_that_are_not_about_streaming_keep_streaming_lists() {
        for code in [401, 403, 429, 500] {
            let mut run = Run::objects(None);
            run.feed(Input::Start);
            let actions = run.feed(Input::WatchFailed(status(code, "no")));
            assert_eq!(backoff_ms(&actions), Some(250), "{code}");
            assert!(run.m().streaming_lists, "{code}");
            assert_eq!(requests(&run.feed(Input::Timer)), vec![&open("", true)]);
        }
        let mut run = Run::objects(None);
        run.feed(Input::Start);
        let actions = run.feed(Input::WatchFailed(status(410, "gone")));
        assert_eq!(requests(&actions), vec![&open("", true)], "410: list again");
    }

    #[test]
    fn streaming_list_broken_before_its_end_falls_back_to_paged_lists_for_good() {
        let mut run = Run::objects(None);
        run.feed(Input::Start);
        run.feed(Input::WatchOpened);
        run.feed(Input::Added(obj("a", "5")));
        let actions = run.at(2_000, Input::StreamFailed(Oops("connection reset")));
        assert_eq!(
            logs(&actions),
            vec![
                "watch failed: connection reset",
                "the streaming list broke before its last object: paged lists from now on",
                "listing"
            ]
        );
        assert!(actions.contains(&Action::Count(Counter::WatchRestart)));
        assert_eq!(requests(&actions), vec![&list_page(None)]);
        let actions = run.at(3_000, page(vec![obj("a", "5")], None, Some("50")));
        assert_eq!(
            gaps(&actions),
            vec![(
                "disconnected",
                2_000,
                3_000,
                "connection reset; relisted: what was deleted or changed meanwhile may be missing"
            )]
        );
        run.feed(Input::WatchOpened);
        let actions = run.feed(Input::ErrorEvent {
            code: 410,
            message: "too old".into(),
        });
        assert_eq!(
            requests(&actions),
            vec![&list_page(None)],
            "never streaming again"
        );
    }

    #[test]
    fn streaming_list_expired_before_its_end_is_a_relist_gap_and_paged_lists_follow() {
        let mut run = Run::objects(None);
        run.feed(Input::Start);
        run.feed(Input::WatchOpened);
        let actions = run.at(
            2_000,
            Input::ErrorEvent {
                code: 410,
                message: "continue parameter is too old".into(),
            },
        );
        assert_eq!(requests(&actions), vec![&list_page(None)]);
        assert_eq!(
            run.m()
                .blind
                .as_ref()
                .map(|b| (b.reason, b.detail.as_str())),
            Some((
                GapReason::Relist,
                "410 Gone: the streaming list expired before its end"
            ))
        );
    }

    #[test]
    fn initial_events_end_bookmark_sends_the_listed_set_saves_the_position_and_closes_the_gap() {
        let mut run = Run::new(Mode::Run, true, None, Some(500));
        assert_eq!(run.feed(Input::Start), vec![open("", true)]);
        assert_eq!(
            run.at(1_000, Input::WatchOpened),
            vec![Action::Log("streaming list".into())]
        );
        let actions = run.feed(Input::Added(obj("a", "10")));
        assert_eq!(
            actions,
            vec![Action::Change {
                obj: obj("a", "10"),
                seen: Seen::Listed,
                rv: None,
                blind_since: None
            }]
        );
        run.feed(Input::Modified(obj("b", "11")));
        assert_eq!(run.feed(bookmark("12", false)), vec![], "not the end");
        assert_eq!(run.m().position, None, "the position waits for the end");
        let actions = run.at(4_000, bookmark("20", true));
        assert_eq!(
            actions,
            vec![
                Action::Log("streaming list ended after 3000 ms".into()),
                Action::Listed {
                    uids: vec!["a".into(), "b".into()],
                    blind_since: Some(500)
                },
                Action::Log(
                    "gap not-running of 3500 ms: the recorder was not running; relisted: what was deleted or changed meanwhile may be missing"
                        .into()
                ),
                Action::Gap {
                    blind: Blind {
                        since: 500,
                        reason: GapReason::NotRunning,
                        detail: format!("the recorder was not running{RELISTED}")
                    },
                    finish: 4_000
                },
                Action::SavePosition("20".into()),
            ]
        );
        let actions = run.feed(Input::Modified(obj("b", "21")));
        assert_eq!(
            actions,
            vec![Action::Change {
                obj: obj("b", "21"),
                seen: Seen::Modified,
                rv: Some("21".into()),
                blind_since: None
            }]
        );
        assert_eq!(run.m().position.as_deref(), Some("21"));
    }

    #[test]
    fn ordinary_bookmark_saves_the_position_and_the_next_watch_starts_there() {
        let mut run = Run::watching("100");
        assert_eq!(
            run.feed(bookmark("500", false)),
            vec![Action::SavePosition("500".into())]
        );
        let actions = run.feed(Input::StreamEnded);
        assert_eq!(logs(&actions), vec!["watch ended by the server"]);
        assert_eq!(
            requests(&actions),
            vec![&open("500", false)],
            "renewed at once, no backoff"
        );
    }

    #[test]
    fn disconnect_backs_off_doubling_to_ten_seconds_and_closes_its_gap_at_the_proven_resume() {
        let mut run = Run::watching("100");
        let actions = run.at(10_000, Input::StreamFailed(Oops("connection reset")));
        assert!(actions.contains(&Action::Count(Counter::WatchRestart)));
        assert_eq!(
            requests(&actions),
            vec![&Action::Probe],
            "blind: bound the replay"
        );
        let mut delays = Vec::new();
        for t in 0..8 {
            let actions = run.feed(Input::Probed(Some(150)));
            assert_eq!(requests(&actions), vec![&open("100", false)]);
            let actions = run.at(11_000 + t, Input::WatchFailed(unreachable()));
            delays.push(backoff_ms(&actions).unwrap());
            assert_eq!(requests(&run.feed(Input::Timer)), vec![&Action::Probe]);
        }
        assert_eq!(
            delays,
            vec![250, 500, 1_000, 2_000, 4_000, 8_000, 10_000, 10_000]
        );
        run.feed(Input::Probed(Some(150)));
        run.at(40_000, Input::WatchOpened);
        let actions = run.at(41_000, Input::Modified(obj("a", "120")));
        assert_eq!(
            gaps(&actions),
            vec![(
                "disconnected",
                10_000,
                40_000,
                "connection reset; resumed from resourceVersion 100: changes since were replayed"
            )],
            "closed when the watch opened, not at its first item"
        );
        assert_eq!(
            run.m().backoff,
            FIRST_BACKOFF,
            "a proven watch resets the backoff"
        );
        // The next failure waits the first delay again.
        run.feed(Input::StreamFailed(Oops("reset")));
        run.feed(Input::Probed(None));
        let actions = run.feed(Input::WatchFailed(unreachable()));
        assert_eq!(backoff_ms(&actions), Some(250));
    }

    /// Issue 44.9: after an apiserver restart the watch of Events opened
    /// again, but the blind state (`/healthz`, `kubectl_diag_watches_blind`:
    /// "requests fail") went only with the gap, at the first item: the next
    /// Event, minutes later. The reconnect says it at once; the gap still
    /// waits for an item to prove the resume, and ends at the reconnect.
    #[test]
    fn an_apiserver_restart_stops_failing_at_the_reconnect_not_at_the_next_event() {
        let mut run = Run::new(Mode::Run, false, Some("100"), None);
        run.feed(Input::Start);
        run.feed(Input::WatchOpened);
        run.at(10_000, Input::StreamFailed(Oops("connection reset")));
        let actions = run.at(10_001, Input::WatchFailed(unreachable()));
        assert_eq!(backoff_ms(&actions), Some(250));
        assert!(!actions.contains(&Action::Answered));
        assert_eq!(
            requests(&run.at(10_251, Input::Timer)),
            vec![&open("100", false)]
        );
        let actions = run.at(10_300, Input::WatchFailed(unreachable()));
        assert!(!actions.contains(&Action::Answered), "still failing");
        run.at(10_800, Input::Timer);
        let actions = run.at(12_000, Input::WatchOpened);
        assert!(actions.contains(&Action::Answered), "{actions:?}");
        assert_eq!(gaps(&actions), vec![], "the resume is not proven yet");
        assert!(run.m().blind.is_some());
        // Two minutes later, the next Event: the gap, ending at the reconnect.
        let actions = run.at(132_000, Input::Added(obj("e", "130")));
        assert!(!actions.contains(&Action::Answered), "once");
        assert_eq!(
            gaps(&actions),
            vec![(
                "disconnected",
                10_000,
                12_000,
                "connection reset; resumed from resourceVersion 100: changes since were replayed"
            )]
        );
        // A list answered after failed ones says it too.
        let mut run = Run::objects(None);
        run.m_mut().streaming_lists = false;
        run.feed(Input::Start);
        run.feed(Input::ListFailed(unreachable()));
        run.feed(Input::Timer);
        let actions = run.feed(page(vec![obj("a", "1")], Some("t"), None));
        assert_eq!(actions.first(), Some(&Action::Answered));
        let actions = run.feed(page(vec![obj("b", "2")], None, Some("3")));
        assert!(!actions.contains(&Action::Answered));
    }

    #[test]
    fn a_410_error_event_before_any_good_item_does_not_close_the_gap_as_resumed() {
        let mut run = Run::watching("100");
        run.at(10_000, Input::StreamFailed(Oops("connection reset")));
        run.feed(Input::Probed(Some(150)));
        run.at(11_000, Input::WatchOpened);
        let actions = run.at(
            11_500,
            Input::ErrorEvent {
                code: 410,
                message: "too old".into(),
            },
        );
        assert_eq!(gaps(&actions), vec![]);
        assert_eq!(requests(&actions), vec![&open("", true)]);
        run.feed(Input::WatchOpened);
        let actions = run.at(12_000, bookmark("300", true));
        assert_eq!(
            gaps(&actions),
            vec![(
                "disconnected",
                10_000,
                12_000,
                "connection reset; relisted: what was deleted or changed meanwhile may be missing"
            )],
            "the first cause stays; the end says relisted"
        );
    }

    /// Issue 27.4: a watch blind until SIGINT once left `gaps` empty.
    #[test]
    fn shutdown_mid_list_stores_the_blind_interval_but_no_listed_set_or_position() {
        let mut run = Run::new(Mode::Run, true, None, Some(500));
        run.m_mut().streaming_lists = false;
        run.feed(Input::Start);
        run.feed(page(vec![obj("a", "1")], Some("t1"), None));
        let actions = run.at(900, Input::Shutdown);
        assert_eq!(
            gaps(&actions),
            vec![(
                "not-running",
                500,
                900,
                "the recorder was not running; the recorder stopped while blind"
            )]
        );
        assert_eq!(actions.last(), Some(&Action::Stop));
        assert!(
            !actions
                .iter()
                .any(|a| matches!(a, Action::Listed { .. } | Action::SavePosition(_))),
            "{actions:?}"
        );
        assert_eq!(run.m().phase, Phase::Done);
    }

    /// Issue 27.6: a type whose every request fails (a broken conversion
    /// webhook answering 500) stays blind; its interval is a gap at the stop.
    #[test]
    fn a_watch_failing_until_shutdown_stores_its_blind_interval() {
        let mut run = Run::objects(Some("100"));
        run.feed(Input::Start);
        run.at(
            1_000,
            Input::WatchFailed(status(500, "conversion webhook failed")),
        );
        run.at(1_250, Input::Timer);
        run.feed(Input::Probed(Some(120)));
        run.at(
            1_300,
            Input::WatchFailed(status(500, "conversion webhook failed")),
        );
        let actions = run.at(9_000, Input::Shutdown);
        let gaps = gaps(&actions);
        assert_eq!(gaps.len(), 1, "{actions:?}");
        let (reason, start, finish, detail) = gaps[0];
        assert_eq!((reason, start, finish), ("disconnected", 1_000, 9_000));
        assert!(detail.ends_with(STOPPED_BLIND), "{detail}");
    }

    #[test]
    fn shutdown_while_backing_off_stops_and_stores_the_blind_interval() {
        let mut run = Run::objects(Some("100"));
        run.feed(Input::Start);
        run.feed(Input::WatchFailed(unreachable()));
        let actions = run.feed(Input::Shutdown);
        assert_eq!(gaps(&actions).len(), 1, "{actions:?}");
        assert_eq!(actions.last(), Some(&Action::Stop));
    }

    #[test]
    fn not_running_gap_from_a_previous_session_closes_at_the_resumed_watch() {
        let mut run = Run::new(Mode::Run, true, Some("100"), Some(500));
        assert_eq!(run.feed(Input::Start), vec![Action::Probe]);
        assert_eq!(run.feed(Input::Probed(Some(130))), vec![open("100", false)]);
        run.at(1_000, Input::WatchOpened);
        let actions = run.at(1_200, Input::Deleted(obj("a", "110")));
        assert_eq!(
            gaps(&actions),
            vec![(
                "not-running",
                500,
                1_000,
                "the recorder was not running; resumed from resourceVersion 100: changes since were replayed"
            )]
        );
    }

    #[test]
    fn replayed_changes_carry_blind_since_only_up_to_the_version_current_at_reopening() {
        let mut run = Run::new(Mode::Run, true, Some("100"), Some(500));
        run.feed(Input::Start);
        run.feed(Input::Probed(Some(130)));
        run.feed(Input::WatchOpened);
        let blind_since = |actions: Vec<Act>| match actions.into_iter().last() {
            Some(Action::Change { blind_since, .. }) => blind_since,
            other => panic!("{other:?}"),
        };
        assert_eq!(
            blind_since(run.feed(Input::Deleted(obj("a", "110")))),
            Some(500)
        );
        assert_eq!(
            blind_since(run.feed(Input::Modified(obj("b", "130")))),
            Some(500)
        );
        assert_eq!(blind_since(run.feed(Input::Added(obj("c", "131")))), None);
        assert_eq!(
            blind_since(run.feed(Input::Added(obj("d", "x9")))),
            None,
            "not a number"
        );
    }

    #[test]
    fn without_a_probe_answer_replayed_changes_carry_no_blind_since() {
        let mut run = Run::new(Mode::Run, true, Some("100"), Some(500));
        run.feed(Input::Start);
        run.feed(Input::Probed(None));
        run.feed(Input::WatchOpened);
        let actions = run.feed(Input::Deleted(obj("a", "110")));
        assert!(matches!(
            actions.last(),
            Some(Action::Change {
                blind_since: None,
                ..
            })
        ));
    }

    #[test]
    fn events_neither_probe_nor_send_listed_sets() {
        let mut run = Run::new(Mode::Run, false, Some("100"), Some(500));
        assert_eq!(run.feed(Input::Start), vec![open("100", false)]);
        let mut run = Run::new(Mode::Run, false, None, None);
        run.m_mut().streaming_lists = false;
        run.feed(Input::Start);
        let actions = run.feed(page(vec![obj("e", "1")], None, Some("9")));
        assert!(!actions.iter().any(|a| matches!(a, Action::Listed { .. })));
        assert!(actions.contains(&Action::SavePosition("9".into())));
    }

    #[test]
    fn failed_list_waits_and_then_opens_a_disconnected_gap() {
        let mut run = Run::objects(None);
        run.m_mut().streaming_lists = false;
        run.feed(Input::Start);
        let actions = run.at(1_000, Input::ListFailed(unreachable()));
        assert_eq!(
            logs(&actions),
            vec!["request failed, retrying in 250 ms: connection refused"]
        );
        assert_eq!(run.m().blind, None, "not until the wait ends");
        let actions = run.at(1_250, Input::Timer);
        assert_eq!(requests(&actions), vec![&list_page(None)]);
        assert_eq!(
            run.m().blind,
            Some(Blind {
                since: 1_250,
                reason: GapReason::Disconnected,
                detail: "connection refused".into()
            })
        );
    }

    #[test]
    fn once_lists_stores_the_position_and_finishes_without_the_relisted_suffix() {
        let mut run = Run::new(Mode::Once, true, Some("ignored"), Some(500));
        assert_eq!(run.feed(Input::Start), vec![list_page(None)]);
        let actions = run.at(2_000, page(vec![obj("a", "1")], None, Some("42")));
        assert_eq!(
            gaps(&actions),
            vec![("not-running", 500, 2_000, "the recorder was not running")]
        );
        assert_eq!(
            &actions[actions.len() - 2..],
            &[Action::SavePosition("42".into()), Action::Finished]
        );
    }

    #[test]
    fn once_fails_on_a_failed_list() {
        let mut run = Run::new(Mode::Once, true, None, None);
        run.feed(Input::Start);
        assert_eq!(
            run.feed(Input::ListFailed(status(403, "forbidden"))),
            vec![Action::Failed(Oops("forbidden"))]
        );
    }

    #[test]
    fn a_gap_never_ends_before_it_began() {
        let mut run = Run::new(Mode::Run, true, None, Some(5_000));
        run.feed(Input::Start);
        run.at(1_000, Input::WatchOpened);
        let actions = run.at(2_000, bookmark("1", true));
        assert_eq!(gaps(&actions)[0].1..gaps(&actions)[0].2, 5_000..5_000);
    }
}
