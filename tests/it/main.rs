//! The integration tests, one crate (one link) with a module per subject.
//!
//! The tests that need the local control plane (`support`, `scripts/cluster
//! up`) are behind the `cluster-tests` feature, the browser ones behind
//! `browser-tests`; `scripts/test` and CI enable both, so none is skipped
//! there. All of them share the cluster and run in parallel, each in a
//! namespace of its own; a test that disrupts what the others use (stops a
//! component, restarts the apiserver, taints every Node) belongs in
//! `tests/exclusive` instead.

mod support;

#[cfg(feature = "cluster-tests")]
mod audit_cluster;
mod changes_golden;
#[cfg(feature = "cluster-tests")]
mod check_cluster;
mod check_golden;
mod check_recorded;
mod cli;
#[cfg(feature = "cluster-tests")]
mod clickhouse_store;
#[cfg(feature = "cluster-tests")]
mod cluster_smoke;
#[cfg(feature = "cluster-tests")]
mod consistency_cluster;
mod decoders_prop;
mod deploy_files;
#[cfg(feature = "cluster-tests")]
mod deploy_rbac;
#[cfg(feature = "cluster-tests")]
mod deploy_restricted;
mod hardening;
mod hardening_round3;
mod hardening_round3_import;
mod hardening_round4_clients;
mod hardening_round4_retention;
mod hardening_round4_ship;
#[cfg(feature = "cluster-tests")]
mod history_cluster;
mod import_audit;
#[cfg(feature = "cluster-tests")]
mod import_cluster;
mod import_text;
mod krew_manifest;
#[cfg(feature = "cluster-tests")]
mod mcp_server;
#[cfg(feature = "cluster-tests")]
mod otlp_store;
#[cfg(feature = "cluster-tests")]
mod progress_cluster;
#[cfg(feature = "cluster-tests")]
mod prometheus_alerts;
mod query_golden;
#[cfg(feature = "cluster-tests")]
mod reconstruct_cluster;
#[cfg(feature = "cluster-tests")]
mod record_cluster;
#[cfg(feature = "cluster-tests")]
mod record_crd_versions;
#[cfg(feature = "cluster-tests")]
mod record_whole_cluster;
#[cfg(feature = "cluster-tests")]
mod relations_cluster;
mod terminal_escape;
#[cfg(feature = "cluster-tests")]
mod timeline_cluster;
mod timeline_golden;
#[cfg(feature = "browser-tests")]
mod timeline_screenshot;
#[cfg(feature = "cluster-tests")]
mod unlisted_cluster;
