// Limits that hold under concurrency, on real workerd and D1: an attempt is
// counted before its secret is checked, so of a hundred parallel guesses only
// those within the limit are ever checked, and the right secret sent among them
// past the limit is refused like the rest.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startNode, setUp, ADMIN } from "./harness.mjs";

let node, call, token, admin;

before(async () => {
  node = await startNode();
  ({ call, token, admin } = await setUp(node));
});
after(() => node?.stop());

/** How many of `responses` reached the secret check (answered `checked`) and how many were paused (429). */
function tally(responses, checked) {
  const codes = responses.map((response) => response.body?.error?.code ?? String(response.status));
  return { checked: codes.filter((code) => code === checked).length, paused: codes.filter((code) => code.startsWith("too_many")).length, codes };
}

test("a hundred parallel wrong passwords for one account from one address: at most ten are checked", async () => {
  const person = (await call("POST", "/api/people", { token, body: { email: "ben@example.com", name: "Ben", password: "ben's first long password" } })).body;
  const guesses = await Promise.all(
    Array.from({ length: 100 }, (_, index) => call("POST", "/api/sessions", { body: { email: person.email, password: `guess number ${index}` } })),
  );
  const { checked, paused, codes } = tally(guesses, "wrong_email_or_password");
  assert.ok(checked <= 10, `${checked} guesses were checked: ${codes}`);
  assert.equal(checked + paused, 100, String(codes));
});

test("in a burst of forty, the right password past the limit is refused like the guesses", async () => {
  const burst = Array.from({ length: 40 }, (_, index) => ({ email: ADMIN.email, password: index === 34 ? ADMIN.password : `guess ${index}` }));
  const answers = await Promise.all(burst.map((body) => call("POST", "/api/sessions", { body })));
  const { checked, paused } = tally(answers, "wrong_email_or_password");
  const signedIn = answers.filter((answer) => answer.status === 201).length;
  assert.ok(checked + signedIn <= 10, `${checked + signedIn} attempts were checked`);
  assert.ok(paused >= 30);
  // Which attempts got a slot depends on arrival order; the limit does not.
});

test("a hundred parallel wrong current passwords through one session: at most ten are checked", async () => {
  const session = token;
  const guesses = await Promise.all(
    Array.from({ length: 100 }, (_, index) =>
      call("POST", "/api/me/password", { token: session, body: { current_password: `guess ${index}`, new_password: "a new long password here" } }),
    ),
  );
  const { checked, paused, codes } = tally(guesses, "wrong_current_password");
  assert.ok(checked <= 10, `${checked} guesses were checked: ${codes}`);
  assert.equal(checked + paused, 100, String(codes));
});

test("a hundred parallel wrong pairing codes from one address: at most twenty are checked", async () => {
  const guesses = await Promise.all(
    Array.from({ length: 100 }, (_, index) => call("POST", "/api/agents/pair", { body: { code: `mr_pair_guess_${index}` } })),
  );
  const { checked, paused, codes } = tally(guesses, "pairing_code_invalid");
  assert.ok(checked <= 20, `${checked} codes were checked: ${codes}`);
  assert.equal(checked + paused, 100, String(codes));
  assert.equal(admin.email, ADMIN.email);
});
