// The stateless revision 2026-07-28 with the official 2.x client
// (@modelcontextprotocol/client): no initialize, the version in every
// request's _meta, resultType on every result, and approvals as an
// input_required result the client answers on a retry of its call.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { dataDir, httpServer, onCleanup, openai4s, rawServer, serverArgs } from './helpers.mjs';

const MODERN = '2026-07-28';

async function modernClient(t, { mode = { pin: MODERN }, capabilities = {}, transport } = {}) {
  const client = new Client(
    { name: 'openai4s-v2-test', version: '1.0.0' },
    { capabilities, versionNegotiation: { mode } },
  );
  transport ??= new StdioClientTransport({
    command: openai4s,
    args: serverArgs(dataDir(t)),
    stderr: 'pipe',
  });
  await client.connect(transport);
  onCleanup(t, () => client.close());
  return client;
}

async function callTool(client, name, args) {
  return client.callTool({ name, arguments: args }, { timeout: 120000 });
}

async function newKernel(client) {
  const created = await callTool(client, 'create_kernel', {});
  assert.ok(!created.isError, created.content?.[0]?.text);
  return created.structuredContent.kernel_id;
}

function answering(client, answers) {
  const asked = [];
  client.setRequestHandler('elicitation/create', async (request) => {
    asked.push(request.params);
    const decision = answers.shift() ?? 'deny';
    return { action: 'accept', content: { decision } };
  });
  return asked;
}

test('2.x pinned to 2026-07-28 over stdio: discover, tools, a cell, its state', async (t) => {
  const client = await modernClient(t);
  assert.equal(client.getNegotiatedProtocolVersion(), MODERN);
  assert.equal(client.getServerVersion().name, 'openai4s');
  const { tools } = await client.listTools();
  assert.equal(tools.length, 10);
  const kernel = await newKernel(client);
  const first = await callTool(client, 'execute', { kernel_id: kernel, code: 'x = 41\nx + 1' });
  assert.equal(first.structuredContent.status, 'ok');
  assert.equal(first.structuredContent.result, '42');
  // The kernel is the state, not a session: the next request finds it.
  const second = await callTool(client, 'execute', { kernel_id: kernel, code: 'x' });
  assert.equal(second.structuredContent.result, '41');
});

test('2.x in auto mode picks 2026-07-28 from server/discover', async (t) => {
  const client = await modernClient(t, { mode: 'auto' });
  assert.equal(client.getNegotiatedProtocolVersion(), MODERN);
});

test('approvals come back as input_required; once runs, deny refuses', async (t) => {
  const client = await modernClient(t, { capabilities: { elicitation: { form: {} } } });
  const asked = answering(client, ['once', 'deny']);
  const kernel = await newKernel(client);
  const cell = "print(host.bash('echo approved-stateless')['stdout'])";
  const ran = await callTool(client, 'execute', { kernel_id: kernel, code: cell });
  assert.equal(ran.structuredContent.status, 'ok', ran.content[0].text);
  assert.match(ran.structuredContent.stdout, /approved-stateless/);
  assert.equal(asked.length, 1);
  assert.match(asked[0].message, /echo approved-stateless/);
  assert.deepEqual(asked[0].requestedSchema.properties.decision.enum, ['once', 'always', 'deny']);
  const denied = await callTool(client, 'execute', { kernel_id: kernel, code: cell });
  assert.equal(denied.structuredContent.status, 'error');
  assert.match(denied.structuredContent.error.evalue, /denied/);
  assert.equal((await callTool(client, 'execute', { kernel_id: kernel, code: '2 + 2' })).structuredContent.result, '4');
});

test('a 2026-07-28 client without elicitation is refused with its own reason', async (t) => {
  const client = await modernClient(t);
  const kernel = await newKernel(client);
  const denied = await callTool(client, 'execute', { kernel_id: kernel, code: "host.bash('echo never')" });
  assert.equal(denied.structuredContent.status, 'error');
  assert.match(denied.structuredContent.error.evalue, /this client cannot show approval prompts/);
  assert.doesNotMatch(denied.structuredContent.error.evalue, /UNATTENDED/);
});

