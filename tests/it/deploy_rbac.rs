//! deploy/rbac.yaml grants exactly what the recorder needs: a token of its
//! ServiceAccount records; /healthz and /metrics answer on --listen.

use crate::support;

use std::time::Duration;

use support::{Background, cluster_script, diag, kubeconfig, run_ok, wait_for};

#[tokio::test]
async fn the_recorders_cluster_role_is_enough_and_metrics_answer() {
    let rbac = support::repo_root().join("deploy/rbac.yaml");
    cluster_script(&["kubectl", "apply", "-f", rbac.to_str().unwrap()]);
    // The aggregated role gets its rules from the clusterrole-aggregation controller.
    wait_for(
        Duration::from_secs(30),
        "the aggregated ClusterRole",
        || async {
            let rules = cluster_script(&[
                "kubectl",
                "get",
                "clusterrole",
                "kubectl-diag-recorder",
                "-o",
                "jsonpath={.rules}",
            ]);
            let text = String::from_utf8_lossy(&rules.stdout).to_string();
            text.contains("pods").then_some(())
        },
    )
    .await;
    let token = cluster_script(&[
        "kubectl",
        "create",
        "token",
        "kubectl-diag",
        "-n",
        "kubectl-diag",
    ]);
    let token = String::from_utf8(token.stdout).unwrap().trim().to_string();
    let admin = std::fs::read_to_string(kubeconfig()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let sa_config = dir.path().join("sa.kubeconfig");
    let config: String = admin
        .lines()
        .map(|l| {
            if l.trim_start().starts_with("token:") {
                format!("    token: {token}")
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    std::fs::write(&sa_config, config).unwrap();
    let db = dir.path().join("diag.db");
    let once = run_ok(
        diag(&db)
            .env("KUBECONFIG", &sa_config)
            .args(["record", "--once"]),
    );
    // The ClusterRole covers every built-in type: none is skipped for RBAC.
    // Custom resources need a role of their own (aggregated; docs/deploy.md):
    // the only warnings name them.
    let stderr = String::from_utf8_lossy(&once.stderr);
    // NB: a `*.k8s.io` group can be a custom one (the Gateway API's, which
    // other tests install as CRDs and leave): what a CRD serves is custom.
    let crds = support::cluster_script(&[
        "kubectl",
        "get",
        "crd",
        "-o",
        "jsonpath={.items[*].metadata.name}",
    ]);
    let crds = String::from_utf8_lossy(&crds.stdout).to_string();
    let custom: Vec<&str> = crds.split_whitespace().collect();
    for line in stderr.lines().filter(|l| l.contains("warning")) {
        let type_name = line
            .strip_prefix("warning: not keeping history of ")
            .and_then(|rest| rest.split(':').next())
            .unwrap_or_else(|| panic!("an unexpected warning: {line}"));
        // kubectl's full name: plural.group, or a bare plural in the core group.
        let group = type_name.split_once('.').map_or("", |(_, g)| g);
        let builtin = !custom.contains(&type_name)
            && (group.is_empty()
                || group.ends_with(".k8s.io")
                || ["apps", "batch", "autoscaling", "policy"].contains(&group));
        assert!(!builtin, "deploy/rbac.yaml forbids a built-in type: {line}");
    }
    let conn = support::open_fresh(&db).unwrap();
    let nodes: i64 = conn
        .query_row(
            "SELECT count(*) FROM objects o JOIN strings k ON k.id = o.kind WHERE k.s = 'Node' AND o.first_seen IS NOT NULL",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(nodes, 3, "the KWOK nodes' history is kept");

    let addr = support::free_local_addr();
    let child = Background::new(
        diag(&db)
            .env("KUBECONFIG", &sa_config)
            .args(["record", "--quiet", "--listen", &addr])
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap(),
    );
    let metrics = wait_for(Duration::from_secs(20), "/metrics", || {
        let addr = addr.clone();
        async move { http_get(&addr, "/metrics") }
    })
    .await;
    assert!(
        metrics.contains("kubectl_diag_occurrences_stored_total"),
        "{metrics}"
    );
    for name in [
        "kubectl_diag_db_bytes",
        "kubectl_diag_wal_bytes",
        "kubectl_diag_recording_occurrences",
        "kubectl_diag_commits_total",
        // Linux tells a process its own I/O in /proc/self/io.
        "kubectl_diag_bytes_written_total",
    ] {
        assert!(metrics.contains(name), "{name} missing from {metrics}");
    }
    // /healthz tells the writer's state: it committed (heartbeats included) within the last minute.
    let health = wait_for(Duration::from_secs(20), "/healthz ok", || {
        let addr = addr.clone();
        async move { http_get(&addr, "/healthz").filter(|b| b.starts_with("ok")) }
    })
    .await;
    assert!(health.starts_with("ok: last commit "), "{health}");
    assert!(child.terminate().success());
}

fn http_get(addr: &str, path: &str) -> Option<String> {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(addr).ok()?;
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut body = String::new();
    s.read_to_string(&mut body).ok()?;
    body.split_once("\r\n\r\n").map(|(_, b)| b.to_string())
}
