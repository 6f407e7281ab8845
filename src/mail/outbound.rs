//! Outbound mail once a send is approved: the sealed manifest, and the message
//! written from it for the `send_email` binding (the core's `Mailer`).
//!
//! The manifest is everything that was approved (who, to whom, what, in reply to
//! what, approved by whom, when). Its SHA-256 is written into the audit chain at
//! sealing, and the message is written from the manifest alone, so what leaves
//! the node is exactly what the second person approved. Every file is written in
//! base64 here, so how big the message is follows from the manifest alone too
//! (`Manifest::written_size`), before any file is read (decision 0043).

use std::collections::BTreeMap;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use mail_builder::MessageBuilder;
use mail_builder::headers::address::Address;
use mail_builder::headers::content_type::ContentType;
use mail_builder::mime::{BodyPart, MimePart};
use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::core::addresses;
use crate::core::bindings::MailerError;
use crate::core::crypto::hex;
use crate::mail::message_ids;

/// A file a send carries, as the version and the manifest name it: the bytes are
/// in the object store under `key`, and must hash to `sha256` to leave.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct OutboundFile {
    pub name: String,
    pub content_type: String,
    pub size: i64,
    pub sha256: String,
}

impl OutboundFile {
    /// Where a file's bytes are kept: content-addressed, so the same file
    /// attached twice is stored once.
    pub fn key(sha256: &str) -> String {
        format!("outbound/{sha256}")
    }
}

/// What a second person approved, frozen at sealing.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Manifest {
    pub send_id: String,
    pub mailbox_id: String,
    pub from_address: String,
    pub from_name: String,
    pub to: Vec<String>,
    pub cc: Vec<String>,
    pub subject: String,
    pub text: String,
    pub in_reply_to: Option<String>,
    pub references: Vec<String>,
    /// Without angle brackets.
    pub message_id: String,
    /// The submitted version approved (`Send::version`). Absent from the hash of
    /// a send sealed before versions were recorded, so its manifest still hashes
    /// as it was sealed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    pub author: String,
    pub submitted_by: String,
    pub approved_by: String,
    pub sealed_at: i64,
    /// The files it carries, by hash. Absent from the hash of a send with none,
    /// so a manifest sealed before files could be attached still hashes as it was.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub attachments: Vec<OutboundFile>,
}

impl Manifest {
    /// The manifest's canonical JSON: sorted keys, no whitespace.
    pub fn canonical_json(&self) -> String {
        let value = serde_json::to_value(self).unwrap_or_default();
        let sorted: BTreeMap<String, serde_json::Value> =
            value.as_object().map(|object| object.clone().into_iter().collect()).unwrap_or_default();
        serde_json::to_string(&sorted).unwrap_or_default()
    }

    /// SHA-256 of the canonical JSON, as hex.
    pub fn hash(&self) -> String {
        let mut hasher = Sha256::new();
        hasher.update(b"mailroom.send-manifest.v1\n");
        hasher.update(self.canonical_json().as_bytes());
        hex(&hasher.finalize())
    }

    /// Every envelope recipient's address, To then Cc, each once (a recipient
    /// may be stored with its display name, `Ana <ana@example.org>`).
    pub fn recipients(&self) -> Vec<&str> {
        let mut recipients: Vec<&str> = Vec::new();
        for recipient in self.to.iter().chain(&self.cc) {
            let address = address_of(recipient);
            if !recipients.contains(&address) {
                recipients.push(address);
            }
        }
        recipients
    }

