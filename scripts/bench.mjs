// Latency benchmark: the built Worker on workerd with a local D1, measured from
// a client on 127.0.0.1. Prints a table per phase; asserts nothing (speed is
// measured, never tested). Run after scripts/build.sh:
//
//   node scripts/bench.mjs            (through scripts/lib.sh's Node, or Node 22+)
//
// A latency is the HTTP exchange alone, from sending the request to the last
// byte of its answer; the client's own checks of the answer (against
// contract/openapi.json) run after the clock stops.
//
// The phases, each on its own fresh node:
//   sequential   one request at a time, per route (ROUNDS each), with where each
//                request's time went inside the Worker (its Server-Timing
//                header: the node runs with SERVER_TIMING on, decision 0034),
//                and tools/list set beside a single-row read by the same callers
//   concurrent   create_draft over REST and over MCP with 10 and 30 in flight
//                (CALLS each): tail latency, busy answers, commit attempts
//   scale        SIZES received messages in two mailboxes seeded straight into
//                where they are kept (each mailbox's own Durable Object, written
//                with the node stopped, or D1), then search and the message
//                list (SCALE_ROUNDS each) at every size
//   events       LISTENERS WebSockets on one mailbox (decision 0035), then
//                EVENT_ROUNDS conversation changes one at a time: from sending
//                the change to each listener's frame, p50 and p99, and the
//                change's own latency beside the same change with nobody
//                listening; again with NODE_LISTENERS open across the node
//                (the rest on other mailboxes, counted if they hear anything);
//                then IDLE_SECONDS with them all open: workerd's CPU time and
//                resident memory (Linux's /proc)
//   webhooks     EVENT_ROUNDS changes with 0, 1 and 10 webhooks subscribed to
//                the mailbox (decision 0038): the change's own latency, and from
//                sending it to each endpoint's POST on 127.0.0.1 (scripts/bench-webhooks.mjs)
//   capacity     CAPACITY_MESSAGES messages of about 3 KB of text through the email
//                handler: D1's bytes per message by part, and what 10 GB holds
//                (scripts/bench-capacity.mjs)
//   inbound      INBOUND_MESSAGES messages through the email handler, 16 in flight,
//                to one mailbox and then over 16: stored per second, latency,
//                refusals (scripts/bench-inbound.mjs)
//   browser      BROWSER_ROUNDS rounds in headless Chromium, each in a fresh
//                context: the sign-in form shown after navigation (first visit,
//                then with the modules kept), and a conversation opened from the
//                list: its frame, then its first message's text (scripts/bench-browser.mjs)
//   peers        two nodes connected as peers, an agent on A asking an agent on
//                B PEER_ROUNDS times: A's send answered, the message claimable
//                at B, and the answer claimable back at A (scripts/bench-peers.mjs)
//   mailbox      not in the default run: one mailbox's own Durable Object given
//                today's schema for received mail at MAILBOX_SIZES messages:
//                bytes per message, a page of the list and a search, before the
//                mail stores move into it (scripts/bench-mailbox.mjs)
//   fanout       not in the default run: a person's search across FANOUT_READ
//                of FANOUT_MAILBOXES mailboxes of FANOUT_EACH messages each,
//                beside the same search in one: first from inside workerd, the
//                FANOUT_READ objects asked at once and merged (bench-mailbox.mjs);
//                then through the node's GET /api/search, every mailbox's
//                messages seeded into its own object with the node stopped
//                (bench-fanout.mjs)
//
// Options, all environment variables (the defaults are the full run):
//   PHASES=sequential,concurrent,scale,events,webhooks,capacity,inbound,browser,peers  ROUNDS=200  CALLS=300  IN_FLIGHT=10,30
//   SIZES=1000,100000,1000000  SCALE_ROUNDS=40  LISTENERS=100  EVENT_ROUNDS=50
//   NODE_LISTENERS=1000  IDLE_SECONDS=10  CAPACITY_MESSAGES=300  INBOUND_MESSAGES=320  BROWSER_ROUNDS=20  PEER_ROUNDS=30
//   MAILBOX_SIZES=1000,10000,100000  FANOUT_MAILBOXES=100  FANOUT_READ=10  FANOUT_EACH=10000
//   OWN_DATABASES=false: the sequential, scale and inbound phases' mailboxes keep
//   their mail in D1, as before decision 0040, to compare
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { startNode, setUp, ROOT, ADMIN } from "../tests/e2e/harness.mjs";
import { usage, workerdUnder } from "./workerd-usage.mjs";
import {
  percentile, table, timedClient, measureInTurn, measure, mean, mailboxFor, signIn, messengers, conversationToChange, PHASE_NAMES, TOTAL, MAIL_VARS,
} from "./bench-kit.mjs";
import { webhooks } from "./bench-webhooks.mjs";
import { capacity } from "./bench-capacity.mjs";
import { inbound } from "./bench-inbound.mjs";
import { fanout, mailbox } from "./bench-mailbox.mjs";
import { COMMON, RARE, receiptsStatement, indexStatements, templateOf, withMailStores } from "./bench-seed.mjs";
import { fanoutThroughRoutes } from "./bench-fanout.mjs";
import { browser } from "./bench-browser.mjs";
import { peers } from "./bench-peers.mjs";

