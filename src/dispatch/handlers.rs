//! The one place that names every route's handler: a match on `RouteId`, so a
//! route the contract declares cannot exist without one. Each domain's handlers
//! are reached through the domain's module.

use mailroom_contract::{PathParameter, RouteId};

use crate::audit::routes as audit;
use crate::core::context::Context;
use crate::core::http::Response;
use crate::core::refusal::Refusal;
use crate::identity::{people, relations, sessions, setup, teams};
use crate::mail::{deletion, mailboxes, messages, search, sends};
use crate::{agents, interface, mcp, reminders};

/// The one place that names every route's handler.
pub(super) async fn handle(context: &mut Context<'_>) -> Result<Response, Refusal> {
    match context.route().id {
        RouteId::InterfaceShell => Ok(interface::shell()),
        RouteId::InterfaceModule => interface::module(context.path(PathParameter::Module)?),
        RouteId::SetUpNode => setup::set_up_node(context).await,
        RouteId::SignIn => sessions::sign_in(context).await,
        RouteId::RefreshSession => sessions::refresh(context).await,
        RouteId::SignOut => sessions::sign_out(context).await,
        RouteId::GetMe => people::get_me(context).await,
        RouteId::ChangePassword => sessions::change_password(context).await,
        RouteId::ListPeople => people::list_people(context).await,
        RouteId::CreatePerson => people::create_person(context).await,
        RouteId::GetPerson => people::get_person(context).await,
        RouteId::DisablePerson => people::set_disabled(context, true).await,
        RouteId::EnablePerson => people::set_disabled(context, false).await,
        RouteId::ResetPassword => people::reset_password(context).await,
        RouteId::ListTeams => teams::list_teams(context).await,
        RouteId::CreateTeam => teams::create_team(context).await,
        RouteId::AddTeamMember => teams::add_member(context).await,
        RouteId::RemoveTeamMember => teams::remove_member(context).await,
        RouteId::ListRelations => relations::list_relations(context).await,
        RouteId::GrantRelation => relations::grant(context).await,
        RouteId::RevokeRelation => relations::revoke(context).await,
        RouteId::ListAuditEntries => audit::list_entries(context).await,
        RouteId::VerifyAuditChain => audit::verify_chain(context).await,
        RouteId::WriteAuditCheckpoint => audit::write_checkpoint(context).await,
        RouteId::ListAgentCapabilities => agents::list_capabilities(context).await,
        RouteId::ListMailboxes => mailboxes::list_work_queue(context).await,
        RouteId::ListReadableMailboxes => mailboxes::list_readable(context).await,
        RouteId::ListAllMailboxes => mailboxes::list_all(context).await,
        RouteId::CreateMailbox => mailboxes::create(context).await,
        RouteId::UpdateMailbox => mailboxes::update(context).await,
        RouteId::ListMessages => messages::list(context).await,
        RouteId::GetMessage => messages::get(context).await,
        RouteId::GetMessageBody => messages::body(context).await,
        RouteId::GetMessageOriginal => messages::original(context).await,
        RouteId::GetAttachment => messages::attachment(context).await,
        RouteId::DeleteMessage => deletion::delete(context).await,
        RouteId::SearchMessages => search::search(context).await,
        RouteId::ListSends => sends::list(context).await,
        RouteId::CreateDraft => sends::create_draft(context).await,
        RouteId::GetSend => sends::get(context).await,
        RouteId::UpdateDraft => sends::update_draft(context).await,
        RouteId::DeleteDraft => sends::delete_draft(context).await,
        RouteId::SubmitSend => sends::submit(context).await,
        RouteId::CancelSend => sends::cancel(context).await,
        RouteId::RetrySend => sends::retry(context).await,
        RouteId::ApproveSend => sends::approve(context).await,
        RouteId::RefuseSend => sends::refuse(context).await,
        RouteId::ListApprovals => sends::approvals(context).await,
        RouteId::McpEndpoint => mcp::handle(context).await,
        RouteId::ListAgents => agents::list(context).await,
        RouteId::MintAgent => agents::mint(context).await,
        RouteId::GetAgent => agents::get(context).await,
        RouteId::PauseAgent => agents::pause(context).await,
        RouteId::ResumeAgent => agents::resume(context).await,
        RouteId::RevokeAgent => agents::revoke(context).await,
        RouteId::IssuePairingCode => agents::issue_pairing_code(context).await,
        RouteId::RedeemPairingCode => agents::redeem_pairing_code(context).await,
        RouteId::ListPersonMailboxes => agents::person_mailboxes(context).await,
        RouteId::ListEvents => reminders::list_events(context).await,
        RouteId::CreateEvent => reminders::create_event(context).await,
        RouteId::GetEvent => reminders::get_event(context).await,
        RouteId::UpdateEvent => reminders::update_event(context).await,
        RouteId::DeleteEvent => reminders::delete_event(context).await,
        RouteId::MarkDone => reminders::mark_done(context).await,
        RouteId::MarkAck => reminders::mark_acknowledged(context).await,
        RouteId::GetProfile => reminders::get_profile(context).await,
        RouteId::UpdateProfile => reminders::update_profile(context).await,
        RouteId::SetReminderWebhook => reminders::set_webhook(context).await,
        RouteId::RemoveReminderWebhook => reminders::remove_webhook(context).await,
        RouteId::ListReminderSources => reminders::list_sources(context).await,
        RouteId::CreateReminderSource => reminders::create_source(context).await,
        RouteId::RevokeReminderSource => reminders::revoke_source(context).await,
        RouteId::PushEvent => reminders::push_event(context).await,
        RouteId::WithdrawEvent => reminders::withdraw_event(context).await,
    }
}
