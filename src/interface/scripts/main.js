// Mailroom's browser interface: one page, plain JavaScript, no build step.
//
// Everything the page shows comes from the node's own API, with the session in
// `__Host-` cookies this script never sees. Every string the API returns is
// untrusted text, so the DOM is built with createElement and textContent, never
// with innerHTML. The page runs under a Content-Security-Policy that allows its
// style sheet, its import map and its one inline entry by hash, and the modules
// that entry starts through 'strict-dynamic', each pinned by its integrity in the
// import map (decision 0011); nothing else: no inline handlers, no style
// attributes, no eval, nothing fetched from anywhere but the node.
//
// The script is these ES modules in src/interface/scripts/, each listed and
// served by src/interface.rs:
//   dom.js           DOM helpers: h(), labelled(), tables, formatting
//   session.js       who is signed in, the signed-in hint, the shell's steps,
//                    what the view shown holds open until it goes
//   api.js           api(), ApiError, renewing the session, listen() to a
//                    live stream of what changes
//   shared.js        perform(), actionForm(), panels, askOnce(), offerUndo()
//   refusals.js      a refusal in the person's words, the node's under
//                    Technical details
//   leaving.js       what is typed and not saved, asked about before leaving
//   signing-again.js signing in again over the page when a session runs out
//   shortcuts.js     the keyboard's shortcuts, one table
//   names.js         the directory of names: named(), members(), who()
//   vocabulary.js    the relations and capabilities, loaded from the node once,
//                    and their words: relationTerm(), capabilityTerm()
//   pager.js         lists a page at a time, PER_PAGE
//   mail-shared.js   what the mail views share: access(), links, mailbox names
//   mail-words.js    send states, conversation statuses, sender checks and
//                    recipients in words
//   inbox.js         a mailbox's conversations, where Mail lands
//   inbox-bulk.js    several of them selected and changed at once
//   conversation.js  one conversation: its messages, triage, replies
//   message-body.js  a message's HTML, sanitised by purify.js (DOMPurify), in
//                    its sandboxed frame
//   replies.js       saved replies and signatures, in drafts
//   notes.js         a conversation's internal notes, with @mentions
//   snooze.js        a conversation snoozed: its choices, in the person's zone
//   mail.js, sends.js, approvals.js, notifications.js, reminders.js, people.js, teams.js,
//   mailboxes.js, butlers.js, relations.js, agents.js, connections.js, exports.js, sources.js,
//   webhooks.js, audit.js, account.js  the sections, one module each, exporting its render function
//   elsewhere.js     agents elsewhere on an agent's Connections page: its outbound
//                    policy, its messages to them with every attempt, their names
//   peers.js         Connected organisations: other organisations' nodes, their
//                    credentials issued once and set, disconnecting
//   agent-ceiling.js the choices an agent's ceiling is made of (the mint form's
//                    and the consent's) and the ceiling shown held of total
//   consent.js       the consent an OAuth client asks for at /oauth/authorize,
//                    shown instead of the sections
//   main.js          the shell: sign-in, header, navigation, router, start-up
//
// A new section is a module exporting a render
// function, a line in src/interface.rs's MODULES, and one entry in SECTIONS; its
// route is `#/<route>/<params…>`. A section with views of its own (Mail: a
// mailbox, a message, a search, outbound mail) reads them from the params and
// hands each to a view function of its own.
//
// The node serves this same page at /oauth/authorize, where an MCP client
// that speaks only OAuth sends a person to allow it: there, once someone is
// signed in (the sign-in form first if not, the request's query string kept
// as it is), the shell shows the consent (consent.js) and no sections.

