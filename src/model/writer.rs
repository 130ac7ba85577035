//! Who wrote a version, as far as its source tells: a person (an audit log
//! names one, managedFields never do), who stood behind them, and the field
//! manager or the user agent. [`Writer::label`] is the one text form, the
//! one the recording stores (`versions.writers`, comma separated) and every
//! output prints, e.g. `kube-controller-manager`, `kubectl-client-side-apply/status`,
//! `alice@example.com (kubectl-edit)`,
//! `carol@example.com [impersonated by admin] (kubectl)`,
//! `kubernetes-admin [arn:aws:iam::111122223333:user/alice] (kubectl)`.

/// Who wrote a version.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Writer {
    /// The person or service account the request acted as (an audit log's;
    /// with the IAM identity behind a shared user name, EKS); empty when
    /// only a manager is known (managedFields).
    pub person: String,
    /// The authenticated user behind an impersonation; empty when none.
    pub impersonator: String,
    /// The field manager (`kubectl-edit`), with `/subresource` for a
    /// managedFields entry of one (`kube-controller-manager/status`).
    pub manager: String,
    /// The user agent's product (`kubectl`, `helm`): told when there is no
    /// field manager.
    pub user_agent: String,
    /// How sure an audit import is that this writer made the version.
    pub mark: Option<Mark>,
}

/// How an audit import came to name a writer it did not see write the version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    /// Its writes were kept as touches (no body logged); the next whole
    /// version shows what they set.
    Inferred,
    /// Its writes were touches before an `update` of the whole object: what
    /// they changed cannot be told from what the update did.
    NoBodyLogged,
}

impl Writer {
    /// A managedFields entry's writer: its manager, and `/subresource` when
    /// the entry is of one.
    pub fn of_manager(manager: &str, subresource: &str) -> Writer {
        Writer {
            manager: if subresource.is_empty() {
                manager.to_string()
            } else {
                format!("{manager}/{subresource}")
            },
            ..Writer::default()
        }
    }

    /// The text the recording stores and every output prints.
    pub fn label(&self) -> String {
        let tool = if self.manager.is_empty() {
            &self.user_agent
        } else {
            &self.manager
        };
        let mut text = if self.person.is_empty() {
            tool.clone()
        } else {
            let mut who = self.person.clone();
            if !self.impersonator.is_empty() {
                who = format!("{who} [impersonated by {}]", self.impersonator);
            }
            if tool.is_empty() || *tool == who {
                who
            } else {
                format!("{who} ({tool})")
            }
        };
        match self.mark {
            Some(Mark::Inferred) => text.push_str(" [inferred]"),
            Some(Mark::NoBodyLogged) => text.push_str(" [no body logged]"),
            None => {}
        }
        text
    }

    /// A stored label with `mark` added: a touch keeps its writer's label.
    pub fn mark_label(label: &str, mark: Mark) -> String {
        Writer {
            manager: label.to_string(),
            mark: Some(mark),
            ..Writer::default()
        }
        .label()
    }
}

impl std::fmt::Display for Writer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.label())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn person(person: &str, impersonator: &str, manager: &str, agent: &str) -> Writer {
        Writer {
            person: person.into(),
            impersonator: impersonator.into(),
            manager: manager.into(),
            user_agent: agent.into(),
            mark: None,
        }
    }

    #[test]
    fn every_source_of_a_writer_has_one_text() {
        assert_eq!(Writer::of_manager("kubelet", "").label(), "kubelet");
        assert_eq!(
            Writer::of_manager("kube-controller-manager", "status").label(),
            "kube-controller-manager/status"
        );
        assert_eq!(
            person("alice@example.com", "", "kubectl-edit", "kubectl").label(),
            "alice@example.com (kubectl-edit)"
        );
        // No field manager: the user agent's product tells the tool.
        assert_eq!(person("bob", "", "", "helm").label(), "bob (helm)");
        assert_eq!(
            person("carol@example.com", "admin", "", "kubectl").label(),
            "carol@example.com [impersonated by admin] (kubectl)"
        );
        // A controller's service account that is its own manager is named once.
        assert_eq!(person("kubelet", "", "kubelet", "").label(), "kubelet");
        assert_eq!(person("dave", "", "", "").label(), "dave");
    }

    #[test]
    fn a_mark_says_how_sure_the_import_is() {
        assert_eq!(
            Writer::mark_label("bob (kubectl)", Mark::Inferred),
            "bob (kubectl) [inferred]"
        );
        assert_eq!(
            Writer::mark_label("bob (kubectl)", Mark::NoBodyLogged),
            "bob (kubectl) [no body logged]"
        );
    }
}
