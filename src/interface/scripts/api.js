// The API: api() calls the node, JSON in and JSON out, and throws its refusal as
// an ApiError. An expired session is renewed once and the request retried; one
// that cannot go on shows the sign-in form and throws SessionOver. send() and
// refusalOf() are the bare request and refusal, for signing in. listen() follows
// one of the node's live streams (a WebSocket that tells what changed), and
// lives here because it renews the session as api() does.

import { hint, me, showSignIn } from "./session.js";

/** A refusal from the node: `{code, message, reason, fix}` and the HTTP status. */
export class ApiError extends Error {
  constructor(status, refusal) {
    super(refusal.message);
    this.name = "ApiError";
    this.status = status;
    this.code = refusal.code;
    this.reason = refusal.reason;
    this.fix = refusal.fix;
  }
}

/** Thrown once the session cannot go on; the sign-in form is already showing. */
export class SessionOver extends Error {}

// Codes that mean "this request carried no usable session". Only an expired
// access token is worth renewing: the access cookie outlives its token (it
// lasts as long as the session), so an expired token is always presented and
// answered with this code; anything else means there is no session to renew.
const EXPIRED = "access_token_expired";
const SESSION_CODES = new Set([EXPIRED, "session_ended", "not_signed_in", "invalid_credential"]);

export async function send(method, path, body) {
  const init = { method, credentials: "same-origin", cache: "no-store", headers: { accept: "application/json" } };
  if (body !== undefined) {
    init.headers["content-type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  try {
    return await fetch(path, init);
  } catch (error) {
    throw new ApiError(0, {
      code: "network_error",
      message: "The node could not be reached.",
      reason: String(error?.message ?? error),
      fix: "Check the connection and try again.",
    });
  }
}

/** Reads a refusal body, or describes an answer that is not one. */
export async function refusalOf(response) {
  const text = await response.text();
  try {
    const error = JSON.parse(text)?.error;
    if (error && typeof error.code === "string") return error;
  } catch {}
  return {
    code: "unexpected_answer",
    message: `${`The node answered ${response.status} ${response.statusText}`.trim()}.`,
    reason: "The answer was not one the interface understands.",
    fix: "Try again; if it keeps happening, tell the node's operator.",
  };
}

let renewal = null;

/**
 * Exchanges the refresh cookie for fresh cookies, once however many requests
 * ask at a time. Answers null when the session goes on, or the refusal.
 */
function renewSession() {
  renewal ??= (async () => {
    try {
      const response = await send("POST", "/api/sessions/refresh");
      if (response.ok) return null;
      const refusal = await refusalOf(response);
      // Another tab refreshed the same token a moment ago: the browser already
      // holds its new cookies.
      return refusal.code === "refresh_raced" ? null : refusal;
    } finally {
      renewal = null;
    }
  })();
  return renewal;
}

/**
 * Calls the API: JSON in, JSON out; a refusal is thrown as an ApiError. A
 * session that has expired is renewed once and the request retried; one that
 * cannot go on shows the sign-in form and throws SessionOver.
 */
export async function api(method, path, body) {
  let response = await send(method, path, body);
  if (response.status === 401) {
    const refusal = await refusalOf(response);
    if (!SESSION_CODES.has(refusal.code)) throw new ApiError(401, refusal);
    const failure = refusal.code === EXPIRED ? await renewSession() : refusal;
    if (failure) sessionOver(failure);
    response = await send(method, path, body);
    if (response.status === 401) {
      const again = await refusalOf(response);
      if (SESSION_CODES.has(again.code)) sessionOver(again);
      throw new ApiError(401, again);
    }
  }
  if (!response.ok) throw new ApiError(response.status, await refusalOf(response));
  const text = await response.text();
  return text ? JSON.parse(text) : null;
}

// Refusals that say something a person should read when their session ends;
// the others are written for API clients and would only puzzle them.
const TELLING = new Set(["session_ended", "refresh_token_reused"]);

function sessionOver(refusal) {
  const hadSession = me !== null || hint.get();
  hint.set(false);
  if (TELLING.has(refusal.code)) showSignIn({ title: "You have been signed out.", refusal });
  // A session that ran out keeps the page and what is typed in it (signing-again.js).
  else showSignIn(hadSession ? { text: "Your session has ended. Sign in again to continue.", keepPage: true } : null);
  throw new SessionOver(refusal.message);
}

export const query = (parameters) => {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(parameters)) if (value !== undefined && value !== null) search.set(key, String(value));
  const text = search.toString();
  return text ? `?${text}` : "";
};
export const segment = encodeURIComponent;

