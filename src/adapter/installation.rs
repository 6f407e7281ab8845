//! The installation a Worker's environment describes: its configuration read
//! from the secrets and variables, and the core's bindings on D1, R2, the
//! mail binding, `fetch` and the Workers platform; or the refusal naming what
//! the deployment lacks.

use worker::Env;

use crate::core::events::Published;
use crate::core::node::{
    AuditKey, Config, DEFAULT_DATABASE_LIMIT_BYTES, DEFAULT_MAILBOX_LIMIT_BYTES, DEFAULT_MAXIMUM_MESSAGE_BYTES,
    Installation,
};
use crate::core::refusal::Refusal;
use crate::core::timing::Timings;

use super::{bindings, d1, mailboxes, platform};

/// The shortest `SESSION_SECRET` and `AUDIT_KEY` the node accepts: 32 bytes of
/// key material.
const MINIMUM_SESSION_SECRET_LENGTH: usize = 32;

/// The bindings a request or an email is handled with.
pub(super) type Bindings = Installation<
    d1::D1Storage,
    bindings::R2Blobs,
    bindings::EmailBinding,
    bindings::FetchWebhooks,
    platform::WorkersPlatform,
    mailboxes::MailboxObjects,
>;

/// Logs a missing binding for the operator and answers the refusal naming it.
fn missing(what: &'static str) -> impl Fn(worker::Error) -> Refusal {
    move |error| {
        worker::console_error!("the binding {what} is missing: {error}");
        Refusal::misconfigured(what)
    }
}

/// The installation a Worker's environment describes, or the refusal naming
/// what it lacks; for a request that began at `began_ms`, measuring where its
/// time goes if the configuration asks.
pub(super) fn bindings(env: &Env, began_ms: Option<i64>) -> Result<Bindings, Refusal> {
    let platform = platform::WorkersPlatform;
    let config = configuration(env)?;
    let timings = match began_ms {
        Some(began_ms) if config.server_timing => Timings::began_at(began_ms),
        _ => Timings::off(),
    };
    Ok(Installation {
        database: d1::D1Storage::new(env.d1("DB").map_err(missing("the D1 binding `DB`"))?, timings.clone()),
        mailboxes: mailboxes::MailboxObjects::new(
            env.durable_object(mailboxes::MAILBOXES).map_err(missing("the Durable Object binding `MAILBOXES`"))?,
        ),
        blobs: bindings::R2Blobs::new(env.bucket("RAW_MAIL").map_err(missing("the R2 binding `RAW_MAIL`"))?),
        mailer: bindings::EmailBinding::new(
            env.send_email("SEND_EMAIL").map_err(missing("the send_email binding `SEND_EMAIL`"))?,
        ),
        webhooks: bindings::FetchWebhooks,
        platform,
        config,
        timings,
        events: Published::relaying(&crate::webhooks::RELAY),
    })
}

fn configuration(env: &Env) -> Result<Config, Refusal> {
    let secret = |name: &str| env.secret(name).ok().map(|value| value.to_string()).filter(|value| !value.is_empty());
    let Some(session_secret) = secret("SESSION_SECRET").filter(|value| value.len() >= MINIMUM_SESSION_SECRET_LENGTH)
    else {
        worker::console_error!("SESSION_SECRET is missing or shorter than 32 characters");
        return Err(Refusal::misconfigured("the SESSION_SECRET secret (32 characters or more)"));
    };
    let Some(audit_key) = secret("AUDIT_KEY").filter(|value| value.len() >= MINIMUM_SESSION_SECRET_LENGTH) else {
        worker::console_error!("AUDIT_KEY is missing or shorter than 32 characters");
        return Err(Refusal::misconfigured("the AUDIT_KEY secret (32 characters or more)"));
    };
    let mut config = Config::new(session_secret.into_bytes(), audit_key.into_bytes(), secret("SETUP_TOKEN"));
    // Keys the chain was written with before a rotation, kept to verify what
    // they wrote: comma-separated, newest first.
    config.previous_audit_keys = secret("AUDIT_PREVIOUS_KEYS")
        .map(|keys| {
            keys.split(',').map(str::trim).filter(|key| !key.is_empty()).map(|key| AuditKey::new(key.into())).collect()
        })
        .unwrap_or_default();
    config.maximum_message_bytes = env
        .var("MAXIMUM_MESSAGE_BYTES")
        .ok()
        .and_then(|value| value.to_string().parse().ok())
        .unwrap_or(DEFAULT_MAXIMUM_MESSAGE_BYTES);
    config.database_limit_bytes = size_limit(env, "DATABASE_LIMIT_BYTES", DEFAULT_DATABASE_LIMIT_BYTES);
    config.mailbox_limit_bytes = size_limit(env, "MAILBOX_LIMIT_BYTES", DEFAULT_MAILBOX_LIMIT_BYTES);
    config.new_mailboxes_in_own_databases =
        switch(env, "NEW_MAILBOXES_IN_OWN_DATABASES").unwrap_or(config.new_mailboxes_in_own_databases);
    config.move_mail_into_own_databases =
        switch(env, "MOVE_MAIL_INTO_OWN_DATABASES").unwrap_or(config.move_mail_into_own_databases);
    let round_trips = size_limit(env, "MOVE_ROUND_TRIPS_PER_RUN", u64::from(config.move_round_trips_per_run));
    config.move_round_trips_per_run = u32::try_from(round_trips).unwrap_or(u32::MAX);
    config.public_origin = env
        .var("PUBLIC_ORIGIN")
        .ok()
        .map(|value| value.to_string().trim_end_matches('/').to_string())
        .filter(|value| !value.is_empty());
    config.reminder_sender = env
        .var("REMINDER_SENDER")
        .ok()
        .map(|value| value.to_string().trim().to_string())
        .filter(|value| !value.is_empty());
    config.agent_network = switched_on(env, "FEATURE_AGENT_NETWORK");
    config.server_timing = switched_on(env, "SERVER_TIMING");
    Ok(config)
}

/// A size in bytes the variable `name` sets, or `default` where it is unset,
/// unreadable or zero.
fn size_limit(env: &Env, name: &str, default: u64) -> u64 {
    env.var(name)
        .ok()
        .and_then(|value| value.to_string().trim().parse().ok())
        .filter(|limit: &u64| *limit > 0)
        .unwrap_or(default)
}

/// Whether the variable `name` is `true` (in any case); off when unset.
fn switched_on(env: &Env, name: &str) -> bool {
    switch(env, name).unwrap_or(false)
}

/// Whether variable `name` switches something on (`true`) or off (anything
/// else), or `None` when it is not set and the default stands.
fn switch(env: &Env, name: &str) -> Option<bool> {
    env.var(name).ok().map(|value| value.to_string().trim().eq_ignore_ascii_case("true"))
}
