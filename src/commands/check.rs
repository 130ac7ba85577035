//! `kubectl diag check`: build one snapshot (live, or from the recording at
//! `--at`), run the chosen checks over it, render the findings, and exit 0,
//! 1 (findings at or above `--fail-on`) or 2 (error).

use std::collections::BTreeMap;
use std::io::Write;
use std::time::Duration;

use anyhow::Context;

use crate::checks::{self, Check, Code, Finding, Options, Report, Severity};
use crate::k8s::connect::Target;
use crate::render::{Paint, escape, plain_table};
use crate::store::{Mode, Recording};
use crate::units::{human_duration, rfc3339};

/// Where the snapshot came from, for the output.
pub struct Source {
    pub kind: &'static str,
    pub cluster: String,
    pub at: i64,
}

/// `check -o`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckOutput {
    Table,
    Wide,
    Json,
    /// The findings as OpenMetrics gauges, once (a textfile collector, a CronJob).
    Openmetrics,
}

/// What `check` was asked, its flags resolved once (`cli::resolve`).
#[derive(Debug, Clone)]
pub struct CheckOptions {
    /// The cluster read live.
    pub target: Target,
    /// `-n`: only findings in it (and about the Namespace); None for all.
    pub namespace: Option<String>,
    pub output: CheckOutput,
    /// The checks named (none: all of them).
    pub checks: Vec<Check>,
    /// `--at`: the moment to evaluate.
    pub at: Option<i64>,
    /// `--cluster ID`, the only recorded cluster, or `--all-clusters`.
    pub clusters: crate::model::Which,
    /// `--stuck-after`, `--lag-after`, `--rate`, `--include-noisy`.
    pub thresholds: Options,
    /// `--window`: the span of recorded update counters to rate.
    pub window_ms: i64,
    /// `--sample`: how long a live hotloop check watches.
    pub sample_ms: i64,
    pub fail_on: Severity,
}

pub fn run(
    history: &super::source::Source,
    args: &CheckOptions,
    out: &mut dyn Write,
    err: &mut dyn Write,
    paint: Paint,
) -> anyhow::Result<u8> {
    let options = &args.thresholds;
    let (window_ms, sample_ms) = (args.window_ms, args.sample_ms);
    let selected = &args.checks;
    let namespace = args.namespace.clone();
    if let Some(several) = namespace.as_deref().filter(|n| n.contains(',')) {
        anyhow::bail!("-n {several}: check takes one namespace (or -A for all)");
    }
    // NB: `--at` with no recording at all (none given, none at the default
    // path) is answered from the live cluster as far as its evidence reaches.
    let no_recording = !history.has_recording();
    let reconstructed_at = args.at.filter(|_| no_recording);
    let recorded = (history.on_command_line() || args.at.is_some()) && reconstructed_at.is_none();
    let crate::model::Which::One(wanted) = &args.clusters else {
        if !recorded {
            anyhow::bail!(
                "--all-clusters reads a recording or a store: pass --db PATH or --store clickhouse://…"
            );
        }
        return all_clusters(history, args, namespace.as_deref(), out, err, paint);
    };

    let (snap, source) = if recorded {
        let path = history.path().to_path_buf();
        let recording = Recording::open(&path, Mode::ReadOnly)?;
        let (cluster, uid, label) = recording.choose_cluster(wanted.as_deref())?;
        let latest = recording.latest_time(cluster)?;
        let at = args.at.unwrap_or(latest);
        if at > latest + 60_000 {
            writeln!(
                err,
                "warning: --at {} is after the last recorded moment ({}): the recording cannot say what happened since",
                rfc3339(at),
                rfc3339(latest)
            )?;
        }
        let snap = recording.snapshot(cluster, at, window_ms)?;
        (
            snap,
            Source {
                kind: "recording",
                cluster: format!("{label} ({uid})"),
                at,
            },
        )
    } else {
        let wants_hotloop = checks::chosen(selected).any(|c| c == Check::Hotloop);
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .context("starting the async runtime")?;
        runtime.block_on(async {
            let conn = crate::k8s::connect::connect(&args.target).await?;
            let live = crate::k8s::snapshot::LiveOptions {
                namespace: namespace.clone(),
                sample: wants_hotloop.then(|| Duration::from_millis(sample_ms.max(1000) as u64)),
                include_noisy: options.include_noisy,
                server: conn.server.clone(),
            };
            let snap = crate::k8s::snapshot::live(&conn.client, &live).await?;
            blind_is_an_error(&snap, selected, namespace.as_deref())?;
            let at = snap.at;
            anyhow::Ok((
                snap,
                Source {
                    kind: "live",
                    cluster: conn.context.clone(),
                    at,
                },
            ))
        })?
    };

    let mut report = checks::run(&snap, selected, options);
    if let Some(at) = reconstructed_at {
        at_from_live(&mut report, &snap, at);
    }
    if let Some(ns) = &namespace {
        report.findings.retain(|f| checks::concerns(f, ns));
        // NB: the summary covers what is reported: a recording holds every namespace.
        report.summary = checks::scheduling::summarize(&report.findings);
    }
    render(&report, &source, args.output, out, paint)?;
    let failing = report.findings.iter().any(|f| f.severity >= args.fail_on);
    Ok(if failing {
        crate::exit::FINDINGS
    } else {
        crate::exit::OK
    })
}

