//! What deploy/ promises without a cluster: the image's build context leaves
//! out target/ (the test cluster's CA key and tokens live there) for podman and
//! docker alike, and the manifests point to documentation that exists.

use std::path::Path;

fn read(path: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(path))
        .unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn patterns(text: &str) -> Vec<&str> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect()
}

#[test]
fn the_image_build_context_never_carries_target_for_podman_or_docker() {
    let podman = read(".containerignore");
    let docker = read(".dockerignore");
    // podman reads .containerignore and ignores .dockerignore when both exist.
    assert_eq!(patterns(&podman), patterns(&docker));
    for p in ["/target", "*.db", "*.db-wal", "*.db-shm"] {
        assert!(patterns(&podman).contains(&p), "{p} is not ignored");
    }
    assert!(
        !patterns(&podman).iter().any(|p| p.starts_with('!')),
        "an exception could let target/ back in"
    );
    assert!(read("deploy/Containerfile").contains("COPY . ."));
}

#[test]
fn recorder_yaml_points_to_docs_that_exist_and_sets_seccomp() {
    let recorder = read("deploy/recorder.yaml");
    assert!(recorder.contains("docs/deploy.md"));
    let deploy = read("docs/deploy.md");
    for section in [
        "## Install",
        "## Upgrade",
        "## Reading the recording",
        "## Sizing",
    ] {
        assert!(deploy.contains(section), "docs/deploy.md lacks {section}");
    }
    assert!(recorder.contains("seccompProfile: {type: RuntimeDefault}"));
    assert!(recorder.contains("kind: NetworkPolicy"));
}

/// The shipping patch's command line is one kubectl-diag takes, and its
/// password comes from the Secret, never from the arguments.
#[test]
fn the_clickhouse_patch_is_a_command_line_the_recorder_takes() {
    let patch = read("deploy/ship-clickhouse.patch.yaml");
    let doc: serde_json::Value = serde_saphyr::from_str(&patch).unwrap();
    let container = &doc["spec"]["template"]["spec"]["containers"][0];
    let args: Vec<&str> = container["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    let cli = kubectl_diag::cli::Cli::try_parse_args_from(
        std::iter::once("kubectl-diag").chain(args.iter().copied()),
    )
    .unwrap_or_else(|e| panic!("{args:?}: {e}"));
    let kubectl_diag::cli::Command::Record(record) = &cli.command else {
        panic!("not record: {args:?}")
    };
    assert_eq!(record.ship.len(), 1);
    let url = kubectl_diag::ship::url::ClickHouseUrl::parse(&record.ship[0], None).unwrap();
    assert!(url.password.is_empty(), "no password in the arguments");
    assert_eq!(
        container["env"][0]["name"],
        kubectl_diag::ship::url::PASSWORD_ENV
    );
    let objects = read("deploy/ship-clickhouse.yaml");
    assert!(objects.contains("kind: Secret") && objects.contains("policyTypes: [\"Egress\"]"));
    assert!(read("docs/deploy.md").contains("## Shipping to ClickHouse"));
}

/// Issue 45: the PrometheusRule carries exactly the groups of the plain rules
/// file that `promtool check rules` checks (tests/it/prometheus_alerts.rs).
#[test]
fn the_prometheus_rule_and_the_plain_rules_file_hold_the_same_alerts() {
    let plain: serde_json::Value =
        serde_saphyr::from_str(&read("deploy/prometheus/rules.yaml")).unwrap();
    let rule: serde_json::Value =
        serde_saphyr::from_str(&read("deploy/prometheus/prometheusrule.yaml")).unwrap();
    assert_eq!(rule["kind"], "PrometheusRule");
    assert_eq!(rule["spec"], plain);
    let alerts: Vec<&str> = plain["groups"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|g| g["rules"].as_array().unwrap())
        .map(|r| r["alert"].as_str().unwrap())
        .collect();
    for wanted in [
        "KubectlDiagRolloutStuck",
        "KubectlDiagStuckFinalizer",
        "KubectlDiagHotLoop",
        "KubectlDiagSchedulingFailure",
        "KubectlDiagRefusedWrites",
        "KubectlDiagRecorderBlind",
        "KubectlDiagRecorderBehind",
    ] {
        assert!(alerts.contains(&wanted), "{wanted} is missing: {alerts:?}");
    }
    // Every finding alert names a code that exists and tells the command to run next.
    let codes = read("docs/checks.md");
    for rule in plain["groups"][0]["rules"].as_array().unwrap() {
        let expr = rule["expr"].as_str().unwrap();
        let inside = expr.split('"').nth(1).unwrap();
        for code in inside.split('|') {
            assert!(
                codes.contains(&format!("| {code} |")),
                "{code} of {expr} is not in docs/checks.md"
            );
        }
        assert!(
            rule["annotations"]["next"]
                .as_str()
                .unwrap()
                .starts_with("kubectl diag timeline ")
        );
    }
}
