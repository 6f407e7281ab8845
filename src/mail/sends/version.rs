//! What a second person decides on: one submitted version of a send, the hash
//! that names it, and what differs between two versions.
//!
//! Approval is bound to what the approver was shown. Every submission writes a
//! new version (its hash in `sends.submitted_version`, its content in
//! `send_versions`), and approve and refuse name the version their caller read:
//! a send taken back, edited and submitted again between the approver's read
//! and their click is a different version, and the decision is refused, naming
//! what changed, instead of sealing words nobody approved.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::core::crypto::hex;
use crate::mail::outbound::OutboundFile;

/// One submitted version of a send: everything the approver is shown and the
/// seal carries, and who submitted it when. Submitting the same words again is a
/// new version, because `submitted_at` differs: an approver decides on a
/// submission, not on words that happen to match.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct Submission {
    pub(super) send_id: String,
    pub(super) mailbox_id: String,
    pub(super) author: String,
    pub(super) to: Vec<String>,
    pub(super) cc: Vec<String>,
    pub(super) subject: String,
    pub(super) text: String,
    pub(super) in_reply_to: Option<String>,
    pub(super) references: Vec<String>,
    pub(super) submitted_by: String,
    pub(super) submitted_at: i64,
    /// The files, by hash; absent when there are none, so a version recorded
    /// before files could be attached still hashes as it did.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(super) attachments: Vec<OutboundFile>,
}

impl Submission {
    /// SHA-256 of the submission's JSON (its fields in declaration order, so the
    /// same submission always hashes the same), as hex.
    pub(super) fn version(&self) -> String {
        let mut hasher = Sha256::new();
        hasher.update(b"mailroom.send-version.v1\n");
        hasher.update(serde_json::to_vec(self).unwrap_or_default());
        hex(&hasher.finalize())
    }

    /// What `self` changed from `earlier`, in words for a refusal: the parts a
    /// person reads, then, when nothing they read changed, the resubmission.
    pub(super) fn changes_from(&self, earlier: &Submission) -> Vec<&'static str> {
        let mut changes = Vec::new();
        if self.to != earlier.to || self.cc != earlier.cc {
            changes.push("the recipients");
        }
        if self.subject != earlier.subject {
            changes.push("the subject");
        }
        if self.text != earlier.text {
            changes.push("the text");
        }
        if self.attachments != earlier.attachments {
            changes.push("the files");
        }
        if self.in_reply_to != earlier.in_reply_to || self.references != earlier.references {
            changes.push("what it replies to");
        }
        if self.submitted_by != earlier.submitted_by {
            changes.push("who submitted it");
        }
        if changes.is_empty() {
            changes.push("nothing you read, but it was taken back and submitted again");
        }
        changes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn submission() -> Submission {
        Submission {
            send_id: "snd_1".into(),
            mailbox_id: "mbx_1".into(),
            author: "usr_1".into(),
            to: vec!["ana@customer.example".into()],
            cc: Vec::new(),
            subject: "Invoice".into(),
            text: "100 EUR".into(),
            in_reply_to: None,
            references: Vec::new(),
            submitted_by: "usr_1".into(),
            submitted_at: 1_000,
            attachments: Vec::new(),
        }
    }

    #[test]
    fn every_part_an_approver_reads_and_every_resubmission_is_a_new_version() {
        let original = submission();
        assert_eq!(original.version(), submission().version(), "the same submission, the same version");
        assert_eq!(original.version().len(), 64);
        let variants: [fn(&mut Submission); 7] = [
            |s| s.to = vec!["attacker@evil.example".into()],
            |s| s.cc = vec!["attacker@evil.example".into()],
            |s| s.subject = "Invoice (corrected)".into(),
            |s| s.text = "1000 EUR".into(),
            |s| s.in_reply_to = Some("m@evil.example".into()),
            |s| s.submitted_by = "agt_1".into(),
            |s| s.submitted_at = 1_001,
        ];
        for change in variants {
            let mut changed = submission();
            change(&mut changed);
            assert_ne!(changed.version(), original.version(), "{changed:?}");
            assert!(!changed.changes_from(&original).is_empty());
        }
    }

    #[test]
    fn what_changed_is_named_in_the_words_a_person_reads() {
        let mut changed = submission();
        changed.to = vec!["attacker@evil.example".into()];
        changed.text = "Pay to this account instead.".into();
        changed.submitted_at = 2_000;
        assert_eq!(changed.changes_from(&submission()), ["the recipients", "the text"]);
        let mut resubmitted = submission();
        resubmitted.submitted_at = 2_000;
        assert_eq!(
            resubmitted.changes_from(&submission()),
            ["nothing you read, but it was taken back and submitted again"]
        );
    }
}
