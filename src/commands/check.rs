//! `kubectl diag check`: build one snapshot (live, or from the recording at
//! `--at`), run the chosen checks over it, render the findings, and exit 0,
//! 1 (findings at or above `--fail-on`) or 2 (error).

use std::collections::BTreeMap;
use std::io::Write;
use std::time::Duration;

use anyhow::Context;

use crate::checks::{self, Finding, Options, Report, Severity};
use crate::cli::{CheckArgs, GlobalArgs, OutputFormat};
use crate::render::{Paint, escape, plain_table};
use crate::store::{self, Mode, snapshot};
use crate::units::{human_duration, parse_duration_ms, parse_time_ms, rfc3339};

/// Where the snapshot came from, for the output.
pub struct Source {
    pub kind: &'static str,
    pub cluster: String,
    pub at: i64,
}

fn options(args: &CheckArgs) -> anyhow::Result<Options> {
    Ok(Options {
        stuck_after_ms: parse_duration_ms(&args.stuck_after).context("invalid --stuck-after")?,
        lag_after_ms: parse_duration_ms(&args.lag_after).context("invalid --lag-after")?,
        rate_per_minute: if args.rate.is_finite() && args.rate > 0.0 {
            args.rate
        } else {
            anyhow::bail!(
                "invalid --rate {}: give updates per minute, such as 10",
                args.rate
            )
        },
        include_noisy: args.include_noisy,
        storm_per_minute: args.rate,
    })
}

/// The recorded cluster to evaluate: `--cluster`, else the only one.
pub fn choose_cluster(
    conn: &rusqlite::Connection,
    path: &std::path::Path,
    wanted: Option<&str>,
) -> anyhow::Result<snapshot::ClusterRow> {
    let all = snapshot::clusters(conn, path, None)?;
    let matching = snapshot::clusters(conn, path, wanted)?;
    let list = || {
        all.iter()
            .map(|(_, uid, label)| format!("{label} ({uid})"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let found = matching.len();
    if let Ok([one]) = <[_; 1]>::try_from(matching) {
        return Ok(one);
    }
    match (found, wanted) {
        (0, None) => anyhow::bail!(
            "the recording {} holds no cluster yet: record one with `kubectl diag record`",
            path.display()
        ),
        (0, Some(w)) => anyhow::bail!("--cluster {w}: not in the recording; it holds: {}", list()),
        (_, _) => anyhow::bail!(
            "the recording holds several clusters; choose one with --cluster: {}",
            list()
        ),
    }
}

pub fn run(
    global: &GlobalArgs,
    args: &CheckArgs,
    out: &mut dyn Write,
    paint: Paint,
) -> anyhow::Result<u8> {
    let options = options(args)?;
    let window_ms = parse_duration_ms(&args.window).context("invalid --window")?;
    let sample_ms = parse_duration_ms(&args.sample).context("invalid --sample")?;
    let selected: Vec<String> = args.checks.iter().map(|c| c.as_str().to_string()).collect();
    let namespace = global.namespace.clone().filter(|_| !global.all_namespaces);
    if let Some(several) = namespace.as_deref().filter(|n| n.contains(',')) {
        anyhow::bail!("-n {several}: check takes one namespace (or -A for all)");
    }
    let recorded = global.db.is_some() || args.at.is_some();

    let (snap, source) = if recorded {
        let path = crate::paths::db_path(global.db.as_ref());
        let conn = store::open(&path, Mode::ReadOnly)?;
        let (cluster, uid, label) = choose_cluster(&conn, &path, args.cluster.as_deref())?;
        let latest = snapshot::latest_time(&conn, &path, cluster)?;
        let at = match &args.at {
            Some(t) => parse_time_ms(t, chrono::Utc::now()).context("invalid --at")?,
            None => latest,
        };
        if at > latest + 60_000 {
            eprintln!(
                "warning: --at {} is after the last recorded moment ({}): the recording cannot say what happened since",
                rfc3339(at),
                rfc3339(latest)
            );
        }
        let snap = snapshot::recorded(&conn, &path, cluster, at, window_ms)?;
        (
            snap,
            Source {
                kind: "recording",
                cluster: format!("{label} ({uid})"),
                at,
            },
        )
    } else {
        let wants_hotloop = selected.is_empty() || selected.iter().any(|s| s == "hotloop");
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .context("starting the async runtime")?;
        runtime.block_on(async {
            let conn = crate::k8s::connect::connect(global).await?;
            let live = crate::k8s::snapshot::LiveOptions {
                namespace: namespace.clone(),
                sample: wants_hotloop.then(|| Duration::from_millis(sample_ms.max(1000) as u64)),
                include_noisy: args.include_noisy,
                server: conn.server.clone(),
            };
            let snap = crate::k8s::snapshot::live(&conn.client, &live).await?;
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

    let mut report = checks::run(&snap, &selected, &options);
    if let Some(ns) = &namespace {
        report.findings.retain(|f| {
            f.object.namespace == *ns || (f.object.kind == "Namespace" && f.object.name == *ns)
        });
    }
    render(&report, &source, global.output, out, paint)?;
    let failing = report.findings.iter().any(|f| f.severity >= args.fail_on);
    Ok(if failing {
        crate::exit::FINDINGS
    } else {
        crate::exit::OK
    })
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
    format: Option<OutputFormat>,
    out: &mut dyn Write,
    paint: Paint,
) -> anyhow::Result<()> {
    match format.unwrap_or(OutputFormat::Table) {
        OutputFormat::Json => {
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
        OutputFormat::Table | OutputFormat::Wide => {
            let wide = format == Some(OutputFormat::Wide);
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
            let mut by_check: BTreeMap<usize, Vec<&Finding>> = BTreeMap::new();
            for f in &report.findings {
                let order = checks::ALL.iter().position(|c| *c == f.check).unwrap_or(99);
                by_check.entry(order).or_default().push(f);
            }
            if report.findings.is_empty() {
                writeln!(out, "\nNo findings.")?;
            }
            for findings in by_check.values() {
                writeln!(
                    out,
                    "\n{} ({})",
                    paint.bold(&findings[0].check.to_uppercase()),
                    findings.len()
                )?;
                let mut header = vec![
                    "SEVERITY",
                    "CODE",
                    "NAMESPACE",
                    "OBJECT",
                    "SINCE",
                    "SUMMARY",
                ];
                if wide {
                    header.push("UID");
                }
                let rows = findings.iter().map(|f| {
                    let mut row = vec![
                        paint_severity(paint, f.severity),
                        f.code.to_string(),
                        escape(&f.object.namespace).into_owned(),
                        object_name(f),
                        f.since_ms
                            .map(|s| human_duration(source.at - s))
                            .unwrap_or_else(|| "-".into()),
                        escape(&f.summary).into_owned(),
                    ];
                    if wide {
                        row.push(escape(&f.object.uid).into_owned());
                    }
                    row
                });
                plain_table(out, header, rows)?;
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
            for note in &report.notes {
                writeln!(out, "\n{} {}", paint.yellow("note:"), escape(note))?;
            }
        }
        other => anyhow::bail!(
            "-o {}: check prints table, wide or json",
            format!("{other:?}").to_lowercase()
        ),
    }
    Ok(())
}
