// cordon mcp driven by the protocol's own TypeScript SDK client
// (tests/integration/mcp.sh): connect over stdio, list the tools, call run
// (with progress), a session's tools, and cancel a call. The SDK checks each
// result's structuredContent against the tool's outputSchema.
// usage: node client.mjs CORDON
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { readdirSync, readFileSync } from "node:fs";

const cordon = process.argv[2];
function check(cond, what) {
  if (!cond) throw new Error(what);
}
function procWith(marker) {
  return readdirSync("/proc").filter((d) => /^\d+$/.test(d)).some((d) => {
    try { return readFileSync(`/proc/${d}/cmdline`).includes(marker); } catch { return false; }
  });
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
async function waitUntil(cond, what) {
  for (let i = 0; i < 1200; i++) { if (cond()) return; await sleep(100); }
  throw new Error(what);
}

const transport = new StdioClientTransport({ command: cordon, args: ["mcp"], stderr: "inherit" });
const client = new Client({ name: "cordon-sdk-test", version: "1.0.0" });
await client.connect(transport);
try {
  check(client.getServerVersion().name === "cordon", "server info");
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name).sort();
  for (const n of ["changes", "file_list", "file_read", "file_write", "run", "session_close", "session_exec", "session_open"])
    check(names.includes(n), `tool ${n} listed: ${names}`);

  const progress = [];
  const r = await client.callTool({ name: "run", arguments: { command: "echo hi; exit 3" } }, undefined,
    { onprogress: (p) => progress.push(p) });
  check(!r.isError && r.structuredContent.exit_code === 3 && r.structuredContent.stdout === "hi\n",
    `run: ${JSON.stringify(r)}`);
  check(JSON.parse(r.content[0].text).status === "exit-nonzero", "text content");
  check(progress.length > 0 && progress[0].message.includes("hi"), `progress: ${JSON.stringify(progress)}`);

  const s = (await client.callTool({ name: "session_open", arguments: {} })).structuredContent;
  await client.callTool({ name: "file_write", arguments: { session: s.session, path: "x.txt", content: "sdk\n" } });
  const e = await client.callTool({ name: "session_exec", arguments: { session: s.session, argv: ["cat", "x.txt"] } });
  check(e.structuredContent.stdout === "sdk\n", `session_exec: ${JSON.stringify(e)}`);
  const f = await client.callTool({ name: "file_read", arguments: { session: s.session, path: "x.txt" } });
  check(f.structuredContent.content === "sdk\n", "file_read");
  const l = await client.callTool({ name: "file_list", arguments: { session: s.session } });
  check(l.structuredContent.entries.some((x) => x.name === "x.txt"), "file_list");
  const ch = await client.callTool({ name: "changes", arguments: { session: s.session } });
  check(!ch.isError && ch.structuredContent.changes.some((x) => x.path === "x.txt" && x.change === "created") &&
    ch.structuredContent.diff.includes("+sdk"), `changes: ${JSON.stringify(ch)}`);
  const c = await client.callTool({ name: "session_close", arguments: { session: s.session } });
  check(c.structuredContent.status === "ok" && c.structuredContent.execs === 1, `close: ${JSON.stringify(c)}`);

  // the SDK's cancellation: an AbortSignal sends notifications/cancelled
  const marker = `419.${process.pid}`;
  const ac = new AbortController();
  const p = client.callTool({ name: "run", arguments: { argv: ["sleep", marker] } }, undefined, { signal: ac.signal });
  await waitUntil(() => procWith(marker), "the run never started");
  ac.abort("test");
  let aborted = false;
  try { await p; } catch { aborted = true; }
  check(aborted, "the call was aborted");
  await waitUntil(() => !procWith(marker), "the cancelled run's process is still there");
  await client.ping();
  console.log("ok");
} finally {
  await client.close();
}
