//! An apiserver without streaming lists (the WatchList feature gate off, as
//! on clusters older than 1.32 or that turned it off): the recorder notices
//! the refusal and lists page by page instead, storing every Event once, and
//! watches on from the list.
//!
//! The list is made to outlive etcd compaction (compaction every second, one
//! Event a page, writes going on): its continue token expires mid-list, and
//! the recorder must finish the list from newer data rather than start again
//! (which, on a list longer than the compaction interval, never completes),
//! and record the list's interval as a gap.
//!
//! NB: in `tests/exclusive`, because it restarts the shared apiserver with
//! another feature gate and restores it after: no other test may see it.

use crate::support;

use std::process::Stdio;
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::core::v1::{ConfigMap, Event};
use kube::Api;
use kube::api::{Patch, PatchParams, PostParams};
use serde_json::json;
use support::{Background, TestNamespace, diag, kubeconfig, run_ok, wait_until};

/// Restarts the apiserver with these extra flags (`scripts/cluster restart-apiserver`).
fn restart_apiserver(extra: &str) {
    let state = kubeconfig().parent().unwrap().to_path_buf();
    let out = std::process::Command::new(support::repo_root().join("scripts/cluster"))
        .arg("restart-apiserver")
        .env("DIAG_CLUSTER_DIR", &state)
        .env("DIAG_APISERVER_EXTRA_ARGS", extra)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Puts the apiserver's flags back however the test ends.
struct Restore(String);

impl Drop for Restore {
    fn drop(&mut self) {
        restart_apiserver(&self.0);
        controllers_caught_up();
    }
}

/// Waits until the controllers work again after the restarts: a new namespace
/// gets its default ServiceAccount. NB: client-go backs off reconnecting, so
/// the next test binary could otherwise start before they do (CI saw it).
fn controllers_caught_up() {
    let kubectl = |args: &[&str]| {
        std::process::Command::new(support::repo_root().join("scripts/cluster"))
            .arg("kubectl")
            .args(args)
            .env("DIAG_CLUSTER_DIR", kubeconfig().parent().unwrap())
            .output()
            .map(|o| o.status.success())
            .unwrap_or(false)
    };
    let probe = format!("probe-{}", support::uuid_suffix());
    for _ in 0..240 {
        if kubectl(&["create", "namespace", &probe]) || kubectl(&["get", "namespace", &probe]) {
            break;
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    let mut ready = false;
    for _ in 0..240 {
        if kubectl(&["-n", &probe, "get", "serviceaccount", "default"]) {
            ready = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    kubectl(&["delete", "namespace", &probe, "--wait=false"]);
    assert!(
        ready,
        "the controllers did not come back within 2 minutes of the apiserver restart"
    );
}

fn stored(db: &std::path::Path, ns: &str) -> usize {
    let out = run_ok(diag(db).arg("export"));
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|l| l["event"]["namespace"] == ns)
        .count()
}

#[tokio::test]
async fn without_streaming_lists_the_recorder_lists_page_by_page() {
    let _alone = support::exclusive().await;
    let ns = TestNamespace::new("rec-paged").await;
    let events: Api<Event> = ns.api();
    // NB: the apiserver compacts to the revision it saw one interval earlier,
    // so a continue token surely expires only in a list that lasts over two
    // intervals (2 s here). 1,234 one-Event pages took 1.5-1.7 s on a fast
    // machine once the writer no longer committed every change, and the
    // token outlived the list; 4,000 take about three times as long.
    let total = 4_000;
    let created = futures::stream::iter(0..total)
        .map(|i| {
            let events = events.clone();
            let name = ns.name.clone();
            async move {
                let e: Event = serde_json::from_value(json!({
                    "metadata": {"name": format!("e{i}")},
                    "involvedObject": {"kind": "Pod", "name": format!("web-{}", i % 10), "namespace": name, "apiVersion": "v1"},
                    "reason": "Started", "type": "Normal", "message": format!("started {i}"),
                    "count": 1, "firstTimestamp": "2026-11-29T03:00:00Z", "lastTimestamp": "2026-11-29T03:00:00Z",
                    "source": {"component": "kubelet"}
                }))
                .unwrap();
                events.create(&PostParams::default(), &e).await.is_ok()
            }
        })
        .buffer_unordered(32)
        .filter(|ok| futures::future::ready(*ok))
        .count()
        .await;
    assert_eq!(created, total);

    let state = kubeconfig().parent().unwrap().to_path_buf();
    let previous = std::fs::read_to_string(state.join("apiserver-extra-args"))
        .unwrap_or_default()
        .trim()
        .to_string();
    let _restore = Restore(previous.clone());
    restart_apiserver(
        format!("{previous} --feature-gates=WatchList=false --etcd-compaction-interval=1s").trim(),
    );
    // Writes elsewhere move etcd's revision, so that compaction expires the list's token.
    let churn = {
        let maps: Api<ConfigMap> = ns.api();
        tokio::spawn(async move {
            for i in 0.. {
                let cm: ConfigMap = serde_json::from_value(json!({
                    "metadata": {"name": "churn"}, "data": {"i": i.to_string()}
                }))
                .unwrap();
                let _ = maps
                    .patch(
                        "churn",
                        &PatchParams::apply("diag-test").force(),
                        &Patch::Apply(&cm),
                    )
                    .await;
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        })
    };

    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("diag.db");
    let log = dir.path().join("recorder.log");
    let recorder = Background::new(
        diag(&db)
            .args([
                "record",
                "-v",
                "-n",
                &ns.name,
                "--events-only",
                "--chunk-size",
                "1",
            ])
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap(),
    );
    wait_until(Duration::from_secs(60), "every Event stored", || {
        let db = db.clone();
        let ns = ns.name.clone();
        async move { db.exists() && stored(&db, &ns) == total }
    })
    .await;
    // Still watching after the list: a new Event arrives.
    events
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({
                "metadata": {"name": "after"},
                "involvedObject": {"kind": "Pod", "name": "web-1", "namespace": ns.name, "apiVersion": "v1"},
                "reason": "Killing", "type": "Normal", "message": "Stopping container",
                "count": 1, "firstTimestamp": "2026-11-29T03:05:00Z", "lastTimestamp": "2026-11-29T03:05:00Z",
                "source": {"component": "kubelet"}
            }))
            .unwrap(),
        )
        .await
        .unwrap();
    // NB: its failure shows the recorder's log: once (CI rehearsal of 2026-12-06) the new Event was
    // not stored within 30 s, and the log that would say why was gone with the temporary directory.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let now_stored = stored(&db, &ns.name);
        if now_stored == total + 1 {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "timed out after 30s waiting for the watch after the paged list ({now_stored} of {} stored); \
             the recorder's log:\n{}",
            total + 1,
            std::fs::read_to_string(&log).unwrap_or_default()
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    churn.abort();
    assert!(recorder.terminate().success());
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(text.contains("no streaming lists here"), "{text}");
    assert!(text.contains("listing"), "{text}");
    assert!(
        text.contains("continue token expired"),
        "the list must have outlived compaction: {text}"
    );
    let conn = support::open_fresh(&db).unwrap();
    let gaps: Vec<(String, String)> = conn
        .prepare("SELECT reason, detail FROM gaps")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert!(
        gaps.iter()
            .any(|(reason, detail)| reason == "relist"
                && detail.contains("outlived etcd compaction")),
        "the inconsistent list must be recorded as a gap: {gaps:?}"
    );
}
