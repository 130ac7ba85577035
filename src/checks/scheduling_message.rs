//! The scheduler's "0/N nodes are available: …" message, parsed across every
//! era of its wording (Kubernetes 1.9 through 1.37), for the `scheduling`
//! check and the `scheduling-failures` query.
//!
//! The shapes it handles:
//! - counted reasons, sorted as strings (not by count):
//!   `0/3 nodes are available: 1 Insufficient cpu, 2 node(s) had untolerated taint(s).`
//! - reasons with ", " inside braces: `1 node(s) had untolerated taint {a: b, c: d}`
//! - the old taint wording, whose ", that the pod didn't tolerate" follows the braces:
//!   `1 node(s) had taint {k: v}, that the pod didn't tolerate`
//! - uncounted PreFilter reasons: `0/3 nodes are available: persistentvolumeclaim "data" not found.`
//! - the preemption tail: `. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.`
//!   and the `..` ending of 1.25–1.27
//! - other PostFilter text before it, such as `no new claims to deallocate, preemption: …`
//! - a preemption part that is not an availability clause: what the default
//!   preemption (`DefaultPreemption.PostFilter`, which prefixes "preemption: "
//!   to its status) writes when it does not dry-run every node —
//!   `not eligible due to preemptionPolicy=Never.`, `not eligible due to a
//!   terminating pod on the nominated node.`, `no candidate node for
//!   preemption`, `no nodes available`, or an error's own text. The main
//!   reasons are kept and the text goes to `preemption_message`.
//!
//! A message outside this grammar (another scheduler's) is kept raw and never mis-parsed.

use serde::Serialize;

/// One reason and how many nodes gave it (None when the message gives no count).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Reason {
    pub reason: String,
    pub nodes: Option<u32>,
}

/// One "0/N nodes are available: …" clause.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Availability {
    pub total_nodes: u32,
    pub reasons: Vec<Reason>,
}

/// A parsed FailedScheduling message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SchedulingMessage {
    pub total_nodes: u32,
    pub reasons: Vec<Reason>,
    /// The preemption attempt's own clause, when the message has one.
    pub preemption: Option<Availability>,
    /// What preemption said when it is not an availability clause
    /// (`not eligible due to preemptionPolicy=Never`), trailing dots removed.
    pub preemption_message: Option<String>,
    /// PostFilter text that is neither (e.g. "no new claims to deallocate").
    pub post_filter: Vec<String>,
    pub message: String,
}

/// Parsed, or kept raw because it is not the default scheduler's grammar.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Parsed {
    Scheduler(SchedulingMessage),
    Raw(String),
}

const PREFIX_START: &str = "0/";
const PREFIX_MIDDLE: &str = " nodes are available: ";
// NB: without its trailing space: a message cut after "preemption:" is trimmed
// to end there, and must still be seen as a preemption clause (here, a broken one).
const PREEMPTION: &str = "preemption:";

/// Splits `0/N nodes are available: REST` into (N, REST).
fn availability_prefix(text: &str) -> Option<(u32, &str)> {
    let rest = text.strip_prefix(PREFIX_START)?;
    let (total, rest) = rest.split_once(PREFIX_MIDDLE)?;
    // NB: u32's parser takes a leading '+', which the scheduler never writes.
    if !total.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let total = total.parse().ok()?;
    Some((total, rest))
}

/// Splits at ", " outside braces, brackets and parentheses.
fn split_top_level(text: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0i32, 0usize);
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'{' | b'[' | b'(' => depth += 1,
            b'}' | b']' | b')' => depth -= 1,
            b',' if depth == 0 && bytes.get(i + 1) == Some(&b' ') => {
                parts.push(&text[start..i]);
                start = i + 2;
                i += 1;
            }
            _ => {}
        }
        i += 1;
    }
    parts.push(&text[start..]);
    parts
}

/// Parses the reasons of one clause (after the prefix, trailing dots removed).
fn reasons(text: &str) -> Option<Vec<Reason>> {
    let text = text.trim().trim_end_matches('.').trim_end();
    if text.is_empty() {
        return Some(Vec::new());
    }
    let mut out: Vec<Reason> = Vec::new();
    for item in split_top_level(text) {
        let item = item.trim();
        let counted = item
            .split_once(' ')
            .and_then(|(n, rest)| n.parse::<u32>().ok().map(|n| (n, rest)));
        match counted {
            Some((n, rest)) => out.push(Reason {
                reason: rest.to_string(),
                nodes: Some(n),
            }),
            // NB: the pre-1.24 taint wording puts ", that the pod didn't tolerate"
            // after the braces: a continuation of the counted reason before it.
            None if item.starts_with("that ") && out.last().is_some_and(|r| r.nodes.is_some()) => {
                let last = out.last_mut()?;
                last.reason.push_str(", ");
                last.reason.push_str(item);
            }
            None => out.push(Reason {
                reason: item.to_string(),
                nodes: None,
            }),
        }
    }
    Some(out)
}

