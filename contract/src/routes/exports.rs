//! eDiscovery exports: requesting one, and reading, downloading and deleting what it
//! holds, by the person who requested it.

use crate::api::{Export, ExportList, ExportManifest, ExportObjectPage, RequestExport};
use crate::relation::Relation;
use crate::route::Method::{Delete, Get, Post};
use crate::route::{Authority, PathParameter, Produces, Refuses, Route, Tier};
use crate::route_id::RouteId;

use super::shared::{CURSOR, LIMIT};

/// Who may request an eDiscovery export.
const EXPORTER: Authority = Authority::Organization(Relation::EdiscoveryExport);

/// An export and its objects: the person who requested it, while they may still export.
const REQUESTER: Authority = Authority::Requester(Relation::EdiscoveryExport);

pub(super) fn request_export() -> Route {
    Route::new(RouteId::RequestExport, Post, "/api/exports", "request_export")
        .summary("Request an eDiscovery export")
        .description("Requests an export of the mail some mailboxes received, optionally only between two days and only messages matching some words. The messages are chosen now and copied in the background, with a manifest of their SHA-256 hashes whose own hash goes into the audit chain; follow get_export until it is `ready`, then read it with list_export_objects. Only the requester can read it.")
        .request::<RequestExport>()
        .response::<Export>()
        .created()
        .tier(Tier::Act)
        .refuses(const { &[
            Refuses::Conflict("The requester already has as many exports building as one may at once."),
        ] })
        .reaches_content()
        .authority(EXPORTER)
}

pub(super) fn list_exports() -> Route {
    Route::new(RouteId::ListExports, Get, "/api/exports", "list_exports")
        .summary("List my exports")
        .description("Lists the exports the caller requested, newest first, a page at a time, each with its progress.")
        .query_parameters(const { &[LIMIT, CURSOR] })
        .response::<ExportList>()
        .authority(REQUESTER)
}

pub(super) fn get_export() -> Route {
    Route::new(RouteId::GetExport, Get, "/api/exports/:exportId", "get_export")
        .summary("Show an export")
        .description("Returns one of the caller's exports: where it stands, how many messages are copied of how many, and once ready the manifest's SHA-256.")
        .path_parameters(&[PathParameter::ExportId])
        .response::<Export>()
        .authority(REQUESTER)
}

pub(super) fn delete_export() -> Route {
    Route::new(RouteId::DeleteExport, Delete, "/api/exports/:exportId", "delete_export")
        .summary("Delete an export")
        .description("Deletes one of the caller's exports and its copies in the object store; the mail it copied is untouched, and the audit chain keeps its manifest's hash.")
        .path_parameters(&[PathParameter::ExportId])
        .response::<Export>()
        .tier(Tier::Act)
        .authority(REQUESTER)
}

pub(super) fn list_export_objects() -> Route {
    Route::new(RouteId::ListExportObjects, Get, "/api/exports/:exportId/objects", "list_export_objects")
        .summary("List an export's objects")
        .description("Lists what one of the caller's exports holds: its manifest first, then each message with its size and SHA-256 once copied, a page at a time.")
        .path_parameters(&[PathParameter::ExportId])
        .query_parameters(const { &[LIMIT, CURSOR] })
        .response::<ExportObjectPage>()
        .authority(REQUESTER)
}

pub(super) fn get_export_object() -> Route {
    Route::new(RouteId::GetExportObject, Get, "/api/exports/:exportId/objects/:objectId", "get_export_object")
        .summary("Download an export's object")
        .description("Downloads one object of the caller's export: the manifest (JSON) or a message as it was received (`message/rfc822`). Each download is recorded in the audit chain.")
        .path_parameters(&[PathParameter::ExportId, PathParameter::ExportObjectId])
        .produces(Produces::ExportObject)
        .response::<ExportManifest>()
        .reaches_content()
        .authority(REQUESTER)
}
