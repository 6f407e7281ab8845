//! The Worker's three events, the entry points the runtime calls: `fetch` (a
//! request dispatched, then its deferred writes, the chain's seal and its
//! events told to their hubs after the answer; a listening route's admitted
//! request handed to its hub; an answer that follows a topic streamed), `scheduled` (the cron's jobs) and `email` (inbound mail
//! received, or rejected with its SMTP reason, or forwarded to the fallback
//! address when it could not be stored).

use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use worker::{Context, Env, ForwardableEmailMessage, ScheduleContext, ScheduledEvent, event};

use crate::audit;
use crate::audit::chain::ChainOf;
use crate::core::http::{Response, Surface};
use crate::core::mailbox_storage::MailboxStorage;
use crate::core::platform::Platform;
use crate::core::refusal::Refusal;
use crate::core::storage::Database;
use crate::core::timing::Timings;
use crate::dispatch::{dispatch, refused_before_dispatch};
use crate::live::Listener;
use crate::mail::{self, Rejection};

use super::http::{to_core_request, to_worker_response};
use super::installation::{Bindings, bindings};
use super::platform;
use super::{follow, hubs};

#[event(fetch)]
async fn fetch(mut request: worker::Request, env: Env, context: Context) -> worker::Result<worker::Response> {
    // Where the request's time goes is measured from here, when the node's
    // configuration asks (decision 0034); until the dispatcher takes over, and
    // again once it answers, it is the boundary's.
    let began_ms = platform::WorkersPlatform.now_ms();
    console_error_panic_hook::set_once();
    let bindings = match bindings(&env, Some(began_ms)) {
        Ok(bindings) => bindings,
        Err(refusal) => {
            let path = request.path();
            let refused = refused_before_dispatch(request.method().as_ref(), &path, refusal);
            return to_worker_response(refused, &Timings::off());
        }
    };
    let timings = bindings.timings.clone();
    let core_request = match to_core_request(&mut request).await {
        Ok(core_request) => core_request,
        Err(refusal) => return to_worker_response(Response::refusal(&refusal), &timings),
    };
    let mut response = dispatch(&bindings.node(), &core_request, Surface::Rest).await;
    let events = bindings.events.take_by_topic();
    let webhooks_queued = bindings.events.take_queued() > 0;
    if !response.deferred.is_empty()
        || response.seal_chain
        || response.seal_segment.is_some()
        || !events.is_empty()
        || webhooks_queued
        || response.remote_deliveries_queued
    {
        // What follows the answer must not hold it up: outcomes recorded after it
        // (a dispatch's result), sealing the entries it appended to the audit
        // chain, and telling listeners what it committed. The runtime keeps the
        // isolate alive until they are done.
        let (seal, hub_env) = (response.seal_chain, env.clone());
        let deferred = response.deferred.clone();
        let segment = response.seal_segment.clone();
        let remote_deliveries_queued = response.remote_deliveries_queued;
        context.wait_until(async move {
            // The deferred writes first: a listener told of the change reads
            // what they add (a sent message's notice) when it reads again.
            for error in bindings.node().write_deferred(deferred).await {
                worker::console_error!("a deferred write failed: {error}");
            }
            hubs::publish(&hub_env, events).await;
            // Queued by the commit, or by the deferred writes after a change
            // in a mailbox's own database.
            if webhooks_queued || bindings.events.take_queued() > 0 {
                deliver_webhooks(&bindings).await;
            }
            // A message for an agent elsewhere goes now, not at the next minute;
            // what the run commits (an answer come back, a message ended) is
            // told, posted and sealed as the request's own changes were.
            let mut seal = seal;
            if remote_deliveries_queued {
                if let Err(failure) =
                    crate::schedule::run_job(&bindings.node(), crate::schedule::Job::DeliverRemoteMessages).await
                {
                    worker::console_error!("delivering messages elsewhere failed: {failure}");
                }
                hubs::publish(&hub_env, bindings.events.take_by_topic()).await;
                if bindings.events.take_queued() > 0 {
                    deliver_webhooks(&bindings).await;
                }
                seal = true;
            }
            if seal {
                seal_logged(&bindings, ChainOf::Organisation).await;
            }
            if let Some(mailbox_id) = segment {
                seal_logged(&bindings, ChainOf::Mailbox(&mailbox_id)).await;
            }
        });
    }
    if let Some(following) = response.follow.take() {
        // Admitted: the answer goes on as server-sent events while the
        // topic's hub tells what changed.
        return match follow::follow(&env, &context, &response, following).await {
            Ok(streaming) => Ok(streaming),
            Err(error) => {
                worker::console_error!("following a stream failed: {error}");
                to_worker_response(Response::refusal(&Refusal::internal()), &timings)
            }
        };
    }
    if let Some(listening) = &response.listen {
        // Admitted: the topic's hub makes and holds the WebSocket.
        return match hubs::hand_to_hub(&env, &listening.topic, &Listener::of(&core_request, listening)).await {
            Ok(opened) => Ok(opened),
            Err(error) => {
                worker::console_error!("opening a stream on {} failed: {error}", listening.topic.key());
                to_worker_response(Response::refusal(&Refusal::internal()), &timings)
            }
        };
    }
    to_worker_response(response, &timings)
}

/// Posts the webhook deliveries a commit queued, logging what stops the run
/// (the per-minute schedule tries what it left).
async fn deliver_webhooks(bindings: &Bindings) {
    if let Err(failure) = crate::schedule::run_job(&bindings.node(), crate::schedule::Job::DeliverWebhooks).await {
        worker::console_error!("delivering webhooks failed: {failure}");
    }
}

