//! Which of the clusters a recording or a store holds a reader reads: one
//! rule for `--cluster` and `--all-clusters`, whatever holds them (the
//! recording's `clusters` table, a ClickHouse store, `query`'s scoped views).

/// Which clusters a command reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Which {
    /// `--cluster` (uid or label), or the only one there is.
    One(Option<String>),
    /// `--all-clusters`.
    All,
}

/// Why [`Which::choose`] chose nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NoChoice {
    /// No cluster is held at all.
    Empty,
    /// `--cluster NAME` is no held cluster's uid or label.
    NoSuch(String),
    /// `--cluster NAME` is the label of several.
    Ambiguous(String),
    /// No `--cluster`, and several are held.
    Several,
}

/// A held cluster, as the rule reads it.
pub trait Held {
    /// Its (uid, label).
    fn ids(&self) -> (&str, &str);
}

/// (uid, label), as a store lists them.
impl Held for (String, String) {
    fn ids(&self) -> (&str, &str) {
        (&self.0, &self.1)
    }
}

/// (row id, uid, label), as a recording lists them.
impl Held for (i64, String, String) {
    fn ids(&self) -> (&str, &str) {
        (&self.1, &self.2)
    }
}

impl Which {
    /// The clusters of `held` this picks, in `held`'s order.
    pub fn choose<'a, T: Held>(&self, held: &'a [T]) -> Result<Vec<&'a T>, NoChoice> {
        if held.is_empty() {
            return Err(NoChoice::Empty);
        }
        match self {
            Which::All => Ok(held.iter().collect()),
            Which::One(None) if held.len() == 1 => Ok(held.iter().collect()),
            Which::One(None) => Err(NoChoice::Several),
            Which::One(Some(name)) => {
                let found: Vec<&T> = held
                    .iter()
                    .filter(|c| {
                        let (uid, label) = c.ids();
                        uid == name || label == name
                    })
                    .collect();
                match found.len() {
                    0 => Err(NoChoice::NoSuch(name.clone())),
                    1 => Ok(found),
                    _ => Err(NoChoice::Ambiguous(name.clone())),
                }
            }
        }
    }
}

/// `label (uid), …`: the held clusters, as errors list them.
pub fn listed<T: Held>(held: &[T]) -> String {
    held.iter()
        .map(|c| {
            let (uid, label) = c.ids();
            format!("{label} ({uid})")
        })
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn held() -> Vec<(String, String)> {
        [("u1", "prod"), ("u2", "stage"), ("u3", "stage")]
            .iter()
            .map(|(u, l)| (u.to_string(), l.to_string()))
            .collect()
    }

    #[test]
    fn a_name_picks_by_uid_or_label_and_says_why_it_cannot() {
        let h = held();
        let one = |w: &str| Which::One(Some(w.into())).choose(&h);
        assert_eq!(one("prod").unwrap(), [&h[0]]);
        assert_eq!(one("u3").unwrap(), [&h[2]]);
        assert_eq!(one("stage"), Err(NoChoice::Ambiguous("stage".into())));
        assert_eq!(one("dev"), Err(NoChoice::NoSuch("dev".into())));
        assert_eq!(Which::One(None).choose(&h), Err(NoChoice::Several));
        assert_eq!(Which::One(None).choose(&h[..1]).unwrap(), [&h[0]]);
        assert_eq!(Which::All.choose(&h).unwrap().len(), 3);
        let none: [(String, String); 0] = [];
        for w in [
            Which::All,
            Which::One(None),
            Which::One(Some("prod".into())),
        ] {
            assert_eq!(w.choose(&none), Err(NoChoice::Empty));
        }
        assert_eq!(listed(&h[..2]), "prod (u1), stage (u2)");
    }
}