const list = (name, fallback) => (process.env[name] ?? fallback).split(",").map((item) => item.trim()).filter(Boolean);
const PHASES = list("PHASES", "sequential,concurrent,scale,events,webhooks,capacity,inbound,browser,peers");
const CAPACITY_MESSAGES = Number(process.env.CAPACITY_MESSAGES ?? 300);
const INBOUND_MESSAGES = Number(process.env.INBOUND_MESSAGES ?? 320);
const BROWSER_ROUNDS = Number(process.env.BROWSER_ROUNDS ?? 20);
const PEER_ROUNDS = Number(process.env.PEER_ROUNDS ?? 30);
const MAILBOX_SIZES = list("MAILBOX_SIZES", "1000,10000,100000").map(Number).sort((left, right) => left - right);
const FANOUT_MAILBOXES = Number(process.env.FANOUT_MAILBOXES ?? 100);
const FANOUT_READ = Number(process.env.FANOUT_READ ?? 10);
const FANOUT_EACH = Number(process.env.FANOUT_EACH ?? 10000);
const ROUNDS = Number(process.env.ROUNDS ?? 200);
const CALLS = Number(process.env.CALLS ?? 300);
const IN_FLIGHT = list("IN_FLIGHT", "10,30").map(Number);
const SIZES = list("SIZES", "1000,100000,1000000").map(Number).sort((left, right) => left - right);
const SCALE_ROUNDS = Number(process.env.SCALE_ROUNDS ?? 40);
const LISTENERS = Number(process.env.LISTENERS ?? 100);
const EVENT_ROUNDS = Number(process.env.EVENT_ROUNDS ?? 50);
const NODE_LISTENERS = Number(process.env.NODE_LISTENERS ?? 1000);
const IDLE_SECONDS = Number(process.env.IDLE_SECONDS ?? 10);
// The header a response carries saying how many attempts its commit took (absent
// when nothing was committed, or from a node that does not say).
const COMMIT_ATTEMPTS = "x-mailroom-commit-attempts";

const plain = readFileSync(join(ROOT, "tests", "fixtures", "mail", "plain.eml"), "latin1");

