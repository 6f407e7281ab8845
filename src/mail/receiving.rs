//! Storing what arrives: a message the email handler accepted (`inbound`
//! parsed it) becomes a receipt of the mailbox it was delivered to, with its
//! search index rows, its place in a conversation, its butlers' effects and
//! an audit entry, in one transaction where the mailbox's mail is: D1, or the
//! mailbox's own database (decision 0040). Its original bytes are stored in R2
//! first, under a key naming the mailbox (`originals`), so a receipt never
//! points at nothing.
//!
//! D1's first read finds the mailbox by its address, where its mail is, its
//! butlers and what their effects meet; while the mail is in D1, the same
//! read finds the receipts claiming the Message-ID and the conversation it
//! joins, and the second round trip stores it. A mailbox whose mail is in its
//! own database is asked those in its database (named by the id D1 answers):
//! beside D1's first read when the storage remembers the address from an
//! earlier delivery (`MailboxStorage::moved_at`, true once learnt), after it
//! otherwise; then it is stored there, with its entry in the mailbox's
//! segment of the chain; what follows in the directory (notices, the note of
//! a butler's reply awaiting its decision) is written on D1 after.
//! A copy a butler files in another mailbox is written beside the delivery
//! when both mailboxes' mail is in D1, and otherwise after it, where the
//! target's mail is, as a change of its own with its own entry.

use mailroom_contract::api::{AuthenticationResults, EmailAddress, SenderAuthentication, SenderVerdictBasis};
use serde::Serialize;

use crate::audit::AuditChain;
use crate::core::addresses;
use crate::core::background::{Background, BackgroundError};
use crate::core::context::ports::AuditRecord;
use crate::core::events::Topic;
use crate::core::ids::{IdKind, new_id};
use crate::core::mailbox_storage::{MAIL_MOVED, never_created};
use crate::core::node::{DATABASE_WARNING_PERCENT, Node};
use crate::core::storage::{QueryResult, Statement, StorageError};
use crate::mail::butlers::{self, CopyToFile};
use crate::mail::inbound::{Delivery, Kept, Rejection, within_limits};
use crate::mail::message_ids;
use crate::mail::originals::{self, raw_message_key};
use crate::mail::search::index;
use crate::mail::store::inbound::{self as store, Claimant, NewReceipt};
use crate::mail::threads::linking::{self, Recipient};
use crate::mail::trust;
use crate::notifications::{self, AlarmedDatabase, DatabaseFullness};

/// What the node did with an accepted message, and the segments of the chain
/// it appended entries to, which the handler seals after answering.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Received {
    pub delivery: Delivery,
    /// The mailboxes whose own databases hold new entries (the delivery's,
    /// where its mail moved; a copy's target, likewise).
    pub segments: Vec<String>,
}

/// Receives one message for one envelope recipient.
pub async fn receive(
    node: &Node<'_>,
    envelope_from: &str,
    envelope_to: &str,
    raw: &[u8],
) -> Result<Received, Rejection> {
    let limit = node.config.maximum_message_bytes;
    if raw.len() > limit {
        return Err(Rejection::TooLarge { limit });
    }
    let kept = within_limits(raw)?;
    let shown = trust::ShownFrom { sender: kept.parsed.from.as_ref(), addresses: kept.parsed.from_addresses };
    let authentication = trust::authentication_of(raw, &shown);
    let arrival = Arrival {
        envelope_from: envelope_from.trim(),
        recipient: addresses::normalize(envelope_to).unwrap_or_else(|| envelope_to.trim().to_lowercase()),
        raw,
        kept: &kept,
        authentication: &authentication,
    };
    // A delivery that lost a race to a concurrent one of the same Message-ID is
    // read again once: the other is then either this very message or another
    // one reusing its id, and is answered as such.
    // The receipt's id, and so its original's key, is chosen once: the try
    // after a race stores the bytes the first one put, under the same key.
    let receipt_id = new_id(IdKind::Receipt, node.platform);
    match store(node, &arrival, &receipt_id, Attempt::First).await {
        Err(Stored::Raced) => match store(node, &arrival, &receipt_id, Attempt::AfterARace).await {
            Err(Stored::Raced) => Err(arrival.failure(node, &"lost the race for its Message-ID twice")),
            Err(Stored::Rejected(rejection)) => Err(rejection),
            Ok(received) => Ok(received),
        },
        Err(Stored::Rejected(rejection)) => Err(rejection),
        Ok(received) => Ok(received),
    }
}

