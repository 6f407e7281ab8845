//! The senders whose remote images a person always sees: a reading
//! preference kept on the node, per person, so it follows them from browser
//! to browser (decision 0044). This module owns its three routes, the
//! address as a path segment, and the refusals they give; its SQL is in
//! `store::image_senders`.
//!
//! The node only keeps the list: the interface decides what loads, showing a
//! listed sender's images only in mail whose sender was authenticated, so a
//! forged From cannot borrow the choice. The routes are a person's own
//! (operator tier, never offered to an agent): an agent reads HTML unrendered.

use mailroom_contract::PathParameter;
use mailroom_contract::api::{ImageSender, ImageSenderList, ImageSenderRemoved, image_sender_limits};
use percent_encoding::percent_decode_str;

use super::store::image_senders::{self as store, ImageSenderRow};
use crate::core::addresses;
use crate::core::caller::Caller;
use crate::core::context::Context;
use crate::core::http::Response;
use crate::core::refusal::Refusal;
use crate::core::time::rfc3339;

/// Why a call about a person's image senders was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ImageSenderError {
    /// The path's `senderAddress` is not an email address.
    NotAnAddress,
    /// The person already keeps as many senders as one may.
    TooMany,
    /// The sender is not on the person's list.
    NotListed { address: String },
}

impl From<ImageSenderError> for Refusal {
    fn from(error: ImageSenderError) -> Refusal {
        match error {
            ImageSenderError::NotAnAddress => Refusal::new(
                400,
                "invalid_address",
                "`senderAddress` is not an email address.",
                "A sender is named by their address: a local part, an @ and a domain with a dot, written plainly, \
                 percent-encoded as one segment of the path.",
                "Name the sender as the message's From shows it, such as news@letters.example.",
            ),
            ImageSenderError::TooMany => Refusal::new(
                409,
                "too_many_image_senders",
                "The sender was not added: your list of senders whose images you always see is full.",
                format!("A person may keep at most {} senders.", image_sender_limits::PER_PERSON),
                "Remove a sender you no longer read from your account page (or remove_image_sender), then add this one.",
            ),
            ImageSenderError::NotListed { address } => Refusal::new(
                404,
                "not_found",
                format!("{address} is not on your list of senders whose images you always see."),
                "Nobody added it, or it was already removed.",
                "List your senders with list_image_senders and remove one from there.",
            ),
        }
    }
}

impl ImageSenderRow {
    fn present(&self) -> ImageSender {
        ImageSender { address: self.address.clone(), added_at: rfc3339(self.added_at) }
    }
}

/// The person whose list a call works on. The routes are never offered to an
/// agent, so any other caller is a fault of the node's, not of the request.
fn person_of(context: &Context<'_>) -> Result<String, Refusal> {
    match context.caller() {
        Caller::Person { person_id, .. } => Ok(person_id.clone()),
        Caller::Agent { .. } | Caller::Stranger | Caller::Source { .. } | Caller::Peer { .. } => {
            Err(context.internal("an image senders route reached by someone other than a person"))
        }
    }
}

/// The path's sender, decoded and in lower case: addresses are compared the
/// way mail's senders are, whatever case a From was written in.
fn sender_of(context: &Context<'_>) -> Result<String, Refusal> {
    let segment = context.path(PathParameter::SenderAddress)?;
    let decoded = percent_decode_str(segment).decode_utf8().map_err(|_| ImageSenderError::NotAnAddress)?;
    Ok(addresses::normalize(&decoded).ok_or(ImageSenderError::NotAnAddress)?)
}

/// The rows a read answered, decoded.
fn rows(context: &Context<'_>, result: &crate::core::storage::QueryResult) -> Result<Vec<ImageSenderRow>, Refusal> {
    result.decode_all().map_err(|error| context.internal(error))
}

/// `GET /api/me/image-senders`.
pub async fn list(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let person_id = person_of(context)?;
    let [listed] = context.read_array([store::list(&person_id)]).await?;
    let senders = rows(context, &listed)?.iter().map(ImageSenderRow::present).collect();
    Ok(context.json(&ImageSenderList { senders, limit: image_sender_limits::PER_PERSON }))
}

/// `PUT /api/me/image-senders/:senderAddress`: adding a sender already listed
/// answers it as it was, and changes nothing.
pub async fn add(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let address = sender_of(context)?;
    let person_id = person_of(context)?;
    let [found] = context.read_array([store::one(&person_id, &address)]).await?;
    context.audit_object(address.clone());
    if let Some(row) = rows(context, &found)?.first() {
        return Ok(context.json(&row.present()));
    }
    let now_ms = context.now_ms();
    context.write(store::add(&person_id, &address, now_ms));
    context.guard(store::within_limit(&person_id, image_sender_limits::PER_PERSON), ImageSenderError::TooMany);
    Ok(context.json(&ImageSender { address, added_at: rfc3339(now_ms) }))
}

/// `DELETE /api/me/image-senders/:senderAddress`.
pub async fn remove(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let address = sender_of(context)?;
    let person_id = person_of(context)?;
    let [found] = context.read_array([store::one(&person_id, &address)]).await?;
    if rows(context, &found)?.is_empty() {
        return Err(ImageSenderError::NotListed { address }.into());
    }
    context.audit_object(address.clone());
    context.write(store::remove(&person_id, &address));
    Ok(context.json(&ImageSenderRemoved { address }))
}