async function sequential() {
  const node = await startNode({ vars: { FEATURE_AGENT_NETWORK: "true", SERVER_TIMING: "true", ...MAIL_VARS } });
  try {
    const { token, admin } = await setUp(node);
    const call = timedClient(node.url);
    const { sender, receiver } = await messengers(call, token, admin);
    let key = 0;
    const send = () =>
      call("POST", "/api/agent-messages", {
        token: sender.credential,
        body: { recipient: receiver.id, kind: "request", content: { text: "37 + 58?" }, idempotency_key: `bench-${++key}` },
      });
    // Leases for the acknowledgements to finish, one per timed call, all taken
    // on the first (untimed, warm-up) call so no timed call pays for them.
    const leases = [];
    const lease = async () => {
      while (leases.length === 0 || (leases.length < ROUNDS + 20 && !lease.filled)) {
        for (let index = 0; index < 10; index++) await send();
        const claimed = await call("POST", "/api/agent-inbox/leases", { token: receiver.credential, body: { max: 10, lease_seconds: 3600 } });
        leases.push(...claimed.body.messages);
      }
      lease.filled = true;
      return leases.pop();
    };
    const acknowledge = async () => {
      const leased = await lease();
      return call("POST", `/api/agent-inbox/${leased.id}/ack`, { token: receiver.credential, body: { fencing_token: leased.fencing_token } });
    };
    const empty = await messengers(call, token, admin);
    // Filled on the first (untimed, warm-up) call: a message waiting for every claim.
    let filled = false;
    const claimOne = async () => {
      if (!filled) {
        for (let index = 0; index < ROUNDS + 20; index++) await send();
        filled = true;
      }
      return call("POST", "/api/agent-inbox/leases", { token: receiver.credential, body: { max: 1, lease_seconds: 3600 } });
    };
    const mailbox = await mailboxFor(call, token, admin, "support@mailroom.test", "Support");
    for (let index = 0; index < 50; index++) {
      await node.deliver("ana@customer.example", "support@mailroom.test", plain.replace("invoice-question-1", `bench-${index}`));
    }
    const receipt = (await call("GET", `/api/mailboxes/${mailbox.id}/messages?limit=1`, { token })).body.messages[0].id;
    const thread = `/api/mailboxes/${mailbox.id}/threads/${(await call("GET", `/api/mailboxes/${mailbox.id}/threads?limit=1`, { token })).body.threads[0].id}`;
    // A reply through the email handler, joining its conversation by In-Reply-To.
    let replies = 0;
    const newline = plain.includes("\r\n") ? "\r\n" : "\n";
    const reply = async () => {
      const raw = plain
        .replace("invoice-question-1", `bench-reply-${++replies}`)
        .replace(/^Subject: [^\r\n]*/m, "Subject: Re: bench")
        .replace("Message-ID:", `In-Reply-To: <bench-0@customer.example>${newline}Message-ID:`);
      const rejected = await node.deliver("ana@customer.example", "support@mailroom.test", raw);
      return { status: rejected ? 500 : 200, text: rejected ?? "" };
    };
    // A feed to read: twenty approvals waiting for the administrator, submitted
    // by a second person.
    await call("POST", "/api/relations", { token, body: { subject: admin.id, relation: "approval.decide", object: mailbox.id } });
    const bo = (await call("POST", "/api/people", { token, body: { email: "bo@example.com", name: "Bo", password: "a long enough password" } })).body;
    await call("POST", "/api/relations", { token, body: { subject: bo.id, relation: "send.propose", object: mailbox.id } });
    const boToken = await signIn(call, "bo@example.com", "a long enough password");
    let waiting;
    for (let index = 0; index < 20; index++) {
      const draft = (await call("POST", `/api/mailboxes/${mailbox.id}/sends`, { token: boToken, body: { to: ["a@b.example"], subject: `Bench ${index}`, text: "T" } })).body;
      await call("POST", `/api/mailboxes/${mailbox.id}/sends/${draft.id}/submit`, { token: boToken });
      waiting = `/api/mailboxes/${mailbox.id}/sends/${draft.id}`;
    }
    // A published butler on a second mailbox, acting on every delivery there.
    const sales = await mailboxFor(call, token, admin, "sales@mailroom.test", "Sales");
    const butler = (await call("POST", `/api/mailboxes/${sales.id}/butlers`, {
      token,
      body: { name: "Bench", sponsor: admin.id, rules: { conditions: [{ on: "subject", contains: "bench" }], effects: [{ do: "set_status", status: "waiting" }, { do: "assign", assignee: admin.id }] } },
    })).body;
    await call("POST", `/api/mailboxes/${sales.id}/butlers/${butler.id}/publish`, { token, body: { version: 1 } });
    let salesMail = 0;
    const toSales = async () => {
      const raw = plain.replace("invoice-question-1", `bench-sales-${++salesMail}`).replace(/^Subject: [^\r\n]*/m, "Subject: bench");
      const rejected = await node.deliver("ana@customer.example", "sales@mailroom.test", raw);
      return { status: rejected ? 500 : 200, text: rejected ?? "" };
    };
    await toSales();
    // A butler on a third mailbox that labels each delivery and files a copy in support.
    const billing = await mailboxFor(call, token, admin, "billing@mailroom.test", "Billing");
    const filer = (await call("POST", `/api/mailboxes/${billing.id}/butlers`, {
      token,
      body: { name: "Bench filer", sponsor: admin.id, rules: { conditions: [], effects: [{ do: "label", label: "billing" }, { do: "forward", mailbox: mailbox.id }] } },
    })).body;
    await call("POST", `/api/mailboxes/${billing.id}/butlers/${filer.id}/publish`, { token, body: { version: 1 } });
    let billingMail = 0;
    const toBilling = async () => {
      const raw = plain.replace("invoice-question-1", `bench-billing-${++billingMail}`);
      const rejected = await node.deliver("ana@customer.example", "billing@mailroom.test", raw);
      return { status: rejected ? 500 : 200, text: rejected ?? "" };
    };
    const salesReceipt = (await call("GET", `/api/mailboxes/${sales.id}/messages?limit=1`, { token })).body.messages[0].id;
    // An export of the support mailbox, built by the per-minute runs.
    await call("POST", "/api/relations", { token, body: { subject: admin.id, relation: "ediscovery.export", object: "org" } });
    const exported = (await call("POST", "/api/exports", { token, body: { mailbox_ids: [mailbox.id] } })).body;
    for (let run = 0; run < 4; run++) await node.scheduled("* * * * *");
    // An app the administrator connected over OAuth: its access token, and a
    // refresh token that rotates with every use.
    const redirect = "http://127.0.0.1:4567/callback";
    const verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
    const clientId = (await call("POST", "/oauth/register", { body: { client_name: "Bench app", redirect_uris: [redirect] } })).body.client_id;
    const consented = (await call("POST", "/api/oauth/consent", { token, body: {
      client_id: clientId, redirect_uri: redirect, code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM", code_challenge_method: "S256",
      capabilities: ["mail.read"], mailboxes: [{ mailbox: mailbox.id, relations: ["mailbox.metadata.read", "mailbox.content.read"] }],
    } })).body;
    const form = (fields) => ({ raw: new URLSearchParams(fields).toString(), headers: { "content-type": "application/x-www-form-urlencoded" } });
    let app = (await call("POST", "/oauth/token", form({
      grant_type: "authorization_code", code: new URL(consented.redirect_to).searchParams.get("code"), client_id: clientId, redirect_uri: redirect, code_verifier: verifier,
    }))).body;
    const refreshApp = async () => {
      const answer = await call("POST", "/oauth/token", form({ grant_type: "refresh_token", refresh_token: app.refresh_token, client_id: clientId }));
      app = answer.body;
      return answer;
    };
    // An agent of the administrator's with 18 tools (reading mail and working
    // reminders), as an MCP client holds one.
    const assistant = (await call("POST", "/api/agents", {
      token,
      body: {
        name: "Bench assistant",
        sponsor: admin.id,
        capabilities: ["identity.read", "mail.triage", "mail.read", "reminders.read", "reminders.manage"],
        mailboxes: [{ mailbox: mailbox.id, relations: ["mailbox.metadata.read", "mailbox.content.read"] }],
      },
    })).body.credential;
    const listTools = (as) => call("POST", "/mcp", { token: as, body: { jsonrpc: "2.0", id: 1, method: "tools/list" } });
    const assistantTools = (await listTools(assistant)).body.result.tools.length;
    const adminTools = (await listTools(token)).body.result.tools.length;
    // What tools/list is set beside: the same caller's GET /api/me, one round
    // trip that reads one row (an agent's) or a person's row and what they hold.
    const comparisons = [
      [`POST /mcp tools/list (an agent with ${assistantTools} tools)`, "GET /api/me (the agent: its one row)"],
      [`POST /mcp tools/list (the administrator: ${adminTools} tools)`, "GET /api/me"],
    ];
    const cases = [
      ["GET /api/me", () => call("GET", "/api/me", { token })],
      ["GET /api/me (the agent: its one row)", () => call("GET", "/api/me", { token: assistant })],
      ["GET /api/me/notifications (20 approvals waiting)", () => call("GET", "/api/me/notifications", { token })],
      ["POST …/butlers/:id/simulate (a dry run)", () => call("POST", `/api/mailboxes/${sales.id}/butlers/${butler.id}/simulate`, { token, body: { receipt_id: salesReceipt } })],
      ["email handler: a delivery a published butler acts on", toSales],
      ["email handler: a delivery a butler labels and files a copy of", toBilling],
      ["GET /api/exports/:id/objects (50 a page)", () => call("GET", `/api/exports/${exported.id}/objects`, { token })],
      ["GET /api/exports/:id/objects/:id (a download, audited)", () => call("GET", `/api/exports/${exported.id}/objects/${receipt}`, { token })],
      ["GET …/messages (50 stored)", () => call("GET", `/api/mailboxes/${mailbox.id}/messages`, { token })],
      ["GET …/messages/:id/body (audited)", () => call("GET", `/api/mailboxes/${mailbox.id}/messages/${receipt}/body`, { token })],
      ["GET /api/search?q=invoice (audited)", () => call("GET", "/api/search?q=invoice", { token })],
      ["GET …/threads (50 conversations, audited)", () => call("GET", `/api/mailboxes/${mailbox.id}/threads`, { token })],
      ["GET …/threads?status=open&unread=true&assignee=none", () => call("GET", `/api/mailboxes/${mailbox.id}/threads?status=open&unread=true&assignee=none`, { token })],
      ["GET …/threads/:id (audited)", () => call("GET", thread, { token })],
      ["PATCH …/threads/:id (status, audited)", () => call("PATCH", thread, { token, body: { status: "waiting" } })],
      ["PUT …/threads/:id/read", () => call("PUT", `${thread}/read`, { token })],
      ["email handler: a reply joining its conversation", reply],
      ["POST …/sends (a draft, audited)", () => call("POST", `/api/mailboxes/${mailbox.id}/sends`, { token, body: { to: ["a@b.example"], subject: "S", text: "T" } })],
      ["GET …/sends/:id (one awaiting a decision)", () => call("GET", waiting, { token })],
      ["GET /api/approvals (20 awaiting)", () => call("GET", "/api/approvals", { token })],
      [comparisons[1][0], () => listTools(token)],
      [comparisons[0][0], () => listTools(assistant)],
      ["POST /mcp tools/list (an OAuth app's token)", () => listTools(app.access_token)],
      ["POST /mcp tools/call create_draft", () => call("POST", "/mcp", {
        token,
        body: { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "create_draft", arguments: { mailbox_id: mailbox.id, to: ["a@b.example"], subject: "S", text: "T" } } },
      })],
      ["POST /oauth/token (a refresh, rotated, audited)", refreshApp],
      ["POST /api/me/events (a reminder, audited)", () => call("POST", "/api/me/events", { token, body: { title: "Bench", due_at: "2027-03-01T09:00" } })],
      ["GET /api/me/events (open, soonest first)", () => call("GET", "/api/me/events", { token })],
      ["POST /api/agent-messages (202, audited)", send],
      ["POST /api/agent-inbox/leases (max 1, hundreds waiting)", claimOne],
      ["POST /api/agent-inbox/leases (an empty poll)", () => call("POST", "/api/agent-inbox/leases", { token: empty.receiver.credential, body: { max: 1 } })],
      ["POST /api/agent-inbox/:id/ack", acknowledge],
      ["POST /a2a/:agentId SendMessage", () => call("POST", `/a2a/${receiver.id}`, {
        token: sender.credential,
        body: { jsonrpc: "2.0", id: 1, method: "SendMessage", params: { message: { messageId: `bench-a2a-${++key}`, role: "ROLE_USER", parts: [{ text: "hi" }] } } },
      })],
    ];
    console.log(`## Sequential: ${ROUNDS} requests per route, one at a time, after 10 warm-up requests\n`);
    const rows = [];
    const measured = new Map();
    for (const [name, request] of cases) {
      const timings = await measure(name, request, ROUNDS, 10);
      measured.set(name, timings);
      rows.push([name, percentile(timings, 0.5), percentile(timings, 0.9), percentile(timings, 0.99)]);
    }
    table(["route", "p50 ms", "p90 ms", "p99 ms"], rows);
    printPhases(measured);
    // Both sides take one round trip (the caller's own check rides with what
    // each reads); what differs is everything else: the catalogue's own work
    // against writing one row, and the bytes of the answer. Measured again,
    // in turn, so that both meet the same machine: measured one route after
    // the other, a shared machine's load moves between them.
    console.log(`## tools/list beside a single-row read, by the same caller, in turn: ${ROUNDS} of each\n`);
    const requests = new Map(cases);
    for (const pair of comparisons) {
      for (const [name, timings] of await measureInTurn(pair.map((name) => [name, requests.get(name)]), ROUNDS, 10)) {
        measured.set(name, timings);
      }
    }
    const workerMean = (timings, columns) => mean(timings.phases.map((spent) => columns.reduce((sum, column) => sum + (spent[column] ?? 0), 0)));
    const own = ["parse", "handler", "serialise"];
    table(
      ["request", "p50 ms", "p95 ms", "Worker total, mean ms", "parse + handler + serialise, mean ms", "storage, mean ms", "bytes"],
      comparisons.flatMap((pair) =>
        pair.map((name) => {
          const timings = measured.get(name);
          return [name, percentile(timings, 0.5), percentile(timings, 0.95), workerMean(timings, [TOTAL]), workerMean(timings, own), workerMean(timings, ["storage"]), timings.bytes];
        }),
      ),
    );
    for (const [list, read] of comparisons) {
      const [listed, readOnce] = [measured.get(list), measured.get(read)];
      const ratio = (Number(percentile(listed, 0.5)) / Number(percentile(readOnce, 0.5))).toFixed(2);
      const below = (left, right) => (Number(left) < Number(right) ? "below" : "not below");
      console.log(`${list} against ${read}:`);
      if (listed.phases.length > 0 && readOnce.phases.length > 0) {
        const [work, trip] = [workerMean(listed, own), workerMean(listed, ["storage"])];
        console.log(`  the catalogue's own work (parse, handler, serialise) ${work} ms: ${below(work, trip)} its one D1 round trip's ${trip} ms (means)`);
        const [listTotal, readTotal] = [workerMean(listed, [TOTAL]), workerMean(readOnce, [TOTAL])];
        console.log(`  in the Worker, ${listTotal} ms against ${readTotal} ms: ${below(listTotal, readTotal)} the read (means)`);
      }
      console.log(`  at the client, ${ratio}× the read at the median: ${below(ratio, 1)} it (${listed.bytes} bytes against ${readOnce.bytes})`);
    }
    console.log();
  } finally {
    await node.stop();
  }
}