#[derive(Serialize)]
struct StoredAddress<'a> {
    address: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<&'a str>,
}

fn addresses_json(addresses: &[EmailAddress]) -> String {
    let stored: Vec<StoredAddress<'_>> = addresses
        .iter()
        .map(|address| StoredAddress { address: &address.address, name: address.name.as_deref() })
        .collect();
    serde_json::to_string(&stored).unwrap_or_else(|_| "[]".into())
}

/// A message on its way into one mailbox: what it is, and whom it is for.
struct Arrival<'a> {
    envelope_from: &'a str,
    /// The envelope recipient, normalised: the mailbox's address.
    recipient: String,
    raw: &'a [u8],
    kept: &'a Kept,
    authentication: &'a AuthenticationResults,
}

impl Arrival<'_> {
    fn verdict(&self) -> SenderAuthentication {
        self.authentication.sender.unwrap_or(SenderAuthentication::Unverified)
    }

    /// Logs why the message could not be stored, and answers the rejection that
    /// asks its sender to try again.
    fn failure(&self, node: &Node<'_>, error: &dyn std::fmt::Display) -> Rejection {
        node.platform.log(&format!("receiving mail for {}: {error}", self.recipient));
        Rejection::TemporaryFailure
    }
}

/// Whether this is the first try at storing a message, or the one after a race.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Attempt {
    First,
    /// The bytes are in the object store already.
    AfterARace,
}

/// Why one try at storing a message did not.
enum Stored {
    /// A concurrent delivery stored a receipt under the same key first, or
    /// the mail moved out of D1 between the first read and the commit.
    Raced,
    Rejected(Rejection),
}

impl Claimant {
    /// Whether it is the arriving message itself, delivered again: the same
    /// content with the same verdict on its sender (a receipt stored before
    /// contents were hashed: the same bytes, as its key names them).
    fn is(&self, arrival: &Arrival<'_>) -> bool {
        let same_content = match &self.content_digest {
            Some(digest) => *digest == arrival.kept.parsed.content_digest,
            None => originals::names_the_content(&self.raw_key, arrival.raw),
        };
        same_content && self.sender_authentication == arrival.verdict()
    }
}

/// Where the mailbox delivered to keeps its mail, as D1's first read says.
#[derive(Clone, Copy, PartialEq, Eq)]
enum MailIn<'a> {
    D1,
    /// The mailbox's own database, named by its id.
    OwnDatabase(&'a str),
}

impl MailIn<'_> {
    /// The segments a commit there appends to.
    fn segments(&self) -> Vec<String> {
        match self {
            MailIn::D1 => Vec::new(),
            MailIn::OwnDatabase(mailbox_id) => vec![mailbox_id.to_string()],
        }
    }
}