/// Parses a FailedScheduling message (or a PodScheduled=False condition message).
pub fn parse(message: &str) -> Parsed {
    let raw = || Parsed::Raw(message.to_string());
    let text = message.trim();
    let Some((total, rest)) = availability_prefix(text) else {
        return raw();
    };
    // The preemption clause starts at "preemption: 0/N nodes are available:",
    // after ". " (1.24+) or after other PostFilter text and ", ".
    let (main, post_filter, preemption, preemption_message) = match rest.find(PREEMPTION) {
        Some(at) => {
            let before = &rest[..at];
            let clause = rest[at + PREEMPTION.len()..].trim_start();
            // NB: preemption that never dry-ran the nodes writes a sentence, not
            // "0/N nodes are available: …"; the main reasons still hold.
            let (preemption, preemption_message) = match availability_prefix(clause) {
                Some((p_total, p_rest)) => {
                    let Some(p_reasons) = reasons(p_rest) else {
                        return raw();
                    };
                    (
                        Some(Availability {
                            total_nodes: p_total,
                            reasons: p_reasons,
                        }),
                        None,
                    )
                }
                None => {
                    let text = clause.trim_end().trim_end_matches('.').trim_end();
                    (None, (!text.is_empty()).then(|| text.to_string()))
                }
            };
            // `before` is "MAIN. " or "MAIN. OTHER, " (other PostFilter text).
            let before = before.trim_end().trim_end_matches(',').trim_end();
            let (main, other) = match before.rfind(". ") {
                Some(dot) => (&before[..dot], before[dot + 2..].trim()),
                None => (before, ""),
            };
            let post: Vec<String> = if other.is_empty() {
                Vec::new()
            } else {
                vec![other.trim_end_matches('.').to_string()]
            };
            (main, post, preemption, preemption_message)
        }
        None => (rest, Vec::new(), None, None),
    };
    let Some(main_reasons) = reasons(main) else {
        return raw();
    };
    Parsed::Scheduler(SchedulingMessage {
        total_nodes: total,
        reasons: main_reasons,
        preemption,
        preemption_message,
        post_filter,
        message: message.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(nodes: Option<u32>, reason: &str) -> Reason {
        Reason {
            reason: reason.into(),
            nodes,
        }
    }

    fn parsed(message: &str) -> SchedulingMessage {
        match parse(message) {
            Parsed::Scheduler(m) => m,
            Parsed::Raw(_) => panic!("not parsed: {message}"),
        }
    }

    #[test]
    fn v1_9_taints_that_the_pod_didnt_tolerate() {
        let m = parsed(
            "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) had taints that the pod didn't tolerate.",
        );
        assert_eq!(m.total_nodes, 3);
        assert_eq!(
            m.reasons,
            vec![
                r(Some(1), "Insufficient cpu"),
                r(Some(2), "node(s) had taints that the pod didn't tolerate")
            ]
        );
        assert_eq!(m.preemption, None);
    }

    #[test]
    fn v1_16_taint_with_braces_then_a_comma() {
        let m = parsed(
            "0/5 nodes are available: 1 node(s) had taint {node-role.kubernetes.io/master: }, that the pod didn't tolerate, 4 Insufficient memory.",
        );
        assert_eq!(
            m.reasons,
            vec![
                r(
                    Some(1),
                    "node(s) had taint {node-role.kubernetes.io/master: }, that the pod didn't tolerate"
                ),
                r(Some(4), "Insufficient memory"),
            ]
        );
    }

    #[test]
    fn v1_25_double_dot_ending_and_commas_inside_braces() {
        let m = parsed(
            "0/4 nodes are available: 1 node(s) had untolerated taint {dedicated: batch, tier: gpu}, 3 Insufficient cpu. preemption: 0/4 nodes are available: 1 Preemption is not helpful for scheduling, 3 No preemption victims found for incoming pod..",
        );
        assert_eq!(
            m.reasons,
            vec![
                r(
                    Some(1),
                    "node(s) had untolerated taint {dedicated: batch, tier: gpu}"
                ),
                r(Some(3), "Insufficient cpu")
            ]
        );
        let p = m.preemption.unwrap();
        assert_eq!(p.total_nodes, 4);
        assert_eq!(
            p.reasons,
            vec![
                r(Some(1), "Preemption is not helpful for scheduling"),
                r(Some(3), "No preemption victims found for incoming pod")
            ]
        );
    }

    #[test]
    fn v1_37_as_the_local_scheduler_writes_it() {
        // Captured from the test cluster (tests/it/cluster_smoke.rs).
        let m = parsed(
            "0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 Insufficient cpu. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.",
        );
        assert_eq!(
            m.reasons,
            vec![
                r(Some(1), "node(s) had untolerated taint(s)"),
                r(Some(2), "Insufficient cpu")
            ]
        );
        assert_eq!(
            m.preemption.unwrap().reasons,
            vec![r(Some(3), "Preemption is not helpful for scheduling")]
        );
        assert!(m.post_filter.is_empty());
    }

    #[test]
    fn prefilter_reason_without_a_count() {
        let m = parsed(
            "0/3 nodes are available: persistentvolumeclaim \"data\" not found. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.",
        );
        assert_eq!(
            m.reasons,
            vec![r(None, "persistentvolumeclaim \"data\" not found")]
        );
    }

    #[test]
    fn other_post_filter_text_before_preemption() {
        let m = parsed(
            "0/2 nodes are available: 2 cannot allocate all claims. still not schedulable, no new claims to deallocate, preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.",
        );
        assert_eq!(m.reasons, vec![r(Some(2), "cannot allocate all claims")]);
        assert_eq!(
            m.post_filter,
            vec!["still not schedulable, no new claims to deallocate".to_string()]
        );
        assert_eq!(m.preemption.unwrap().total_nodes, 2);
    }

    #[test]
    fn volume_and_port_reasons_of_the_1_2x_era() {
        let m = parsed(
            "0/6 nodes are available: 2 node(s) didn't have free ports for the requested pod ports, 4 node(s) had volume node affinity conflict.",
        );
        assert_eq!(m.reasons.len(), 2);
        assert_eq!(
            m.reasons[1],
            r(Some(4), "node(s) had volume node affinity conflict")
        );
    }

    #[test]
    fn other_schedulers_and_odd_texts_stay_raw() {
        for raw in [
            "no nodes available to schedule pods",
            "pod does not fit: custom-scheduler rejected it",
            "0/x nodes are available: 1 Insufficient cpu.",
            "0/+3 nodes are available: 1 Insufficient cpu.",
            "",
        ] {
            assert_eq!(parse(raw), Parsed::Raw(raw.to_string()), "{raw}");
        }
    }

    /// Every text `DefaultPreemption.PostFilter` can put after "preemption: "
    /// (pkg/scheduler/framework/preemption/preemption.go `Evaluator.Preempt`,
    /// plugins/defaultpreemption `PodEligibleToPreemptOthers`): the
    /// availability clause of a dry run, or a sentence. Each keeps the main
    /// reasons, with one dot (1.28+) or two (1.25–1.27).
    #[test]
    fn every_preemption_text_of_the_default_scheduler_keeps_the_main_reasons() {
        let main =
            "0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 Insufficient cpu.";
        let sentences = [
            // PodEligibleToPreemptOthers.
            "not eligible due to preemptionPolicy=Never.",
            "not eligible due to a terminating pod on the nominated node.",
            // Preempt, when no candidate survives SelectCandidate.
            "no candidate node for preemption",
            // findCandidates with an empty node snapshot.
            "no nodes available",
            // framework.AsStatus(err): the Pod lister's error, an extender's, an API error.
            "pods \"web-1\" not found",
            "extender \"gpu\" failed: connection refused",
        ];
        for sentence in sentences {
            for end in ["", "."] {
                let text = format!("{main} preemption: {sentence}{end}");
                let m = parsed(&text);
                assert_eq!(m.total_nodes, 3, "{text}");
                assert_eq!(
                    m.reasons,
                    vec![
                        r(Some(1), "node(s) had untolerated taint(s)"),
                        r(Some(2), "Insufficient cpu")
                    ],
                    "{text}"
                );
                assert_eq!(m.preemption, None, "{text}");
                assert_eq!(
                    m.preemption_message.as_deref(),
                    Some(sentence.trim_end_matches('.')),
                    "{text}"
                );
            }
        }
        // The dry run's clause: nodes where preemption cannot help, nodes with
        // no lower-priority victims, and filter reasons that remain after removing them.
        for (clause, expected) in [
            (
                "0/3 nodes are available: 3 Preemption is not helpful for scheduling.",
                vec![r(Some(3), "Preemption is not helpful for scheduling")],
            ),
            (
                "0/3 nodes are available: 3 No preemption victims found for incoming pod.",
                vec![r(Some(3), "No preemption victims found for incoming pod")],
            ),
            (
                "0/3 nodes are available: 1 Insufficient cpu, 2 Preemption is not helpful for scheduling.",
                vec![
                    r(Some(1), "Insufficient cpu"),
                    r(Some(2), "Preemption is not helpful for scheduling"),
                ],
            ),
        ] {
            let m = parsed(&format!("{main} preemption: {clause}"));
            assert_eq!(m.reasons.len(), 2);
            assert_eq!(m.preemption.unwrap().reasons, expected);
            assert_eq!(m.preemption_message, None);
        }
    }

    #[test]
    fn preemption_sentences_after_other_post_filter_text_and_cut_messages() {
        let m = parsed(
            "0/1 nodes are available: 1 Insufficient cpu. no new claims to deallocate, preemption: not eligible due to preemptionPolicy=Never.",
        );
        assert_eq!(m.reasons, vec![r(Some(1), "Insufficient cpu")]);
        assert_eq!(m.post_filter, vec!["no new claims to deallocate"]);
        assert_eq!(
            m.preemption_message.as_deref(),
            Some("not eligible due to preemptionPolicy=Never")
        );
        let m = parsed(
            "0/3 nodes are available: 3 Insufficient memory. preemption: not eligible due to preemptionPolicy=Never..",
        );
        assert_eq!(
            m.preemption_message.as_deref(),
            Some("not eligible due to preemptionPolicy=Never"),
            "the 1.25–1.27 double dot"
        );
        // A message cut right after the marker still has its main reasons.
        let m = parsed("0/3 nodes are available: 1 Insufficient cpu. preemption: ");
        assert_eq!(m.reasons, vec![r(Some(1), "Insufficient cpu")]);
        assert_eq!((m.preemption, m.preemption_message), (None, None));
    }
}

/// Property tests: arbitrary text never panics the parser, text outside the
/// grammar stays raw, and a message built from reasons parses back to them.
#[cfg(test)]
mod props {
    use super::*;
    use proptest::prelude::*;

    /// One word of a reason: plain words, the scheduler's `node(s)`, and braces
    /// holding ", " (a taint list), which must not split the reason.
    fn word() -> impl Strategy<Value = String> {
        prop_oneof![
            4 => "[a-zA-Z][a-z'-]{0,9}",
            1 => Just("node(s)".to_string()),
            1 => "[a-z]{1,5}: [a-z]{0,5}".prop_map(|kv| format!("{{{kv}}}")),
            1 => "[a-z]{1,5}: [a-z]{1,5}, [a-z]{1,5}: [a-z]{0,5}".prop_map(|kv| format!("{{{kv}}}")),
        ]
    }

    /// A reason's text: words, never starting with "that " (the old taint
    /// wording's continuation, which joins the reason before it).
    fn reason_text() -> impl Strategy<Value = String> {
        prop::collection::vec(word(), 1..6)
            .prop_map(|w| w.join(" "))
            .prop_filter("a continuation, not a reason", |r| {
                !r.starts_with("that ") && r != "that"
            })
    }

    fn reason() -> impl Strategy<Value = Reason> {
        (proptest::option::weighted(0.8, any::<u32>()), reason_text())
            .prop_map(|(nodes, reason)| Reason { reason, nodes })
    }

    fn clause(total: u32, reasons: &[Reason]) -> String {
        let items: Vec<String> = reasons
            .iter()
            .map(|r| match r.nodes {
                Some(n) => format!("{n} {}", r.reason),
                None => r.reason.clone(),
            })
            .collect();
        format!("0/{total} nodes are available: {}", items.join(", "))
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

        #[test]
        fn arbitrary_text_never_panics_and_never_invents(text in any::<String>()) {
            check_no_invention(&text)?;
        }

        /// Text that starts like the grammar and then goes anywhere: what
        /// the parser reports must come from the message itself.
        #[test]
        fn near_grammar_text_never_panics_and_never_invents(
            total in any::<u32>(),
            sign in "\\+?",
            rest in "[0-9a-z ,.:(){}\\[\\]'\"/é-]{0,80}",
            preemption in any::<bool>(),
        ) {
            let text = if preemption {
                format!("0/{sign}{total} nodes are available: {rest}. preemption: 0/{total} nodes are available: {rest}")
            } else {
                format!("0/{sign}{total} nodes are available: {rest}")
            };
            check_no_invention(&text)?;
        }

        #[test]
        fn text_without_the_prefix_stays_raw(text in any::<String>()) {
            prop_assume!(availability_prefix(text.trim()).is_none());
            prop_assert_eq!(parse(&text), Parsed::Raw(text.clone()));
        }

        /// "preemption: " followed by a sentence rather than an availability
        /// clause (preemptionPolicy=Never, an error): the main reasons are kept
        /// exactly, and the sentence verbatim, without its trailing dots.
        #[test]
        fn a_preemption_sentence_keeps_the_main_reasons_and_its_text(
            main in prop::collection::vec(reason(), 1..4),
            tail in "[a-z1-9 ,.:=]{0,40}",
        ) {
            let text = format!("{}. preemption: {tail}", clause(3, &main));
            prop_assume!(availability_prefix(tail.trim_start()).is_none());
            prop_assume!(!tail.contains("preemption:"));
            let Parsed::Scheduler(m) = parse(&text) else {
                return Err(TestCaseError::fail(format!("raw: {text:?}")));
            };
            prop_assert_eq!(m.reasons, main);
            prop_assert_eq!(m.preemption, None);
            let kept = tail.trim().trim_end_matches('.').trim_end();
            prop_assert_eq!(m.preemption_message.as_deref(), (!kept.is_empty()).then_some(kept));
            check_no_invention(&text)?;
        }

        /// Every wording the grammar names, built from reasons, parses back
        /// to exactly those reasons.
        #[test]
        fn a_message_built_from_reasons_parses_back_to_them(
            total in any::<u32>(),
            main in prop::collection::vec(reason(), 1..5),
            preempt in proptest::option::of((any::<u32>(), prop::collection::vec(reason(), 1..4))),
            post in proptest::option::of(prop::collection::vec(reason_text(), 1..3)),
            double_dot in any::<bool>(),
        ) {
            let end = if double_dot { ".." } else { "." };
            let mut text = clause(total, &main);
            let mut post_filter = Vec::new();
            let preemption = match &preempt {
                Some((p_total, p_reasons)) => {
                    text.push_str(". ");
                    if let Some(post) = &post {
                        let post = post.join(", ");
                        text.push_str(&post);
                        text.push_str(", ");
                        post_filter.push(post);
                    }
                    text.push_str("preemption: ");
                    text.push_str(&clause(*p_total, p_reasons));
                    Some(Availability { total_nodes: *p_total, reasons: p_reasons.clone() })
                }
                None => None,
            };
            text.push_str(end);
            let expected = SchedulingMessage {
                total_nodes: total,
                reasons: main.clone(),
                preemption,
                preemption_message: None,
                post_filter,
                message: text.clone(),
            };
            prop_assert_eq!(parse(&text), Parsed::Scheduler(expected));
        }
    }

    /// A parse that is not raw keeps the message, takes its node count from
    /// the message's own prefix, and reports only reasons found in its text.
    fn check_no_invention(text: &str) -> Result<(), TestCaseError> {
        match parse(text) {
            Parsed::Raw(raw) => prop_assert_eq!(raw, text),
            Parsed::Scheduler(m) => {
                prop_assert_eq!(&m.message, text);
                let digits = text
                    .trim()
                    .strip_prefix("0/")
                    .and_then(|t| t.split_once(" nodes are available: "))
                    .map(|(n, _)| n);
                prop_assert!(
                    digits.is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit())
                        && n.parse::<u32>().ok() == Some(m.total_nodes)),
                    "{} nodes from {text:?}",
                    m.total_nodes
                );
                let all = m
                    .reasons
                    .iter()
                    .chain(m.preemption.iter().flat_map(|p| p.reasons.iter()));
                for r in all {
                    prop_assert!(text.contains(&r.reason), "{:?} not in {text:?}", r.reason);
                    if let Some(n) = r.nodes {
                        let counted = format!("{n} {}", r.reason);
                        prop_assert!(text.contains(&counted), "{counted:?} not in {text:?}");
                    }
                }
                if let Some(p) = &m.preemption_message {
                    prop_assert!(text.contains(p.as_str()), "{p:?} not in {text:?}");
                }
                for p in &m.post_filter {
                    prop_assert!(text.contains(p.as_str()), "{p:?} not in {text:?}");
                }
            }
        }
        Ok(())
    }
}
