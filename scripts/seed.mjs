// Seeds a local node with a demo organisation through its own API, the way an
// operator would: the first administrator from the setup token, a second person,
// and a team. Run by scripts/run.sh; safe to run again (it skips what exists).
import { readFileSync } from "node:fs";

const [base, secretsFile] = process.argv.slice(2);
const secrets = Object.fromEntries(
  readFileSync(secretsFile, "utf8").split("\n").filter(Boolean).map((line) => line.split(/=(.*)/s).slice(0, 2)),
);
const demo = {
  admin: { email: "ada@example.com", name: "Ada Admin", password: "mailroom-demo-ada" },
  person: { email: "ben@example.com", name: "Ben Baker", password: "mailroom-demo-ben" },
  team: "Support",
};

async function call(method, path, body, token) {
  const headers = { "content-type": "application/json" };
  if (token) headers.authorization = `Bearer ${token}`;
  const response = await fetch(base + path, { method, headers, body: body && JSON.stringify(body) });
  return { status: response.status, body: await response.json().catch(() => null) };
}

async function waitForNode() {
  for (let attempt = 0; attempt < 120; attempt++) {
    try {
      const response = await fetch(`${base}/api/me`);
      if (response.status === 401) return;
    } catch {}
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  throw new Error(`the node did not answer at ${base}`);
}

await waitForNode();
const setup = await call("POST", "/api/setup", { setup_token: secrets.SETUP_TOKEN, ...demo.admin });
if (setup.status === 201) {
  const signIn = await call("POST", "/api/sessions", { email: demo.admin.email, password: demo.admin.password });
  const token = signIn.body.session.access_token;
  const person = await call("POST", "/api/people", demo.person, token);
  const team = await call("POST", "/api/teams", { name: demo.team }, token);
  await call("PUT", `/api/teams/${team.body.id}/members/${person.body.id}`, undefined, token);
  await call("PUT", `/api/teams/${team.body.id}/members/${setup.body.administrator.id}`, undefined, token);
} else if (setup.body?.error?.code !== "already_set_up") {
  throw new Error(`setting up the demo organisation failed: ${JSON.stringify(setup.body)}`);
}

console.log(`
Mailroom is running at ${base}

  Sign in as the administrator:  ${demo.admin.email} / ${demo.admin.password}
  or as a second person:         ${demo.person.email} / ${demo.person.password}
  (both are in the team "${demo.team}")

  API:  curl -X POST ${base}/api/sessions -d '{"email":"${demo.admin.email}","password":"${demo.admin.password}"}'
`);
