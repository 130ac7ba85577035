//! Issue 45: the recorder's /metrics scraped by a real Prometheus (Debian's
//! `prometheus` package) that evaluates the shipped rules and sends to a real
//! Alertmanager (`prometheus-alertmanager`), each started here on free ports.
//!
//! A rollout that never gets ready makes the shipped "rollout stuck" alert
//! reach Alertmanager with the finding's summary; the finding's series goes
//! when the finding does; an Event storm keeps `kubectl_diag_events_total`
//! at the cap and loses no occurrence.

use crate::support;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Event;
use kube::api::{Patch, PatchParams, PostParams};
use support::{Background, TestNamespace, wait_for, wait_until};

/// The scrape and evaluation interval of the test's Prometheus.
const SCRAPE: Duration = Duration::from_secs(1);

/// What each shipped `for:` becomes here, so the test waits seconds, not minutes.
const FOR: &str = "4s";

/// A Prometheus tool: `$DIAG_PROMETHEUS_BIN/NAME` or NAME on the PATH
/// (scripts/test installs Debian's packages where they are missing).
fn tool(name: &str) -> PathBuf {
    let dir = std::env::var_os("DIAG_PROMETHEUS_BIN").map(PathBuf::from);
    let path = match dir {
        Some(d) => d.join(name),
        None => PathBuf::from(name),
    };
    let found = Command::new(&path)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    assert!(
        found.is_ok_and(|s| s.success()),
        "{} is not installed: `apt-get install prometheus prometheus-alertmanager` (scripts/test does it)",
        path.display()
    );
    path
}

fn curl(url: &str) -> String {
    let out = Command::new("curl")
        .args(["-s", "--max-time", "5", url])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn json(url: &str) -> Option<serde_json::Value> {
    serde_json::from_str(&curl(url)).ok()
}

/// The shipped rules with every `for:` shortened to [`FOR`]; nothing else changes.
fn shipped_rules_shortened(dir: &Path) -> PathBuf {
    let rules =
        std::fs::read_to_string(support::repo_root().join("deploy/prometheus/rules.yaml")).unwrap();
    let mut changed = 0;
    let text: String = rules
        .lines()
        .map(|l| {
            if l.trim_start().starts_with("for: ") {
                changed += 1;
                format!("{}for: {FOR}\n", &l[..l.len() - l.trim_start().len()])
            } else {
                format!("{l}\n")
            }
        })
        .collect();
    assert!(changed >= 7, "the rules lost their `for:`");
    let path = dir.join("rules.yaml");
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn the_shipped_rules_pass_promtool() {
    let out = Command::new(tool("promtool"))
        .args(["check", "rules"])
        .arg(support::repo_root().join("deploy/prometheus/rules.yaml"))
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "promtool check rules: {text}");
    assert!(text.contains("SUCCESS: 10 rules found"), "{text}");
}

struct Monitoring {
    prometheus: String,
    alertmanager: String,
    _processes: (Background, Background),
}

/// Alertmanager and a Prometheus that scrapes `target` with the shipped rules.
fn monitoring(dir: &Path, target: &str) -> Monitoring {
    let (am_addr, prom_addr) = (support::free_local_addr(), support::free_local_addr());
    std::fs::write(
        dir.join("alertmanager.yml"),
        "route: {receiver: none}\nreceivers: [{name: none}]\n",
    )
    .unwrap();
    let am = Background::new(
        Command::new(tool("prometheus-alertmanager"))
            .arg(format!(
                "--config.file={}",
                dir.join("alertmanager.yml").display()
            ))
            .arg(format!("--storage.path={}", dir.join("am").display()))
            .arg(format!("--web.listen-address={am_addr}"))
            .arg("--cluster.listen-address=")
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.join("alertmanager.log")).unwrap())
            .spawn()
            .unwrap(),
    );
    let rules = shipped_rules_shortened(dir);
    std::fs::write(
        dir.join("prometheus.yml"),
        format!(
            "global: {{scrape_interval: {s}s, evaluation_interval: {s}s}}\n\
             rule_files: ['{rules}']\n\
             alerting: {{alertmanagers: [{{static_configs: [{{targets: ['{am_addr}']}}]}}]}}\n\
             scrape_configs: [{{job_name: kubectl-diag, static_configs: [{{targets: ['{target}']}}]}}]\n",
            s = SCRAPE.as_secs(),
            rules = rules.display(),
        ),
    )
    .unwrap();
    let prometheus = Background::new(
        Command::new(tool("prometheus"))
            .arg(format!(
                "--config.file={}",
                dir.join("prometheus.yml").display()
            ))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.join("tsdb").display()
            ))
            .arg(format!("--web.listen-address={prom_addr}"))
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.join("prometheus.log")).unwrap())
            .spawn()
            .unwrap(),
    );
    Monitoring {
        prometheus: format!("http://{prom_addr}"),
        alertmanager: format!("http://{am_addr}"),
        _processes: (prometheus, am),
    }
}