    /// What in the manifest could not be written as a header, checked whatever
    /// was stored: every address an RFC 5322 `addr-spec`, every Message-ID a
    /// `msg-id`, the sender's name and the subject free of control characters (a
    /// CR or LF would end the header and start another).
    pub fn unwritable_header(&self) -> Option<String> {
        if self.to.is_empty() {
            return Some("there is no To recipient".into());
        }
        if !addresses::is_address(&self.from_address) {
            return Some(format!("From address {:?} is not an address", self.from_address));
        }
        let recipients =
            self.to.iter().map(|recipient| ("To", recipient)).chain(self.cc.iter().map(|recipient| ("Cc", recipient)));
        for (header, recipient) in recipients {
            // Written again from its parts, a stored recipient must come out the
            // same: otherwise it held something that is not a name and an address.
            let rewritten =
                addresses::recipient(recipient).map(|(name, address)| addresses::display(name.as_deref(), &address));
            if rewritten.as_deref() != Some(recipient.as_str()) {
                return Some(format!("{header} address {recipient:?} is not an address"));
            }
        }
        let ids = std::iter::once(("Message-ID", &self.message_id))
            .chain(self.in_reply_to.iter().map(|id| ("In-Reply-To", id)))
            .chain(self.references.iter().map(|id| ("References", id)));
        for (header, id) in ids {
            if !message_ids::is_message_id(id) {
                return Some(format!("{header} {id:?} is not a Message-ID"));
            }
        }
        for (header, text) in [("From name", &self.from_name), ("Subject", &self.subject)] {
            if text.chars().any(|c| c.is_control() && c != '\t') {
                return Some(format!("the {header} holds a control character"));
            }
        }
        None
    }

    /// The RFC 5322 message, written from the manifest and the bytes of its
    /// files (`files`, in order, each checked against the hash approved). The
    /// Date is the sealing time, so the same manifest always writes the same
    /// message. Refused, and nothing written, when a header could not be written
    /// as one or a file is not what was approved.
    pub fn to_message(&self, files: &[Vec<u8>]) -> Result<Vec<u8>, MailerError> {
        if let Some(problem) = self.unwritable_header() {
            return Err(MailerError(format!("not written: {problem}")));
        }
        if files.len() != self.attachments.len() {
            return Err(MailerError("not written: a file it carries is missing".into()));
        }
        for (file, bytes) in self.attachments.iter().zip(files) {
            if hex(&Sha256::digest(bytes)) != file.sha256 {
                return Err(MailerError(format!("not written: {} is not the file that was approved", file.name)));
            }
        }
        let encoded: Vec<String> = files.iter().map(|bytes| base64_lines(bytes)).collect();
        self.written(&encoded).map_err(|error| MailerError(format!("writing the message failed: {error}")))
    }

    /// How many bytes `to_message` writes for this manifest and files of the
    /// sizes it names: the message written with each file left empty, and
    /// each file's base64 counted from its size (`base64_lines_len`), which is
    /// all a file's encoded length depends on. What the Email Service's limit
    /// on a message (`OUTBOUND_MESSAGE_BYTES`) is held to.
    pub fn written_size(&self) -> usize {
        let empty = vec![String::new(); self.attachments.len()];
        let skeleton = self.written(&empty).map_or(usize::MAX, |message| message.len());
        self.attachments.iter().fold(skeleton, |total, file| {
            total.saturating_add(base64_lines_len(usize::try_from(file.size).unwrap_or(usize::MAX)))
        })
    }

    /// The message with each file's bytes as `encoded` (base64 in lines).
    fn written(&self, encoded: &[String]) -> std::io::Result<Vec<u8>> {
        let mut builder = MessageBuilder::new()
            .from((self.from_name.as_str(), self.from_address.as_str()))
            .to(address_list(&self.to))
            .subject(self.subject.as_str())
            .message_id(self.message_id.as_str())
            .date(self.sealed_at / 1000);
        builder = if self.attachments.is_empty() {
            builder.text_body(self.text.as_str())
        } else {
            // Multipart, with a boundary of our own: mail-builder would make one
            // from the system clock, which the Workers runtime does not have (it
            // panics). Taken from the manifest's hash, it is the same for the same
            // manifest and unknowable before sealing, so no text can hold it.
            let boundary = format!("mailroom-{}", &self.hash()[..32]);
            let mut parts = vec![MimePart::new("text/plain", BodyPart::Text(self.text.as_str().into()))];
            // Every file leaves in base64 written here, whatever it holds, so
            // the message's size follows from the files' sizes alone
            // (`written_size`); mail-builder would write a text file as it is
            // or quoted-printable when shorter, by what it holds.
            for (file, body) in self.attachments.iter().zip(encoded) {
                let content_type = ContentType::new(file.content_type.as_str());
                parts.push(
                    MimePart::new(content_type, BodyPart::Text(body.as_str().into()))
                        .attachment(file.name.as_str())
                        .transfer_encoding("base64"),
                );
            }
            let mixed = ContentType::new("multipart/mixed").attribute("boundary", boundary);
            builder.body(MimePart::new(mixed, BodyPart::Multipart(parts)))
        };
        if !self.cc.is_empty() {
            builder = builder.cc(address_list(&self.cc));
        }
        if let Some(in_reply_to) = &self.in_reply_to {
            builder = builder.in_reply_to(in_reply_to.as_str());
        }
        if !self.references.is_empty() {
            builder = builder.references(self.references.iter().map(String::as_str).collect::<Vec<_>>());
        }
        builder.write_to_vec()
    }
}

