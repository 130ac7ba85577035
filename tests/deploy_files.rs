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
