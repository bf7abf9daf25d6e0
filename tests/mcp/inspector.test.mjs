// A smoke test with the MCP Inspector's CLI mode: tools/list over stdio,
// then tools/call over Streamable HTTP with the bearer token.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { dataDir, httpServer, openai4s, serverArgs } from './helpers.mjs';

const run = promisify(execFile);
const inspector = path.join(path.dirname(new URL(import.meta.url).pathname), 'node_modules', '.bin', 'mcp-inspector');

async function cli(t, args) {
  // The inspector keeps a catalog file; it must not be the user's.
  const env = { ...process.env, MCP_CATALOG_PATH: path.join(dataDir(t), 'catalog.json') };
  const { stdout } = await run(inspector, ['--cli', ...args], { env, timeout: 120000 });
  return JSON.parse(stdout);
}

test('inspector --cli lists the tools over stdio', async (t) => {
  const listed = await cli(t, [openai4s, ...serverArgs(dataDir(t)), '--method', 'tools/list']);
  assert.equal(listed.tools.length, 10);
  assert.equal(listed.tools[0].name, 'create_kernel');
});

test('inspector --cli calls tools over HTTP with the token', async (t) => {
  const server = await httpServer(t);
  const target = [server.url.href, '--transport', 'http', '--header', `Authorization: Bearer ${server.token}`];
  const created = await cli(t, [...target, '--method', 'tools/call', '--tool-name', 'create_kernel']);
  const kernelId = created.structuredContent.kernel_id;
  const ran = await cli(t, [
    ...target,
    '--method',
    'tools/call',
    '--tool-name',
    'execute',
    '--tool-arg',
    `kernel_id=${kernelId}`,
    'code=6*7',
  ]);
  assert.equal(ran.structuredContent.result, '42');
});