/// The bytes a file leaves as: base64 (RFC 2045 §6.8) in lines of 76
/// characters, 57 bytes each, joined by CRLF.
fn base64_lines(bytes: &[u8]) -> String {
    let mut lines = String::with_capacity(base64_lines_len(bytes.len()));
    for (index, line) in bytes.chunks(BASE64_LINE_BYTES).enumerate() {
        if index > 0 {
            lines.push_str("\r\n");
        }
        STANDARD.encode_string(line, &mut lines);
    }
    lines
}

/// How many bytes a line of base64 carries: 76 characters, RFC 2045's most.
const BASE64_LINE_BYTES: usize = 57;

/// How long `base64_lines` is for a file of `size` bytes: four characters for
/// every three bytes or part of three, and a CRLF between lines.
pub const fn base64_lines_len(size: usize) -> usize {
    if size == 0 {
        return 0;
    }
    size.div_ceil(3) * 4 + (size.div_ceil(BASE64_LINE_BYTES) - 1) * 2
}

/// The address of a stored recipient, `Name <address>` or a bare address.
fn address_of(recipient: &str) -> &str {
    match recipient.rfind('<') {
        Some(open) => recipient[open + 1..].trim_end_matches('>'),
        None => recipient,
    }
}

fn address_list(list: &[String]) -> Address<'_> {
    Address::new_list(
        list.iter()
            .map(|recipient| match recipient.rfind('<') {
                Some(open) => Address::new_address(Some(recipient[..open].trim()), address_of(recipient)),
                None => Address::new_address(None::<&str>, recipient.as_str()),
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest() -> Manifest {
        Manifest {
            send_id: "snd_1".into(),
            mailbox_id: "mbx_1".into(),
            from_address: "support@example.com".into(),
            from_name: "Support désk".into(),
            to: vec!["Ana Lima <ana@example.org>".into()],
            cc: vec!["ben@example.org".into(), "ana@example.org".into()],
            subject: "Re: Ça va? Your invoice".into(),
            text: "Hello Ana,\n\nThe invoice is attached in spirit.\n".into(),
            in_reply_to: Some("original@example.org".into()),
            references: vec!["root@example.org".into(), "original@example.org".into()],
            message_id: "snd_1@example.com".into(),
            version: Some("a".repeat(64)),
            author: "usr_1".into(),
            submitted_by: "usr_1".into(),
            approved_by: "usr_2".into(),
            sealed_at: 1_795_000_000_000,
            attachments: Vec::new(),
        }
    }

    #[test]
    fn the_message_carries_exactly_the_manifest_and_threads_as_a_reply() {
        let raw = manifest().to_message(&[]).unwrap();
        let parsed = crate::mail::inbound::parse(&raw).unwrap();
        assert_eq!(parsed.message_id, "snd_1@example.com");
        assert_eq!(parsed.subject, "Re: Ça va? Your invoice");
        assert_eq!(parsed.from.unwrap().name.as_deref(), Some("Support désk"));
        assert_eq!(parsed.in_reply_to, vec!["original@example.org"]);
        assert_eq!(parsed.references, vec!["root@example.org", "original@example.org"]);
        assert_eq!(parsed.text.replace("\r\n", "\n").trim_end(), "Hello Ana,\n\nThe invoice is attached in spirit.");
        assert_eq!(parsed.sent_at, Some(1_795_000_000_000));
        assert_eq!(parsed.to[0].name.as_deref(), Some("Ana Lima"), "display names are kept");
        assert_eq!(parsed.to[0].address, "ana@example.org");
        assert_eq!(manifest().to_message(&[]).unwrap(), raw, "the same manifest writes the same message");
    }

    #[test]
    fn a_file_leaves_only_as_it_was_approved() {
        let bytes = b"%PDF-1.7 invoice".to_vec();
        let mut carrying = manifest();
        carrying.attachments = vec![OutboundFile {
            name: "invoice 4471.pdf".into(),
            content_type: "application/pdf".into(),
            size: bytes.len() as i64,
            sha256: hex(&Sha256::digest(&bytes)),
        }];
        assert_ne!(carrying.hash(), manifest().hash(), "the file is part of what is approved");
        let raw = carrying.to_message(std::slice::from_ref(&bytes)).unwrap();
        assert_eq!(
            carrying.to_message(std::slice::from_ref(&bytes)).unwrap(),
            raw,
            "the same manifest, the same bytes"
        );
        let parsed = crate::mail::inbound::parse(&raw).unwrap();
        assert_eq!(parsed.attachments.len(), 1);
        assert_eq!(parsed.attachments[0].name.as_deref(), Some("invoice 4471.pdf"));
        assert_eq!(crate::mail::inbound::attachment(&raw, 0).unwrap().0, bytes);
        let refused = carrying.to_message(&[b"%PDF-1.7 other".to_vec()]).unwrap_err();
        assert!(refused.0.contains("not the file that was approved"), "{}", refused.0);
        assert!(carrying.to_message(&[]).is_err(), "a missing file is never left out silently");
    }

    #[test]
    fn a_long_name_in_another_script_leaves_whole_and_is_read_back_whole() {
        // Longer than a header line may be, and not ASCII: written as RFC 2231
        // parameter continuations (mail-builder 2), and read back as it was.
        let name = format!("Facture {} – relevé annuel 2026 – ĉiuj paĝoj.pdf", "très détaillée ".repeat(6));
        let bytes = b"%PDF-1.7 statement".to_vec();
        let mut carrying = manifest();
        carrying.attachments = vec![OutboundFile {
            name: name.clone(),
            content_type: "application/pdf".into(),
            size: bytes.len() as i64,
            sha256: hex(&Sha256::digest(&bytes)),
        }];
        let raw = carrying.to_message(std::slice::from_ref(&bytes)).unwrap();
        let text = String::from_utf8_lossy(&raw);
        assert!(text.lines().all(|line| line.len() <= 998), "no line past RFC 5322's limit");
        assert!(text.contains("filename*0*="), "continued as RFC 2231 says:\n{text}");
        let parsed = crate::mail::inbound::parse(&raw).unwrap();
        assert_eq!(parsed.attachments[0].name.as_deref(), Some(name.as_str()));
    }

    /// `manifest()` carrying files of these sizes and content types, and their bytes.
    fn carrying(files: &[(usize, &str)]) -> (Manifest, Vec<Vec<u8>>) {
        let mut carrying = manifest();
        let bytes: Vec<Vec<u8>> = files
            .iter()
            .enumerate()
            .map(|(index, (size, content_type))| {
                // Text a text file holds; any byte another.
                let byte = |at: usize| {
                    if content_type.starts_with("text/") {
                        b' ' + ((at * 7 + index) % 95) as u8
                    } else {
                        (at * 7 + index) as u8
                    }
                };
                (0..*size).map(byte).collect()
            })
            .collect();
        carrying.attachments = files
            .iter()
            .zip(&bytes)
            .enumerate()
            .map(|(index, ((size, content_type), bytes))| OutboundFile {
                name: format!("file {index} – résumé.bin"),
                content_type: content_type.to_string(),
                size: *size as i64,
                sha256: hex(&Sha256::digest(bytes)),
            })
            .collect();
        (carrying, bytes)
    }

    #[test]
    fn the_size_counted_is_the_size_written() {
        let cases: [&[(usize, &str)]; 6] = [
            &[],
            &[(0, "application/pdf")],
            &[(1, "application/pdf")],
            &[(57, "text/plain"), (58, "text/csv")],
            &[(700 * 1024, "application/octet-stream"), (3, "image/png"), (56, "text/plain")],
            &[(114, "application/zip"); 10],
        ];
        for files in cases {
            let (manifest, bytes) = carrying(files);
            let written = manifest.to_message(&bytes).unwrap();
            assert_eq!(manifest.written_size(), written.len(), "{files:?}");
        }
        let mut long = manifest();
        long.text = "Ça va? ".repeat(30_000);
        assert_eq!(long.written_size(), long.to_message(&[]).unwrap().len(), "the text as mail-builder writes it");
    }

    #[test]
    fn every_file_leaves_in_base64_lines_of_76_and_reads_back_as_it_was() {
        for size in [0, 1, 2, 3, 56, 57, 58, 113, 114, 115, 1000] {
            let bytes: Vec<u8> = (0..size).map(|at| (at * 31) as u8).collect();
            let lines = base64_lines(&bytes);
            assert_eq!(lines.len(), base64_lines_len(size), "{size}");
            assert!(lines.split("\r\n").all(|line| line.len() <= 76), "{size}");
            assert_eq!(STANDARD.decode(lines.replace("\r\n", "")).unwrap(), bytes);
        }
        // A text file too: as approved, byte for byte.
        let (manifest, bytes) = carrying(&[(200, "text/plain")]);
        let raw = manifest.to_message(&bytes).unwrap();
        assert!(String::from_utf8_lossy(&raw).contains("Content-Transfer-Encoding: base64"));
        assert_eq!(crate::mail::inbound::attachment(&raw, 0).unwrap().0, bytes[0]);
    }

    #[test]
    fn recipients_are_each_named_once() {
        assert_eq!(manifest().recipients(), vec!["ana@example.org", "ben@example.org"]);
    }

    #[test]
    fn any_change_to_what_was_approved_changes_the_hash() {
        let original = manifest().hash();
        let mut changed = manifest();
        changed.text.push('!');
        assert_ne!(changed.hash(), original);
        let mut changed = manifest();
        changed.cc.pop();
        assert_ne!(changed.hash(), original);
        assert_eq!(manifest().hash(), original);
    }

    #[test]
    fn a_header_that_could_end_and_start_another_is_never_written() {
        type MakeHostile = fn(&mut Manifest);
        let hostile: [(&str, MakeHostile); 8] = [
            ("To", |m| m.to = vec!["ana@example.org\r\nBcc: hidden@evil.example".into()]),
            ("To", |m| m.to = vec!["Ana\r\nBcc: hidden@evil.example <ana@example.org>".into()]),
            ("Cc", |m| m.cc = vec!["ana@example.org>, <hidden@evil.example".into()]),
            ("From", |m| m.from_address = "support@example.com\nBcc: hidden@evil.example".into()),
            ("In-Reply-To", |m| m.in_reply_to = Some("m@evil.example\rBcc: hidden@evil.example".into())),
            ("References", |m| m.references.push("m@evil.example\nBcc: hidden@evil.example".into())),
            ("Subject", |m| m.subject = "Hello\r\nBcc: hidden@evil.example".into()),
            ("From name", |m| m.from_name = "Support\nBcc: hidden@evil.example".into()),
        ];
        for (header, make_hostile) in hostile {
            let mut hostile = manifest();
            make_hostile(&mut hostile);
            let refused = hostile.to_message(&[]).expect_err(header);
            assert!(refused.0.contains(header), "{header}: {}", refused.0);
        }
        let mut tabbed = manifest();
        tabbed.subject = "Re:\tinvoice".into();
        assert!(tabbed.to_message(&[]).is_ok(), "a tab is whitespace a header may hold");
    }
}
