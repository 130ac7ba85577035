//! The whole-cluster recorder against the real apiserver: custom resource
//! types created after it started are recorded within seconds and found by
//! `check --db`, a removed CRD is recorded as such, spec diffs name their
//! writers in `changes` and `timeline`, Secret and ConfigMap values never
//! reach the file, and types it may not list are warnings.

use crate::support;

use std::path::{Path, PathBuf};
use std::time::Duration;

use support::{Background, TestNamespace, cluster_script, diag, run_ok, wait_until};

fn kubectl(args: &[&str]) -> String {
    let mut all = vec!["kubectl"];
    all.extend_from_slice(args);
    String::from_utf8(cluster_script(&all).stdout).unwrap()
}

/// A CRD of `group` with a status subresource, which keeps any fields.
fn crd(group: &str, kind: &str, plural: &str) -> String {
    format!(
        r#"{{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
"metadata":{{"name":"{plural}.{group}"}},
"spec":{{"group":"{group}","scope":"Namespaced",
"names":{{"kind":"{kind}","plural":"{plural}","singular":"{}"}},
"versions":[{{"name":"v1","served":true,"storage":true,"subresources":{{"status":{{}}}},
"schema":{{"openAPIV3Schema":{{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}}}}]}}}}"#,
        kind.to_ascii_lowercase()
    )
}

/// `record --quiet ARGS…` (every type, the whole cluster) in the background,
/// once its first lists are committed.
async fn start(db: &Path, extra: &[&str]) -> Background {
    start_command(db, diag(db).args(["record", "--quiet"]).args(extra)).await
}

/// Spawns `record`, as `cmd` says, and waits for its first lists.
async fn start_command(db: &Path, cmd: &mut std::process::Command) -> Background {
    let child = Background::new(cmd.stdout(std::process::Stdio::null()).spawn().unwrap());
    let db = db.to_path_buf();
    wait_until(
        Duration::from_secs(60),
        "the recorder's first lists",
        || {
            let db = db.clone();
            async move { positions(&db, "nodes") > 0 }
        },
    )
    .await;
    child
}

fn positions(db: &Path, resource: &str) -> i64 {
    support::open_fresh(db)
        .and_then(|c| {
            c.query_row(
                "SELECT count(*) FROM watch_positions WHERE resource = ?1",
                [resource],
                |r| r.get::<_, i64>(0),
            )
        })
        .unwrap_or(0)
}

fn count(db: &Path, sql: &str) -> i64 {
    support::open_fresh(db)
        .and_then(|c| c.query_row(sql, [], |r| r.get::<_, i64>(0)))
        .unwrap_or(-1)
}

/// The first line of `text` that holds `needle`; panics showing `text` when none does.
fn line_of<'a>(text: &'a str, needle: &str) -> &'a str {
    text.lines()
        .find(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no line with {needle}:\n{text}"))
}

fn stdout(cmd: &mut std::process::Command) -> String {
    String::from_utf8(run_ok(cmd).stdout).unwrap()
}

/// `check`'s output: it exits 1 when it finds something, as here it must.
fn findings(cmd: &mut std::process::Command) -> String {
    let out = cmd.output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    text
}

/// Removes what a test left behind even when it fails half way: the
/// finalizer that would keep its namespace Terminating, and its CRDs.
struct CrdCleanup {
    group: String,
    namespace: String,
}

impl Drop for CrdCleanup {
    fn drop(&mut self) {
        let state = support::kubeconfig().parent().unwrap().to_path_buf();
        let k = |args: &[&str]| {
            let _ = std::process::Command::new(support::repo_root().join("scripts/cluster"))
                .arg("kubectl")
                .args(args)
                .env("DIAG_CLUSTER_DIR", &state)
                .output();
        };
        let databases = format!("databases.{}", self.group);
        k(&[
            "-n",
            &self.namespace,
            "patch",
            &databases,
            "orders",
            "--type=merge",
            "-p",
            r#"{"metadata":{"finalizers":null}}"#,
        ]);
        k(&[
            "delete",
            "crd",
            &databases,
            &format!("caches.{}", self.group),
            "--ignore-not-found",
            "--wait=false",
        ]);
    }
}

