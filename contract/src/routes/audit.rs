//! The audit trail: reading and verifying the chain, its checkpoints and its witness.

use crate::api::{AuditCheckpoint, AuditPage, AuditVerification, AuditWitness, SetAuditWitness};
use crate::route::Method::{Delete, Get, Post, Put};
use crate::route::{Parameter, Refuses, Route, Tier};
use crate::route_id::RouteId;

use super::shared::ADMIN;

/// Why reading the audit trail is not offered to machines.
const AUDIT_IS_AN_ESCALATION_MAP: &str = "the audit trail records who holds what and who acted on what across the whole node: a map of how to escalate, not a question an agent's work depends on";

pub(super) fn list_audit_entries() -> Route {
    Route::new(RouteId::ListAuditEntries, Get, "/api/audit", "list_audit_entries")
        .summary("Read the audit trail")
        .description("Lists audit entries newest first: who acted (and, for an agent, under whose authority), through which route, on what, and with what outcome, narrowed by `actor`, `action`, `since` and `until` where given (a page's `next_cursor` continues with the same narrowing only if they are sent again). A mailbox whose mail is kept in its own database records what is done to its mail in its own segment of the chain, anchored in the organisation's: `mailbox_id` lists that segment's entries.")
        .query_parameters(const { &[
            Parameter::page_size("entries", 50, 200),
            Parameter::text("cursor", "The `next_cursor` of the previous page, to continue with older entries."),
            Parameter::text(
                "mailbox_id",
                "List this mailbox's segment of the chain (`mbx_…`) instead of the organisation's: what was done to its mail, once its mail is kept in its own database.",
            ),
            Parameter::text("actor", "Only what this person, agent or source did (`usr_…`, `agt_…`, `src_…`)."),
            Parameter::text("action", "Only entries of this action: a route's operation name, such as `create_person`."),
            Parameter::text("since", "Only entries written at or after this moment, in RFC 3339."),
            Parameter::text("until", "Only entries written at or before this moment, in RFC 3339."),
        ] })
        .response::<AuditPage>()
        .exception(Tier::Operator, AUDIT_IS_AN_ESCALATION_MAP)
        .authority(ADMIN)
}

pub(super) fn verify_audit_chain() -> Route {
    Route::new(RouteId::VerifyAuditChain, Get, "/api/audit/verify", "verify_audit_chain")
        .summary("Verify the audit chain")
        .description("Recomputes the keyed hash chain from the start (or from `after_seq`) for up to 5,000 entries: each entry's own MAC, that no entry is a copy of an earlier one, and each seal, which covers the entry's place and its predecessor. Compares the latest checkpoint D1 records with the one kept in the object store (they must agree), and the chain with them. Names what failed (`fault`) and where (`first_bad_seq`): an entry's MAC, a copy, a link, a gap, a truncated tail, a checkpoint disagreement or a rollback against the D1 or R2 record. Continue with `next_after_seq` until it is absent. Each mailbox keeps its own segment of the chain, anchored in this one: every answer checks a page of the segments from the head last anchored for each (`segments`, continued with `next_segments_after`), and with `mailbox_id` the answer is that segment's own, walked from its start like the chain.")
        .query_parameters(const { &[
            Parameter::whole_number(
                "after_seq",
                "Start after this entry, trusting its stored hash; use the previous answer's `next_after_seq`. Default: verify from the first entry.",
                0,
            ),
            Parameter::text(
                "mailbox_id",
                "Verify this mailbox's segment of the chain (`mbx_…`) instead of the organisation's, from its first entry or from `after_seq`.",
            ),
            Parameter::text(
                "segments_after",
                "Check the mailboxes' segments after this mailbox (`mbx_…`), in id order; use the previous answer's `next_segments_after`. Default: from the first mailbox.",
            ),
        ] })
        .response::<AuditVerification>()
        .exception(Tier::Operator, AUDIT_IS_AN_ESCALATION_MAP)
        .authority(ADMIN)
}

pub(super) fn write_audit_checkpoint() -> Route {
    Route::new(RouteId::WriteAuditCheckpoint, Post, "/api/audit/checkpoints", "write_audit_checkpoint")
        .summary("Checkpoint the audit chain")
        .description("Verifies the chain from the latest checkpoint to its head (up to 5,000 entries; the checkpoint is then of the last one verified), seals its newest entries, and writes a checkpoint of the head, numbered one more than the last and signed with the audit key, in D1 and in the node's object store, then sends it to the audit witness when one is set. A chain that does not verify, or checkpoint records that disagree, sign nothing: administrators are notified and the refusal says what failed. The node writes one every five minutes too; this writes one now, such as before an export or an audit.")
        .response::<AuditCheckpoint>()
        .created()
        .tier(Tier::Operator)
        .refuses(const { &[
            Refuses::Conflict("The chain does not verify from the latest checkpoint to its head, or D1 and the object store disagree about the latest checkpoint (`audit_chain_broken`): nothing was signed, and administrators were notified. Or another checkpoint was being written at the same moment (`checkpoint_in_progress`)."),
        ] })
        .authority(ADMIN)
}

pub(super) fn show_audit_witness() -> Route {
    Route::new(RouteId::ShowAuditWitness, Get, "/api/audit/witness", "show_audit_witness")
        .summary("Show the audit witness")
        .description("Shows who each checkpoint is also sent to outside the account (an auditor's email address or webhook), the secret those messages are signed with, and whether the witness has the latest checkpoint.")
        .response::<AuditWitness>()
        .exception(Tier::Operator, AUDIT_IS_AN_ESCALATION_MAP)
        .authority(ADMIN)
}

pub(super) fn set_audit_witness() -> Route {
    Route::new(RouteId::SetAuditWitness, Put, "/api/audit/witness", "set_audit_witness")
        .summary("Set the audit witness")
        .description("Sends every checkpoint from now on, signed, to an auditor's email address or webhook as well, so that a party outside the account holds them and can prove a rollback of the chain even by someone who can change both D1 and the object store. The witness is recorded in the audit chain itself, so it changes only through this route and remove_audit_witness. The next checkpoint (write one with write_audit_checkpoint) goes to the new witness, and to the one it replaces.")
        .request::<SetAuditWitness>()
        .response::<AuditWitness>()
        .tier(Tier::Operator)
        .authority(ADMIN)
}

pub(super) fn remove_audit_witness() -> Route {
    Route::new(RouteId::RemoveAuditWitness, Delete, "/api/audit/witness", "remove_audit_witness")
        .summary("Remove the audit witness")
        .description("Stops sending checkpoints outside the account. The next checkpoint still goes to the witness removed, which so learns that it was.")
        .response::<AuditWitness>()
        .tier(Tier::Operator)
        .authority(ADMIN)
}