import { h, hidden, } from "./dom.js";
import { connectShell, hint, me, OWN_CHANGED, releaseView, setMe } from "./session.js";
import { api, listen, SessionOver } from "./api.js";
import { perform, refusalBox, statusArea } from "./shared.js";
import { renderAccount } from "./account.js";
import { renderAgents } from "./agents.js";
import { approvalCount, APPROVALS_CHANGED, renderApprovals } from "./approvals.js";
import { renderAudit } from "./audit.js";
import { renderButlers } from "./butlers.js";
import { renderConnections } from "./connections.js";
import { consentRefused, isConsentRequest, renderConsent } from "./consent.js";
import { renderExports } from "./exports.js";
import { renderMail } from "./mail.js";
import { renderMailboxes } from "./mailboxes.js";
import { NOTIFICATIONS_CHANGED, renderNotifications, unreadCount } from "./notifications.js";
import { renderPeers } from "./peers.js";
import { renderPeople } from "./people.js";
import { renderRelations } from "./relations.js";
import { renderReminders } from "./reminders.js";
import { signingInAgain, signInAgain, signInForm } from "./signing-again.js";
import { renderSources } from "./sources.js";
import { renderTeams } from "./teams.js";
import { installShortcuts } from "./shortcuts.js";
import { mayLeave, watchForUnsavedInput } from "./leaving.js";

const isAdmin = () => me?.is_admin === true;

const everyone = () => true;

/**
 * Every section, in navigation order. `route` is the first segment of the hash
 * (`#/people`); the rest are passed to `render(view, params)` as parameters.
 * A visit with no route opens the first visible section whose `landing` holds,
 * else the first visible one: an administrator's work starts with the people
 * on the node (administering confers no mail), everyone else's with mail.
 * `admin` marks the sections that run the node rather than a day's work: the
 * navigation gathers them under one Administration menu, after the daily ones,
 * so that what a person opens every morning is first and always in view.
 */
const SECTIONS = [
  { route: "mail", title: "Mail", visible: everyone, render: renderMail },
  { route: "notifications", title: "Notifications", visible: everyone, render: renderNotifications },
  { route: "reminders", title: "Reminders", visible: everyone, render: renderReminders },
  { route: "approvals", title: "Approvals", visible: everyone, render: renderApprovals },
  { route: "connections", title: "Connections", visible: everyone, render: renderConnections },
  { route: "account", title: "Account", visible: everyone, render: renderAccount },
  { route: "people", title: "People", admin: true, visible: isAdmin, landing: isAdmin, render: renderPeople },
  { route: "teams", title: "Teams", admin: true, visible: isAdmin, render: renderTeams },
  { route: "mailboxes", title: "Mailboxes", admin: true, visible: isAdmin, render: renderMailboxes },
  { route: "butlers", title: "Butlers", admin: true, visible: isAdmin, render: renderButlers },
  { route: "relations", title: "Relations", admin: true, visible: isAdmin, render: renderRelations },
  { route: "agents", title: "Agents", admin: true, visible: isAdmin, render: renderAgents },
  { route: "organisations", title: "Connected organisations", admin: true, visible: isAdmin, render: renderPeers },
  { route: "sources", title: "Sources", admin: true, visible: isAdmin, render: renderSources },
  // Those who hold ediscovery.export (`may_export`, from GET /api/me): a review
  // for the organisation, not a day's mail, so with the administration.
  { route: "exports", title: "Exports", admin: true, visible: () => me?.may_export === true, render: renderExports },
  { route: "audit", title: "Audit", admin: true, visible: isAdmin, render: renderAudit },
];

const root = document.getElementById("app");
let main = null;
let navigation = null;
let rendering = 0;
/** Stops following the signed-in person's own stream (`followOwn`). */
let stopFollowingOwn = () => {};

/** How many unread notifications the tab's title carries, as `(3) Inbox · Mailroom`. */
let unreadInTitle = 0;
const UNREAD_IN_TITLE = /^\(\d+\+?\) /;

/**
 * Puts the unread count before whatever title the view gave the tab, so a
 * person sees it from another tab; views set the title as they like, and
 * the count is put back whenever they do (an observer of the <title>).
 */
function titleWithUnread() {
  const base = document.title.replace(UNREAD_IN_TITLE, "");
  const wanted = unreadInTitle ? `(${unreadInTitle > 99 ? "99+" : unreadInTitle}) ${base}` : base;
  if (document.title !== wanted) document.title = wanted;
}
const titleElement = document.querySelector("title");
if (titleElement) new MutationObserver(titleWithUnread).observe(titleElement, { childList: true, characterData: true, subtree: true });