/// One try at storing `arrival`: the first round trip reads the mailbox, where
/// its mail is, the butlers and, while the mail is in D1, the receipts that
/// claim its Message-ID and the conversation it joins; a mailbox whose mail is
/// in its own database is asked those next; then it is stored, or its coming
/// again recorded.
async fn store(node: &Node<'_>, arrival: &Arrival<'_>, receipt_id: &str, attempt: Attempt) -> Result<Received, Stored> {
    let Kept { parsed, to_not_kept, cc_not_kept, attachments_not_listed } = arrival.kept;
    let recipient = arrival.recipient.as_str();
    let raw = arrival.raw;
    // The email handler's unit of work: its round trips counted, its entries
    // appended through the same ledger a request's commit uses.
    let ledger = AuditChain::new(node.config, node.platform);
    let work = Background::new(node, &ledger);
    let failure = |error: &dyn std::fmt::Display| Stored::Rejected(arrival.failure(node, error));

    // Which conversation it joins is read beside the rest: by the Message-IDs
    // it names, where its sender is known or its subject is the
    // conversation's, or failing those by a reply's subject (`linking`); each
    // with the conversation as it stands, for the butlers to judge.
    let wanted = linking::wanted_ids(&parsed.message_id, &parsed.in_reply_to, &parsed.references);
    let sender = parsed.from.as_ref().map(|from| from.address.as_str());
    let lookups = |mailbox: Recipient<'_>| {
        vec![
            store::claimants(&mailbox, &parsed.message_id),
            butlers::with_conversation(linking::by_message_ids(&mailbox, &wanted, sender, &parsed.subject)),
            butlers::with_conversation(linking::by_subject(&mailbox, &parsed.subject, sender, node.platform.now_ms())),
        ]
    };
    // The mailbox's published butlers, with what their sponsors hold now and
    // what their effects would meet.
    let authentication = arrival.authentication;
    let delivered = butlers::Delivered {
        from: parsed.from.as_ref(),
        reply_to: &parsed.reply_to,
        to: &parsed.to,
        cc: &parsed.cc,
        subject: &parsed.subject,
        sender_authentication: authentication.sender,
        attachments: parsed.attachments.len(),
        message_id: &parsed.message_id,
    };
    // A mailbox known to keep its mail in its own database (the storage
    // remembers what D1 said, which stays true) is asked the lookups beside
    // D1's first read, not after it; D1 is not asked them.
    let known = node.mailboxes.moved_at(recipient);
    let mut first = vec![store::mailbox_at(recipient)];
    if known.is_none() {
        first.extend(lookups(Recipient::Address(recipient)));
    }
    first.push(butlers::active_on_delivery(recipient, &delivered, node.platform.now_ms()));
    let (first, beside) = match known.as_deref() {
        Some(mailbox_id) => {
            let here = Recipient::Mailbox { id: mailbox_id, address: recipient };
            let asked = lookups(here);
            let (first, beside) = work.read_beside_mailbox(first, mailbox_id, asked).await;
            (first, Some(beside))
        }
        None => (work.run(first).await, None),
    };
    let mut results = first.map_err(|error| failure(&error))?;
    let Some(mailbox) = results[0].first() else {
        return Err(Stored::Rejected(Rejection::UnknownRecipient { address: recipient.to_string() }));
    };
    let mailbox_id = mailbox.text("id").map_err(|error| failure(&error))?;
    let moved = mailbox.optional_integer("mail_moved_at").map_err(|error| failure(&error))?.is_some();
    let mail_in = if moved { MailIn::OwnDatabase(&mailbox_id) } else { MailIn::D1 };
    if moved && known.is_none() {
        node.mailboxes.remember_moved(recipient, &mailbox_id);
    }
    // How full the database is, as the first read found it: at its limit,
    // nothing is stored (and administrators are told, once a day); nearly
    // there, they are told in the batch that stores the message.
    let fullness = fullness_of(&results, node.config.database_limit_bytes);
    if let Some((DatabaseFullness::Full, size)) = fullness {
        let alarm = notifications::database_alarm(
            AlarmedDatabase::Node,
            DatabaseFullness::Full,
            size,
            node.config.database_limit_bytes,
            node.platform,
        );
        if let Err(error) = work.run(vec![alarm]).await {
            node.platform.log(&format!("telling administrators the database is full failed: {error}"));
        }
        return Err(Stored::Rejected(Rejection::DatabaseFull));
    }
    let active_butlers = results.pop().unwrap_or_default();
    // Where the mail is in the mailbox's own database, what D1 answered of
    // it is a copy (or nothing): the lookups are asked there.
    let answered_beside = match beside {
        // What was asked beside D1 counts only where D1 says it should: the
        // mailbox it named, whose mail is in its own database.
        Some(Ok(found)) if moved && known.as_deref() == Some(mailbox_id.as_str()) => Some(found),
        Some(Err(error)) if !never_created(&error) => return Err(failure(&error)),
        _ => None,
    };
    let (found, mailbox_fullness) = match mail_in {
        MailIn::D1 if known.is_none() => (results.drain(1..).collect::<Vec<QueryResult>>(), None),
        MailIn::D1 => return Err(failure(&format!("{recipient} was remembered as moved, but D1 holds its mail"))),
        MailIn::OwnDatabase(mailbox_id) => {
            let found = match answered_beside {
                Some(found) => found,
                None => {
                    let here = Recipient::Mailbox { id: mailbox_id, address: recipient };
                    let asked = lookups(here);
                    work.read_in_mailbox(mailbox_id, asked).await.map_err(|error| failure(&error))?
                }
            };
            // The mailbox's own database, as full as its answer says: at its
            // limit nothing is stored there, as for D1.
            let fullness = fullness_of(&found, node.config.mailbox_limit_bytes);
            (found, fullness)
        }
    };
    let this_mailbox = AlarmedDatabase::Mailbox { id: &mailbox_id, address: recipient };
    if let Some((DatabaseFullness::Full, size)) = mailbox_fullness {
        let limit = node.config.mailbox_limit_bytes;
        let alarm = notifications::database_alarm(this_mailbox, DatabaseFullness::Full, size, limit, node.platform);
        if let Err(error) = work.run(vec![alarm]).await {
            node.platform.log(&format!("telling administrators {recipient} is full failed: {error}"));
        }
        return Err(Stored::Rejected(Rejection::MailboxFull { address: recipient.to_string() }));
    }
    let [claimants, by_ids, by_subject] = <[QueryResult; 3]>::try_from(found)
        .map_err(|found| failure(&format!("{} answers to three lookups", found.len())))?;
    let claimants: Vec<Claimant> = claimants.decode_all().map_err(|error| failure(&error))?;
    let raw_key = raw_message_key(&mailbox_id, receipt_id);
    let now_ms = node.platform.now_ms();
    let verdict = arrival.verdict();
    if let Some(itself) = claimants.iter().find(|claimant| claimant.is(arrival)) {
        if attempt == Attempt::AfterARace {
            // The bytes the first try put are this message's, kept by the
            // delivery that won: they are no receipt's.
            forget_original(node, &raw_key).await;
        }
        // Delivered again: kept once, and the delivery is on the record.
        let detail = serde_json::json!({
            "mailbox": mailbox_id,
            "message_id": parsed.message_id,
            "size": raw.len(),
            "envelope_from": arrival.envelope_from,
            "sender_authentication": verdict.name(),
            "delivered_again": true,
        });
        let record = received_mail(now_ms, &mailbox_id, &itself.id, detail);
        let recorded = match mail_in {
            MailIn::D1 => work.commit(Vec::new(), &[record]).await,
            MailIn::OwnDatabase(mailbox_id) => work.commit_in_mailbox(mailbox_id, Vec::new(), &[record], vec![]).await,
        };
        recorded.map_err(|error| failure(&error))?;
        let delivery = Delivery::Duplicate { receipt_id: itself.id.clone() };
        return Ok(Received { delivery, segments: mail_in.segments() });
    }
    // Another message claiming an id the mailbox holds is kept under a key of
    // its own, the id it claimed beside it.
    let reused_from = claimants.first().map(|claimant| claimant.id.clone());
    let stored_message_id = match reused_from {
        Some(_) => message_ids::reused_key(&parsed.content_digest, verdict.name()),
        None => parsed.message_id.clone(),
    };
    let claimed_message_id = reused_from.as_ref().map(|_| parsed.message_id.as_str());

    // The bytes first: a receipt must never point at nothing. Bytes whose
    // receipt then fails to commit are deleted again (`forget_original`).
    if attempt == Attempt::First {
        node.blobs.put(&raw_key, raw).await.map_err(|error| failure(&error.0))?;
    }

    let joined = [&by_ids, &by_subject]
        .into_iter()
        .find_map(|result| result.first().filter(|row| row.text("thread_id").is_ok()));
    let (thread_id, new_thread) = match joined.and_then(|row| row.text("thread_id").ok()) {
        Some(thread_id) => (thread_id, false),
        None => (new_id(IdKind::Thread, node.platform), true),
    };
    let conversation = butlers::Conversation::of(joined);
    let now_ms = node.platform.now_ms();
    let recipients: Vec<String> = parsed
        .to
        .iter()
        .chain(&parsed.cc)
        .map(|address| match &address.name {
            Some(name) => format!("{name} {}", address.address),
            None => address.address.clone(),
        })
        .collect();
    // What the verdict rests on is stored with it; its sentence is written when
    // it is read (`trust::stored`), so the words can change and the facts not.
    let stored_authentication = serde_json::json!({
        "spf": authentication.spf,
        "dkim": authentication.dkim,
        "dmarc": authentication.dmarc,
        "basis": authentication.basis.map(SenderVerdictBasis::name),
        "verified_domain": authentication.verified_domain,
        "from_domain": authentication.from_domain,
    });
    // The receipt as stored in a mailbox under an id, an original's key and a
    // conversation: the delivery's own, or a butler's copy in another mailbox.
    // Its time is this Worker's clock, read before the bytes were stored; the
    // store keeps it no earlier than the last receipt's (decision 0014).
    let receipt = |id: &str, mailbox_id: &str, raw_key: &str, thread_id: &str| {
        store::receipt(NewReceipt {
            id,
            mailbox_id,
            message_id: &stored_message_id,
            envelope_from: arrival.envelope_from,
            from_address: parsed.from.as_ref().map(|from| from.address.clone()),
            from_name: parsed.from.as_ref().and_then(|from| from.name.clone()),
            to_json: addresses_json(&parsed.to),
            cc_json: addresses_json(&parsed.cc),
            recipients: recipients.join(" "),
            subject: &parsed.subject,
            sent_at: parsed.sent_at,
            received_at: now_ms,
            in_reply_to_json: serde_json::to_string(&parsed.in_reply_to).unwrap_or_else(|_| "[]".into()),
            references_json: serde_json::to_string(&parsed.references).unwrap_or_else(|_| "[]".into()),
            size: raw.len() as i64,
            raw_key,
            text_body: &parsed.text,
            text_source: parsed.text_source,
            text_truncated: parsed.text_truncated,
            attachments_json: serde_json::to_string(&parsed.attachments).unwrap_or_else(|_| "[]".into()),
            reply_to_json: addresses_json(&parsed.reply_to),
            to_not_kept: *to_not_kept,
            cc_not_kept: *cc_not_kept,
            attachments_not_listed: *attachments_not_listed,
            thread_id,
            sender_authentication: verdict.name(),
            authentication_json: stored_authentication.to_string(),
            content_digest: &parsed.content_digest,
            claimed_message_id,
        })
    };
    let insert = receipt(receipt_id, &mailbox_id, &raw_key, &thread_id).statement();
    let detail = serde_json::json!({
        "mailbox": mailbox_id,
        "message_id": parsed.message_id,
        "size": raw.len(),
        "envelope_from": arrival.envelope_from,
        "thread": thread_id,
        "sender_authentication": verdict.name(),
        "sender_basis": authentication.basis.map(SenderVerdictBasis::name),
        "message_id_reused_from": reused_from,
    });
    let record = received_mail(now_ms, &mailbox_id, receipt_id, detail);
    let append = |record: &AuditRecord| match mail_in {
        MailIn::D1 => work.append(record),
        MailIn::OwnDatabase(mailbox_id) => work.append_to_mailbox(mailbox_id, record),
    };
    // One batch, one attempt: the entry's place in the chain is the database's
    // to assign, so concurrent deliveries never contend for it.
    let mut batch = vec![insert];
    batch.extend(index::indexed(receipt_id));
    batch.extend(linking::receive_into(&thread_id, new_thread, receipt_id, &parsed.subject));
    batch.push(append(&record));
    // The butlers act on the conversation once the message is in it, each effect
    // audited as the butler for its sponsor, after the delivery's own entry.
    let reply = butlers::ReplyBasis {
        message_id: &parsed.message_id,
        in_reply_to: &parsed.in_reply_to,
        references: &parsed.references,
    };
    let stored = butlers::StoredIn {
        receipt_id,
        thread_id: &thread_id,
        mailbox_id: &mailbox_id,
        conversation: &conversation,
        in_own_database: moved,
    };
    let effects = butlers::on_delivery(&active_butlers, &delivered.facts(), &reply, &stored, node.platform);
    // Each copy's own original, before the copy refers to it.
    for copy in &effects.copies {
        node.blobs.put(&copy.raw_key, raw).await.map_err(|error| failure(&error.0))?;
    }
    batch.extend(effects.statements.iter().cloned());
    batch.extend(effects.records.iter().map(append));
    let mut on_d1 = effects.on_d1.clone();
    if let Some((DatabaseFullness::Nearly, size)) = mailbox_fullness {
        let limit = node.config.mailbox_limit_bytes;
        on_d1.push(notifications::database_alarm(this_mailbox, DatabaseFullness::Nearly, size, limit, node.platform));
    }
    if let Some((DatabaseFullness::Nearly, size)) = fullness {
        on_d1.push(notifications::database_alarm(
            AlarmedDatabase::Node,
            DatabaseFullness::Nearly,
            size,
            node.config.database_limit_bytes,
            node.platform,
        ));
    }
    let committed = match mail_in {
        MailIn::D1 => {
            batch.extend(on_d1);
            work.run(batch).await
        }
        MailIn::OwnDatabase(mailbox_id) => work.run_in_mailbox(mailbox_id, batch, on_d1).await,
    };
    match committed {
        Ok(_) => {
            let mut segments = mail_in.segments();
            for copy in effects.copies_after() {
                let insert = receipt(&copy.copy_id, &copy.target, &copy.raw_key, &copy.new_thread_id)
                    .value("filed_by", copy.butler_id.as_str())
                    .statement();
                if let Some(segment) = file_copy_after(&work, copy, insert).await {
                    segments.push(segment);
                }
            }
            // A webhook that failed is recorded once it has: a round trip
            // more, paid only then.
            let failed = butlers::post_webhooks(&effects.posts, node).await;
            if !failed.records.is_empty()
                && let Err(error) = work.commit(failed.on_d1, &failed.records).await
            {
                node.platform.log(&format!("recording a butler's failed webhook for {recipient}: {error}"));
            }
            Ok(Received { delivery: Delivery::Stored { receipt_id: receipt_id.to_string() }, segments })
        }
        // A concurrent delivery stored a receipt under the same key first: the
        // next try keeps the message's bytes, and files its copies anew.
        Err(BackgroundError::Storage(StorageError::Unique(constraint)))
            if constraint.starts_with("receipts.mailbox_id") =>
        {
            for copy in &effects.copies {
                forget_original(node, &copy.raw_key).await;
            }
            Err(Stored::Raced)
        }
        // Or the mailbox's mail (or a copy's target's) moved into its own
        // database after the first read said it was in D1: D1 refused it,
        // and the next try follows the mail.
        Err(BackgroundError::Storage(StorageError::Aborted(name))) if name == MAIL_MOVED => {
            for copy in &effects.copies {
                forget_original(node, &copy.raw_key).await;
            }
            Err(Stored::Raced)
        }
        Err(error) => {
            for key in std::iter::once(&raw_key).chain(effects.copies.iter().map(|copy| &copy.raw_key)) {
                forget_original(node, key).await;
            }
            Err(failure(&error))
        }
    }
}

