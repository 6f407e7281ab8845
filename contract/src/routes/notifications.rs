//! Notifications: a person's own, read and marked.

use crate::api::{MarkNotificationsRead, NotificationPage, NotificationsMarked};
use crate::route::Method::{Delete, Get, Post};
use crate::route::{Authority, Parameter, PathParameter, Route, Tier};
use crate::route_id::RouteId;

use super::shared::{CURSOR, LIMIT};

pub(super) fn list_notifications() -> Route {
    Route::new(RouteId::ListNotifications, Get, "/api/me/notifications", "list_notifications")
        .summary("List my notifications")
        .description("Lists what needs the caller or what they are waiting to hear (an agent: its sponsor's feed), newest first, a page at a time: approvals waiting in mailboxes where they decide, their sends refused, sent or failed, conversations assigned to them, reminders due. Each is read or unread for them alone; `unread_count` counts the unread ones still needing someone. Mail notifications show only in mailboxes the caller holds a relation on (an agent: where it and its sponsor both do).")
        .query_parameters(const { &[
            Parameter::flag("unread", "Only what `unread_count` counts: notifications not yet marked read that still need someone (an approval decided or taken back is left out)."),
            LIMIT,
            CURSOR,
        ] })
        .response::<NotificationPage>()
        .authority(Authority::Personal)
}

pub(super) fn mark_notifications_read() -> Route {
    Route::new(RouteId::MarkNotificationsRead, Post, "/api/me/notifications/read", "mark_notifications_read")
        .summary("Mark notifications read")
        .description("Marks notifications read for the caller (an agent: for its sponsor): those named in `notification_ids`, or every one with `all`. Ids the caller cannot see are passed over. Undo one with mark_notification_unread.")
        .request::<MarkNotificationsRead>()
        .response::<NotificationsMarked>()
        .tier(Tier::Act)
        .authority(Authority::Personal)
}

pub(super) fn mark_notification_unread() -> Route {
    Route::new(
        RouteId::MarkNotificationUnread,
        Delete,
        "/api/me/notifications/:notificationId/read",
        "mark_notification_unread",
    )
    .summary("Mark a notification unread")
    .description("Marks one notification unread again for the caller (an agent: for its sponsor).")
    .path_parameters(&[PathParameter::NotificationId])
    .response::<NotificationsMarked>()
    .tier(Tier::Act)
    .authority(Authority::Personal)
}