/**
 * Follows the signed-in person's own stream (/api/me/live): whatever changes
 * of theirs (a notification added for them, one marked, a reminder due) has
 * the unread count read again, so the navigation and the tab's title keep up
 * without a reload, and is passed on to the view shown (OWN_CHANGED).
 */
function followOwn() {
  stopFollowingOwn();
  const changed = (told) => {
    showNotificationCount();
    document.dispatchEvent(new CustomEvent(OWN_CHANGED, { detail: told }));
  };
  const stream = listen("/api/me/live", { onEvent: changed, onOpen: () => changed(null) });
  stopFollowingOwn = () => stream.close();
}

function showSignIn(notice) {
  if (signingInAgain()) return;
  if (notice?.keepPage && me && main?.isConnected) {
    stopFollowingOwn();
    signInAgain({ onBack: followOwn, onSomeoneElse: start });
    return;
  }
  stopFollowingOwn();
  unreadInTitle = 0;
  titleWithUnread();
  releaseView();
  setMe(null);
  main = null;
  navigation = null;
  rendering++;
  document.title = "Sign in · Mailroom";

  const { form, email } = signInForm({ onSignedIn: start });

  root.replaceChildren(h("main", { class: "signin" },
    h("div", { class: "signin-card" },
      h("p", { class: "brand", text: "Mailroom" }),
      h("h1", { text: "Sign in" }),
      notice?.refusal ? h("div", { class: "notice" }, refusalBox(notice.refusal, notice.title)) : null,
      notice?.text ? h("div", { class: "notice info", role: "status", text: notice.text }) : null,
      isConsentRequest() && !notice
        ? h("div", { class: "notice info", role: "status", text: "An app asks to connect to Mailroom as you. Sign in to see what it asks for and choose what to allow." })
        : null,
      form)));
  email.focus();
}

/**
 * The banner's menus (the Administration menu, and on a phone the Menu that
 * holds the navigation), each as the element a click must land in to keep it
 * open and the closing; set by showShell.
 */
let menus = [];
const closeMenus = () => {
  for (const { close } of menus) close();
};

/**
 * Makes `button` disclose `panel` (a disclosure, not an ARIA menu: a list of
 * links, reached with Tab): its aria-expanded says whether the panel is shown,
 * `show(open)` shows or hides it. Escape inside either closes it and puts focus
 * back on the button; choosing a link in it closes it. Answers the closing.
 */
function disclose(button, panel, show) {
  const set = (open) => {
    button.setAttribute("aria-expanded", String(open));
    show(open);
  };
  set(false);
  button.addEventListener("click", () => set(button.getAttribute("aria-expanded") !== "true"));
  for (const element of [button, panel]) {
    element.addEventListener("keydown", (event) => {
      if (event.key !== "Escape" || button.getAttribute("aria-expanded") !== "true") return;
      // Only the innermost open menu closes on one Escape.
      event.stopPropagation();
      set(false);
      button.focus();
    });
  }
  panel.addEventListener("click", (event) => {
    if (event.target instanceof Element && event.target.closest("a[href]")) set(false);
  });
  return () => set(false);
}

/** The link to a section in the navigation, with the count it carries beside it. */
function sectionItem(section) {
  return h("li", {}, h("a", { href: `#/${section.route}`, "data-route": section.route, text: section.title }),
    section.route === "approvals" ? h("span", { class: "nav-count", hidden: true }) : null,
    section.route === "notifications" ? h("span", { class: "nav-unread", hidden: true }) : null);
}

/**
 * The navigation's list: the daily sections, then the administration ones
 * (`admin` in SECTIONS) behind one Administration button, which shows them
 * and closes when focus or a click goes elsewhere.
 */
function navigationList(shown) {
  const daily = shown.filter((section) => !section.admin).map(sectionItem);
  const admin = shown.filter((section) => section.admin);
  if (!admin.length) return h("ul", {}, daily);
  const list = h("ul", { id: "administration", class: "nav-admin-list" }, admin.map(sectionItem));
  const button = h("button", { type: "button", class: "nav-admin-toggle", "aria-controls": list.id, text: "Administration" });
  const item = h("li", { class: "nav-admin" }, button, list);
  const close = disclose(button, list, (open) => (list.hidden = !open));
  item.addEventListener("focusout", (event) => {
    if (event.relatedTarget instanceof Node && !item.contains(event.relatedTarget)) close();
  });
  menus.push({ element: item, close });
  return h("ul", {}, daily, item);
}