/** The first wait before connecting again, doubled at each failure up to the longest. */
const FIRST_WAIT_MS = 500;
const LONGEST_WAIT_MS = 15_000;
/** How long a connection must stay open before the waits start again from the first. */
const STEADY_MS = 10_000;
/** Close codes of the node's live streams (decided by the node, not by WebSocket). */
const CREDENTIAL_NO_LONGER_GOOD = 4401;
const NO_LONGER_ALLOWED = 4403;

/** A frame of a live stream as JSON, or null for one that is not. */
function frameOf(data) {
  if (typeof data !== "string") return null;
  try {
    const frame = JSON.parse(data);
    return frame && typeof frame === "object" ? frame : null;
  } catch {
    return null;
  }
}

/**
 * One change as the node tells it (`kind`, `object` or null, `topic`, `at`),
 * or null for a frame that is not one, which is ignored, never thrown: only a
 * change told in full has a page read anything again. Presence is not a
 * change (nothing was committed): it is told apart, by presenceOf().
 */
function liveEvent(frame) {
  const told = typeof frame?.kind === "string" && frame.kind !== "" && frame.kind !== "presence" && typeof frame.topic === "string"
    && typeof frame.at === "number" && (typeof frame.object === "string" || frame.object === null || frame.object === undefined);
  return told ? { kind: frame.kind, object: frame.object ?? null, topic: frame.topic, at: frame.at } : null;
}

/** What someone listening to a mailbox says they are doing in a conversation, as the node tells it. */
const ACTIVITIES = new Set(["reading", "writing", "idle"]);

/**
 * Who (`actor`, a person's or agent's id) is doing what (`activity`: reading,
 * writing or idle) in which conversation (`object`), as the node tells another
 * listener on the mailbox (`{"kind":"presence",…}`), or null for a frame that
 * is not that.
 */
function presenceOf(frame) {
  const told = frame?.kind === "presence" && typeof frame.object === "string" && typeof frame.actor === "string"
    && ACTIVITIES.has(frame.activity) && typeof frame.topic === "string";
  if (!told) return null;
  // The node names who it is (a colleague this person may not otherwise know).
  const actorName = typeof frame.actor_name === "string" && frame.actor_name.trim() ? frame.actor_name : null;
  return { object: frame.object, actor: frame.actor, actorName, activity: frame.activity, topic: frame.topic };
}

/**
 * The close code a frame announces when it is the node's last one on a
 * stream (`{"kind":"stream_closed","code":4403,"reason":…}`), or null.
 */
function farewellCode(frame) {
  return frame?.kind === "stream_closed" && Number.isInteger(frame.code) ? frame.code : null;
}

/**
 * Follows the live stream at `path` (`/api/mailboxes/<id>/live`, `/api/me/live`):
 * a WebSocket on which the node tells, as it happens, that something changed
 * (ids and kinds, never content: what changed is read again through the
 * ordinary routes). The session's cookies authenticate it, as every call.
 *
 * `onEvent({ kind, object, topic, at })` is called for each change; a frame that
 * is not one is ignored. `onPresence({ object, actor, activity, topic })` is
 * called for each word of presence the node passes on from another listener
 * (on a mailbox's stream: who is reading or writing a reply where), which is
 * not a change and must not have anything read again. `onOpen()` is called
 * each time the stream opens, the first time too: whatever changed while it
 * was not open (or before it first opened) was not told, so the caller reads
 * again what it shows. `onRefused()` is called once if the node stops
 * admitting the caller, who may no longer read what it tells (it closes the
 * stream with 4403, or refuses to open it again); it is not opened again.
 *
 * Any other close is followed by another attempt, after a wait that doubles
 * from half a second to 15 (back to half a second once a connection has stayed
 * open). A credential the node no longer takes (4401) is renewed first. Why a
 * stream could not open at all the browser does not say, so the node is asked
 * first with the same request as a plain GET, which it answers as it would
 * the stream's (426, upgrade required, when it would admit it) without
 * opening or recording anything: an expired session is renewed on the way, as
 * for any call. A session that cannot go on shows the sign-in form and the
 * stream stops.
 *
 * Answers `say(message)`, which tells the node what the caller is doing (on a
 * mailbox's stream, `{ presence, object }`): sent at once if the stream is
 * open, and said again each time it opens, since the node forgets what a
 * closed stream said; and `close()`, which stops it for good: the caller
 * closes it when the view it serves goes away.
 */