/// The samples of `name` on an OpenMetrics page, as (labels, value).
fn samples<'a>(page: &'a str, name: &str) -> Vec<(&'a str, f64)> {
    page.lines()
        .filter(|l| l.starts_with(name) && l[name.len()..].starts_with(['{', ' ']))
        .filter_map(|l| {
            let (series, value) = l.rsplit_once(' ')?;
            Some((&series[name.len()..], value.parse().ok()?))
        })
        .collect()
}

/// The query's result vector from Prometheus's HTTP API.
fn query(prometheus: &str, promql: &str) -> Vec<serde_json::Value> {
    let out = Command::new("curl")
        .args(["-s", "--max-time", "5", "-G"])
        .arg(format!("{prometheus}/api/v1/query"))
        .arg("--data-urlencode")
        .arg(format!("query={promql}"))
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    doc["data"]["result"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rollout_that_never_gets_ready_pages_through_the_shipped_alert() {
    let ns = TestNamespace::new("kd45-alert").await;
    let n = ns.name.as_str();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("diag.db");
    let listen = support::free_local_addr();
    let _recorder = support::start_recorder(
        &db,
        n,
        &[
            "--listen",
            &listen,
            "--check-every",
            "1s",
            "--metrics-max-series",
            "50",
        ],
        &format!("deployments.apps/{n}"),
    )
    .await;
    let metrics = format!("http://{listen}/metrics");
    let mon = monitoring(dir.path(), &listen);
    wait_until(
        Duration::from_secs(60),
        "Prometheus to scrape the recorder",
        || {
            let p = mon.prometheus.clone();
            async move {
                query(&p, "up{job=\"kubectl-diag\"}")
                    .first()
                    .is_some_and(|r| r["value"][1] == "1")
            }
        },
    )
    .await;

    // A rollout that never gets ready: KWOK reports ImagePullBackOff for these
    // Pods, and the deadline runs out after 5 s.
    let deployment = support::scenario("never-ready.yaml").remove(0);
    let mut deployment: Deployment = serde_json::from_value(deployment).unwrap();
    deployment.spec.progress_deadline_seconds = Some(5);
    let deployments = ns.api::<Deployment>();
    deployments
        .create(&PostParams::default(), &deployment)
        .await
        .unwrap();

    // The finding on /metrics, as `check` states it.
    let (appeared, summary) = wait_for(
        Duration::from_secs(90),
        "R001 of deployment web on /metrics",
        || {
            let metrics = metrics.clone();
            async move {
                let page = curl(&metrics);
                let found = samples(&page, "kubectl_diag_finding_summary")
                    .into_iter()
                    .find(|(l, _)| {
                        l.contains("code=\"R001\"")
                            && l.contains("kind=\"Deployment\"")
                            && l.contains("name=\"web\"")
                    })?;
                let summary = found
                    .0
                    .split("summary=\"")
                    .nth(1)?
                    .trim_end_matches("\"}")
                    .to_string();
                Some((Instant::now(), summary))
            }
        },
    )
    .await;
    assert!(summary.starts_with("0 of 2 ready"), "{summary}");

    // …reaches Alertmanager through the shipped rule, with its summary and the next command.
    let alert = wait_for(
        Duration::from_secs(60),
        "KubectlDiagRolloutStuck in Alertmanager",
        || {
            let am = mon.alertmanager.clone();
            let n = n.to_string();
            async move {
                let alerts = json(&format!("{am}/api/v2/alerts"))?;
                alerts
                    .as_array()?
                    .iter()
                    .find(|a| {
                        a["labels"]["alertname"] == "KubectlDiagRolloutStuck"
                            && a["labels"]["namespace"] == n.as_str()
                            && a["labels"]["name"] == "web"
                    })
                    .cloned()
            }
        },
    )
    .await;
    let took = appeared.elapsed();
    eprintln!(
        "R001 on /metrics to the alert in Alertmanager: {took:?} (for: {FOR}, scrape and evaluation every {SCRAPE:?})"
    );
    let annotations = &alert["annotations"];
    let said = annotations["summary"].as_str().unwrap();
    eprintln!("the alert's summary: {said}");
    // The summary as the recorder stated it when the rule was evaluated: the
    // rollout and its cause (its durations move on from one check to the next).
    assert!(
        said.starts_with("0 of 2 ready")
            && said.contains("ImagePullBackOff")
            && said.contains("web:broken"),
        "the alert lost the finding's summary: {said}"
    );
    assert!(
        !said.ends_with(": R001"),
        "the summary template fell back: {said}"
    );
    assert_eq!(
        annotations["next"],
        format!("kubectl diag timeline deployment/web -n {n}")
    );
    // None of its Pods is ready: R001 at error (docs/checks.md).
    assert_eq!(alert["labels"]["severity"], "error");
    assert_eq!(alert["labels"]["kind"], "Deployment");

    // No alert names an object the recorder was not asked about, nor a wrong one.
    let alerts = json(&format!("{}/api/v2/alerts", mon.alertmanager)).unwrap();
    for a in alerts.as_array().unwrap() {
        let l = &a["labels"];
        let ns_label = l["namespace"].as_str().unwrap_or("");
        assert!(
            ns_label.is_empty() || ns_label == n,
            "an alert from elsewhere: {a}"
        );
        if ns_label == n {
            assert!(
                l["alertname"] == "KubectlDiagRolloutStuck"
                    || l["alertname"] == "KubectlDiagContainerCannotStart",
                "an alert this rollout does not explain: {a}"
            );
        }
    }

    // The finding ends (nothing asked for): its series leaves /metrics and goes stale in Prometheus.
    deployments
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(serde_json::json!({"spec": {"replicas": 0}})),
        )
        .await
        .unwrap();
    wait_until(
        Duration::from_secs(60),
        "R001 of web to leave /metrics",
        || {
            let metrics = metrics.clone();
            async move {
                let page = curl(&metrics);
                !page.is_empty()
                    && page.contains("kubectl_diag_check_time_seconds")
                    && !samples(&page, "kubectl_diag_finding")
                        .iter()
                        .any(|(l, _)| l.contains("name=\"web\""))
            }
        },
    )
    .await;
    wait_until(
        Duration::from_secs(30),
        "the series to go stale in Prometheus",
        || {
            let p = mon.prometheus.clone();
            async move { query(&p, "kubectl_diag_finding{name=\"web\"}").is_empty() }
        },
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_event_storm_of_distinct_reasons_keeps_the_series_at_the_cap() {
    let ns = TestNamespace::new("kd45-storm").await;
    let n = ns.name.as_str();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("diag.db");
    let listen = support::free_local_addr();
    const CAP: usize = 40;
    const REASONS: usize = 400;
    const COUNT: i32 = 25;
    let _recorder = support::start_recorder(
        &db,
        n,
        &[
            "--listen",
            &listen,
            "--events-only",
            "--metrics-max-series",
            &CAP.to_string(),
        ],
        &format!("events/{n}"),
    )
    .await;
    let mon = monitoring(dir.path(), &listen);
    // 400 distinct reasons, each Event counted 25 times: 10,000 occurrences.
    let events = ns.api::<Event>();
    let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    for i in 0..REASONS {
        let e: Event = serde_json::from_value(serde_json::json!({
            "metadata": {"name": format!("storm-{i}")},
            "involvedObject": {"kind": "Pod", "name": format!("p{}", i % 5), "namespace": n, "apiVersion": "v1"},
            "reason": format!("Storm{i}"),
            "message": "a storm",
            "type": "Warning",
            "count": COUNT,
            "firstTimestamp": now,
            "lastTimestamp": now,
            "source": {"component": "storm-test"},
        }))
        .unwrap();
        events.create(&PostParams::default(), &e).await.unwrap();
    }
    let total = (REASONS as f64) * f64::from(COUNT);
    let metrics = format!("http://{listen}/metrics");
    let page = wait_for(
        Duration::from_secs(60),
        "every occurrence on /metrics",
        || {
            let metrics = metrics.clone();
            async move {
                let page = curl(&metrics);
                let sum: f64 = samples(&page, "kubectl_diag_events_total")
                    .iter()
                    .map(|s| s.1)
                    .sum();
                (sum == total).then_some(page)
            }
        },
    )
    .await;
    let series = samples(&page, "kubectl_diag_events_total");
    assert!(
        series.len() <= CAP,
        "{} series over the cap of {CAP}",
        series.len()
    );
    assert!(
        series.iter().any(|(l, _)| l.contains("reason=\"other\"")),
        "nothing folded: {series:?}"
    );
    let folded = samples(&page, "kubectl_diag_events_folded_label_sets");
    assert!(folded[0].1 >= (REASONS - CAP) as f64, "{folded:?}");
    // The same number `sql` gives.
    let out = support::run_ok(support::diag(&db).args([
        "sql",
        "-o",
        "json",
        "SELECT sum(n) AS n FROM occurrences",
    ]));
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(rows[0]["n"].as_f64(), Some(total), "{rows}");
    // And Prometheus stores no more series than the cap.
    wait_until(
        Duration::from_secs(30),
        "Prometheus to scrape the storm",
        || {
            let p = mon.prometheus.clone();
            async move {
                query(&p, "sum(kubectl_diag_events_total)")
                    .first()
                    .is_some_and(|r| {
                        r["value"][1].as_str().and_then(|v| v.parse::<f64>().ok()) == Some(total)
                    })
            }
        },
    )
    .await;
    let count = query(&mon.prometheus, "count(kubectl_diag_events_total)");
    let count: usize = count[0]["value"][1].as_str().unwrap().parse().unwrap();
    assert!(count <= CAP, "{count} series in Prometheus");
}