/// `check --all-clusters`: each cluster of the recording checked at its own
/// latest moment (or --at), the findings in one report with a CLUSTER column.
fn all_clusters(
    history: &super::source::Source,
    args: &CheckOptions,
    namespace: Option<&str>,
    out: &mut dyn Write,
    err: &mut dyn Write,
    paint: Paint,
) -> anyhow::Result<u8> {
    let options = &args.thresholds;
    let path = history.path().to_path_buf();
    let recording = Recording::open(&path, Mode::ReadOnly)?;
    let clusters = recording.choose_clusters(&args.clusters)?;
    let mut report = Report::default();
    let mut newest = 0;
    for (cluster, uid, label) in &clusters {
        let latest = recording.latest_time(*cluster)?;
        let at = args.at.unwrap_or(latest);
        if at > latest + 60_000 {
            writeln!(
                err,
                "warning: {label}: --at {} is after its last recorded moment ({})",
                rfc3339(at),
                rfc3339(latest)
            )?;
        }
        newest = newest.max(at);
        let snap = recording.snapshot(*cluster, at, args.window_ms)?;
        let mut one = checks::run(&snap, &args.checks, options);
        let name = if label.is_empty() { uid } else { label };
        for f in &mut one.findings {
            f.object.cluster = Some(name.clone());
        }
        report.findings.extend(one.findings);
        report
            .notes
            .extend(one.notes.into_iter().map(|n| format!("{name}: {n}")));
    }
    if let Some(ns) = namespace {
        report.findings.retain(|f| checks::concerns(f, ns));
    }
    report.summary = checks::scheduling::summarize(&report.findings);
    let source = Source {
        kind: "recording",
        cluster: format!("{} cluster(s)", clusters.len()),
        at: newest,
    };
    render(&report, &source, args.output, out, paint)?;
    let failing = report.findings.iter().any(|f| f.severity >= args.fail_on);
    Ok(if failing {
        crate::exit::FINDINGS
    } else {
        crate::exit::OK
    })
}

/// `check --at T` with no recording: the live findings whose evidence
/// reaches back to T (their `since` is at or before it) held at T as far as
/// the cluster tells; the rest began after T or cannot be dated. Said in a
/// note, never a silent "No findings".
fn at_from_live(report: &mut Report, snap: &checks::Snapshot, at: i64) {
    let before = report.findings.len();
    report
        .findings
        .retain(|f| f.since_ms.is_some_and(|since| since <= at));
    let dropped = before - report.findings.len();
    let oldest = snap.events.iter().map(|e| e.first).min();
    let mut note = format!(
        "no recording: --at {} is answered from the live cluster now; a finding counts when its evidence reaches back to then",
        rfc3339(at)
    );
    if dropped > 0 {
        note.push_str(&format!(
            " ({dropped} live finding(s) began later or cannot be dated, left out)"
        ));
    }
    match oldest {
        Some(t0) if at < t0 => note.push_str(&format!(
            "; unknown before {}: the oldest Event left; what began and ended before now is not known",
            rfc3339(t0)
        )),
        _ => note.push_str("; what began and ended before now is not known"),
    }
    note.push_str("; record from now on with `kubectl diag record`");
    report.notes.insert(0, note);
}

