//! `declare`: the one exhaustive match from every `RouteId` to the function in
//! its domain's file that declares it, and the test that holds each route to
//! its own declaration.

use crate::route::Route;
use crate::route_id::RouteId;

use super::{
    a2a, agents, audit, butlers, exports, identity, interface, live, mail, mcp, messaging, notes, notifications, oauth,
    peers, reminders, replies, sends, webhooks,
};

/// The full declaration of one route.
pub fn declare(id: RouteId) -> Route {
    use RouteId as R;
    match id {
        R::InterfaceShell => interface::interface_shell(),
        R::InterfaceModule => interface::interface_module(),

        R::SetUpNode => identity::set_up_node(),
        R::SignIn => identity::sign_in(),
        R::RefreshSession => identity::refresh_session(),
        R::SignOut => identity::sign_out(),
        R::GetMe => identity::get_me(),
        R::ChangePassword => identity::change_password(),
        R::ListPeople => identity::list_people(),
        R::CreatePerson => identity::create_person(),
        R::GetPerson => identity::get_person(),
        R::DisablePerson => identity::disable_person(),
        R::EnablePerson => identity::enable_person(),
        R::ResetPassword => identity::reset_password(),
        R::ListTeams => identity::list_teams(),
        R::CreateTeam => identity::create_team(),
        R::AddTeamMember => identity::add_team_member(),
        R::RemoveTeamMember => identity::remove_team_member(),
        R::ListRelations => identity::list_relations(),
        R::GrantRelation => identity::grant_relation(),
        R::RevokeRelation => identity::revoke_relation(),

        R::ListAuditEntries => audit::list_audit_entries(),
        R::VerifyAuditChain => audit::verify_audit_chain(),
        R::WriteAuditCheckpoint => audit::write_audit_checkpoint(),
        R::ShowAuditWitness => audit::show_audit_witness(),
        R::SetAuditWitness => audit::set_audit_witness(),
        R::RemoveAuditWitness => audit::remove_audit_witness(),

        R::ListMailboxes => mail::list_mailboxes(),
        R::ListReadableMailboxes => mail::list_readable_mailboxes(),
        R::ListAllMailboxes => mail::list_all_mailboxes(),
        R::CreateMailbox => mail::create_mailbox(),
        R::UpdateMailbox => mail::update_mailbox(),
        R::ListMessages => mail::list_messages(),
        R::GetMessage => mail::get_message(),
        R::GetMessageBody => mail::get_message_body(),
        R::GetMessageOriginal => mail::get_message_original(),
        R::GetAttachment => mail::get_attachment(),
        R::DeleteMessage => mail::delete_message(),
        R::SearchMessages => mail::search_messages(),
        R::ListImageSenders => mail::list_image_senders(),
        R::AddImageSender => mail::add_image_sender(),
        R::RemoveImageSender => mail::remove_image_sender(),
        R::ListSavedReplies => replies::list_saved_replies(),
        R::CreateSavedReply => replies::create_saved_reply(),
        R::UpdateSavedReply => replies::update_saved_reply(),
        R::DeleteSavedReply => replies::delete_saved_reply(),
        R::GetMailboxSignature => replies::get_mailbox_signature(),
        R::SetMailboxSignature => replies::set_mailbox_signature(),
        R::RemoveMailboxSignature => replies::remove_mailbox_signature(),
        R::GetMySignature => replies::get_my_signature(),
        R::SetMySignature => replies::set_my_signature(),
        R::RemoveMySignature => replies::remove_my_signature(),
        R::ListNotes => notes::list_notes(),
        R::AddNote => notes::add_note(),
        R::DeleteNote => notes::delete_note(),
        R::ListThreads => mail::list_threads(),
        R::GetThread => mail::get_thread(),
        R::UpdateThread => mail::update_thread(),
        R::MarkThreadRead => mail::mark_thread_read(),
        R::MarkThreadUnread => mail::mark_thread_unread(),

        R::ListSends => sends::list_sends(),
        R::CreateDraft => sends::create_draft(),
        R::GetSend => sends::get_send(),
        R::UpdateDraft => sends::update_draft(),
        R::DeleteDraft => sends::delete_draft(),
        R::SubmitSend => sends::submit_send(),
        R::RedraftSend => sends::redraft_send(),
        R::AddSendAttachment => sends::add_send_attachment(),
        R::RemoveSendAttachment => sends::remove_send_attachment(),
        R::GetSendAttachment => sends::get_send_attachment(),
        R::CancelSend => sends::cancel_send(),
        R::RetrySend => sends::retry_send(),
        R::ApproveSend => sends::approve_send(),
        R::RefuseSend => sends::refuse_send(),
        R::ListApprovals => sends::list_approvals(),

        R::ListMailboxWebhooks => webhooks::list_mailbox_webhooks(),
        R::CreateMailboxWebhook => webhooks::create_mailbox_webhook(),
        R::RemoveMailboxWebhook => webhooks::remove_mailbox_webhook(),
        R::ListAgentWebhooks => webhooks::list_agent_webhooks(),
        R::CreateAgentWebhook => webhooks::create_agent_webhook(),
        R::RemoveAgentWebhook => webhooks::remove_agent_webhook(),
        R::CreatePushConfig => webhooks::create_push_config(),
        R::ListPushConfigs => webhooks::list_push_configs(),
        R::RemovePushConfig => webhooks::remove_push_config(),
        R::ListButlers => butlers::list_butlers(),
        R::CreateButler => butlers::create_butler(),
        R::GetButler => butlers::get_butler(),
        R::UpdateButler => butlers::update_butler(),
        R::PublishButler => butlers::publish_butler(),
        R::SimulateButler => butlers::simulate_butler(),

        R::ListNotifications => notifications::list_notifications(),
        R::MarkNotificationsRead => notifications::mark_notifications_read(),
        R::MarkNotificationUnread => notifications::mark_notification_unread(),

        R::RequestExport => exports::request_export(),
        R::ListExports => exports::list_exports(),
        R::GetExport => exports::get_export(),
        R::DeleteExport => exports::delete_export(),
        R::ListExportObjects => exports::list_export_objects(),
        R::GetExportObject => exports::get_export_object(),

        R::McpEndpoint => mcp::mcp_endpoint(),
        R::ListenToMailbox => live::listen_to_mailbox(),
        R::ListenToOwn => live::listen_to_own(),
        R::ListenToAgentInbox => live::listen_to_agent_inbox(),
        R::ListenToAgent => live::listen_to_agent(),

        R::ListAgentCapabilities => agents::list_agent_capabilities(),
        R::ListAgents => agents::list_agents(),
        R::MintAgent => agents::mint_agent(),
        R::GetAgent => agents::get_agent(),
        R::PauseAgent => agents::pause_agent(),
        R::ResumeAgent => agents::resume_agent(),
        R::RevokeAgent => agents::revoke_agent(),
        R::IssuePairingCode => agents::issue_pairing_code(),
        R::RedeemPairingCode => agents::redeem_pairing_code(),
        R::ListPersonMailboxes => agents::list_person_mailboxes(),

        R::ListEvents => reminders::list_events(),
        R::CreateEvent => reminders::create_event(),
        R::GetEvent => reminders::get_event(),
        R::UpdateEvent => reminders::update_event(),
        R::DeleteEvent => reminders::delete_event(),
        R::MarkDone => reminders::mark_done(),
        R::ReopenEvent => reminders::reopen_event(),
        R::MarkAck => reminders::mark_ack(),
        R::GetProfile => reminders::get_profile(),
        R::UpdateProfile => reminders::update_profile(),
        R::SetReminderWebhook => reminders::set_reminder_webhook(),
        R::RemoveReminderWebhook => reminders::remove_reminder_webhook(),
        R::ListReminderSources => reminders::list_reminder_sources(),
        R::CreateReminderSource => reminders::create_reminder_source(),
        R::RevokeReminderSource => reminders::revoke_reminder_source(),
        R::PushEvent => reminders::push_event(),
        R::WithdrawEvent => reminders::withdraw_event(),

        R::ListSponsoredAgents => messaging::list_sponsored_agents(),
        R::SendAgentMessage => messaging::send_agent_message(),
        R::ListSentAgentMessages => messaging::list_sent_agent_messages(),
        R::GetAgentMessage => messaging::get_agent_message(),
        R::ListAgentInbox => messaging::list_agent_inbox(),
        R::ClaimAgentMessages => messaging::claim_agent_messages(),
        R::AckAgentMessage => messaging::ack_agent_message(),
        R::RenewAgentLease => messaging::renew_agent_lease(),
        R::ReplyToAgentMessage => messaging::reply_to_agent_message(),
        R::RejectAgentMessage => messaging::reject_agent_message(),
        R::ListAgentConversations => messaging::list_agent_conversations(),
        R::GetAgentConversation => messaging::get_agent_conversation(),
        R::CancelAgentConversation => messaging::cancel_agent_conversation(),
        R::GetAgentMessaging => messaging::get_agent_messaging(),
        R::UpdateAgentMessaging => messaging::update_agent_messaging(),
        R::ListOwnedAgentInbox => messaging::list_owned_agent_inbox(),
        R::ListRemoteDeliveries => peers::list_remote_deliveries(),
        R::ListPeers => peers::list_peers(),
        R::CreatePeer => peers::create_peer(),
        R::UpdatePeer => peers::update_peer(),
        R::DisconnectPeer => peers::disconnect_peer(),

        R::GetA2aAgentCard => a2a::get_a2a_agent_card(),
        R::A2aEndpoint => a2a::a2a_endpoint(),
        R::GetA2aNodeCard => a2a::get_a2a_node_card(),
        R::A2aNodeEndpoint => a2a::a2a_node_endpoint(),
        R::ReceiveTaskPush => a2a::receive_task_push(),

        R::GetOAuthProtectedResource => oauth::get_oauth_protected_resource(),
        R::GetOAuthProtectedResourceOfMcp => oauth::get_oauth_protected_resource_of_mcp(),
        R::GetOAuthAuthorizationServer => oauth::get_oauth_authorization_server(),
        R::RegisterOAuthClient => oauth::register_oauth_client(),
        R::OAuthAuthorize => oauth::oauth_authorize(),
        R::GetOAuthConsent => oauth::get_oauth_consent(),
        R::ApproveOAuthConsent => oauth::approve_oauth_consent(),
        R::OAuthToken => oauth::oauth_token(),
        R::OAuthRevoke => oauth::oauth_revoke(),
        R::ListConnectedApps => oauth::list_connected_apps(),
        R::DisconnectApp => oauth::disconnect_app(),
    }
}

#[cfg(test)]
mod tests {
    use super::declare;
    use crate::route_id::RouteId;

    #[test]
    fn every_route_is_matched_to_its_own_declaration() {
        for id in RouteId::ALL {
            assert_eq!(declare(*id).id, *id, "declare matches {id:?} to another route's declaration");
        }
    }
}
