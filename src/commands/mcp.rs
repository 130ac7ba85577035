//! `kubectl diag mcp`: the recording as read-only tools for AI assistants,
//! a Model Context Protocol server on stdio (issue 46), with the official
//! Rust SDK (`rmcp`).
//!
//! Each tool runs the same command line a person would, in this process
//! (`crate::run`, handed down as a [`Dispatch`], with the parsed arguments), and answers with the first
//! screen of its text and the JSON the CLI prints (`structuredContent`), so
//! the assistant reads exactly what `kubectl diag … -o json` says: the same
//! rules, the same redaction, the same labels ("Reconstructed from the live
//! cluster … no recording"). Where the data comes from is resolved once, when
//! the server starts: `--store`, else the recording (`--db`, `$KUBECTL_DIAG_DB`
//! or the default file, when it exists), else the live cluster.
//!
//! Limits an assistant cannot exceed: a time limit per call (`--timeout`),
//! two commands at once, at most [`MAX_TEXT_LINES`] lines and
//! [`MAX_TEXT_BYTES`] of text and [`MAX_JSON_BYTES`] of JSON per answer (each
//! cut says so), rows for `sql` and `export`. Nothing writes: the commands
//! offered only read, `sql` keeps its read-only guard, and the model's words
//! only ever reach a command as a flag's value (`--flag=value`) or after `--`.

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolResult, ContentBlock, Implementation, ListResourcesResult, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, Resource,
    ResourceContents, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{
    ErrorData as McpError, RoleServer, ServerHandler, ServiceExt, tool, tool_handler, tool_router,
};
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::Semaphore;

const CHECKS_URI: &str = "kubectl-diag://docs/checks.md";
const SCHEMA_URI: &str = "kubectl-diag://docs/schema.md";
const CHECKS_MD: &str = include_str!("../../docs/checks.md");
const SCHEMA_MD: &str = include_str!("../../docs/schema.md");

/// Lines of text an answer holds; the JSON has the rest (within its cap).
pub const MAX_TEXT_LINES: usize = 200;
/// Bytes of text an answer holds.
pub const MAX_TEXT_BYTES: usize = 64 * 1024;
/// Bytes of JSON an answer holds; past it the answer says so and how to narrow.
pub const MAX_JSON_BYTES: usize = 1024 * 1024;
/// Rows `sql` and `export` answer with by default, and at most.
const DEFAULT_ROWS: usize = 200;
const MAX_ROWS: usize = 5_000;
/// Commands run at once (each may read a large recording).
const SLOTS: usize = 2;

/// Where every tool reads, resolved once.
#[derive(Debug, Clone, Default)]
struct Sources {
    /// `--db=F`, or `--store=URL [--cluster=C]`; empty: the live cluster.
    source: Vec<String>,
    /// `--kubeconfig=…`, `--context=…`, for what reads the live cluster.
    kube: Vec<String>,
    /// The recording file, when there is one (`recordings()` reads it).
    recording: Option<PathBuf>,
    /// Said in the server's instructions and in `recordings()`.
    describe: String,
    /// Reads a ClickHouse store (`sql` then runs ClickHouse SQL there).
    store: bool,
}

/// What `mcp` was asked, its flags resolved once (`cli::resolve`).
#[derive(Debug, Clone, Default)]
pub struct McpOptions {
    /// `--kubeconfig`, `--context`: handed to every tool that reads the live cluster.
    pub kubeconfig: Option<PathBuf>,
    pub context: Option<String>,
    /// `--store`, as typed: handed to every tool.
    pub store: Option<String>,
    /// `--cluster`: handed to every tool.
    pub cluster: Option<String>,
    /// `--timeout`, in milliseconds.
    pub timeout: i64,
}