/// Deletes bytes stored for a receipt that was not stored after all, so they
/// are not kept for nothing; a failure is logged, and the bytes stay (no
/// receipt refers to them, and no delivery will: each key is one receipt's).
async fn forget_original(node: &Node<'_>, raw_key: &str) {
    if let Err(error) = node.blobs.delete(raw_key).await {
        node.platform.log(&format!("deleting {raw_key}, stored for a message not kept: {}", error.0));
    }
}

/// Files `copy` (its receipt written by `insert`) where its target's mail
/// is, with its entry, once the delivery is stored; answers the segment it
/// appended to, if any. A target that already holds the message (whether it
/// did was asked of D1's receipts, a copy where the target's mail moved)
/// keeps the one it has, and the effect is recorded as skipped for that, as
/// a delivery's judgement records it; a copy that could not be written is
/// recorded as the effect failed, and its sponsor told
/// (`butlers::copy_not_filed`). The delivery stands either way.
async fn file_copy_after(work: &Background<'_>, copy: &CopyToFile, insert: Statement) -> Option<String> {
    let node = work.node();
    let commit_where_the_target_is = |statements: Vec<Statement>, record: AuditRecord| async move {
        match copy.target_moved {
            true => work.commit_in_mailbox(&copy.target, statements, &[record], vec![]).await,
            false => work.commit(statements, &[record]).await,
        }
    };
    let filed = commit_where_the_target_is(copy.filed_after(insert), copy.record.clone()).await;
    let filed = match filed {
        Err(BackgroundError::Storage(StorageError::Unique(constraint)))
            if constraint.starts_with("receipts.mailbox_id") =>
        {
            commit_where_the_target_is(Vec::new(), butlers::copy_already_held(copy, node.platform)).await
        }
        other => other,
    };
    match filed {
        Ok(_) => copy.target_moved.then(|| copy.target.clone()),
        Err(error) => {
            node.platform.log(&format!("filing {} in {}: {error}", copy.copy_id, copy.target));
            let failed = butlers::copy_not_filed(copy, &error.to_string(), node.platform);
            if let Err(error) = work.commit(failed.on_d1, &failed.records).await {
                node.platform.log(&format!("recording the copy {} not filed: {error}", copy.copy_id));
            }
            None
        }
    }
}

/// The entry of a delivery to `mailbox_id` of receipt `receipt_id` (stored, or
/// delivered again), by nobody, through email.
fn received_mail(at: i64, mailbox_id: &str, receipt_id: &str, detail: serde_json::Value) -> AuditRecord {
    AuditRecord {
        at,
        actor: None,
        delegator: None,
        surface: Some("email"),
        action: "receive_mail".into(),
        object: Some(receipt_id.to_string()),
        outcome: "ok",
        detail: Some(detail.to_string()),
        topic: Some(Topic::Mailbox(mailbox_id.to_string())),
    }
}

/// How full the database is, by the largest size the read's `results` report
/// against `limit_bytes`: `None` below `DATABASE_WARNING_PERCENT` of it, or
/// when the database reports no size.
fn fullness_of(results: &[QueryResult], limit_bytes: u64) -> Option<(DatabaseFullness, u64)> {
    let size = results.iter().filter_map(|result| result.size_after).max()?;
    if size >= limit_bytes {
        Some((DatabaseFullness::Full, size))
    } else if size.saturating_mul(100) >= limit_bytes.saturating_mul(DATABASE_WARNING_PERCENT) {
        Some((DatabaseFullness::Nearly, size))
    } else {
        None
    }
}