/**
 * Where each route's requests spent their time, from their Server-Timing
 * headers: per phase the median and the 95th percentile, then the mean. The
 * Worker's clock ticks in whole milliseconds, so a phase shorter than one
 * reads 0 or 1 in any one request: its median says little and its mean over
 * the requests is what resolves it. `outside` is the client's latency less
 * the Worker's own total: HTTP, workerd and the client.
 */
function printPhases(measured) {
  const columns = [...PHASE_NAMES, TOTAL, "outside"];
  const withPhases = [...measured].filter(([, timings]) => timings.phases.length > 0);
  if (withPhases.length === 0) {
    console.log("(no route's answer carried a Server-Timing header: a node built before decision 0034)\n");
    return;
  }
  console.log("## Where a request's time goes: the Worker's own phases, p50/p95 ms (whole milliseconds)\n");
  table(
    ["route", "trips", ...columns],
    withPhases.map(([name, { phases }]) => [
      name,
      percentile(phases.map((spent) => spent.round_trips ?? 0), 0.5),
      ...columns.map((column) => {
        const values = phases.map((spent) => spent[column] ?? 0);
        return `${percentile(values, 0.5)}/${percentile(values, 0.95)}`;
      }),
    ]),
  );
  console.log("## The same, mean ms over the requests\n");
  table(
    ["route", ...columns],
    withPhases.map(([name, { phases }]) => [name, ...columns.map((column) => mean(phases.map((spent) => spent[column] ?? 0)))]),
  );
}

