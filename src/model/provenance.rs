//! Where a version of an object comes from: seen by the recorder, made from
//! an imported audit log, or reconstructed from the live cluster. A reader
//! states which, so that an imported or reconstructed fact is never told as
//! one the recorder saw.
//!
//! Stored in the two bits above `versions.seen`'s own two (migration 13):
//! so every sink (ClickHouse, OTLP, `export`) carries it with no column of
//! its own, and a recording pays no byte for it.

use serde::Serialize;

use super::certainty::Certainty;

/// How an object observation reached the recorder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Seen {
    /// Part of a list (initial, or a relist after a gap): not an update by itself.
    Listed,
    Added,
    Modified,
    Deleted,
}

impl Seen {
    /// Its code in the recording's `versions.seen` (migration 2).
    pub fn code(self) -> i64 {
        match self {
            Seen::Listed => 0,
            Seen::Added => 1,
            Seen::Modified => 2,
            Seen::Deleted => 3,
        }
    }
}

/// Where a version comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Provenance {
    /// Seen by the recorder's watch.
    #[default]
    Recorded,
    /// Seen by the recorder; an imported audit log named its writer (the
    /// person), which managedFields cannot.
    RecordedWriterFromAudit,
    /// Made from an imported audit log's entry: no watch saw it.
    AuditLog,
    /// Reconstructed from the live cluster, dated as sure as this says.
    Reconstructed(Certainty),
    /// Stored before kubectl-diag kept provenance (migration 13), in a
    /// cluster an audit log was imported into: recorded or imported, no one
    /// can tell now.
    Unknown,
}

impl Provenance {
    /// As the JSON output and the docs name it.
    pub fn as_str(self) -> &'static str {
        match self {
            Provenance::Recorded => "recorded",
            Provenance::RecordedWriterFromAudit => "recorded-writer-from-audit-log",
            Provenance::AuditLog => "audit-log",
            Provenance::Reconstructed(_) => "reconstructed",
            Provenance::Unknown => "unknown",
        }
    }

    /// Whether the output says nothing of it: a recording's own versions,
    /// and reconstructed ones (whose `certainty` says so already).
    pub fn goes_without_saying(&self) -> bool {
        matches!(self, Provenance::Recorded | Provenance::Reconstructed(_))
    }

    /// What the output says of it: nothing for what goes without saying.
    pub fn said(self) -> Option<&'static str> {
        (!self.goes_without_saying()).then(|| self.as_str())
    }

    /// Its bits in `versions.seen` (above the two of [`Seen::code`]).
    /// NB: a reconstruction is never stored; were it, it would read back as unknown.
    fn bits(self) -> i64 {
        match self {
            Provenance::Recorded => 0,
            Provenance::RecordedWriterFromAudit => 1,
            Provenance::AuditLog => 2,
            Provenance::Reconstructed(_) | Provenance::Unknown => 3,
        }
    }
}

impl Serialize for Provenance {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl std::fmt::Display for Provenance {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The stored `versions.seen`: how the version was seen and where it comes from.
pub fn stored_seen(seen: Seen, provenance: Provenance) -> i64 {
    seen.code() | (provenance.bits() << 2)
}

/// Reads a stored `versions.seen` back: whether the version was seen in a
/// list, whether as its object's creation, and its provenance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StoredSeen {
    pub code: i64,
    pub provenance: Provenance,
}

impl StoredSeen {
    pub fn read(stored: i64) -> StoredSeen {
        let provenance = match (stored >> 2) & 3 {
            0 => Provenance::Recorded,
            1 => Provenance::RecordedWriterFromAudit,
            2 => Provenance::AuditLog,
            _ => Provenance::Unknown,
        };
        StoredSeen {
            code: stored & 3,
            provenance,
        }
    }

    pub fn listed(self) -> bool {
        self.code == Seen::Listed.code()
    }

    pub fn added(self) -> bool {
        self.code == Seen::Added.code()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_stored_provenance_reads_back_beside_how_it_was_seen() {
        for seen in [Seen::Listed, Seen::Added, Seen::Modified, Seen::Deleted] {
            for p in [
                Provenance::Recorded,
                Provenance::RecordedWriterFromAudit,
                Provenance::AuditLog,
                Provenance::Unknown,
            ] {
                let back = StoredSeen::read(stored_seen(seen, p));
                assert_eq!((back.code, back.provenance), (seen.code(), p));
            }
        }
    }

    #[test]
    fn a_recording_made_before_provenance_reads_as_recorded() {
        // Codes 0-3 are what every recording before migration 13 holds.
        for code in 0..4 {
            assert_eq!(StoredSeen::read(code).provenance, Provenance::Recorded);
        }
        assert!(StoredSeen::read(0).listed());
        assert!(StoredSeen::read(1 | 8).added());
    }
}
