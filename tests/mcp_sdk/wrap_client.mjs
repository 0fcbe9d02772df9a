// The SDK's client against a third-party stdio MCP server (tiny_server.py)
// run under `corral run`: corral must be a transparent stdio wrapper.
//
//   node wrap_client.mjs CORRAL WORKSPACE SERVER_SCRIPT OUTSIDE_FILE
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const [corral, workspace, server, outsideFile] = process.argv.slice(2);
const transport = new StdioClientTransport({
  command: corral,
  args: ['run', '--audit', '-', '--allow-read', server, '--', 'python3', server],
  cwd: workspace,
  // CORRAL_MUTANT passes through for scripts/mutants.sh (a mutant build only).
  env: { PATH: process.env.PATH, HOME: process.env.HOME, LANG: 'C.UTF-8', ...(process.env.CORRAL_MUTANT ? { CORRAL_MUTANT: process.env.CORRAL_MUTANT } : {}) },
  stderr: 'inherit',
});
const client = new Client({ name: 'corral-wrap-test', version: '1.0.0' });
await client.connect(transport);
const report = {};
report.tools = (await client.listTools()).tools.map((tool) => tool.name).sort();
report.echo = (await client.callTool({ name: 'echo', arguments: { text: 'through corral' } })).content[0].text;
const inside = await client.callTool({ name: 'plant', arguments: { path: `${workspace}/inside.txt` } });
report.inside = { isError: inside.isError === true, text: inside.content[0].text };
const outside = await client.callTool({ name: 'plant', arguments: { path: outsideFile } });
report.outside = { isError: outside.isError === true, text: outside.content[0].text };
await client.close();
process.stdout.write(JSON.stringify(report) + '\n');