/**
 * `total` calls of `request` with `inFlight` of them outstanding at any moment.
 * Answers each call's time, whether it was answered busy, and the commit
 * attempts its response declared (null when it declared none).
 */
async function flood(request, total, inFlight) {
  const outcomes = [];
  let started = 0;
  async function worker() {
    while (started < total) {
      started++;
      const begun = performance.now();
      const response = await request();
      const elapsed = response.elapsed ?? performance.now() - begun;
      const error = response.body?.error ?? response.body?.result?.structuredContent?.error;
      const busy = error?.code === "busy";
      if (!busy && (response.status >= 400 || response.body?.result?.isError || response.body?.error)) {
        throw new Error(`${response.status} ${response.text}`);
      }
      const attempts = response.headers.get(COMMIT_ATTEMPTS);
      outcomes.push({ elapsed, busy, attempts: attempts === null ? null : Number(attempts) });
    }
  }
  await Promise.all(Array.from({ length: inFlight }, worker));
  return outcomes;
}

async function concurrent() {
  const node = await startNode({ vars: { FEATURE_AGENT_NETWORK: "true" } });
  try {
    const { token, admin } = await setUp(node);
    const call = timedClient(node.url);
    const mailbox = await mailboxFor(call, token, admin, "support@mailroom.test", "Support");
    const draft = { to: ["ana@customer.example"], subject: "Re: your invoice", text: "It is on its way." };
    const { sender, receiver } = await messengers(call, token, admin);
    let id = 0;
    const surfaces = [
      [
        "REST POST /api/agent-messages",
        () =>
          call("POST", "/api/agent-messages", {
            token: sender.credential,
            body: { recipient: receiver.id, kind: "event", content: { n: ++id }, idempotency_key: `flood-${id}` },
          }),
      ],
      [
        "REST claim + ack, racing receivers",
        async () => {
          const claimed = await call("POST", "/api/agent-inbox/leases", { token: receiver.credential, body: { max: 1 } });
          const [leased] = claimed.body?.messages ?? [];
          if (!leased) return claimed;
          return call("POST", `/api/agent-inbox/${leased.id}/ack`, { token: receiver.credential, body: { fencing_token: leased.fencing_token } });
        },
      ],
      ["REST POST …/sends", () => call("POST", `/api/mailboxes/${mailbox.id}/sends`, { token, body: draft })],
      [
        "MCP tools/call create_draft",
        () =>
          call("POST", "/mcp", {
            token,
            body: { jsonrpc: "2.0", id: ++id, method: "tools/call", params: { name: "create_draft", arguments: { mailbox_id: mailbox.id, ...draft } } },
          }),
      ],
    ];
    console.log(`## Concurrent: ${CALLS} create_draft calls per row, with ${IN_FLIGHT.join(" and ")} in flight\n`);
    const rows = [];
    for (const inFlight of IN_FLIGHT) {
      for (const [name, request] of surfaces) {
        await flood(request, inFlight, inFlight);
        const outcomes = await flood(request, CALLS, inFlight);
        const timings = outcomes.map((outcome) => outcome.elapsed);
        const declared = outcomes.filter((outcome) => outcome.attempts !== null && !outcome.busy);
        const attempts = declared.length === 0 ? "n/a" : (declared.reduce((sum, outcome) => sum + outcome.attempts, 0) / declared.length).toFixed(2);
        rows.push([
          `${name}, ${inFlight} in flight`,
          percentile(timings, 0.5),
          percentile(timings, 0.95),
          percentile(timings, 0.99),
          Math.max(...timings).toFixed(1),
          outcomes.filter((outcome) => outcome.busy).length,
          attempts,
        ]);
      }
    }
    table(["write", "p50 ms", "p95 ms", "p99 ms", "max ms", "busy", "attempts/commit"], rows);
  } finally {
    await node.stop();
  }
}