export function listen(path, { onEvent, onPresence = () => {}, onOpen = () => {}, onRefused = () => {} }) {
  const address = `${location.protocol === "https:" ? "wss:" : "ws:"}//${location.host}${path}`;
  let socket = null;
  let closed = false;
  let wait = FIRST_WAIT_MS;
  let retry = null;
  /** What the caller last said, as sent: said again on each opening. */
  let said = null;

  function connect() {
    retry = null;
    if (closed) return;
    const current = new WebSocket(address);
    socket = current;
    let openedAt = null;
    // A stream closed by its caller tells nothing more, even what was already on its way.
    const wanted = () => !closed && socket === current;
    current.addEventListener("open", () => {
      if (!wanted()) return;
      openedAt = Date.now();
      if (said !== null) current.send(said);
      onOpen();
    });
    current.addEventListener("message", (message) => {
      if (!wanted()) return;
      const frame = frameOf(message.data);
      const code = farewellCode(frame);
      if (code !== null) {
        ended(code);
        return;
      }
      const presence = presenceOf(frame);
      if (presence) {
        onPresence(presence);
        return;
      }
      const event = liveEvent(frame);
      if (event) onEvent(event);
    });
    // The node's last frame says why it closes a stream, before the close
    // handshake ends (which can take seconds): act on whichever comes first.
    current.addEventListener("close", (event) => ended(event.code));

    function ended(code) {
      if (!wanted()) return;
      socket = null;
      if (code === NO_LONGER_ALLOWED) {
        stop();
        onRefused();
        return;
      }
      if (openedAt !== null && Date.now() - openedAt >= STEADY_MS) wait = FIRST_WAIT_MS;
      const before = code === CREDENTIAL_NO_LONGER_GOOD ? renewOrEnd() : openedAt === null ? stillAdmitted() : Promise.resolve(true);
      before.then((goOn) => {
        if (!goOn || closed) return;
        retry = setTimeout(connect, wait);
        wait = Math.min(wait * 2, LONGEST_WAIT_MS);
      });
    }
  }

  /** Renews the session for a stream whose credential the node stopped taking; answers whether to go on. */
  async function renewOrEnd() {
    if (closed) return false;
    const failure = await renewSession().catch(() => null);
    if (!failure) return true;
    try {
      sessionOver(failure);
    } catch {}
    return false;
  }

  /**
   * Asks the node, after a stream could not open, whether it would still
   * admit it; answers whether to try again. Refused (403, 404), it stops and
   * says so; out of reach or failing, it tries again later.
   */
  async function stillAdmitted() {
    if (closed) return false;
    try {
      await api("GET", path);
      return true;
    } catch (error) {
      if (error instanceof SessionOver || closed) return false;
      if (error.status !== 403 && error.status !== 404) return true;
      stop();
      onRefused();
      return false;
    }
  }

  // Back on the network: no reason to wait out the rest of a long wait.
  const online = () => {
    if (retry === null || closed) return;
    clearTimeout(retry);
    wait = FIRST_WAIT_MS;
    connect();
  };
  window.addEventListener("online", online);
  /** Nothing more is tried: neither another connection nor a wait for one. */
  function stop() {
    closed = true;
    window.removeEventListener("online", online);
    clearTimeout(retry);
  }
  connect();

  return {
    say(message) {
      if (closed) return;
      said = JSON.stringify(message);
      // Not yet open (or between connections): it is said as the stream opens.
      if (socket?.readyState === WebSocket.OPEN) socket.send(said);
    },
    close() {
      if (closed) return;
      stop();
      const current = socket;
      socket = null;
      if (!current) return;
      // Closing one still connecting makes the browser report an error in the
      // console; it is closed as soon as it opens instead, having told nothing.
      if (current.readyState === WebSocket.CONNECTING) current.addEventListener("open", () => current.close(1000));
      else current.close(1000);
    },
  };
}
