//! `RouteId`: the name of every route, and nothing else.
//!
//! Kept apart from the declarations (`routes`) and from the shape of a route
//! (`route`), which both name it, so neither has to name the other.

macro_rules! route_ids {
    ($($variant:ident),* $(,)?) => {
        /// Names one route of the contract.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum RouteId { $($variant,)* }

        impl RouteId {
            /// Every route, in declaration order.
            pub const ALL: &'static [RouteId] = &[$(RouteId::$variant,)*];
        }
    };
}

route_ids! {
    InterfaceShell,
    InterfaceModule,
    SetUpNode,
    SignIn,
    RefreshSession,
    SignOut,
    GetMe,
    ChangePassword,
    ListPeople,
    CreatePerson,
    GetPerson,
    DisablePerson,
    EnablePerson,
    ResetPassword,
    ListTeams,
    CreateTeam,
    AddTeamMember,
    RemoveTeamMember,
    ListRelations,
    GrantRelation,
    RevokeRelation,
    ListAuditEntries,
    VerifyAuditChain,
    WriteAuditCheckpoint,
    ListAgentCapabilities,
    ListMailboxes,
    ListReadableMailboxes,
    ListAllMailboxes,
    CreateMailbox,
    UpdateMailbox,
    ListMessages,
    GetMessage,
    GetMessageBody,
    GetMessageOriginal,
    GetAttachment,
    DeleteMessage,
    SearchMessages,
    ListSends,
    CreateDraft,
    GetSend,
    UpdateDraft,
    DeleteDraft,
    SubmitSend,
    CancelSend,
    RetrySend,
    ApproveSend,
    RefuseSend,
    ListApprovals,
    McpEndpoint,
    ListAgents,
    MintAgent,
    GetAgent,
    PauseAgent,
    ResumeAgent,
    RevokeAgent,
    IssuePairingCode,
    RedeemPairingCode,
    ListPersonMailboxes,
    ListEvents,
    CreateEvent,
    GetEvent,
    UpdateEvent,
    DeleteEvent,
    MarkDone,
    MarkAck,
    GetProfile,
    UpdateProfile,
    SetReminderWebhook,
    RemoveReminderWebhook,
    ListReminderSources,
    CreateReminderSource,
    RevokeReminderSource,
    PushEvent,
    WithdrawEvent,
}
