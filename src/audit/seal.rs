//! The sealer: links the entries written since the last sealed one into the
//! chain, in `seq` order, each after `walk` found nothing wrong with it (its MAC,
//! no copy of an earlier entry, no gap, no older kind after a newer), stopping
//! at the first it will not seal (decisions 0015 and 0027). Deterministic: two
//! sealers racing compute the same hashes, and an update only fills a hash
//! still empty. The adapter seals after every answer that appended, and the
//! scheduled upkeep seals whatever is left.

use mailroom_contract::api::ChainHead;

use super::store;
use crate::audit::chain::{ChainOf, SEAL_BATCH, StoredEntry};
use crate::audit::walk::{self, Anchor, Walk};
use crate::core::node::Config;
use crate::core::storage::{Database, QueryResult, Statement, StorageError};

/// The statements reading what the sealer needs: the last sealed entry, and the
/// entries after it still waiting for their seal, each with any earlier entry
/// it copies.
fn seal_work() -> [Statement; 2] {
    store::seal_work(SEAL_BATCH)
}

/// What a pass of the sealer did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sealing {
    /// The last sealed entry after the pass, if any.
    pub head: Option<ChainHead>,
    /// How many entries the pass sealed.
    pub sealed: usize,
    /// Why the pass stopped before the end of the waiting entries, if it did.
    pub stopped: Option<String>,
    /// Whether more entries may be waiting after the pass's batch.
    pub more: bool,
}

/// The seals for `waiting`, linked after `last_sealed` once its own MAC and
/// seal are checked: the updates to send, and what the pass did. Pure.
fn seals(
    config: &Config,
    last_sealed: &QueryResult,
    waiting: &QueryResult,
    of: ChainOf<'_>,
) -> Result<(Vec<Statement>, Sealing), StorageError> {
    let anchor = match last_sealed.decode_all::<StoredEntry>()?.first() {
        None => Anchor::genesis_of(of),
        Some(last) => match Anchor::verified_in(config, last, of) {
            Ok(anchor) => anchor,
            Err(failure) => {
                let head = last.hash.clone().map(|hash| ChainHead { seq: last.seq, hash });
                return Ok((Vec::new(), Sealing { head, sealed: 0, stopped: Some(failure.sentence()), more: false }));
            }
        },
    };
    let entries: Vec<StoredEntry> = waiting.decode_all()?;
    let walked = walk::walk(config, &anchor, &entries, Walk { seal: true, reference: None, witness: None, of });
    let more = walked.failure.is_none() && entries.len() as i64 == SEAL_BATCH;
    let sealing = Sealing {
        head: walked.head,
        sealed: walked.seals.len(),
        stopped: walked.failure.map(|failure| failure.sentence()),
        more,
    };
    Ok((walked.seals, sealing))
}

/// One pass of the sealer over the organisation's chain in `database`: reads
/// the waiting entries (one round trip) and seals those that verify (one more,
/// when there are any).
pub async fn seal(database: &dyn Database, config: &Config) -> Result<Sealing, StorageError> {
    seal_chain(database, config, ChainOf::Organisation).await
}

/// `seal`, for the chain `of` kept in `database`: D1's, or a mailbox's
/// segment in that mailbox's own database.
pub async fn seal_chain(database: &dyn Database, config: &Config, of: ChainOf<'_>) -> Result<Sealing, StorageError> {
    let [last_sealed, waiting]: [QueryResult; 2] = database
        .execute(seal_work().into())
        .await?
        .try_into()
        .map_err(|_| StorageError::Backend("the sealer's read answered the wrong number of results".into()))?;
    let (updates, sealing) = seals(config, &last_sealed, &waiting, of)?;
    if !updates.is_empty() {
        database.execute(updates).await?;
    }
    Ok(sealing)
}
