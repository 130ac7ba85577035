//! How one object of a story is related to the one asked about: along its
//! owner chain, or along the edges other than ownership that causes travel
//! (a Pod's Node and claims, what it uses, what selects it).

use serde::Serialize;

/// How an object is related to the one asked about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Relation {
    /// The object asked about.
    Target,
    /// Above it in the owner chain.
    Owner,
    /// Below it in the owner chain.
    Owned,
    /// A Pod's Node.
    Node,
    /// A Pod's PersistentVolumeClaim.
    Claim,
    /// A ConfigMap, Secret or ServiceAccount that a Pod or a Pod template of
    /// the story names (`envFrom`, volumes, `imagePullSecrets`, …).
    Uses,
    /// A Service or a PodDisruptionBudget whose selector matched a Pod of the
    /// story at some time.
    Selects,
}
