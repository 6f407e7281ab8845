//! The test node's bindings: an object store in memory (`MemoryBlobs`), a mail
//! binding that records what it sends (`RecordingMailer`), and outbound HTTP
//! that records what it posts and answers as a test sets it (`RecordingWebhooks`),
//! slow or silent receivers included.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use crate::core::bindings::{BlobError, BlobStore, Fetched, Mailer, MailerError, WebhookError, Webhooks};
use crate::core::outbound::Destination;
use crate::core::storage::LocalBoxFuture;

use super::clock::VirtualClock;

/// An object store in memory.
#[derive(Default)]
pub struct MemoryBlobs {
    pub objects: RefCell<std::collections::BTreeMap<String, Vec<u8>>>,
    /// Set by a test to make deleting fail, as an object store that does not
    /// answer would.
    pub unavailable: Cell<bool>,
    /// Set by a test to make storing fail.
    pub refusing_puts: Cell<bool>,
}

impl BlobStore for MemoryBlobs {
    fn put<'a>(&'a self, key: &'a str, bytes: &'a [u8]) -> LocalBoxFuture<'a, Result<(), BlobError>> {
        Box::pin(async move {
            if self.refusing_puts.get() {
                return Err(BlobError("the object store refuses to store".into()));
            }
            self.objects.borrow_mut().insert(key.to_string(), bytes.to_vec());
            Ok(())
        })
    }

    fn get<'a>(&'a self, key: &'a str) -> LocalBoxFuture<'a, Result<Option<Vec<u8>>, BlobError>> {
        Box::pin(async move { Ok(self.objects.borrow().get(key).cloned()) })
    }

    fn delete<'a>(&'a self, key: &'a str) -> LocalBoxFuture<'a, Result<(), BlobError>> {
        Box::pin(async move {
            if self.unavailable.get() {
                return Err(BlobError("the object store is unavailable".into()));
            }
            self.objects.borrow_mut().remove(key);
            Ok(())
        })
    }
}

/// One message handed to the mail binding.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SentMessage {
    pub envelope_from: String,
    pub envelope_to: String,
    pub raw: Vec<u8>,
}

/// A mail binding that records what it is handed, and refuses the recipients a
/// test names.
#[derive(Default)]
pub struct RecordingMailer {
    pub sent: RefCell<Vec<SentMessage>>,
    pub refuse: RefCell<Vec<String>>,
}

impl Mailer for RecordingMailer {
    fn send<'a>(
        &'a self,
        envelope_from: &'a str,
        envelope_to: &'a str,
        raw: &'a [u8],
    ) -> LocalBoxFuture<'a, Result<Option<String>, MailerError>> {
        Box::pin(async move {
            if self.refuse.borrow().iter().any(|refused| refused == envelope_to) {
                return Err(MailerError(format!("destination {envelope_to} is not allowed")));
            }
            self.sent.borrow_mut().push(SentMessage {
                envelope_from: envelope_from.to_string(),
                envelope_to: envelope_to.to_string(),
                raw: raw.to_vec(),
            });
            // As Cloudflare's service does: its own Message-ID on what left.
            Ok(Some(format!("<sent-{}@mail-service.test>", self.sent.borrow().len())))
        })
    }
}

/// A webhook POST a `RecordingWebhooks` was handed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PostedWebhook {
    pub url: String,
    pub headers: Vec<(String, String)>,
    pub body: String,
    /// When it arrived, by the virtual clock.
    pub at_ms: i64,
}

/// Outbound HTTP that records what it is handed and answers `status` (200
/// unless a test sets another), or fails to connect while `unreachable`; a
/// receiver listed in `slow` answers only after its delay, on the node's clock.
pub struct RecordingWebhooks {
    pub posted: RefCell<Vec<PostedWebhook>>,
    pub status: Cell<u16>,
    pub unreachable: Cell<bool>,
    /// Receivers that take their time: a POST to the URL answers this many
    /// milliseconds after it arrived (`i64::MAX`: never).
    pub slow: RefCell<Vec<(String, i64)>>,
    /// What a GET of each URL answers (status, body); any other URL does not answer.
    pub documents: RefCell<Vec<(String, u16, Vec<u8>)>>,
    /// Every URL a GET was asked for, in order.
    pub fetched: RefCell<Vec<String>>,
    /// What each exchange with a URL answers, in turn (the last again once
    /// the rest are spent); a URL with none does not answer.
    pub exchanges: RefCell<Vec<(String, Vec<Fetched>)>>,
    clock: Rc<VirtualClock>,
}

