//! The browser interface: its page and its script modules, served to a person's
//! browser.

use crate::route::Method::Get;
use crate::route::{Authority, Parameter, PathParameter, Produces, Route, Tier};
use crate::route_id::RouteId;

pub(super) fn interface_shell() -> Route {
    Route::new(RouteId::InterfaceShell, Get, "/", "interface_shell")
        .summary("The browser interface")
        .description("Serves the single-page browser interface: sign-in, people, teams, relations and the audit trail.")
        .html()
        .exception(
            Tier::Operator,
            "the interface shell is a page for a person's browser, not a question anyone would ask a node",
        )
        .authority(Authority::Public)
}

pub(super) fn interface_module() -> Route {
    Route::new(RouteId::InterfaceModule, Get, "/interface/:module", "interface_module")
        .summary("A script module of the browser interface")
        .description("Serves one ES module of the browser interface's script (a section, or a piece the sections share). The page pins each module's bytes with a Subresource Integrity hash, and asks for each with its content's version, which the browser may then keep for a year.")
        .path_parameters(&[PathParameter::Module])
        .query_parameters(const { &[
            Parameter::text("v", "The module's version, as the page's import map names it (from a hash of its content): when it is the module's own, the answer may be kept for a year, since those bytes never change under that version; otherwise it is checked again each time."),
        ] })
        .produces(Produces::Script)
        .exception(Tier::Operator, "the interface's script modules are parts of a page for a person's browser, not a question anyone would ask a node")
        .authority(Authority::Public)
}
