//! The recorder's second stage: runs what [`super::plan`] set up until a
//! signal (or, with `--once`, one list of each watch), then stops in order:
//! the watches, the shippers, the writer (which commits and closes the
//! session), and what the shippers had not sent yet, sent for a while.

use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use anyhow::Context;
use tokio::sync::mpsc;
use tokio::task::JoinSet;

use super::RecordOptions;
use crate::k8s::connect;
use crate::ship::Destination;

use super::plan::{Plan, Watches};
use super::sink::Msg;
use super::watch::Stop;
use super::{
    HEARTBEAT, Listed, MAINTENANCE, ObjectWatch, Rediscovery, Running, checking, listening, once,
    serve, shipping, status_line, wait_for_signal, watch_type_definitions,
};

/// The shippers of `--ship`, one task per destination, and the switch that stops them.
pub(super) struct Shippers {
    stop: tokio::sync::watch::Sender<bool>,
    tasks: JoinSet<()>,
}

impl Shippers {
    /// Starts one shipper per destination (none with `--once`: it drains at the end).
    pub fn start(plan: &Plan, destinations: &[Arc<Destination>], once: bool) -> Shippers {
        let (stop, stop_rx) = tokio::sync::watch::channel(false);
        let mut tasks = JoinSet::new();
        if !once {
            for (d, r) in destinations.iter().zip(&plan.registered) {
                let shipper = shipping::Shipper {
                    destination: d.clone(),
                    registered: r.clone(),
                    path: plan.path.clone(),
                    tag: format!("{}:{}", plan.cluster_uid, r.id),
                    stats: plan.stats.clone(),
                };
                let (tx, stop) = (plan.tx.clone(), stop_rx.clone());
                tasks.spawn(async move {
                    shipper.run(tx, stop).await;
                });
            }
        }
        Shippers { stop, tasks }
    }

    pub async fn stop(mut self) {
        let _ = self.stop.send(true);
        while self.tasks.join_next().await.is_some() {}
    }
}

/// `--once`: one list of each watch, then retention. Returns what stopped it
/// early, if anything. The watches are dropped as it returns: each holds a
/// sender, and the writer finishes once all are gone.
///
/// NB: an object type whose list fails does not stop the others (regression:
/// a CRD deleted between discovery and its list ended the whole run with
/// "the apiserver answered 404 to list gizmos", storing none of the types
/// after it). A type gone (404) is a warning; any other failure is reported
/// once every other type is stored.
pub(super) async fn once_all(
    watches: Watches,
    tx: &mpsc::Sender<Msg>,
    server: &str,
    err: &mut dyn Write,
) -> Option<anyhow::Error> {
    for (w, s) in watches.events {
        match once(&w, s, server).await {
            Listed::Stored => {}
            Listed::Failed(e) => return Some(e.into()),
            Listed::WriterGone => return None,
        }
    }
    let mut failure = None;
    for (w, s) in watches.objects {
        let (done, name) = match &w {
            ObjectWatch::Full(w) => (once(w, s, server).await, w.resource.clone()),
            ObjectWatch::Metadata(w) => (once(w, s, server).await, w.resource.clone()),
        };
        match done {
            Listed::Stored => {}
            Listed::Failed(connect::ClusterError::Api { code: 404, .. }) => {
                let _ = writeln!(
                    err,
                    "warning: type {name} was removed before it could be listed: nothing of it is stored"
                );
            }
            Listed::Failed(e) => {
                let _ = writeln!(err, "warning: not keeping history of {name}: {e}");
                failure.get_or_insert(e);
            }
            Listed::WriterGone => return None,
        }
    }
    // NB: retention too, as a watching recorder applies it at its start: a
    // file kept by `--once` runs (a CronJob) must stay within --retain and
    // --max-db-size as well (issue 44.1).
    let _ = tx.send(Msg::Maintain).await;
    failure.map(Into::into)
}

/// Watches until a signal: the ticker, the socket readers ask, `--listen`,
/// the status line, every watch, and rediscovery when the types change.
/// Returns what stopped it other than a signal, if anything; Err only when
/// `--listen` cannot listen.
pub(super) async fn supervise(
    plan: &mut Plan,
    watches: Watches,
    args: &RecordOptions,
    show_status: bool,
    err: &mut dyn Write,
) -> anyhow::Result<Option<anyhow::Error>> {
    let _ = plan.tx.send(Msg::Maintain).await;
    let ticker = tokio::spawn(tick(plan.tx.clone()));
    let asking = plan
        .socket
        .take()
        .map(|socket| tokio::spawn(socket.serve(plan.tx.downgrade())));
    if let Some(addr) = args.listen {
        serve_listen(plan, addr, args, err).await?;
    }
    let status = show_status.then(|| {
        let (stats, context) = (plan.stats.clone(), plan.conn.context.clone());
        tokio::spawn(async move { status_line(stats, context).await })
    });
    let (shutdown_tx, shutdown_rx) = tokio::sync::watch::channel(false);
    let mut tasks = JoinSet::new();
    for (w, s) in watches.events {
        let rx = shutdown_rx.clone();
        tasks.spawn(async move { w.run(s, rx).await });
    }
    let mut running = Running::default();
    for (w, s) in watches.objects {
        let rx = running.stop_of(w.dt());
        tasks.spawn(w.run(s, rx));
    }
    for t in watches.kept {
        running.types.insert(t.full_name(), t);
    }
    running.refused.extend(watches.refused);
    let failure = watch_until_signal(plan, args, &mut running, &mut tasks, err).await;
    let _ = shutdown_tx.send(true);
    running.stop_all();
    while tasks.join_next().await.is_some() {}
    ticker.abort();
    if let Some(asking) = asking {
        asking.abort();
        // NB: awaited, so that the socket is removed (on drop) before the
        // writer's last commit, not after the process has said it stopped.
        let _ = asking.await;
    }
    if let Some(status) = status {
        status.abort();
    }
    Ok(failure)
}