// A click or tap anywhere outside a menu closes it.
document.addEventListener("pointerdown", (event) => {
  for (const { element, close } of menus) if (!(event.target instanceof Node && element.contains(event.target))) close();
});

/** The shell: the banner (with the sections' navigation unless `sections` is false) and an empty `main`. */
function showShell({ sections = true } = {}) {
  releaseView();
  menus = [];
  navigation = sections ? navigationList(SECTIONS.filter((section) => section.visible())) : null;
  const signOut = h("button", { type: "button", class: "secondary", text: "Sign out" });
  const shellStatus = statusArea();
  signOut.addEventListener("click", async () => {
    // The streams would hear the session end before the answer does, and try
    // to renew it: they stop first, and start again if it does not end.
    stopFollowingOwn();
    releaseView();
    const ok = await perform(shellStatus, [signOut], () => api("DELETE", "/api/sessions/current"), "You are still signed in.");
    if (ok) {
      hint.set(false);
      showSignIn(null);
    } else {
      followOwn();
      route();
    }
  });
  main = h("main", { id: "main", tabindex: "-1" });
  // On a phone the banner is one row (the name, Menu, Sign out) and the
  // navigation, with who is signed in, waits behind Menu; wider, the Menu
  // button is not drawn and the panel is always shown (1-page.css).
  const panel = h("div", { id: "banner-menu", class: "banner-menu" },
    navigation ? h("nav", { "aria-label": "Sections" }, navigation) : null,
    h("div", { class: "whoami" },
      h("span", { class: "whoami-name", text: me.name }),
      me.email ? h("span", { class: "whoami-email", text: me.email }) : null,
      me.is_admin ? h("span", { class: "badge", text: "Administrator" }) : null));
  // A dot on Menu says a count beside a section in it is showing (markMenu).
  const menuButton = navigation
    ? h("button", { type: "button", class: "menu-toggle secondary", "aria-controls": panel.id }, "Menu",
      h("span", { class: "menu-mark", hidden: true }, hidden(", something awaits you")))
    : null;
  const banner = h("header", { class: "topbar" }, h("p", { class: "brand", text: "Mailroom" }), menuButton, panel, signOut);
  if (menuButton) menus.push({ element: banner, close: disclose(menuButton, panel, (open) => panel.classList.toggle("open", open)) });
  root.replaceChildren(
    h("a", { class: "skip-link", href: "#main", text: "Skip to content" }),
    banner,
    shellStatus,
    main);
  // The skip link must not change the route.
  root.querySelector(".skip-link").addEventListener("click", (event) => {
    event.preventDefault();
    main.focus();
  });
  if (sections) followOwn();
}

/**
 * Shows beside Approvals how many sends await the signed-in person's decision
 * (a page's worth, "50+" beyond), once the shell is up and whenever a view is
 * shown or a decision made. A count that cannot be had is left as it was.
 */
async function showApprovalCount() {
  const count = navigation?.querySelector(".nav-count");
  if (!count) return;
  try {
    const waiting = await approvalCount();
    count.hidden = !waiting;
    count.replaceChildren(waiting ?? "", hidden(waiting ? ` ${waiting === "1" ? "send awaits" : "sends await"} your decision` : ""));
    count.title = waiting ? `${waiting} awaiting your decision` : "";
    markMenu();
  } catch {}
}

let notificationAsks = 0;

/**
 * Shows beside Notifications how many are unread and still need the signed-in
 * person ("99+" beyond), whenever a view is shown or something is marked read,
 * unread or decided: `known` is the count a marking answered. Only the latest
 * answer is shown; a count that cannot be had is left as it was.
 */
