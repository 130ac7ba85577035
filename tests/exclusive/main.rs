//! The tests that stop, restart or taint what every other test uses: the
//! apiserver (with another flag, feature gate or audit policy), the
//! controller-manager, every Node. A test binary of their own: cargo runs test
//! binaries one after another, so none of `it`'s tests sees the outage; within
//! it, each test holds [`support::exclusive`], so they run one at a time.

#[path = "../it/support/mod.rs"]
mod support;

mod audit_policies_cluster;
mod check_taints;
mod check_volumes;
mod controller_down_cluster;
mod reconstruct_event_ttl;
mod record_apiserver_restart;
mod record_paged_list;
