// The official MCP TypeScript SDK's client against `corral mcp`, over stdio.
// tests/integration/mcp_sdk_test.cc runs it and judges the report it prints
// (one JSON object on stdout) and the disk, from outside.
//
//   node client.mjs CORRAL WORKSPACE OUTSIDE MARK [policy flags...]
//
// Elicitation: the client declares it and answers "accept" to every question
// except one whose message names "decline-me" (answered "decline").
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { readdirSync, readFileSync } from 'node:fs';

// Processes of this host whose command line holds `needle` (this client is
// outside the sandbox: it sees the host's /proc).
function processesMatching(needle) {
  let count = 0;
  for (const pid of readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(pid) || Number(pid) === process.pid) continue;  // this client's argv names it too
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, 'latin1').includes(needle)) count += 1;
    } catch {
      // gone, or not ours to read
    }
  }
  return count;
}

const [corral, workspace, outside, mark, ...flags] = process.argv.slice(2);
const transport = new StdioClientTransport({
  command: corral,
  args: ['mcp', '--audit', `${outside}/audit.jsonl`, ...flags],
  cwd: workspace,
  // CORRAL_MUTANT passes through for scripts/mutants.sh (a mutant build only).
  env: { PATH: process.env.PATH, HOME: process.env.HOME, LANG: 'C.UTF-8', ...(process.env.CORRAL_MUTANT ? { CORRAL_MUTANT: process.env.CORRAL_MUTANT } : {}) },
  stderr: 'inherit',
});
const client = new Client({ name: 'corral-sdk-test', version: '1.0.0' }, { capabilities: { elicitation: {} } });
const elicitations = [];
client.setRequestHandler(ElicitRequestSchema, async (request) => {
  const message = request.params.message;
  const decline = message.includes('decline-me');
  elicitations.push({ message, answer: decline ? 'decline' : 'accept' });
  return decline ? { action: 'decline' } : { action: 'accept', content: { approve: true } };
});

const report = { calls: {}, elicitations };
async function call(label, name, args) {
  try {
    const result = await client.callTool({ name, arguments: args });
    report.calls[label] = {
      isError: result.isError === true,
      outcome: result.structuredContent?.outcome,
      text: result.content?.[0]?.text ?? '',
    };
  } catch (error) {
    report.calls[label] = { thrown: String(error) };
  }
}

await client.connect(transport);
report.tools = (await client.listTools()).tools.map((tool) => tool.name).sort();

await call('read_ok', 'read', { path: 'a.txt' });
await call('read_denied', 'read', { path: `${outside}/secret.txt` });
await call('ls_ok', 'ls', { path: '.' });
await call('ls_denied', 'ls', { path: outside });
await call('find_ok', 'find', { pattern: '*.txt' });
await call('find_denied', 'find', { pattern: '*', path: outside });
await call('grep_ok', 'grep', { pattern: 'hello' });
await call('grep_denied', 'grep', { pattern: 'secret', path: outside });
await call('info', 'sandbox_info', {});
await call('write_ok', 'write', { path: 'written.txt', content: 'from the agent\n' });
await call('write_declined', 'write', { path: 'decline-me.txt', content: 'never\n' });
await call('write_denied', 'write', { path: '.git/hooks/pre-commit', content: 'evil\n' });
await call('write_outside', 'write', { path: `${outside}/planted.txt`, content: 'evil\n' });
await call('edit_ok', 'edit', { path: 'a.txt', old_string: 'hello', new_string: 'goodbye' });
await call('edit_denied', 'edit', { path: '.git/config', old_string: '[core]', new_string: '[core]\n\thooksPath = /tmp' });
await call('bash_ok', 'bash', { command: 'echo hi from bash; printf "\\033[31mred\\033[0m\\r\\n"' });
await call('bash_denied', 'bash', { command: `echo evil > ${outside}/from-bash.txt` });
await call('bash_timeout', 'bash', { command: 'echo output of a timed-out bash; sleep 60', timeout: 2 });
await call('bash_declined', 'bash', { command: 'echo decline-me > bash-declined.txt' });
await call('bad_args', 'read', { path: 7 });

// Cancellation: a tree of sleeps, cancelled through the SDK's AbortSignal.
const controller = new AbortController();
const started = Date.now();
const cancelled = client
  .callTool(
    { name: 'bash', arguments: { command: `(exec -a ${mark} sleep 1000) & exec -a ${mark} sleep 1000` } },
    undefined,
    { signal: controller.signal },
  )
  .then(() => 'completed', (error) => `rejected: ${error}`);
await new Promise((resolve) => setTimeout(resolve, 3000));
const before = processesMatching(mark);
controller.abort('the test cancels it');
report.cancel = { result: await cancelled, seconds: (Date.now() - started) / 1000, before };
// While the server still runs: the tree must be gone within 10 seconds.
let survivors = processesMatching(mark);
for (let waited = 0; survivors > 0 && waited < 10000; waited += 250) {
  await new Promise((resolve) => setTimeout(resolve, 250));
  survivors = processesMatching(mark);
}
report.cancel.survivors = survivors;
// The server's answer to the cancelled call (its tree killed) comes before this ping's.
await call('after_cancel', 'ls', { path: '.' });

await client.close();
process.stdout.write(JSON.stringify(report) + '\n');