test('2.x pinned to 2026-07-28 over Streamable HTTP: no session, a cell, an approval', async (t) => {
  const server = await httpServer(t);
  const transport = new StreamableHTTPClientTransport(server.url, {
    requestInit: { headers: { Authorization: `Bearer ${server.token}` } },
  });
  const client = await modernClient(t, { transport, capabilities: { elicitation: {} } });
  const asked = answering(client, ['once']);
  assert.equal(client.getNegotiatedProtocolVersion(), MODERN);
  const kernel = await newKernel(client);
  const cell = "print(host.bash('echo over-http')['stdout'])";
  const ran = await callTool(client, 'execute', { kernel_id: kernel, code: cell });
  assert.equal(ran.structuredContent.status, 'ok', ran.content[0].text);
  assert.match(ran.structuredContent.stdout, /over-http/);
  assert.equal(asked.length, 1);
});

// Raw lines: what the SDK hides.
const meta = (version = MODERN, extra = {}) => ({
  _meta: {
    'io.modelcontextprotocol/protocolVersion': version,
    'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '0' },
    'io.modelcontextprotocol/clientCapabilities': {},
    ...extra,
  },
});

test('raw 2026-07-28: discover, resultType, cache hints, an unknown version', async (t) => {
  const server = rawServer(t);
  const discovered = await server.ask({ jsonrpc: '2.0', id: 1, method: 'server/discover', params: meta() });
  assert.deepEqual(discovered.result.supportedVersions, [MODERN]);
  assert.equal(discovered.result.resultType, 'complete');
  assert.equal(discovered.result._meta['io.modelcontextprotocol/serverInfo'].name, 'openai4s');
  const listed = await server.ask({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: meta() });
  assert.equal(listed.result.resultType, 'complete');
  assert.equal(listed.result.tools.length, 10);
  assert.equal(typeof listed.result.ttlMs, 'number');
  assert.equal(listed.result.cacheScope, 'public');
  const unknown = await server.ask({ jsonrpc: '2.0', id: 3, method: 'tools/list', params: meta('1900-01-01') });
  assert.equal(unknown.error.code, -32022);
  assert.deepEqual(unknown.error.data, { supported: [MODERN], requested: '1900-01-01' });
  // A handshake version in _meta is not a stateless one.
  const legacy = await server.ask({ jsonrpc: '2.0', id: 4, method: 'tools/list', params: meta('2025-11-25') });
  assert.equal(legacy.error.code, -32022);
  server.child.stdin.end();
  assert.equal((await server.exited).code, 0);
});

test('raw 2026-07-28: the input_required round trip, and a forged requestState', async (t) => {
  const server = rawServer(t);
  const elicit = meta(MODERN, { 'io.modelcontextprotocol/clientCapabilities': { elicitation: {} } });
  const created = await server.ask({
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: { name: 'create_kernel', arguments: {}, ...elicit },
  });
  const kernel = created.result.structuredContent.kernel_id;
  const args = { kernel_id: kernel, code: "print(host.bash('echo raw-retry')['stdout'])" };
  const first = await server.ask({
    jsonrpc: '2.0',
    id: 2,
    method: 'tools/call',
    params: { name: 'execute', arguments: args, ...elicit },
  });
  assert.equal(first.result.resultType, 'input_required', JSON.stringify(first));
  const { approval } = first.result.inputRequests;
  assert.equal(approval.method, 'elicitation/create');
  assert.equal(approval.params.mode, 'form');
  assert.equal(typeof first.result.requestState, 'string');
  const forged = await server.ask({
    jsonrpc: '2.0',
    id: 3,
    method: 'tools/call',
    params: {
      name: 'execute',
      arguments: args,
      requestState: first.result.requestState.replace(/.$/, (c) => (c === '0' ? '1' : '0')),
      inputResponses: { approval: { action: 'accept', content: { decision: 'once' } } },
      ...elicit,
    },
  });
  assert.equal(forged.result.isError, true);
  assert.match(forged.result.content[0].text, /requestState is unknown or expired/);
  const retried = await server.ask({
    jsonrpc: '2.0',
    id: 4,
    method: 'tools/call',
    params: {
      name: 'execute',
      arguments: args,
      requestState: first.result.requestState,
      inputResponses: { approval: { action: 'accept', content: { decision: 'once' } } },
      ...elicit,
    },
  });
  assert.equal(retried.result.resultType, 'complete');
  assert.equal(retried.result.structuredContent.status, 'ok');
  assert.match(retried.result.structuredContent.stdout, /raw-retry/);
  // One answer per question: the same state again is stale.
  const replayed = await server.ask({
    jsonrpc: '2.0',
    id: 5,
    method: 'tools/call',
    params: {
      name: 'execute',
      arguments: args,
      requestState: first.result.requestState,
      inputResponses: { approval: { action: 'accept', content: { decision: 'once' } } },
      ...elicit,
    },
  });
  assert.equal(replayed.result.isError, true);
  server.child.stdin.end();
  assert.equal((await server.exited).code, 0);
});