/// Seals the waiting entries of the chain `of` (the organisation's, in D1,
/// or a mailbox's segment, in its own database), logging what stops the
/// sealer: the upkeep seals what is left.
async fn seal_logged(bindings: &Bindings, of: ChainOf<'_>) {
    let segment;
    let (database, named): (&dyn Database, String) = match of {
        ChainOf::Organisation => (&bindings.database, "the audit chain".into()),
        ChainOf::Mailbox(mailbox_id) => {
            segment = bindings.mailboxes.of(mailbox_id);
            (&*segment, format!("the audit segment of {mailbox_id}"))
        }
    };
    match audit::seal::seal_chain(database, &bindings.config, of).await {
        Ok(sealing) => {
            if let Some(stopped) = sealing.stopped {
                worker::console_error!("{named} was not sealed past its head: {stopped}");
            }
        }
        Err(error) => worker::console_error!("sealing {named} failed: {error}"),
    }
}

/// The cron triggers (`[triggers]` in wrangler.toml): each runs the jobs
/// `schedule::CRONS` names for its expression.
#[event(scheduled)]
async fn scheduled(event: ScheduledEvent, env: Env, _context: ScheduleContext) {
    console_error_panic_hook::set_once();
    let bindings = match bindings(&env, None) {
        Ok(bindings) => bindings,
        Err(refusal) => {
            worker::console_error!("the scheduled upkeep cannot run: {}", refusal.reason);
            return;
        }
    };
    if let Err(failures) = crate::schedule::on_schedule(&bindings.node(), &event.cron()).await {
        for failure in failures {
            worker::console_error!("the scheduled run `{}` failed: {failure}", event.cron());
        }
    }
    // What the jobs committed, whether or not every one finished.
    hubs::publish(&env, bindings.events.take_by_topic()).await;
    if bindings.events.take_queued() > 0 {
        deliver_webhooks(&bindings).await;
    }
}

/// Inbound mail from Cloudflare Email Routing: stored, or rejected with an SMTP
/// reason the sender's server reports back.
#[event(email)]
async fn email(message: ForwardableEmailMessage, env: Env, context: Context) -> worker::Result<()> {
    console_error_panic_hook::set_once();
    let fallback =
        env.var("INBOUND_FALLBACK_ADDRESS").ok().map(|value| value.to_string()).filter(|value| !value.is_empty());
    let reject = |rejection: Rejection| reject(&message, rejection, fallback.as_deref());
    let Ok(bindings) = bindings(&env, None) else {
        return reject(Rejection::TemporaryFailure).await;
    };
    let limit = bindings.config.maximum_message_bytes;
    // Refuse an oversized message on its declared size, before reading it.
    if message.raw_size() > limit as f64 {
        return reject(Rejection::TooLarge { limit }).await;
    }
    let raw = match message.raw_bytes().await {
        Ok(raw) => raw,
        Err(error) => {
            worker::console_error!("reading an inbound message failed: {error}");
            return reject(Rejection::TemporaryFailure).await;
        }
    };
    let (from, to) = (message.from(), message.to());
    match mail::receive(&bindings.node(), &from, &to, &raw).await {
        // Stored or delivered again, the message left an audit entry to seal,
        // in the chain and in the segments of mailboxes whose mail moved.
        Ok(received) => {
            let events = bindings.events.take_by_topic();
            let webhooks_queued = bindings.events.take_queued() > 0;
            context.wait_until(async move {
                hubs::publish(&env, events).await;
                if webhooks_queued {
                    deliver_webhooks(&bindings).await;
                }
                seal_logged(&bindings, ChainOf::Organisation).await;
                for mailbox_id in &received.segments {
                    seal_logged(&bindings, ChainOf::Mailbox(mailbox_id)).await;
                }
            });
            Ok(())
        }
        Err(rejection) => reject(rejection).await,
    }
}

/// Rejects an inbound message with its SMTP reason. Email Routing turns every
/// rejection (and every exception) into a permanent failure, so a sender never
/// retries mail the node failed to store; when the operator named a fallback
/// address, such mail is forwarded there instead of being bounced.
async fn reject(message: &ForwardableEmailMessage, rejection: Rejection, fallback: Option<&str>) -> worker::Result<()> {
    if let (true, Some(address)) = (rejection.is_temporary(), fallback) {
        match message.forward(address).await {
            Ok(_) => {
                worker::console_error!("could not store mail for {}; forwarded it to {address}", message.to());
                return Ok(());
            }
            Err(error) => worker::console_error!("forwarding mail for {} to {address} failed: {error:?}", message.to()),
        }
    }
    set_reject(message, &rejection.smtp_reason()).await;
    Ok(())
}

/// Rejects `message` with `reason` and waits for the rejection to land. Where
/// the message is a stub across an RPC boundary (locally, under wrangler dev),
/// `setReject` answers a promise, and a handler that returned first would leave
/// the rejection unheard; in production it answers nothing, and this waits for
/// nothing.
async fn set_reject(message: &ForwardableEmailMessage, reason: &str) {
    let returned = message.unchecked_ref::<Rejectable>().set_reject_answering(reason);
    if let Err(error) = JsFuture::from(js_sys::Promise::resolve(&returned)).await {
        worker::console_error!("rejecting an inbound message failed: {error:?}");
    }
}

#[wasm_bindgen]
extern "C" {
    /// An inbound message, seen only as something with `setReject`.
    type Rejectable;

    /// `setReject`, keeping what it answers (the worker crate's binding drops it).
    #[wasm_bindgen(method, js_name = setReject)]
    fn set_reject_answering(this: &Rejectable, reason: &str) -> JsValue;
}