#[tokio::test]
async fn custom_resources_of_crds_created_later_are_found_by_name_and_a_removed_crd_is_recorded() {
    let id = support::uuid_suffix();
    // NB: the group's first label appears in no workload's name or namespace,
    // so no operator is guessed for it.
    let group = format!("q{id}.drill.test");
    let ns = TestNamespace::new("late").await;
    let doomed = TestNamespace::new("doomed").await;
    let _cleanup = CrdCleanup {
        group: group.clone(),
        namespace: doomed.name.clone(),
    };
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("diag.db");
    let recorder = start(&db, &[]).await;

    // Both CRDs exist only after the recorder started.
    support::kubectl_stdin(&["apply", "-f", "-"], &crd(&group, "Database", "databases"));
    support::kubectl_stdin(&["apply", "-f", "-"], &crd(&group, "Cache", "caches"));
    for plural in ["databases", "caches"] {
        kubectl(&[
            "wait",
            "--for=condition=Established",
            &format!("crd/{plural}.{group}"),
        ]);
    }
    let databases = format!("databases.{group}");
    wait_until(
        Duration::from_secs(30),
        "the recorder to list the new types",
        || {
            let (db, databases) = (db.clone(), databases.clone());
            async move {
                positions(&db, &databases) > 0
                    && positions(
                        &db,
                        &format!("caches.{}", databases.split_once('.').unwrap().1),
                    ) > 0
            }
        },
    )
    .await;
    support::kubectl_stdin(
        &["apply", "-f", "-"],
        &format!(
            r#"{{"apiVersion":"{group}/v1","kind":"Database","metadata":{{"name":"orders","namespace":"{}","finalizers":["{group}/backup"]}},"spec":{{"size":"10Gi"}}}}"#,
            doomed.name
        ),
    );
    support::kubectl_stdin(
        &["apply", "-f", "-"],
        &format!(
            r#"{{"apiVersion":"{group}/v1","kind":"Cache","metadata":{{"name":"sessions","namespace":"{}"}},"spec":{{"size":1}}}}"#,
            ns.name
        ),
    );
    let cache = format!("caches.{group}");
    kubectl(&[
        "-n",
        &ns.name,
        "patch",
        &cache,
        "sessions",
        "--subresource=status",
        "--type=merge",
        "-p",
        r#"{"status":{"observedGeneration":1}}"#,
    ]);
    for size in [2, 3] {
        kubectl(&[
            "-n",
            &ns.name,
            "patch",
            &cache,
            "sessions",
            "--type=merge",
            "-p",
            &format!(r#"{{"spec":{{"size":{size}}}}}"#),
        ]);
    }
    kubectl(&["delete", "namespace", &doomed.name, "--wait=false"]);
    wait_until(Duration::from_secs(60), "the Database's deletion to be recorded", || {
        let db = db.clone();
        async move {
            count(
                &db,
                "SELECT count(*) FROM versions v JOIN objects o ON o.id = v.object_id JOIN strings k ON k.id = o.kind \
                 WHERE k.s = 'Database' AND v.state LIKE '%' AND EXISTS (SELECT 1 FROM strings s WHERE s.id = v.state AND s.s LIKE '%\"del\"%')",
            ) > 0
        }
    })
    .await;
    // NB: `check --db` evaluates the recording's latest moment: past the
    // recorder's next heartbeat (5 s), the deletion is older than --stuck-after.
    tokio::time::sleep(Duration::from_secs(6)).await;

    let db_arg = db.to_str().unwrap();
    let finalizers =
        findings(diag(&db).args(["check", "finalizers", "--db", db_arg, "--stuck-after", "1s"]));
    let line = finalizers
        .lines()
        .find(|l| l.contains("F001") && l.contains("Database/orders"))
        .unwrap_or_else(|| panic!("no F001 for Database/orders:\n{finalizers}"));
    assert!(line.contains(&format!("{group}/backup")), "{line}");
    assert!(
        line.contains(&format!("no controller found for {group}")),
        "{line}"
    );
    let ns_line = finalizers
        .lines()
        .find(|l| l.contains("F002") && l.contains(&doomed.name))
        .unwrap_or_else(|| panic!("no F002 for {}:\n{finalizers}", doomed.name));
    assert!(
        ns_line.contains(&format!(
            "Database/orders ({group}/backup; expected remover: no controller found for {group})"
        )),
        "{ns_line}"
    );

    let generation = findings(diag(&db).args([
        "check",
        "generation",
        "--db",
        db_arg,
        "--lag-after",
        "1s",
        "-n",
        &ns.name,
    ]));
    let lag = generation
        .lines()
        .find(|l| l.contains("G001") && l.contains("Cache/sessions"))
        .unwrap_or_else(|| panic!("no G001 for Cache/sessions:\n{generation}"));
    assert!(lag.contains("generation 3"), "{lag}");
    assert!(lag.contains("observedGeneration 1"), "{lag}");

    let timeline =
        stdout(diag(&db).args(["timeline", "-n", &ns.name, &format!("{cache}/sessions")]));
    assert!(timeline.contains("spec.size 2 → 3"), "{timeline}");
    let timeline = stdout(diag(&db).args(["timeline", "-n", &doomed.name, "databases/orders"]));
    assert!(timeline.contains("Database/orders"), "{timeline}");

    // The finalizer released, the CRD removed: recorded as the type going.
    kubectl(&[
        "-n",
        &doomed.name,
        "patch",
        &databases,
        "orders",
        "--type=merge",
        "-p",
        r#"{"metadata":{"finalizers":null}}"#,
    ]);
    kubectl(&["delete", "crd", &databases, &cache]);
    wait_until(
        Duration::from_secs(30),
        "the removal of the types to be recorded",
        || {
            let db = db.clone();
            // NB: these two types: the recorder watches the whole cluster, and
            // two CRDs that other tests removed meanwhile once made this wait
            // end before the test's own were recorded.
            let removed = format!(
                "SELECT count(*) FROM type_changes WHERE change = 'removed' \
                 AND resource IN ('{databases}', '{cache}')"
            );
            async move { count(&db, &removed) >= 2 }
        },
    )
    .await;
    assert_eq!(
        count(
            &db,
            &format!(
                "SELECT count(*) FROM type_changes WHERE resource = '{databases}' AND change = 'appeared'"
            )
        ),
        1
    );
    // The Cache went with its type, at that moment, not inside a gap.
    assert_eq!(
        count(
            &db,
            "SELECT count(*) FROM objects o JOIN strings k ON k.id = o.kind \
             WHERE k.s = 'Cache' AND o.deleted IS NOT NULL AND o.deleted_after IS NULL"
        ),
        1
    );
    let changes = stdout(diag(&db).args(["changes", "--since", "10m", "-o", "wide"]));
    assert!(
        changes.contains(&format!("type {databases} appeared"))
            && changes.contains(&format!("type {databases} removed")),
        "{changes}"
    );
    // Its timeline says the Cache went with its type, not that someone deleted it.
    let timeline =
        stdout(diag(&db).args(["timeline", "-n", &ns.name, &format!("{cache}/sessions")]));
    assert!(
        timeline.contains("TypeRemoved")
            && timeline.contains(&format!(
                "type {cache} no longer served from here: its definition was removed"
            )),
        "{timeline}"
    );
    assert!(recorder.terminate().success());
}

#[tokio::test]
async fn spec_diffs_name_their_writers_and_secret_and_configmap_values_never_reach_the_file() {
    let ns = TestNamespace::new("diffs").await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("diag.db");
    let recorder = start(&db, &["--kinds", "deployments,configmaps,secrets,nodes"]).await;
    let n = ns.name.as_str();
    kubectl(&[
        "-n",
        n,
        "create",
        "deployment",
        "web",
        "--image=web:1",
        "--replicas=2",
    ]);
    kubectl(&[
        "-n",
        n,
        "patch",
        "deployment",
        "web",
        "--field-manager=alice",
        "--type=json",
        "-p",
        r#"[{"op":"add","path":"/spec/template/spec/containers/0/resources","value":{"limits":{"memory":"512Mi"}}}]"#,
    ]);
    kubectl(&[
        "-n",
        n,
        "patch",
        "deployment",
        "web",
        "--field-manager=alice",
        "--type=json",
        "-p",
        r#"[{"op":"replace","path":"/spec/template/spec/containers/0/resources/limits/memory","value":"256Mi"}]"#,
    ]);
    kubectl(&[
        "-n",
        n,
        "patch",
        "deployment",
        "web",
        "--field-manager=bob",
        "-p",
        r#"{"spec":{"replicas":0}}"#,
    ]);
    kubectl(&[
        "-n",
        n,
        "create",
        "secret",
        "generic",
        "creds",
        "--from-literal=password=s3cr3t-never-stored",
    ]);
    kubectl(&[
        "-n",
        n,
        "create",
        "configmap",
        "conf",
        "--from-literal=token=cm-value-never-stored",
    ]);
    kubectl(&[
        "-n",
        n,
        "patch",
        "configmap",
        "conf",
        "-p",
        r#"{"data":{"token":"cm-value-changed-never-stored","extra":"x"}}"#,
    ]);
    // A taint of its own on one Node, and a cordon; both undone at the end.
    let node = "kwok-medium";
    let taint = format!("diag-test-{}", support::uuid_suffix());
    kubectl(&[
        "taint",
        "node",
        node,
        &format!("{taint}=yes:PreferNoSchedule"),
    ]);
    kubectl(&["cordon", node]);
    kubectl(&["uncordon", node]);
    kubectl(&["taint", "node", node, &format!("{taint}-")]);
    wait_until(Duration::from_secs(30), "the ConfigMap's change to be recorded", || {
        let db = db.clone();
        async move {
            count(&db, "SELECT count(*) FROM versions v JOIN strings d ON d.id = v.diff WHERE d.s LIKE '%data.extra%'") > 0
                && count(&db, "SELECT count(*) FROM versions v JOIN strings d ON d.id = v.diff WHERE d.s LIKE '%diag-test-%' AND d.s NOT LIKE '%\"n\"%'") > 0
        }
    })
    .await;
    assert!(recorder.terminate().success());

    let changes = stdout(diag(&db).args(["changes", "--since", "10m", "-n", n]));
    let memory = line_of(&changes, "resources.limits.memory 512Mi → 256Mi");
    assert!(
        memory.contains("Deployment/web") && memory.split_whitespace().nth(3) == Some("alice"),
        "{memory}"
    );
    let scale = changes
        .lines()
        .find(|l| l.contains("Deployment/web") && l.contains("spec.replicas 2 → 0"))
        .unwrap_or_else(|| panic!("no scale diff:\n{changes}"));
    assert_eq!(scale.split_whitespace().nth(3), Some("bob"), "{scale}");
    assert!(
        changes.contains("data.token changed; data.extra added"),
        "{changes}"
    );
    let timeline = stdout(diag(&db).args(["timeline", "-n", n, "deploy/web"]));
    assert!(
        timeline.contains(
            "spec.template.spec.containers[web].resources.limits.memory 512Mi → 256Mi (by alice)"
        ),
        "{timeline}"
    );
    assert!(
        timeline.contains("spec.replicas 2 → 0 (by bob)"),
        "{timeline}"
    );
    let nodes = stdout(diag(&db).args(["changes", "--since", "10m", "--kinds", "nodes"]));
    assert!(
        nodes.contains(&format!("Node/{node}"))
            && nodes.contains(&format!("spec.taints[{taint}:PreferNoSchedule] added")),
        "{nodes}"
    );
    assert!(nodes.contains("spec.unschedulable added: true"), "{nodes}");
    assert!(nodes.contains("kubectl-taint"), "{nodes}");

    // No value of the Secret or the ConfigMap is anywhere in the file.
    let mut bytes = std::fs::read(&db).unwrap();
    if let Ok(wal) = std::fs::read(dir.path().join("diag.db-wal")) {
        bytes.extend(wal);
    }
    for value in [
        "s3cr3t-never-stored",
        "cm-value-never-stored",
        "cm-value-changed-never-stored",
    ] {
        assert!(
            !bytes.windows(value.len()).any(|w| w == value.as_bytes()),
            "{value} reached the recording"
        );
    }
    assert!(
        count(
            &db,
            "SELECT count(*) FROM objects o JOIN strings k ON k.id = o.kind WHERE k.s = 'Secret' AND o.first_seen IS NOT NULL"
        ) >= 1,
        "the Secret's life cycle is recorded (through its metadata)"
    );
}

#[tokio::test]
async fn with_configmap_values_a_configmap_diff_shows_old_and_new_and_a_secret_still_shows_nothing()
{
    let ns = TestNamespace::new("cmvalues").await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("diag.db");
    let recorder = start(
        &db,
        &["--kinds", "configmaps,secrets,nodes", "--configmap-values"],
    )
    .await;
    let n = ns.name.as_str();
    kubectl(&[
        "-n",
        n,
        "create",
        "configmap",
        "app",
        "--from-literal=log.level=info",
    ]);
    kubectl(&[
        "-n",
        n,
        "create",
        "secret",
        "generic",
        "creds",
        "--from-literal=password=s3cr3t-with-cm-values",
    ]);
    kubectl(&[
        "-n",
        n,
        "patch",
        "configmap",
        "app",
        "--field-manager=carol",
        "-p",
        r#"{"data":{"log.level":"debug"}}"#,
    ]);
    kubectl(&[
        "-n",
        n,
        "patch",
        "secret",
        "creds",
        "-p",
        r#"{"stringData":{"password":"s3cr3t-changed-with-cm-values"}}"#,
    ]);
    wait_until(Duration::from_secs(30), "the ConfigMap's change to be recorded", || {
        let db = db.clone();
        async move {
            count(&db, "SELECT count(*) FROM versions v JOIN strings d ON d.id = v.diff WHERE d.s LIKE '%debug%'") > 0
        }
    })
    .await;
    assert!(recorder.terminate().success());

    let changes = stdout(diag(&db).args(["changes", "--since", "10m", "-n", n]));
    let line = line_of(&changes, "data[log.level] info → debug");
    assert!(
        line.contains("ConfigMap/app") && line.split_whitespace().nth(3) == Some("carol"),
        "{line}"
    );
    let mut bytes = std::fs::read(&db).unwrap();
    if let Ok(wal) = std::fs::read(dir.path().join("diag.db-wal")) {
        bytes.extend(wal);
    }
    for value in ["s3cr3t-with-cm-values", "s3cr3t-changed-with-cm-values"] {
        assert!(
            !bytes.windows(value.len()).any(|w| w == value.as_bytes()),
            "{value} reached the recording"
        );
    }
}

/// A kubeconfig in `dir` for a ServiceAccount of `n` that may list and watch
/// Events, Pods and Nodes and get the kube-system namespace, nothing else;
/// and the name of its ClusterRoles and bindings (`ROLE`, `ROLE-ns`).
fn partial_kubeconfig(n: &str, dir: &Path) -> (PathBuf, String) {
    let role = format!("diag-partial-{n}");
    // Events, Pods, Nodes and the kube-system namespace: nothing else.
    kubectl(&["-n", n, "create", "serviceaccount", "partial"]);
    kubectl(&[
        "create",
        "clusterrole",
        &role,
        "--verb=list,watch",
        "--resource=events,pods,nodes",
    ]);
    kubectl(&[
        "create",
        "clusterrolebinding",
        &role,
        &format!("--clusterrole={role}"),
        &format!("--serviceaccount={n}:partial"),
    ]);
    kubectl(&[
        "create",
        "clusterrole",
        &format!("{role}-ns"),
        "--verb=get",
        "--resource=namespaces",
        "--resource-name=kube-system",
    ]);
    kubectl(&[
        "create",
        "clusterrolebinding",
        &format!("{role}-ns"),
        &format!("--clusterrole={role}-ns"),
        &format!("--serviceaccount={n}:partial"),
    ]);
    let token = kubectl(&["-n", n, "create", "token", "partial"])
        .trim()
        .to_string();
    let admin = std::fs::read_to_string(support::kubeconfig()).unwrap();
    let config = dir.join("partial.kubeconfig");
    let text: Vec<String> = admin
        .lines()
        .map(|l| {
            if l.trim_start().starts_with("token:") {
                format!("    token: {token}")
            } else {
                l.to_string()
            }
        })
        .collect();
    std::fs::write(&config, text.join("\n")).unwrap();

    (config, role)
}

#[tokio::test]
async fn a_forbidden_type_and_an_unavailable_aggregated_api_are_warnings_and_the_recorder_goes_on()
{
    let ns = TestNamespace::new("rbac").await;
    let n = ns.name.as_str();
    let dir = tempfile::tempdir().unwrap();
    let (config, role) = partial_kubeconfig(n, dir.path());

    // An aggregated API whose server does not exist.
    let group = format!("q{}.broken.test", support::uuid_suffix());
    support::kubectl_stdin(
        &["apply", "-f", "-"],
        &format!(
            r#"{{"apiVersion":"apiregistration.k8s.io/v1","kind":"APIService","metadata":{{"name":"v1.{group}"}},
"spec":{{"group":"{group}","version":"v1","groupPriorityMinimum":10,"versionPriority":10,"insecureSkipTLSVerify":true,
"service":{{"namespace":"{n}","name":"nothing-here","port":443}}}}}}"#
        ),
    );
    tokio::time::sleep(Duration::from_secs(2)).await;
    let db = dir.path().join("diag.db");
    let out = diag(&db)
        .env("KUBECONFIG", &config)
        .args(["record", "--once"])
        .output()
        .unwrap();
    let admin_out = diag(&db).args(["record", "--once"]).output().unwrap();
    kubectl(&["delete", "apiservice", &format!("v1.{group}")]);
    kubectl(&["delete", "clusterrolebinding", &role, &format!("{role}-ns")]);
    kubectl(&["delete", "clusterrole", &role, &format!("{role}-ns")]);

    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("warning: not keeping history of deployments.apps")
            && stderr.contains("list"),
        "{stderr}"
    );
    assert!(!stderr.contains("history of pods"), "{stderr}");
    let admin_err = String::from_utf8_lossy(&admin_out.stderr);
    assert!(admin_out.status.success(), "{admin_err}");
    assert!(
        admin_err.contains(&format!("warning: API {group}/v1 is unavailable")),
        "{admin_err}"
    );
    assert!(
        count(
            &db,
            "SELECT count(*) FROM objects o JOIN strings k ON k.id = o.kind WHERE k.s = 'Node' AND o.first_seen IS NOT NULL"
        ) >= 3
    );
}