// The scale phase's mail. Every message has "invoice" in its subject and its
// body (a common word); one in a hundred has "quartz" in both (a rare word);
// one in a hundred goes to small@, whose reader sees that 1% of the node; and
// every message but small@'s has "ledger" in its body, which that reader
// therefore never finds, however far the search looks.
const ELSEWHERE = "ledger";
const FILLER = [
  "We have checked the account and everything looks in order on our side.",
  "Please let us know if the delivery address has changed since last month.",
  "The attached statement covers the period up to the end of the quarter.",
  "Our office is closed on Friday, so a reply may take until Monday.",
  "Thank you for your patience while the warehouse processes the return.",
  "A colleague from the finance team will follow up with the details.",
  "The payment terms are thirty days from the date on the statement.",
];

/** Mailbox `mailboxId`'s receipts among `from` to `to - 1` (each `i` for which `kept`, a condition on it, holds), and their index rows. */
function seedStatements(from, to, template, mailboxId, kept, indexed) {
  const filler = FILLER.map((sentence, index) => `WHEN ${index} THEN '${sentence}'`).join(" ");
  const receipts = {
    numbers: `RECURSIVE n(i) AS (SELECT ${from} UNION ALL SELECT i + 1 FROM n WHERE i < ${to - 1})`,
    subject: `printf('Invoice %d for order %d', i, i) || CASE WHEN i % 100 = 7 THEN ' (${RARE})' ELSE '' END`,
    body: `printf('Hello, this is about the ${COMMON} for order %d. ', i)
         || CASE i % 7 ${filler} END || ' '
         || CASE WHEN i % 100 = 7 THEN 'The ${RARE} sample is ready. ' ELSE '' END
         || CASE WHEN i % 100 <> 0 THEN 'See the ${ELSEWHERE}. ' ELSE '' END || 'Regards, Ana'`,
    kept,
  };
  return [receiptsStatement(receipts, template, mailboxId), ...indexStatements(from, to, mailboxId, indexed)];
}

/** Follows `next_cursor` from `path` until page `page` (1 is the first): its path, or null when there are fewer pages. */
async function pagePath(call, token, path, page) {
  let current = path;
  for (let number = 1; number < page; number++) {
    const answer = await call("GET", current, { token });
    if (!answer.body.next_cursor) return null;
    current = `${path}&cursor=${answer.body.next_cursor}`;
  }
  return current;
}