/// A live check that could examine none of the types it reads would print
/// "No findings." over nothing: that is an error (exit 2), naming what could
/// not be listed. Partial coverage stays a note.
fn blind_is_an_error(
    snap: &checks::Snapshot,
    selected: &[Check],
    namespace: Option<&str>,
) -> anyhow::Result<()> {
    let blind = checks::blind(snap, selected);
    if blind.is_empty() {
        return Ok(());
    }
    let scope = namespace.map_or_else(String::new, |ns| format!(" (-n {ns})"));
    let how = if snap.failing.is_empty() {
        "forbidden".to_string()
    } else {
        format!(
            "forbidden or failing (failing: {})",
            snap.failing.join(", ")
        )
    };
    let others: Vec<&str> = checks::chosen(selected)
        .filter(|c| !blind.contains(c))
        .map(Check::name)
        .collect();
    let fix = if others.is_empty() {
        "use a kubeconfig whose user may list and watch them (deploy/rbac.yaml has the ClusterRole)"
            .to_string()
    } else {
        format!(
            "use a kubeconfig whose user may list and watch them (deploy/rbac.yaml has the ClusterRole), or run only `kubectl diag check {}`",
            others.join(" ")
        )
    };
    let mut names = snap.not_examined.clone();
    names.sort();
    anyhow::bail!(
        "check {} examined nothing: all {} types it tried to list{scope} were {how}: {}; {fix}",
        blind
            .iter()
            .map(|c| c.name())
            .collect::<Vec<_>>()
            .join(", "),
        names.len(),
        names.join(", "),
    )
}

/// Findings that say the same of objects with the same controller, in one
/// group each, in the order their first member came: 300 unschedulable Pods of
/// two Deployments are two lines, each naming its cause.
fn fold<'a>(findings: &[&'a Finding]) -> Vec<Vec<&'a Finding>> {
    let mut groups: Vec<Vec<&Finding>> = Vec::new();
    for f in findings {
        let same = |g: &&mut Vec<&Finding>| {
            let first = g[0];
            f.owner.is_some()
                && first.owner == f.owner
                && first.code == f.code
                && first.severity == f.severity
                && first.object.namespace == f.object.namespace
                && first.object.cluster == f.object.cluster
                && first.object.kind == f.object.kind
                && first.summary == f.summary
        };
        match groups.iter_mut().find(same) {
            Some(g) => g.push(f),
            None => groups.push(vec![f]),
        }
    }
    groups
}

/// Finalizer findings in reading order: each stuck namespace's F002 (an
/// error) followed by what holds it (the F001 and F003 findings of objects
/// inside it) by name; then the rest as found. The blocker is the next question after "why
/// is this namespace stuck"; this puts it on the next line, not somewhere
/// among other namespaces' objects. Returns the stuck namespaces too.
fn under_namespaces<'a>(findings: &[&'a Finding]) -> (Vec<&'a Finding>, Vec<&'a str>) {
    let stuck: Vec<&str> = findings
        .iter()
        .filter(|f| f.code == Code::F002)
        .map(|f| f.object.name.as_str())
        .collect();
    let inside = |f: &Finding, ns: &str| {
        f.code != Code::F002 && !f.object.namespace.is_empty() && f.object.namespace == ns
    };
    let mut ordered = Vec::with_capacity(findings.len());
    for f in findings.iter().filter(|f| f.code == Code::F002) {
        ordered.push(*f);
        let mut held: Vec<&Finding> = findings
            .iter()
            .copied()
            .filter(|b| inside(b, &f.object.name))
            .collect();
        held.sort_by(|a, b| {
            (&a.object.name, &a.object.kind).cmp(&(&b.object.name, &b.object.kind))
        });
        ordered.extend(held);
    }
    ordered.extend(
        findings
            .iter()
            .filter(|f| f.code != Code::F002 && !stuck.iter().any(|ns| inside(f, ns))),
    );
    (ordered, stuck)
}