impl Sources {
    fn resolve(history: &super::source::Source, args: &McpOptions) -> Sources {
        let mut kube = Vec::new();
        if let Some(k) = &args.kubeconfig {
            kube.push(format!("--kubeconfig={}", k.display()));
        }
        if let Some(c) = &args.context {
            kube.push(format!("--context={c}"));
        }
        let cluster = args.cluster.as_ref().map(|c| format!("--cluster={c}"));
        if let Some(url) = &args.store {
            let mut source = vec![format!("--store={url}")];
            source.extend(cluster);
            return Sources {
                source,
                kube,
                recording: None,
                describe: format!("the ClickHouse store {}", crate::ship::url::redact(url)),
                store: true,
            };
        }
        let path = history.path().to_path_buf();
        // NB: `$KUBECTL_DIAG_DB` names a recording as `--db` does: a missing
        // file is an error the tools say, not a silent switch to live.
        if history.has_recording() {
            let mut source = vec![format!("--db={}", path.display())];
            source.extend(cluster);
            return Sources {
                source,
                kube,
                describe: format!("the recording {}", path.display()),
                recording: Some(path),
                store: false,
            };
        }
        Sources {
            source: Vec::new(),
            kube,
            recording: None,
            describe: "the live cluster (no recording: timelines are reconstructed from what the apiserver still holds, and say so)".into(),
            store: false,
        }
    }

    fn live(&self) -> bool {
        self.source.is_empty()
    }
}

/// One command's answer: its stdout, and whether a cap cut it.
struct Ran {
    text: String,
    cut: bool,
}

/// A `Write` that keeps at most `max_bytes` and `max_lines`, then refuses:
/// a command writing past it stops there (its error is the cut, not a
/// failure), so a huge answer never sits in memory.
struct Capped {
    buf: Vec<u8>,
    max_bytes: usize,
    max_lines: usize,
    lines: usize,
    cut: bool,
}

impl Capped {
    fn new(max_bytes: usize, max_lines: usize) -> Capped {
        Capped {
            buf: Vec::new(),
            max_bytes,
            max_lines,
            lines: 0,
            cut: false,
        }
    }
}