async function scale() {
  const node = await startNode({ vars: MAIL_VARS });
  try {
    const { admin } = await setUp(node);
    const call = timedClient(node.url);
    let token = await signIn(call, ADMIN.email, ADMIN.password);
    const bulk = await mailboxFor(call, token, admin, "bulk@mailroom.test", "Bulk");
    const small = await mailboxFor(call, token, admin, "small@mailroom.test", "Small");
    const reader = { email: "sam@example.com", password: "sam has a long password" };
    const sam = (await call("POST", "/api/people", { token, body: { email: reader.email, name: "Sam", password: reader.password } })).body;
    for (const relation of ["mailbox.metadata.read", "mailbox.content.read"]) {
      await call("POST", "/api/relations", { token, body: { subject: sam.id, relation, object: small.id } });
    }
    if ((await node.deliver("ana@customer.example", "bulk@mailroom.test", plain)) !== null) throw new Error("the template was rejected");
    const templateId = (await call("GET", `/api/mailboxes/${bulk.id}/messages?limit=1`, { token })).body.messages[0].id;
    // Where each mailbox's messages go: small@ holds 1 in 100.
    const mailboxes = [
      [bulk, "i % 100 <> 0"],
      [small, "i % 100 = 0"],
    ];

    console.log(`## Scale: ${SCALE_ROUNDS} requests per row, in turn, after 5 warm-up rounds, at ${SIZES.join(", ")} messages`);
    console.log(`   "${COMMON}" is in every message, "${RARE}" in 1 in 100; small@ holds 1 in 100 and its reader sees only it;`);
    console.log(`   "${ELSEWHERE}" is in every message but small@'s. Pages: 25 results, 50 messages.\n`);
    const rows = [];
    let seeded = 1;
    for (const size of SIZES) {
      const { seconds, counts } = await withMailStores(node, async (ask) => {
        const began = performance.now();
        const { template, indexed } = await templateOf(ask, bulk.id, templateId);
        // The template is message 1; batches of at most 50,000 keep each statement's memory modest.
        for (let from = seeded; from < size; from += 50_000) {
          const to = Math.min(size, from + 50_000);
          for (const [mailbox, kept] of mailboxes) await ask(mailbox.id, seedStatements(from, to, template, mailbox.id, kept, indexed));
        }
        const counts = [];
        for (const [mailbox] of mailboxes) {
          counts.push(`${(await ask(mailbox.id, [`SELECT count(*) AS n FROM receipts WHERE mailbox_id = '${mailbox.id}'`]))[0].n} in ${mailbox.address}`);
        }
        return { seconds: ((performance.now() - began) / 1000).toFixed(0), counts };
      });
      seeded = Math.max(seeded, size);
      // Signed in afresh at each size: an access token lasts 15 minutes.
      token = await signIn(call, ADMIN.email, ADMIN.password);
      const samToken = await signIn(call, reader.email, reader.password);
      const search = (q, extra = "") => `/api/search?q=${q}${extra}`;
      const cases = [
        ["list, first page", token, `/api/mailboxes/${bulk.id}/messages?limit=50`, "messages", 1],
        ["list, page 10", token, `/api/mailboxes/${bulk.id}/messages?limit=50`, "messages", 10],
        [`search "${COMMON}", first page`, token, search(COMMON), "results", 1],
        [`search "${COMMON}", page 10`, token, search(COMMON), "results", 10],
        [`search "${RARE}", first page`, token, search(RARE), "results", 1],
        [`search "${RARE}", page 4`, token, search(RARE), "results", 4],
        [`search "${COMMON}" in small@ (1%)`, token, search(COMMON, `&mailbox=${small.id}`), "results", 1],
        [`reader of 1%: "${COMMON}"`, samToken, search(COMMON), "results", 1],
        [`reader of 1%: "${ELSEWHERE}" (none)`, samToken, search(ELSEWHERE), "results", 1],
      ];
      console.log(`   ${counts.join(", ")} (seeding took ${seconds} s)`);
      const pages = [];
      for (const [name, as, path, key, page] of cases) {
        const at = await pagePath(call, as, path, page);
        const hits = at === null ? "—" : (await call("GET", at, { token: as })).body[key].length;
        pages.push({ name, hits, request: at === null ? null : () => call("GET", at, { token: as }) });
      }
      // In turn, so that every request meets the same machine: the node has
      // just started again (its Worker's code still being compiled in the
      // background for the first seconds), which would otherwise fall on the first.
      const measured = await measureInTurn(
        pages.filter((page) => page.request !== null).map((page) => [page.name, page.request]),
        SCALE_ROUNDS,
      );
      for (const { name, hits } of pages) {
        const timings = measured.get(name) ?? [];
        rows.push([size, name, hits, percentile(timings, 0.5), percentile(timings, 0.95)]);
      }
    }
    console.log();
    table(["messages", "request", "items", "p50 ms", "p95 ms"], rows, 2);
  } finally {
    await node.stop();
  }
}

/**
 * Event latency: LISTENERS people's streams on one mailbox (each signed in as
 * themselves, eight at most per person being the node's cap), then
 * conversation status changes one at a time, each timed from sending it to
 * every listener's frame of it; then the same with NODE_LISTENERS open across
 * the node (the rest on other mailboxes, which must hear nothing of it); then
 * the node left idle with them all open: the CPU workerd spends meanwhile and
 * the memory they hold.
 */