/// The causes of a progress finding after its headline, one row each under
/// it, marked `└`, with the object that states each.
fn cause_rows(f: &Finding, wide: bool) -> Vec<Vec<String>> {
    let causes = f.details["causes"]
        .as_array()
        .map_or(&[][..], Vec::as_slice);
    let shown = if wide {
        causes.len()
    } else {
        causes.len().min(checks::progress::MAX_CAUSES + 1)
    };
    causes
        .iter()
        .take(shown)
        .skip(1)
        .map(|c| {
            let text = |k: &str| c[k].as_str().unwrap_or_default().to_string();
            let count = c["count"].as_i64().unwrap_or(1);
            let times = if count > 1 {
                format!(" ×{count}")
            } else {
                String::new()
            };
            let mut row = vec![
                String::new(),
                String::new(),
                String::new(),
                format!("└ {}", escape(&text("object"))),
                String::new(),
                escape(&format!("{}{times}: {}", text("reason"), text("message"))).into_owned(),
            ];
            if wide {
                row.push(String::new());
            }
            row
        })
        .collect()
}

fn object_name(f: &Finding) -> String {
    escape(&format!("{}/{}", f.object.kind, f.object.name)).into_owned()
}

fn paint_severity(paint: Paint, s: Severity) -> String {
    match s {
        Severity::Error => paint.red(s.as_str()),
        Severity::Warning => paint.yellow(s.as_str()),
        Severity::Info => s.as_str().to_string(),
    }
}

/// Renders the report as a table per check (`-o table|wide`) or one JSON document.
pub fn render(
    report: &Report,
    source: &Source,
    format: CheckOutput,
    out: &mut dyn Write,
    paint: Paint,
) -> anyhow::Result<()> {
    match format {
        CheckOutput::Openmetrics => {
            // NB: the same gauges the recorder serves with --check-every; the
            // findings that `--all-clusters` labels carry a `cluster` label.
            let findings = crate::metrics::Findings::default();
            findings.publish(&report.findings, source.at, None);
            let text = crate::metrics::exposition(vec![Box::new(findings)])
                .map_err(|_| anyhow::anyhow!("writing the OpenMetrics exposition failed"))?;
            out.write_all(text.as_bytes())?;
        }
        CheckOutput::Json => {
            let doc = serde_json::json!({
                "source": source.kind,
                "cluster": source.cluster,
                "at": rfc3339(source.at),
                "findings": report.findings,
                "summary": report.summary,
                "notes": report.notes,
            });
            serde_json::to_writer_pretty(&mut *out, &doc)?;
            writeln!(out)?;
        }
        CheckOutput::Table | CheckOutput::Wide => {
            table(report, source, format == CheckOutput::Wide, out, paint)?;
        }
    }
    Ok(())
}

/// `-o table|wide`: the source, a table per check, why Pods cannot schedule, the notes.
fn table(
    report: &Report,
    source: &Source,
    wide: bool,
    out: &mut dyn Write,
    paint: Paint,
) -> anyhow::Result<()> {
    writeln!(
        out,
        "{}",
        paint.dim(&format!(
            "checked {} {} at {}",
            source.kind,
            escape(&source.cluster),
            rfc3339(source.at)
        ))
    )?;
    let mut folded = false;
    let mut by_check: BTreeMap<Check, Vec<&Finding>> = BTreeMap::new();
    for f in &report.findings {
        by_check.entry(f.check).or_default().push(f);
    }
    if report.findings.is_empty() {
        writeln!(out, "\nNo findings.")?;
    }
    for findings in by_check.values() {
        folded |= check_table(findings, source, wide, out, paint)?;
    }
    if !report.summary.reasons.is_empty() {
        writeln!(
            out,
            "\n{} ({} unschedulable Pod(s))",
            paint.bold("WHY PODS CANNOT SCHEDULE"),
            report.summary.unschedulable_pods
        )?;
        plain_table(
            out,
            ["REASON", "PODS", "NODES REJECTING"],
            report.summary.reasons.iter().map(|r| {
                vec![
                    escape(&r.reason).into_owned(),
                    r.pods.to_string(),
                    r.nodes.map_or_else(|| "-".into(), |n| n.to_string()),
                ]
            }),
        )?;
    }
    if folded {
        writeln!(
            out,
            "\n{}",
            paint.dim("Objects with the same controller and the same finding share a line; -o wide or -o json lists each.")
        )?;
    }
    for note in &report.notes {
        writeln!(out, "\n{} {}", paint.yellow("note:"), escape(note))?;
    }
    Ok(())
}