#[tokio::test]
async fn a_type_rbac_allows_later_is_recorded_at_the_next_rediscovery() {
    let ns = TestNamespace::new("allowed").await;
    let n = ns.name.as_str();
    let dir = tempfile::tempdir().unwrap();
    let (config, role) = partial_kubeconfig(n, dir.path());
    let db = dir.path().join("diag.db");
    let log = dir.path().join("record.log");
    let recorder = start_command(
        &db,
        diag(&db)
            .env("KUBECONFIG", &config)
            .args([
                "record",
                "--quiet",
                "-v",
                "--kinds",
                "pods,nodes,configmaps",
            ])
            .args(["--rediscover-every", "2s"])
            .stderr(std::fs::File::create(&log).unwrap()),
    )
    .await;
    // Now allowed: the next rediscovery asks again and starts recording it.
    kubectl(&[
        "create",
        "clusterrole",
        &format!("{role}-cm"),
        "--verb=list,watch",
        "--resource=configmaps",
    ]);
    kubectl(&[
        "create",
        "clusterrolebinding",
        &format!("{role}-cm"),
        &format!("--clusterrole={role}-cm"),
        &format!("--serviceaccount={n}:partial"),
    ]);
    kubectl(&["-n", n, "create", "configmap", "late", "--from-literal=k=v"]);
    wait_until(
        Duration::from_secs(30),
        "the allowed type to be recorded",
        || {
            let db = db.clone();
            async move {
                count(
                    &db,
                    "SELECT count(*) FROM objects o JOIN strings k ON k.id = o.kind \
                 JOIN strings m ON m.id = o.name WHERE k.s = 'ConfigMap' AND m.s = 'late'",
                ) > 0
            }
        },
    )
    .await;
    let status = recorder.terminate();
    for name in [role.clone(), format!("{role}-ns"), format!("{role}-cm")] {
        kubectl(&["delete", "clusterrolebinding", &name]);
        kubectl(&["delete", "clusterrole", &name]);
    }
    let stderr = std::fs::read_to_string(&log).unwrap();
    assert!(status.success(), "{stderr}");
    assert_eq!(
        stderr
            .matches("warning: not keeping history of configmaps")
            .count(),
        1,
        "warned once, not at every rediscovery:\n{stderr}"
    );
    assert!(
        stderr.contains("type configmaps may be listed now: recording it from now"),
        "{stderr}"
    );
}