test('raw 2026-07-28: a wait:false cell asks through get_execution', async (t) => {
  const server = rawServer(t);
  const elicit = meta(MODERN, { 'io.modelcontextprotocol/clientCapabilities': { elicitation: {} } });
  let id = 0;
  const tool = (name, args, extra = {}) =>
    server.ask({ jsonrpc: '2.0', id: ++id, method: 'tools/call', params: { name, arguments: args, ...extra, ...elicit } });
  const kernel = (await tool('create_kernel', {})).result.structuredContent.kernel_id;
  const started = await tool('execute', { kernel_id: kernel, code: "host.bash('echo later')", wait: false });
  assert.equal(started.result.structuredContent.status, 'running');
  const execution = started.result.structuredContent.execution_id;
  const asked = await tool('get_execution', { execution_id: execution, wait_s: 60 });
  assert.equal(asked.result.resultType, 'input_required', JSON.stringify(asked.result));
  // The state is bound to its execution: another tool cannot spend it.
  const elsewhere = await tool('list_kernels', {}, { requestState: asked.result.requestState });
  assert.equal(elsewhere.result.isError, true);
  const answered = await tool(
    'get_execution',
    { execution_id: execution, wait_s: 60 },
    {
      requestState: asked.result.requestState,
      inputResponses: { approval: { action: 'accept', content: { decision: 'deny' } } },
    },
  );
  assert.equal(answered.result.resultType, 'complete');
  assert.equal(answered.result.structuredContent.status, 'error');
  assert.match(answered.result.structuredContent.error.evalue, /denied/);
  server.child.stdin.end();
  assert.equal((await server.exited).code, 0);
});

test('HTTP 2026-07-28: headers must match the body; GET is 405', async (t) => {
  const server = await httpServer(t);
  const auth = { Authorization: `Bearer ${server.token}` };
  const body = { jsonrpc: '2.0', id: 1, method: 'tools/list', params: meta() };
  const post = (headers) =>
    fetch(server.url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...auth, ...headers },
      body: JSON.stringify(body),
    });
  const good = await post({ 'MCP-Protocol-Version': MODERN, 'Mcp-Method': 'tools/list' });
  assert.equal(good.status, 200);
  assert.equal(good.headers.get('mcp-session-id'), null, 'no session is minted');
  assert.equal((await good.json()).result.resultType, 'complete');
  const mismatch = await post({ 'MCP-Protocol-Version': MODERN, 'Mcp-Method': 'tools/call' });
  assert.equal(mismatch.status, 400);
  assert.equal((await mismatch.json()).error.code, -32020);
  const missing = await post({});
  assert.equal(missing.status, 400);
  const get = await fetch(server.url, { headers: { Accept: 'text/event-stream', ...auth } });
  assert.equal(get.status, 405);
  assert.match(get.headers.get('allow'), /POST/);
});