async function events() {
  const node = await startNode();
  const sockets = [];
  try {
    const { token, admin } = await setUp(node);
    const call = timedClient(node.url);
    const { mailbox, change } = await conversationToChange(node, call, token, admin, plain);
    const pids = workerdUnder(node.pid);
    // What an ordinary audited change grows workerd by locally, for scale.
    const beforeChanges = usage(pids);
    const quiet = await measure("a change, nobody listening", change, EVENT_ROUNDS);
    const perChangeKiB = (usage(pids).residentKiB - beforeChanges.residentKiB) / (EVENT_ROUNDS + 5);

    const perMailbox = 50;
    const others = [];
    for (let index = 0; index < Math.ceil(Math.max(0, NODE_LISTENERS - LISTENERS) / perMailbox); index += 1) {
      others.push((await call("POST", "/api/mailboxes", { token, body: { address: `other${index}@mailroom.test`, display_name: `Other ${index}` } })).body);
    }
    const people = Math.ceil(Math.max(LISTENERS, perMailbox) / 8);
    const tokens = [];
    for (let index = 0; index < people; index += 1) {
      const email = `listener${index}@example.com`;
      const person = await call("POST", "/api/people", { token, body: { name: `Listener ${index}`, email, password: "a long enough password" } });
      for (const object of [mailbox, ...others]) {
        await call("POST", "/api/relations", { token, body: { subject: person.body.id, relation: "mailbox.metadata.read", object: object.id } });
      }
      tokens.push(await signIn(call, email, "a long enough password"));
    }
    const before = usage(pids);
    // Every listener's arrivals of the change in flight, and any frame heard
    // on another mailbox's stream.
    let arrivals = [];
    let overheard = 0;
    const open = (mailboxId, index, onFrame) => {
      const socket = new WebSocket(`${node.url.replace("http", "ws")}/api/mailboxes/${mailboxId}/live`, { headers: { authorization: `Bearer ${tokens[index % people]}` } });
      sockets.push(socket);
      socket.addEventListener("message", (message) => onFrame(JSON.parse(message.data)));
      return new Promise((resolve, reject) => {
        socket.addEventListener("open", resolve, { once: true });
        socket.addEventListener("error", reject, { once: true });
      });
    };
    const opened = [];
    for (let index = 0; index < LISTENERS; index += 1) {
      opened.push(open(mailbox.id, index, (frame) => frame.kind === "update_thread" && arrivals.push(performance.now())));
    }
    await Promise.all(opened);
    /** EVENT_ROUNDS changes: how long each took, and how long to each listener's frame and the last. */
    const rounds = async () => {
      const measured = { answered: [], toListener: [], toLast: [], missed: 0 };
      for (let round = 0; round < EVENT_ROUNDS; round += 1) {
        arrivals = [];
        const started = performance.now();
        measured.answered.push((await change()).elapsed);
        const deadline = performance.now() + 5000;
        while (arrivals.length < LISTENERS && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 1));
        measured.missed += LISTENERS - arrivals.length;
        for (const arrived of arrivals) measured.toListener.push(arrived - started);
        if (arrivals.length) measured.toLast.push(Math.max(...arrivals) - started);
      }
      return measured;
    };
    const one = await rounds();
    const across = [];
    for (let index = 0; index < NODE_LISTENERS - LISTENERS; index += 1) {
      across.push(open(others[Math.floor(index / perMailbox)].id, index, (frame) => {
        if (frame.kind !== "presence") overheard += 1;
      }));
    }
    await Promise.all(across);
    const opening = usage(pids);
    const all = await rounds();
    // Idle, every listener open: what the node spends and holds meanwhile.
    const idleFrom = usage(pids);
    await new Promise((resolve) => setTimeout(resolve, IDLE_SECONDS * 1000));
    const idleTo = usage(pids);
    console.log();
    console.log(`events: ${LISTENERS} listeners on one mailbox (${people} people), ${EVENT_ROUNDS} changes, ${one.missed} frames missed;`);
    console.log(`        then ${sockets.length} across the node (${others.length} more mailboxes), ${all.missed} missed, ${overheard} frames heard on other mailboxes`);
    table(["measure", "p50 ms", "p99 ms"], [
      ["change answered, nobody listening", percentile(quiet, 0.5), percentile(quiet, 0.99)],
      [`change answered, ${LISTENERS} listening`, percentile(one.answered, 0.5), percentile(one.answered, 0.99)],
      ["sent → each listener's frame", percentile(one.toListener, 0.5), percentile(one.toListener, 0.99)],
      ["sent → the last listener's frame", percentile(one.toLast, 0.5), percentile(one.toLast, 0.99)],
      [`change answered, ${sockets.length} open on the node`, percentile(all.answered, 0.5), percentile(all.answered, 0.99)],
      ["  sent → each listener's frame", percentile(all.toListener, 0.5), percentile(all.toListener, 0.99)],
      ["  sent → the last listener's frame", percentile(all.toLast, 0.5), percentile(all.toLast, 0.99)],
    ]);
    console.log();
    console.log(`idle: ${sockets.length} listeners open for ${IDLE_SECONDS} s: workerd spent ${(idleTo.cpuMs - idleFrom.cpuMs).toFixed(0)} ms of CPU;`);
    console.log(`      its resident memory ${(before.residentKiB / 1024).toFixed(1)} MiB before any listener, ${(opening.residentKiB / 1024).toFixed(1)} MiB with ${sockets.length} open (${(((opening.residentKiB - before.residentKiB) * 1024) / sockets.length / 1024).toFixed(1)} KiB each,`);
    console.log(`      opening included: each is a request through the Worker with its audit entry, and locally an ordinary audited change alone grew it ${perChangeKiB.toFixed(0)} KiB)`);
  } finally {
    for (const socket of sockets) socket.close();
    await node.stop();
  }
}

const phases = {
  sequential,
  concurrent,
  scale,
  events,
  webhooks: () => webhooks(EVENT_ROUNDS),
  capacity: () => capacity(CAPACITY_MESSAGES),
  inbound: () => inbound(INBOUND_MESSAGES),
  browser: () => browser(BROWSER_ROUNDS, plain),
  peers: () => peers(PEER_ROUNDS),
  mailbox: () => mailbox(MAILBOX_SIZES),
  fanout: async () => {
    await fanout(FANOUT_READ, FANOUT_EACH);
    await fanoutThroughRoutes(FANOUT_MAILBOXES, FANOUT_READ, FANOUT_EACH);
  },
};
for (const phase of PHASES) {
  if (!phases[phase]) throw new Error(`PHASES names ${phase}; the phases are ${Object.keys(phases).join(", ")}`);
  await phases[phase]();
}
