// Attacks on accounts, on real workerd and D1, each now failing to do harm: a
// refresh token stolen and rotated twice, a lockout aimed at a person from
// elsewhere, a rate-limit key of the caller's choosing, and an administrator on
// both sides of dual control through an agent she minted (decision 0016).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { assertRefusal } from "./harness.mjs";
import { startDesk } from "./fixtures.mjs";

const PASSWORD = "ana's long enough password";
let node, call, token, admin, desk, ana;

before(async () => {
  ({ node, call, token, admin, desk } = await startDesk());
  ana = await desk.person({ email: "ana@example.com", name: "Ana", password: PASSWORD });
});
after(() => node?.stop());

/** Signs in as Ana from the client address `address` (Cloudflare's CF-Connecting-IP). */
const signIn = (password, address) =>
  call("POST", "/api/sessions", { body: { email: ana.email, password }, headers: { "cf-connecting-ip": address } });

test("a refresh token stolen and rotated twice still ends the session when its owner refreshes", async () => {
  const signedIn = await signIn(PASSWORD, "192.0.2.10");
  assert.equal(signedIn.status, 201, signedIn.text);
  const victims = signedIn.body.session.refresh_token;
  const refresh = (refresh_token) => call("POST", "/api/sessions/refresh", { body: { refresh_token } });
  const first = await refresh(victims);
  assert.equal(first.status, 200, first.text);
  const second = await refresh(first.body.refresh_token);
  assert.equal(second.status, 200, second.text);
  const thiefs = second.body.access_token;
  assert.equal((await call("GET", "/api/me", { token: thiefs })).status, 200);

  assertRefusal(assert, await refresh(victims), 401, "refresh_token_reused");
  assertRefusal(assert, await call("GET", "/api/me", { token: thiefs }), 401, "session_ended");
  assertRefusal(assert, await refresh(second.body.refresh_token), 401, "refresh_token_invalid");
});

test("wrong passwords from elsewhere never lock a person out of the address she signs in from", async () => {
  const guesses = await Promise.all(Array.from({ length: 30 }, (_, index) => signIn(`guess ${index}`, "198.51.100.66")));
  const paused = guesses.filter((answer) => answer.body?.error?.code?.startsWith("too_many"));
  assert.ok(paused.length >= 20, `the guessing address is paused: ${guesses.map((answer) => answer.status)}`);
  assertRefusal(assert, await signIn(PASSWORD, "198.51.100.66"), 429, paused[0].body.error.code);
  // Ana, from the address she signed in from before, is not slowed at all.
  const own = await signIn(PASSWORD, "192.0.2.10");
  assert.equal(own.status, 201, own.text);
  // Nor from an address she never used, within that address's own allowance.
  const elsewhere = await signIn(PASSWORD, "203.0.113.20");
  assert.equal(elsewhere.status, 201, elsewhere.text);
  // The pause names the way out that exists: an administrator's reset.
  assert.match(paused[0].body.error.fix, /reset_password/);
});

test("an administrator sets a new password: every session of the person ends, and the new one signs in", async () => {
  const session = (await signIn(PASSWORD, "192.0.2.10")).body.session.access_token;
  const reset = await call("POST", `/api/people/${ana.id}/password`, { token, body: { new_password: "ana's brand new password" } });
  assert.equal(reset.status, 200, reset.text);
  assertRefusal(assert, await call("GET", "/api/me", { token: session }), 401, "session_ended");
  assertRefusal(assert, await signIn(PASSWORD, "192.0.2.10"), 401, "wrong_email_or_password");
  assert.equal((await signIn("ana's brand new password", "192.0.2.10")).status, 201);
  const entry = (await call("GET", "/api/audit?limit=20", { token })).body.entries.find((each) => each.action === "reset_password");
  assert.equal(entry?.object, ana.id, "the reset is in the audit chain");
});

test("a failed sign-in with a huge email stores a key of bounded length", async () => {
  const huge = `${"x".repeat(900_000)}@example.com`;
  const answer = await call("POST", "/api/sessions", { body: { email: huge, password: "whatever it is" }, headers: { "cf-connecting-ip": "198.51.100.99" } });
  assert.ok(answer.status === 401 || answer.status === 400, answer.text.slice(0, 200));
  const [{ longest }] = await node.sql("SELECT MAX(LENGTH(key)) AS longest FROM sign_in_failures");
  assert.ok(longest < 100, `the longest key is ${longest} bytes`);
});

test("an administrator who minted an agent and kept its credential cannot approve what it submits", async () => {
  const mailbox = await desk.mailbox("billing@mailroom.test", "Billing");
  const bob = await desk.person({ email: "bob@example.com", name: "Bob", password: "bob's long enough password" });
  await desk.grant(bob.id, ["send.propose"], mailbox.id);
  await desk.grant(admin.id, ["approval.decide"], mailbox.id);
  const minted = await call("POST", "/api/agents", {
    token,
    body: { name: "Invoicer", sponsor: bob.id, capabilities: ["mail.draft"], mailboxes: [{ mailbox: mailbox.id, relations: ["send.propose"] }] },
  });
  assert.equal(minted.status, 201, minted.text);
  const credential = minted.body.credential;
  const sends = `/api/mailboxes/${mailbox.id}/sends`;
  const draft = await call("POST", sends, { token: credential, body: { to: ["customer@example.org"], subject: "Invoice", text: "Pay here." } });
  assert.equal(draft.status, 201, draft.text);
  const { version } = (await call("POST", `${sends}/${draft.body.id}/submit`, { token: credential })).body;

  const queue = (await call("GET", "/api/approvals", { token })).body.sends;
  assert.ok(!queue.some((send) => send.id === draft.body.id), "not in the queue of the one who minted it");
  assertRefusal(assert, await call("POST", `${sends}/${draft.body.id}/approve`, { token, body: { version } }), 403, "handed_the_agent");
  assert.equal((await call("GET", `${sends}/${draft.body.id}`, { token })).body.state, "submitted");
});