impl Write for Capped {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        if self.cut {
            return Err(std::io::Error::other("answer cut"));
        }
        let mut take = 0;
        for &b in data {
            if self.buf.len() + take >= self.max_bytes || self.lines >= self.max_lines {
                self.cut = true;
                break;
            }
            take += 1;
            if b == b'\n' {
                self.lines += 1;
            }
        }
        self.buf.extend_from_slice(&data[..take]);
        if self.cut {
            return Err(std::io::Error::other("answer cut"));
        }
        Ok(take)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Runs one command line in this process into a capped writer. `Err` is the
/// text the assistant gets: what failed and the fix, as `main` prints it.
fn run_cli(
    run: Dispatch,
    argv: Vec<String>,
    max_bytes: usize,
    max_lines: usize,
) -> Result<Ran, String> {
    let mut out = Capped::new(max_bytes, max_lines);
    let mut err = Vec::new();
    let result = run(argv, &mut out, &mut err)?;
    let stderr = String::from_utf8_lossy(&err).trim().to_string();
    let text = String::from_utf8_lossy(&out.buf).into_owned();
    match result {
        Ok(code) if code != crate::exit::ERROR => Ok(Ran { text, cut: out.cut }),
        _ if out.cut => Ok(Ran { text, cut: true }),
        Ok(_) => Err(format!("error (exit 2): {stderr}")),
        Err(e) => {
            let mut msg = format!("error: {e}");
            for cause in e.chain().skip(1) {
                msg.push_str(&format!("\n  caused by: {cause}"));
            }
            if !stderr.is_empty() {
                msg.push('\n');
                msg.push_str(&stderr);
            }
            Err(msg)
        }
    }
}

/// The text of an answer, with the cut said.
fn text_of(ran: &Ran) -> String {
    if ran.cut {
        format!(
            "{}\n… cut at {MAX_TEXT_LINES} lines or {} KiB; the JSON (structuredContent) holds more, or narrow the question",
            ran.text.trim_end(),
            MAX_TEXT_BYTES / 1024
        )
    } else {
        ran.text.clone()
    }
}

/// The JSON of an answer as an object (the protocol wants one), or what
/// to do when it was cut.
fn json_of(ran: &Ran, key: &str) -> Value {
    if ran.cut {
        return json!({
            "cut": true,
            "note": format!("the JSON is over {} MiB: narrow it (namespace, since, until)", MAX_JSON_BYTES / 1024 / 1024),
        });
    }
    match serde_json::from_str::<Value>(&ran.text) {
        Ok(v @ Value::Object(_)) => v,
        Ok(other) => json!({ key: other }),
        Err(e) => json!({"error": format!("the command printed no JSON: {e}")}),
    }
}

fn opt(flags: &mut Vec<String>, name: &str, value: &Option<String>) {
    if let Some(v) = value.as_deref().filter(|v| !v.is_empty()) {
        // NB: `--name=value`: a value that starts with `-` stays a value.
        flags.push(format!("{name}={v}"));
    }
}

fn answer(text: String, structured: Value) -> CallToolResult {
    let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
    result.structured_content = Some(structured);
    result
}

fn refuse(text: impl Into<String>) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(text.into())])
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct TimelineParams {
    /// The object, as kubectl names it: deploy/web, pod/web-7c9d-x2, node/n1, widgets.example.com/w
    pub object: String,
    /// Its namespace (default: the kubeconfig context's)
    pub namespace: Option<String>,
    /// From: a duration back from now (2h, 30m) or an RFC 3339 time
    pub since: Option<String>,
    /// Until: a duration back from now or an RFC 3339 time
    pub until: Option<String>,
    /// Which incarnation, when several objects had the name (the uids are listed in the answer)
    pub uid: Option<String>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct CheckParams {
    /// One namespace (default: all)
    pub namespace: Option<String>,
    /// A past moment of the recording: an RFC 3339 time or a duration back from now (2h)
    pub at: Option<String>,
    /// Only findings with these codes (C001, R001, S001, L001, …: the resource kubectl-diag://docs/checks.md explains each)
    pub codes: Option<Vec<String>>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct ChangesParams {
    /// One namespace (default: all)
    pub namespace: Option<String>,
    /// From: a duration back from now (default 1h) or an RFC 3339 time
    pub since: Option<String>,
    /// Until: a duration back from now or an RFC 3339 time
    pub until: Option<String>,
    /// Only these kinds (Deployment, ConfigMap, …)
    pub kinds: Option<Vec<String>>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct ExportParams {
    /// One namespace (default: all)
    pub namespace: Option<String>,
    /// Only occurrences at or after: a duration back from now (2h) or an RFC 3339 time
    pub since: Option<String>,
    /// At most this many occurrences (default 200, at most 5000)
    pub limit: Option<usize>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct SqlParams {
    /// One read-only SQLite statement over the recording; the tables are in kubectl-diag://docs/schema.md
    pub query: String,
    /// At most this many rows (default 200, at most 5000)
    pub limit: Option<usize>,
}

/// What runs one command line (`argv[0]` first): `crate::run_args`, handed
/// down by the dispatcher so that this command does not reach up to it.
/// `Err` is a command line that does not parse, with clap's words; `Ok` the
/// command's own outcome.
pub type Dispatch =
    fn(Vec<String>, &mut dyn Write, &mut dyn Write) -> Result<anyhow::Result<u8>, String>;

/// The server: where it reads, and its limits.
#[derive(Clone)]
pub struct DiagServer {
    run: Dispatch,
    sources: Arc<Sources>,
    slots: Arc<Semaphore>,
    limit: Duration,
    tool_router: ToolRouter<DiagServer>,
}

#[tool_router(router = tool_router)]
impl DiagServer {
    fn new(run: Dispatch, sources: Sources, limit: Duration) -> DiagServer {
        DiagServer {
            run,
            sources: Arc::new(sources),
            slots: Arc::new(Semaphore::new(SLOTS)),
            limit,
            tool_router: Self::tool_router(),
        }
    }

    /// One object's story along its owner chain and its relationships: Events (every occurrence), spec changes with their writers, rollouts, related ConfigMaps and Services, gaps, and what check says about it. Start here for "why did X break at T?".
    #[tool(annotations(read_only_hint = true))]
    async fn timeline(&self, Parameters(p): Parameters<TimelineParams>) -> CallToolResult {
        let mut flags = Vec::new();
        opt(&mut flags, "--namespace", &p.namespace);
        opt(&mut flags, "--since", &p.since);
        opt(&mut flags, "--until", &p.until);
        opt(&mut flags, "--uid", &p.uid);
        self.text_and_json("timeline", flags, vec![p.object], "timeline")
            .await
    }

    /// Diagnoses: why workloads are not ready, stuck finalizers, hot loops, generation lag, unschedulable Pods, containers that cannot start, Services selecting no Pod, budgets blocking drains, preemptions, missing references. From the recording at its latest moment (or `at`), else live.
    #[tool(annotations(read_only_hint = true))]
    async fn check(&self, Parameters(p): Parameters<CheckParams>) -> CallToolResult {
        let mut flags = Vec::new();
        opt(&mut flags, "--namespace", &p.namespace);
        opt(&mut flags, "--at", &p.at);
        if self.sources.live() {
            // NB: live, hot loops are sampled by watching; 30 s by default.
            flags.push("--sample=5s".into());
        }
        let mut checks = Vec::new();
        for code in p.codes.iter().flatten() {
            let Some(c) = crate::checks::Code::ALL
                .iter()
                .find(|c| c.as_str().eq_ignore_ascii_case(code))
            else {
                return refuse(format!(
                    "no finding code {code:?}; the codes are {} (kubectl-diag://docs/checks.md)",
                    crate::checks::Code::ALL.map(|c| c.as_str()).join(", ")
                ));
            };
            let name = c.check().name().to_string();
            if !checks.contains(&name) {
                checks.push(name);
            }
        }
        let mut result = self.text_and_json("check", flags, checks, "check").await;
        // Only the codes asked for, in the JSON; the text says so.
        // NB: an empty list asks for no filter, not for nothing.
        let codes = p.codes.filter(|c| !c.is_empty());
        if let (Some(codes), Some(Value::Object(doc))) =
            (&codes, result.structured_content.as_mut())
            && let Some(Value::Array(findings)) = doc.get_mut("findings")
        {
            findings.retain(|f| {
                codes.iter().any(|c| {
                    f["code"]
                        .as_str()
                        .is_some_and(|x| x.eq_ignore_ascii_case(c))
                })
            });
            result.content.push(ContentBlock::text(format!(
                "(the JSON holds only the findings coded {}; the table above is their checks' whole report)",
                codes.join(", ")
            )));
        }
        result
    }

    /// What changed in the cluster: spec diffs with their writers, objects created and deleted, types added and removed.
    #[tool(annotations(read_only_hint = true))]
    async fn changes(&self, Parameters(p): Parameters<ChangesParams>) -> CallToolResult {
        if self.sources.live() {
            return refuse(
                "changes reads a recording and there is none: start `kubectl diag record` (or give the server --db)",
            );
        }
        let mut flags = Vec::new();
        opt(&mut flags, "--namespace", &p.namespace);
        opt(&mut flags, "--since", &p.since);
        opt(&mut flags, "--until", &p.until);
        if let Some(kinds) = p.kinds.filter(|k| !k.is_empty()) {
            flags.push(format!("--kinds={}", kinds.join(",")));
        }
        self.text_and_json("changes", flags, Vec::new(), "changes")
            .await
    }

    /// Recorded Event occurrences as JSON objects (one per occurrence, oldest first), at most `limit`.
    #[tool(annotations(read_only_hint = true))]
    async fn export(&self, Parameters(p): Parameters<ExportParams>) -> CallToolResult {
        if self.sources.live() {
            return refuse(
                "export reads a recording and there is none: start `kubectl diag record` (or give the server --db)",
            );
        }
        let limit = p.limit.unwrap_or(DEFAULT_ROWS).clamp(1, MAX_ROWS);
        let mut argv = self.argv("export", Vec::new());
        if let Some(ns) = p.namespace.as_deref().filter(|n| !n.is_empty()) {
            argv.push(format!("--namespace={ns}"));
        } else {
            argv.push("--all-namespaces".into());
        }
        if let Some(s) = p.since.as_deref().filter(|s| !s.is_empty()) {
            argv.push(format!("--since={s}"));
        }
        let run = self.run;
        let ran = match self
            .blocking(move || run_cli(run, argv, MAX_JSON_BYTES, limit))
            .await
        {
            Ok(Ok(ran)) => ran,
            Ok(Err(e)) | Err(e) => return refuse(e),
        };
        let events: Vec<Value> = ran
            .text
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
        let n = events.len();
        let text = ran.text.lines().take(50).collect::<Vec<_>>().join("\n");
        let said = if ran.cut {
            format!(
                "{n} occurrences (cut at the limit of {limit} or {} MiB; ask with a later `since` for the rest)",
                MAX_JSON_BYTES / 1024 / 1024
            )
        } else {
            format!("{n} occurrences")
        };
        answer(
            format!("{said}; the first {}:\n{text}", n.min(50)),
            json!({"events": events, "cut": ran.cut}),
        )
    }

    /// Read-only SQL over the recording (SQLite; with a ClickHouse store, ClickHouse SQL there; tables in kubectl-diag://docs/schema.md). Writes are refused.
    #[tool(annotations(read_only_hint = true))]
    async fn sql(&self, Parameters(p): Parameters<SqlParams>) -> CallToolResult {
        if self.sources.live() {
            return refuse(
                "sql reads a recording and the server has none: start `kubectl diag record`, or give the server --db",
            );
        }
        let limit = p.limit.unwrap_or(DEFAULT_ROWS).clamp(1, MAX_ROWS);
        // NB: sql's own --timeout interrupts SQLite; the call's limit cannot stop a thread.
        // One run, as JSON Lines into a capped writer: the rows past `limit`
        // are never held (a table would keep them all to size its columns).
        let mut argv = self.argv(
            "sql",
            vec![
                format!("--timeout={}ms", self.limit.as_millis()),
                "--output=jsonl".into(),
            ],
        );
        argv.push("--".into());
        argv.push(p.query);
        let run = self.run;
        let ran = match self
            .blocking(move || run_cli(run, argv, MAX_JSON_BYTES, limit))
            .await
        {
            Ok(Ok(ran)) => ran,
            Ok(Err(e)) | Err(e) => return refuse(e),
        };
        let list: Vec<Value> = ran
            .text
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
        let shown: Vec<&str> = ran.text.lines().take(MAX_TEXT_LINES).collect();
        let cut = if ran.cut {
            format!(
                " (cut at the limit of {limit} rows or {} MiB: narrow the query)",
                MAX_JSON_BYTES / 1024 / 1024
            )
        } else {
            String::new()
        };
        answer(
            format!(
                "{} row(s){cut}, one JSON object a line:\n{}",
                list.len(),
                shown.join("\n")
            ),
            json!({"rows": list, "cut": ran.cut, "limit": limit}),
        )
    }

    /// What the server reads: the recording's clusters, what each covers (recorded and imported spans) and its gaps, or that it reads the live cluster.
    #[tool(annotations(read_only_hint = true))]
    async fn recordings(&self) -> CallToolResult {
        let sources = self.sources.clone();
        let Some(path) = sources.recording.clone() else {
            let more = if sources.store {
                "; its clusters: sql(\"SELECT cluster, label FROM clusters FINAL\")"
            } else {
                ""
            };
            return answer(
                format!("The server reads {}{more}.", sources.describe),
                json!({"source": sources.describe, "clusters": []}),
            );
        };
        match self.blocking(move || recordings(&path)).await {
            Ok(Ok((text, doc))) => answer(text, doc),
            Ok(Err(e)) | Err(e) => refuse(e),
        }
    }
}

impl DiagServer {
    /// `kubectl-diag SUB FLAGS… SOURCE… KUBE…`.
    fn argv(&self, sub: &str, flags: Vec<String>) -> Vec<String> {
        let mut argv = vec!["kubectl-diag".to_string(), sub.to_string()];
        argv.extend(flags);
        // NB: `sql --store` asks ClickHouse itself, across its clusters: no --cluster.
        argv.extend(
            self.sources
                .source
                .iter()
                .filter(|f| !(sub == "sql" && f.starts_with("--cluster=")))
                .cloned(),
        );
        if matches!(sub, "timeline" | "check") {
            argv.extend(self.sources.kube.iter().cloned());
        }
        argv
    }

    /// `SUB -o table` and `SUB -o json`: the text's first screen, the JSON whole.
    async fn text_and_json(
        &self,
        sub: &str,
        flags: Vec<String>,
        positional: Vec<String>,
        key: &'static str,
    ) -> CallToolResult {
        let with = |output: &str| {
            let mut argv = self.argv(sub, flags.clone());
            argv.push(format!("--output={output}"));
            argv.push("--".into());
            argv.extend(positional.iter().cloned());
            argv
        };
        let (table, json) = (with("table"), with("json"));
        let run = self.run;
        let ran = self
            .blocking(move || {
                Ok::<_, String>((
                    run_cli(run, table, MAX_TEXT_BYTES, MAX_TEXT_LINES)?,
                    run_cli(run, json, MAX_JSON_BYTES, usize::MAX)?,
                ))
            })
            .await;
        match ran {
            Ok(Ok((table, json))) => answer(text_of(&table), json_of(&json, key)),
            Ok(Err(e)) | Err(e) => refuse(e),
        }
    }

    /// Synchronous work (SQLite; commands that run their own runtime) off the
    /// async workers, one of [`SLOTS`], within the call's time limit.
    async fn blocking<T: Send + 'static>(
        &self,
        f: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, String> {
        // NB: waiting for a slot counts against the limit too: two calls
        // still running past theirs must not make every later call wait forever.
        let slots = self.slots.clone();
        let work = async move {
            let slot = slots.acquire_owned().await.map_err(|e| e.to_string())?;
            tokio::task::spawn_blocking(move || {
                let _slot = slot;
                f()
            })
            .await
            .map_err(|e| e.to_string())
        };
        match tokio::time::timeout(self.limit, work).await {
            Ok(Ok(v)) => Ok(v),
            // NB: a panic is the call's error; the server goes on.
            Ok(Err(e)) => Err(format!("error: the command failed unexpectedly: {e}")),
            Err(_) => Err(format!(
                "error: no answer within {}; narrow the question (namespace, since, until), or start the server with a longer --timeout",
                crate::units::human_duration(self.limit.as_millis() as i64)
            )),
        }
    }
}

/// `recordings()` of a recording file: text and JSON.
fn recordings(path: &std::path::Path) -> Result<(String, Value), String> {
    let rec = crate::store::Recording::open(path, crate::store::Mode::ReadOnly)
        .map_err(|e| format!("error: {e}"))?;
    let time = |ms: Option<i64>| ms.map(crate::units::rfc3339);
    let mut text = format!("Recording {}\n", path.display());
    let mut clusters = Vec::new();
    for (id, uid, label) in rec.clusters(None).map_err(|e| e.to_string())? {
        let latest = rec.latest_time(id).map_err(|e| e.to_string())?;
        let window = rec.cluster_window(id).map_err(|e| e.to_string())?;
        let gaps = rec.gaps(id, 0, i64::MAX).map_err(|e| e.to_string())?;
        text.push_str(&format!(
            "cluster {label} ({uid}): recorded {} to {} in {} session(s); imported {} to {}; latest moment {}; {} gap(s)\n",
            time(window.recorded_from).unwrap_or_else(|| "-".into()),
            time(window.recorded_until).unwrap_or_else(|| "-".into()),
            window.sessions,
            time(window.imported_from).unwrap_or_else(|| "-".into()),
            time(window.imported_until).unwrap_or_else(|| "-".into()),
            crate::units::rfc3339(latest),
            gaps.len()
        ));
        for g in gaps.iter().rev().take(10) {
            text.push_str(&format!(
                "  gap {} to {}: {}\n",
                crate::units::rfc3339(g.start.max(0)),
                crate::units::rfc3339(g.finish),
                g.reason
            ));
        }
        clusters.push(json!({
            "uid": uid,
            "label": label,
            "recorded_from": time(window.recorded_from),
            "recorded_until": time(window.recorded_until),
            "sessions": window.sessions,
            "imported_from": time(window.imported_from),
            "imported_until": time(window.imported_until),
            "latest": crate::units::rfc3339(latest),
            "gaps": gaps.iter().map(|g| json!({
                "start": crate::units::rfc3339(g.start.max(0)),
                "finish": crate::units::rfc3339(g.finish),
                "reason": g.reason.as_str(),
                "resources": g.resources,
            })).collect::<Vec<_>>(),
        }));
    }
    Ok((
        text,
        json!({"source": path.display().to_string(), "clusters": clusters}),
    ))
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for DiagServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .build(),
        )
        .with_server_info(Implementation::new(
            "kubectl-diag",
            env!("CARGO_PKG_VERSION"),
        ))
        .with_instructions(format!(
            "kubectl-diag keeps what Kubernetes forgets: every Event occurrence, every object's \
             meaningful changes with who wrote them, and the recorder's gaps. This server reads {} \
             and cannot write anything. Start with recordings() to see what is covered, then \
             check() for what is wrong and timeline() for one object's story. Finding codes: \
             {CHECKS_URI}; tables for sql(): {SCHEMA_URI}. Times are UTC.",
            self.sources.describe
        ))
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        Ok(ListResourcesResult::with_all_items(vec![
            Resource::new(CHECKS_URI, "checks.md")
                .with_title(
                    "kubectl-diag checks: what each finding code means, its causes and fixes",
                )
                .with_mime_type("text/markdown")
                .with_size(CHECKS_MD.len() as u64),
            Resource::new(SCHEMA_URI, "schema.md")
                .with_title("The recording's SQLite schema, for sql()")
                .with_mime_type("text/markdown")
                .with_size(SCHEMA_MD.len() as u64),
        ]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let text = match request.uri.as_str() {
            CHECKS_URI => CHECKS_MD,
            SCHEMA_URI => SCHEMA_MD,
            other => {
                return Err(McpError::resource_not_found(
                    format!("no resource {other}; there are {CHECKS_URI} and {SCHEMA_URI}"),
                    None,
                ));
            }
        };
        let contents =
            ResourceContents::text(text, request.uri.clone()).with_mime_type("text/markdown");
        Ok(ReadResourceResult::new(vec![contents]).into())
    }
}

/// `kubectl diag mcp`: serves on stdin and stdout until the client closes stdin.
pub fn run(
    history: &super::source::Source,
    args: &McpOptions,
    dispatch: Dispatch,
    err: &mut dyn Write,
) -> anyhow::Result<u8> {
    let sources = Sources::resolve(history, args);
    crate::k8s::connect::never_interactive();
    // NB: stderr is the client's log; stdout is the protocol's alone.
    let _ = writeln!(err, "kubectl-diag mcp: reading {}", sources.describe);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let server = DiagServer::new(
        dispatch,
        sources,
        Duration::from_millis(args.timeout.max(1) as u64),
    );
    let served = runtime.block_on(async {
        let running = server
            .serve(rmcp::transport::stdio())
            .await
            .map_err(|e| anyhow::anyhow!("mcp: the client's handshake failed: {e}"))?;
        running
            .waiting()
            .await
            .map_err(|e| anyhow::anyhow!("mcp: the session ended badly: {e}"))?;
        anyhow::Ok(())
    });
    // NB: a Runtime waits for its blocking tasks when dropped; one stuck on
    // a cluster that does not answer must not hold the exit, whatever ended it.
    runtime.shutdown_timeout(Duration::from_secs(2));
    served?;
    Ok(crate::exit::OK)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_capped_writer_keeps_what_fits_and_says_it_cut() {
        let mut w = Capped::new(10, 100);
        assert!(w.write_all(b"12345").is_ok());
        assert!(w.write_all(b"67890abc").is_err());
        assert_eq!(w.buf, b"1234567890");
        assert!(w.cut);
        let mut lines = Capped::new(1000, 2);
        assert!(lines.write_all(b"a\nb\nc\n").is_err());
        assert_eq!(lines.buf, b"a\nb\n");
    }

    #[test]
    fn a_value_that_looks_like_a_flag_stays_a_value() {
        let mut flags = Vec::new();
        opt(
            &mut flags,
            "--namespace",
            &Some("--store=clickhouse://x/y".into()),
        );
        assert_eq!(flags, ["--namespace=--store=clickhouse://x/y"]);
        // NB: that this parses as a namespace, not --store, is cli's test
        // `an_mcp_flag_whose_value_looks_like_a_flag_stays_a_value`.
    }
}