async function showNotificationCount(known) {
  const count = navigation?.querySelector(".nav-unread");
  if (!count) return;
  const ask = ++notificationAsks;
  try {
    const unread = typeof known === "number" ? known : await unreadCount();
    if (ask !== notificationAsks) return;
    count.hidden = !unread;
    count.replaceChildren(unread ? (unread > 99 ? "99+" : String(unread)) : "", hidden(unread ? " unread" : ""));
    count.title = unread ? `${unread} unread notification${unread === 1 ? "" : "s"}` : "";
    unreadInTitle = unread;
    titleWithUnread();
    markMenu();
  } catch {}
}

/** Marks the phone's Menu button while a count in the navigation it hides is showing. */
function markMenu() {
  const mark = root.querySelector(".menu-mark");
  if (mark && navigation) mark.hidden = !navigation.querySelector(".nav-count:not([hidden]), .nav-unread:not([hidden])");
}

function parseHash() {
  const parts = location.hash.replace(/^#\/?/, "").split("/").filter(Boolean);
  try {
    return parts.map(decodeURIComponent);
  } catch {
    return [];
  }
}

/** The address of the view shown, to go back to when the person stays on it. */
let shownHash = null;

async function route() {
  // The consent is the whole page: no hash leads anywhere from it.
  if (!me || !main || isConsentRequest()) return;
  // Leaving a view with unsaved input asks first; staying puts its address back, and the view stays as it is.
  if (shownHash !== null && location.hash !== shownHash && !mayLeave()) {
    history.replaceState(null, "", shownHash);
    return;
  }
  const [name, ...params] = parseHash();
  const visible = SECTIONS.filter((section) => section.visible());
  const section = visible.find((candidate) => candidate.route === name);
  if (!section) {
    location.replace(`#/${(visible.find((candidate) => candidate.landing?.()) ?? visible[0]).route}`);
    return;
  }
  const generation = ++rendering;
  closeMenus();
  for (const link of navigation.querySelectorAll("a")) {
    if (link.dataset.route === section.route) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
  document.title = `${section.title} · Mailroom`;
  shownHash = location.hash;
  const heading = h("h1", { tabindex: "-1", text: section.title });
  const view = h("div", { class: "view" });
  releaseView();
  main.replaceChildren(heading, view);
  heading.focus({ preventScroll: true });
  showApprovalCount();
  showNotificationCount();
  try {
    await section.render(view, params);
  } catch (error) {
    if (error instanceof SessionOver || generation !== rendering) return;
    view.append(refusalBox(error, `${section.title} could not be shown.`));
  }
}

/**
 * The consent an OAuth client asks for, instead of the sections: the banner
 * (who is signed in, and Sign out, for whoever is not the person to allow it)
 * and the consent view; a request the node refuses is shown as its refusal.
 */
async function showConsent() {
  showShell({ sections: false });
  const generation = ++rendering;
  document.title = "Connect an app · Mailroom";
  const heading = h("h1", { tabindex: "-1", text: "Connect an app" });
  const view = h("div", { class: "view" });
  main.replaceChildren(heading, view);
  heading.focus({ preventScroll: true });
  try {
    await renderConsent(view, heading);
  } catch (error) {
    if (error instanceof SessionOver || generation !== rendering) return;
    view.append(consentRefused(error));
  }
}

/** Learns who is signed in and shows the interface (or the consent asked for), or the sign-in form. */
async function start() {
  try {
    setMe(await api("GET", "/api/me"));
  } catch (error) {
    if (error instanceof SessionOver) return;
    root.replaceChildren(h("main", { class: "signin" }, h("div", { class: "signin-card" },
      h("p", { class: "brand", text: "Mailroom" }),
      refusalBox(error, "Mailroom could not start."),
      h("button", { type: "button", text: "Try again", onclick: () => start() }))));
    return;
  }
  if (isConsentRequest()) return showConsent();
  showShell();
  await route();
}

// The API and the sections take these steps through session.js.
connectShell({ showSignIn, start, route });
installShortcuts();
watchForUnsavedInput();
window.addEventListener("hashchange", route);
document.addEventListener(APPROVALS_CHANGED, () => {
  showApprovalCount();
  showNotificationCount();
});
document.addEventListener(NOTIFICATIONS_CHANGED, (event) => showNotificationCount(event.detail));
if (hint.get()) start();
else showSignIn(null);