/// One check's table: a row per finding (or per group of alike findings
/// with one controller, unless `wide`), a progress finding's causes under
/// it. Returns whether any were folded.
fn check_table(
    findings: &[&Finding],
    source: &Source,
    wide: bool,
    out: &mut dyn Write,
    paint: Paint,
) -> anyhow::Result<bool> {
    writeln!(
        out,
        "\n{} ({})",
        paint.bold(&findings[0].check.name().to_uppercase()),
        findings.len()
    )?;
    // `--all-clusters`: which cluster, first.
    let fleet = findings.iter().any(|f| f.object.cluster.is_some());
    let mut header = if fleet { vec!["CLUSTER"] } else { Vec::new() };
    header.extend([
        "SEVERITY",
        "CODE",
        "NAMESPACE",
        "OBJECT",
        "SINCE",
        "SUMMARY",
    ]);
    if wide {
        header.push("UID");
    }
    let (findings, stuck) = if findings[0].check == Check::Finalizers {
        under_namespaces(findings)
    } else {
        (findings.to_vec(), Vec::new())
    };
    let groups = if wide {
        findings.iter().map(|f| vec![*f]).collect()
    } else {
        fold(&findings)
    };
    let folded = groups.len() < findings.len();
    let rows = groups.iter().map(|group| {
        let f = group[0];
        let object = match (group.len(), &f.owner) {
            (1, _) => object_name(f),
            (n, Some(owner)) => format!("{n} {}s of {owner}", f.object.kind),
            (n, None) => format!("{n} {}s", f.object.kind),
        };
        // What holds a stuck namespace hangs under its line.
        let held = f.code != Code::F002 && stuck.contains(&f.object.namespace.as_str());
        let object = if held {
            format!("└ {}", escape(&object))
        } else {
            escape(&object).into_owned()
        };
        let since = group.iter().filter_map(|f| f.since_ms).min();
        let mut row = if fleet {
            vec![escape(f.object.cluster.as_deref().unwrap_or("")).into_owned()]
        } else {
            Vec::new()
        };
        row.extend([
            paint_severity(paint, f.severity),
            f.code.to_string(),
            escape(&f.object.namespace).into_owned(),
            object,
            since
                .map(|s| human_duration(source.at - s))
                .unwrap_or_else(|| "-".into()),
            escape(&f.summary).into_owned(),
        ]);
        if wide {
            row.push(escape(&f.object.uid).into_owned());
        }
        let mut rows = vec![row];
        if f.check == Check::Progress {
            rows.extend(cause_rows(f, wide).into_iter().map(|mut r| {
                if fleet {
                    r.insert(0, String::new());
                }
                r
            }));
        }
        rows
    });
    plain_table(out, header, rows.flatten())?;
    Ok(folded)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ObjectRef;

    fn unschedulable(ns: &str, name: &str, owner: &str, cause: &str) -> Finding {
        let mut f = Finding::new(
            Code::S001,
            &ObjectRef {
                api_version: "v1".into(),
                kind: "Pod".into(),
                namespace: ns.into(),
                name: name.into(),
                ..ObjectRef::default()
            },
            format!("unschedulable on all 3 nodes: node(s) had untolerated taint(s) (3); {cause}"),
            Some(0),
            serde_json::json!({"reasons": [{"reason": "node(s) had untolerated taint(s)", "nodes": 3}]}),
        );
        f.owner = Some(owner.into());
        f
    }

    fn table(report: &Report, format: CheckOutput) -> String {
        let source = Source {
            kind: "live",
            cluster: "test".into(),
            at: 60_000,
        };
        let mut out = Vec::new();
        render(report, &source, format, &mut out, Paint::default()).unwrap();
        String::from_utf8(out).unwrap()
    }

    /// 300 unschedulable Pods of two Deployments once took 300 lines before any cause.
    #[test]
    fn three_hundred_pods_of_two_owners_are_two_lines_on_the_first_screen() {
        let mut report = Report::default();
        for i in 0..150 {
            report.findings.push(unschedulable(
                "shop",
                &format!("web-5c4f-{i}"),
                "ReplicaSet/web-5c4f",
                "taint drill/maintenance=true:NoSchedule on 3 nodes (a, b, c)",
            ));
            report.findings.push(unschedulable(
                "shop",
                &format!("api-77aa-{i}"),
                "ReplicaSet/api-77aa",
                "taint dedicated=batch:NoSchedule on 3 nodes (a, b, c)",
            ));
        }
        report.summary = checks::scheduling::summarize(&report.findings);
        let text = table(&report, CheckOutput::Table);
        let first_screen: Vec<&str> = text.lines().take(25).collect();
        let screen = first_screen.join("\n");
        assert!(screen.contains("SCHEDULING (300)"), "{text}");
        assert!(
            screen.contains("150 Pods of ReplicaSet/web-5c4f")
                && screen.contains("drill/maintenance=true:NoSchedule"),
            "{text}"
        );
        assert!(
            screen.contains("150 Pods of ReplicaSet/api-77aa")
                && screen.contains("dedicated=batch:NoSchedule"),
            "{text}"
        );
        assert!(screen.contains("(300 unschedulable Pod(s))"), "{text}");
        let wide = table(&report, CheckOutput::Wide);
        assert!(wide.contains("Pod/web-5c4f-149"), "wide lists each Pod");
        assert!(!wide.contains("150 Pods of"), "{wide}");
    }

    fn held(code: Code, kind: &str, ns: &str, name: &str) -> Finding {
        Finding::new(
            code,
            &ObjectRef {
                api_version: "v1".into(),
                kind: kind.into(),
                namespace: ns.into(),
                name: name.into(),
                ..ObjectRef::default()
            },
            format!("{kind}/{name} held"),
            Some(0),
            serde_json::json!({}),
        )
    }

    #[test]
    fn what_holds_a_stuck_namespace_follows_its_line_by_name() {
        let report = Report {
            findings: vec![
                held(Code::F001, "Widget", "apps", "a"),
                held(Code::F001, "Database", "drill", "users"),
                held(Code::F002, "Namespace", "", "drill"),
                held(Code::F001, "ConfigMap", "shop", "lock"),
                held(Code::F003, "Pod", "drill", "db-0"),
                held(Code::F001, "Database", "drill", "orders"),
            ],
            ..Report::default()
        };
        let json_before = serde_json::to_value(&report.findings).unwrap();
        for format in [CheckOutput::Table, CheckOutput::Wide] {
            let text = table(&report, format);
            let objects: Vec<&str> = text
                .lines()
                .filter_map(|l| l.split_whitespace().find(|w| w.contains('/')))
                .collect();
            assert_eq!(
                objects,
                [
                    "Namespace/drill",
                    "Pod/db-0",
                    "Database/orders",
                    "Database/users",
                    "Widget/a",
                    "ConfigMap/lock"
                ],
                "{text}"
            );
            assert!(text.contains("└ Database/orders"), "{text}");
            assert!(!text.contains("└ Widget/a"), "{text}");
        }
        // JSON keeps the check's order.
        let text = table(&report, CheckOutput::Json);
        let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(doc["findings"], json_before);
    }

    #[test]
    fn findings_without_a_known_controller_are_not_folded() {
        let mut report = Report::default();
        for i in 0..2 {
            let mut f = unschedulable("shop", &format!("bare-{i}"), "x", "cause");
            f.owner = None;
            report.findings.push(f);
        }
        let text = table(&report, CheckOutput::Table);
        assert!(
            text.contains("Pod/bare-0") && text.contains("Pod/bare-1"),
            "{text}"
        );
        assert!(!text.contains("share a line"), "{text}");
    }
}