/// The writer's heartbeat, and its maintenance (retention) every ten minutes.
async fn tick(tx: mpsc::Sender<Msg>) {
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
}

/// `--listen`: /healthz and /metrics, and with `--check-every` the findings
/// of `check` run on the recording at that pace.
async fn serve_listen(
    plan: &Plan,
    addr: std::net::SocketAddr,
    args: &RecordOptions,
    err: &mut dyn Write,
) -> anyhow::Result<()> {
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .with_context(|| format!("--listen {addr}: cannot listen there"))?;
    let bound = listener.local_addr().map_or(addr, |a| a);
    if let Some(line) = listening(addr, bound, args.quiet) {
        writeln!(err, "{line}")?;
    }
    plan.stats.events.limit(args.metrics_max_series);
    let findings = match &args.check_every {
        Some(check) => {
            let findings = Arc::new(crate::metrics::Findings::default());
            findings.limit(args.metrics_max_series);
            tokio::spawn(checking::every(
                plan.path.clone(),
                plan.cluster_uid.clone(),
                Duration::from_millis(check.every_ms.unsigned_abs()),
                (check.options.clone(), check.window_ms),
                findings.clone(),
            ));
            Some(findings)
        }
        None => None,
    };
    tokio::spawn(serve::serve(
        listener,
        plan.stats.clone(),
        plan.path.clone(),
        findings,
    ));
    Ok(())
}

/// The loop of a watching recorder: ends at a signal, or when the writer is
/// gone (the failure returned); rediscovers the types when a CRD or an
/// APIService changes, and every `--rediscover-every`.
async fn watch_until_signal(
    plan: &Plan,
    args: &RecordOptions,
    running: &mut Running,
    tasks: &mut JoinSet<Stop>,
    err: &mut dyn Write,
) -> Option<anyhow::Error> {
    let discovery = Rediscovery {
        conn: &plan.conn,
        namespaces: &plan.namespaces,
        tx: &plan.tx,
        stats: &plan.stats,
        args,
    };
    let (poke_tx, mut poke_rx) = mpsc::channel::<()>(8);
    let types_change = !args.events_only;
    if types_change {
        tokio::spawn(watch_type_definitions(plan.conn.client.clone(), poke_tx));
    }
    // NB: besides the pokes, a rediscovery every `--rediscover-every`: what
    // nothing tells the recorder about (a CRD watch that RBAC forbids, an
    // APIService becoming available, a type RBAC newly allows).
    let mut fallback =
        tokio::time::interval(Duration::from_millis(args.rediscover_every.unsigned_abs()));
    fallback.tick().await;
    let retry = tokio::time::sleep(Duration::from_secs(3600));
    tokio::pin!(retry);
    let mut retries_left = 0u32;
    let signal = wait_for_signal();
    tokio::pin!(signal);
    loop {
        let rediscover = tokio::select! {
            _ = &mut signal => return None,
            Some(done) = tasks.join_next() => {
                if let Ok(Stop::WriterGone) = done {
                    return Some(anyhow::anyhow!("the writer stopped"));
                }
                false
            }
            Some(()) = poke_rx.recv(), if types_change => {
                // NB: aggregated discovery lists a new CRD's type a moment after
                // the CRD is Established: look again shortly, then once more.
                retry.as_mut().reset(tokio::time::Instant::now() + Duration::from_secs(1));
                retries_left = 2;
                false
            }
            _ = &mut retry, if retries_left > 0 => {
                retries_left -= 1;
                retry.as_mut().reset(tokio::time::Instant::now() + Duration::from_secs(4));
                true
            }
            _ = fallback.tick(), if types_change => true,
        };
        if rediscover && discovery.run(running, tasks, err).await.is_err() {
            return Some(anyhow::anyhow!("the writer stopped"));
        }
    }
}

/// The end: the writer joined (it commits and closes the session), what the
/// shippers had not sent sent for a while (a stop should not hang on a
/// server that is away: the outbox keeps the rest for the next start), and
/// the summary line.
pub(super) async fn finish(
    plan: Plan,
    destinations: &[Arc<Destination>],
    args: &RecordOptions,
    failure: Option<anyhow::Error>,
    show_status: bool,
    err: &mut dyn Write,
) -> anyhow::Result<u8> {
    let Plan {
        tx,
        writer,
        path,
        cluster_uid,
        registered,
        stats,
        ..
    } = plan;
    drop(tx);
    let written = tokio::task::spawn_blocking(move || writer.join())
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
    let deadline = Duration::from_secs(if args.once { 120 } else { 10 });
    for (d, r) in destinations.iter().zip(&registered) {
        let tag = format!("{cluster_uid}:{}", r.id);
        match crate::ship::drain(&path, d, r, &tag, deadline).await {
            Ok((_, 0)) => {}
            Ok((_, left)) => writeln!(
                err,
                "warning: {} is behind by {left} outbox key(s); they are shipped at the next start",
                d.shown()
            )?,
            Err(e) => writeln!(
                err,
                "warning: shipping to {}: {e}; what is not shipped stays in the outbox for the next start",
                d.shown()
            )?,
        }
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
