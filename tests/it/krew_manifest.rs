//! The krew manifest template, filled in as `scripts/package` fills it, without a
//! release build: a broken template fails `cargo test`, not only
//! `scripts/check-package` (which also checks the real archive and its sha256).

use serde_json::Value;

const TEMPLATE: &str = include_str!("../../deploy/krew/diag.yaml.in");

fn filled() -> Value {
    let version = concat!("v", env!("CARGO_PKG_VERSION"));
    for placeholder in ["@VERSION@", "@URI@", "@SHA256@"] {
        assert!(
            TEMPLATE.contains(placeholder),
            "template lacks {placeholder}"
        );
    }
    let text = TEMPLATE
        .replace("@VERSION@", version)
        .replace("@URI@", "https://example.invalid/kubectl-diag.tar.gz")
        .replace("@SHA256@", &"0".repeat(64));
    serde_saphyr::from_str(&text).unwrap()
}

#[test]
fn the_template_is_a_krew_plugin_named_diag_at_cargo_version() {
    let m = filled();
    assert_eq!(
        m["apiVersion"],
        "krew.googlecontainertools.github.com/v1alpha2"
    );
    assert_eq!(m["kind"], "Plugin");
    assert_eq!(m["metadata"]["name"], "diag");
    assert_eq!(
        m["spec"]["version"],
        concat!("v", env!("CARGO_PKG_VERSION"))
    );
    for field in ["homepage", "shortDescription", "description"] {
        assert!(
            m["spec"][field].as_str().is_some_and(|s| !s.is_empty()),
            "{field}"
        );
    }
}

#[test]
fn the_one_platform_installs_binary_license_and_readme() {
    let m = filled();
    let platforms = m["spec"]["platforms"].as_array().unwrap();
    assert_eq!(platforms.len(), 1);
    let p = &platforms[0];
    assert_eq!(
        p["selector"]["matchLabels"],
        serde_json::json!({"os": "linux", "arch": "amd64"})
    );
    assert_eq!(p["bin"], "kubectl-diag");
    assert_eq!(p["sha256"], "0".repeat(64));
    let files: Vec<(&str, &str)> = p["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["from"].as_str().unwrap(), f["to"].as_str().unwrap()))
        .collect();
    assert_eq!(
        files,
        [("kubectl-diag", "."), ("LICENSE", "."), ("README.md", ".")]
    );
    // What the manifest installs exists: the license Cargo.toml names, in full.
    let license = include_str!("../../LICENSE");
    assert!(license.contains("Apache License") && license.contains("Version 2.0, January 2004"));
    assert!(license.contains("END OF TERMS AND CONDITIONS"));
    assert!(include_str!("../../Cargo.toml").contains("license = \"Apache-2.0\""));
}