impl RecordingWebhooks {
    /// Receivers whose time is `clock`'s: the node's platform's.
    pub fn on(clock: Rc<VirtualClock>) -> RecordingWebhooks {
        RecordingWebhooks {
            posted: RefCell::default(),
            status: Cell::new(200),
            unreachable: Cell::new(false),
            slow: RefCell::default(),
            documents: RefCell::default(),
            fetched: RefCell::default(),
            exchanges: RefCell::default(),
            clock,
        }
    }

    /// Makes the receiver at `url` answer `milliseconds` after a POST arrives.
    pub fn answer_after(&self, url: &str, milliseconds: i64) {
        self.slow.borrow_mut().push((url.to_string(), milliseconds));
    }

    /// A POST arriving: refused while `unreachable`, else recorded and held
    /// for the receiver's delay, if it has one.
    async fn received(&self, url: &str, headers: &[(String, String)], body: &str) -> Result<(), WebhookError> {
        if self.unreachable.get() {
            return Err(WebhookError("the receiver did not answer".into()));
        }
        self.posted.borrow_mut().push(PostedWebhook {
            url: url.to_string(),
            headers: headers.to_vec(),
            body: body.to_string(),
            at_ms: self.clock.now_ms(),
        });
        let delay = self.slow.borrow().iter().find(|(slow, _)| slow == url).map(|(_, delay)| *delay);
        if let Some(delay) = delay {
            self.clock.sleep(delay).await;
        }
        Ok(())
    }

    /// Makes exchanges with `url` answer `answers`, in turn.
    pub fn answer_exchanges(&self, url: &str, answers: Vec<Fetched>) {
        let mut exchanges = self.exchanges.borrow_mut();
        exchanges.retain(|(known, _)| known != url);
        exchanges.push((url.to_string(), answers));
    }

    /// The POSTs made to `url`, in order.
    pub fn posted_to(&self, url: &str) -> Vec<PostedWebhook> {
        self.posted.borrow().iter().filter(|posted| posted.url == url).cloned().collect()
    }
}

impl Default for RecordingWebhooks {
    fn default() -> Self {
        RecordingWebhooks::on(VirtualClock::at(0))
    }
}

impl Webhooks for RecordingWebhooks {
    fn get<'a>(
        &'a self,
        destination: &'a Destination,
        limit: usize,
    ) -> LocalBoxFuture<'a, Result<Fetched, WebhookError>> {
        let url = destination.url();
        Box::pin(async move {
            self.fetched.borrow_mut().push(url.to_string());
            let documents = self.documents.borrow();
            let (_, status, body) = documents
                .iter()
                .find(|(known, _, _)| known == url)
                .ok_or_else(|| WebhookError("nothing answered".into()))?;
            if body.len() > limit {
                return Err(WebhookError(format!("the body is longer than {limit} bytes")));
            }
            Ok(Fetched::of(*status, body.clone()))
        })
    }

    fn exchange<'a>(
        &'a self,
        destination: &'a Destination,
        headers: &'a [(String, String)],
        body: &'a str,
        limit: usize,
    ) -> LocalBoxFuture<'a, Result<Fetched, WebhookError>> {
        let url = destination.url();
        Box::pin(async move {
            self.received(url, headers, body).await?;
            let mut exchanges = self.exchanges.borrow_mut();
            let answers = exchanges
                .iter_mut()
                .find(|(known, _)| known == url)
                .map(|(_, answers)| answers)
                .ok_or_else(|| WebhookError("nothing answered".into()))?;
            let answer = if answers.len() > 1 {
                answers.remove(0)
            } else {
                answers.first().cloned().ok_or_else(|| WebhookError("nothing answered".into()))?
            };
            if answer.body.len() > limit {
                return Err(WebhookError(format!("the body is longer than {limit} bytes")));
            }
            Ok(answer)
        })
    }

    fn post<'a>(
        &'a self,
        destination: &'a Destination,
        headers: &'a [(String, String)],
        body: &'a str,
    ) -> LocalBoxFuture<'a, Result<u16, WebhookError>> {
        let url = destination.url();
        Box::pin(async move {
            self.received(url, headers, body).await?;
            Ok(self.status.get())
        })
    }
}
