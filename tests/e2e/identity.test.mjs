// Identity on real workerd + D1: setup, sign-in through WebCrypto's PBKDF2,
// bearer and cookie sessions, revocation, rate limits and refusals.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startNode, setUp, signAccessToken, assertRefusal, ADMIN } from "./harness.mjs";

let node, call, admin, token;

before(async () => {
  node = await startNode();
  ({ call, admin, token } = await setUp(node));
});
after(() => node?.stop());

test("setup works once and then refuses for ever", async () => {
  const again = await call("POST", "/api/setup", {
    body: { setup_token: node.secrets.SETUP_TOKEN, email: "eve@example.com", name: "Eve", password: "another long password" },
  });
  assertRefusal(assert, again, 409, "already_set_up");
  const me = await call("GET", "/api/me", { token });
  assert.equal(me.status, 200);
  assert.equal(me.body.id, admin.id);
  assert.equal(me.body.is_admin, true);
});

test("a wrong password and an unknown email are refused alike", async () => {
  const wrong = await call("POST", "/api/sessions", { body: { email: ADMIN.email, password: "not the password" } });
  const unknown = await call("POST", "/api/sessions", { body: { email: "nobody@example.com", password: "not the password" } });
  assertRefusal(assert, wrong, 401, "wrong_email_or_password");
  assert.deepEqual(wrong.body, unknown.body);
});

test("sign-in pauses after repeated failures for one account", async () => {
  await call("POST", "/api/people", { token, body: { email: "target@example.com", name: "Target", password: "target password 1" } });
  for (let attempt = 0; attempt < 10; attempt++) {
    const failed = await call("POST", "/api/sessions", { body: { email: "target@example.com", password: "guess guess guess" } });
    assertRefusal(assert, failed, 401, "wrong_email_or_password");
  }
  const paused = await call("POST", "/api/sessions", { body: { email: "target@example.com", password: "target password 1" } });
  assertRefusal(assert, paused, 429, "too_many_sign_in_attempts");
  assert.ok(Number(paused.headers.get("retry-after")) > 0);
});

test("an expired or forged access token is refused; the refresh token renews it", async () => {
  const signedIn = await call("POST", "/api/sessions", { body: { email: ADMIN.email, password: ADMIN.password } });
  const { session_id, refresh_token } = signedIn.body.session;
  const expired = signAccessToken(node.secrets.SESSION_SECRET, { p: admin.id, s: session_id, e: Date.now() - 1000 });
  assertRefusal(assert, await call("GET", "/api/me", { token: expired }), 401, "access_token_expired");
  const forged = signAccessToken("not the secret", { p: admin.id, s: session_id, e: Date.now() + 60_000 });
  assertRefusal(assert, await call("GET", "/api/me", { token: forged }), 401, "invalid_credential");

  const refreshed = await call("POST", "/api/sessions/refresh", { body: { refresh_token } });
  assert.equal(refreshed.status, 200, refreshed.text);
  assert.equal((await call("GET", "/api/me", { token: refreshed.body.access_token })).status, 200);
  assert.notEqual(refreshed.body.refresh_token, refresh_token);
});

test("signing out and disabling a person stop live access tokens at once", async () => {
  const signedIn = await call("POST", "/api/sessions", { body: { email: ADMIN.email, password: ADMIN.password } });
  const access = signedIn.body.session.access_token;
  assert.equal((await call("DELETE", "/api/sessions/current", { token: access })).status, 200);
  assertRefusal(assert, await call("GET", "/api/me", { token: access }), 401, "session_ended");

  const ben = await call("POST", "/api/people", { token, body: { email: "ben@example.com", name: "Ben", password: "ben's long password" } });
  const benSession = await call("POST", "/api/sessions", { body: { email: "ben@example.com", password: "ben's long password" } });
  const benToken = benSession.body.session.access_token;
  assert.equal((await call("GET", "/api/me", { token: benToken })).status, 200);
  assert.equal((await call("POST", `/api/people/${ben.body.id}/disable`, { token })).status, 200);
  assertRefusal(assert, await call("GET", "/api/me", { token: benToken }), 401, "session_ended");
});

test("cookie sessions are __Host- cookies and changing requests must come from the node's origin", async () => {
  const signedIn = await call("POST", "/api/sessions", {
    headers: { origin: node.url },
    body: { email: ADMIN.email, password: ADMIN.password, transport: "cookie" },
  });
  assert.equal(signedIn.status, 201, signedIn.text);
  const cookies = signedIn.headers.getSetCookie();
  assert.equal(cookies.length, 2);
  for (const cookie of cookies) {
    assert.match(cookie, /^__Host-mailroom-(access|refresh)=/);
    for (const attribute of ["Path=/", "Secure", "HttpOnly", "SameSite=Strict"]) assert.ok(cookie.includes(attribute), cookie);
  }
  const jar = cookies.map((cookie) => cookie.split(";")[0]).join("; ");
  assert.equal((await call("GET", "/api/me", { headers: { cookie: jar } })).status, 200);
  const forged = await call("POST", "/api/teams", { headers: { cookie: jar, origin: "https://evil.example" }, body: { name: "Forged" } });
  assertRefusal(assert, forged, 403, "cross_origin_refused");
  const originless = await call("POST", "/api/teams", { headers: { cookie: jar }, body: { name: "Originless" } });
  assertRefusal(assert, originless, 403, "cross_origin_refused");
  const own = await call("POST", "/api/teams", { headers: { cookie: jar, origin: node.url }, body: { name: "Own origin" } });
  assert.equal(own.status, 201, own.text);
});

test("bad input is refused with four parts and never a 500", async () => {
  const raw = (text) => call("POST", "/api/teams", { token, raw: text, headers: { "content-type": "application/json" } });
  assertRefusal(assert, await raw("{"), 400, "malformed_json");
  assertRefusal(assert, await raw('{"name": 7}'), 400, "invalid_body");
  assertRefusal(assert, await raw("{}"), 400, "invalid_body");
  assertRefusal(assert, await call("GET", "/api/people/usr_00000000000000000000000000", { token }), 404, "not_found");
  assertRefusal(assert, await call("POST", "/api/teams", { token, raw: "x".repeat(1024 * 1024 + 1) }), 413, "body_too_large");
  assertRefusal(assert, await call("GET", "/api/nowhere", { token }), 404, "no_such_route");
  assertRefusal(assert, await call("DELETE", "/api/people", { token }), 405, "method_not_allowed");
  assertRefusal(assert, await call("GET", "/api/me"), 401, "not_signed_in");
  assertRefusal(assert, await call("GET", "/api/audit?limit=lots", { token }), 400, "invalid_query_parameter");
});
