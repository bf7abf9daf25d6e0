// The JSON-RPC layer and the handshake, spoken raw over the server's
// stdio (what no SDK client would send).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rawServer } from './helpers.mjs';

const TOOLS = [
  'create_kernel',
  'list_kernels',
  'execute',
  'get_execution',
  'interrupt',
  'list_variables',
  'read_file',
  'write_file',
  'restart_kernel',
  'shutdown_kernel',
];

function initialize(version, id = 1) {
  return {
    jsonrpc: '2.0',
    id,
    method: 'initialize',
    params: { protocolVersion: version, capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
  };
}

test('malformed JSON, invalid requests and unknown methods get the JSON-RPC errors', async (t) => {
  const server = rawServer(t);
  server.send('{"jsonrpc": "2.0", "id": 1, "method": ');
  const parse = JSON.parse(await server.next());
  assert.equal(parse.error.code, -32700);
  assert.equal(parse.id, null);

  const noVersion = await server.ask({ id: 2, method: 'ping' });
  assert.equal(noVersion.error.code, -32600);
  assert.equal(noVersion.id, 2);

  const badParams = await server.ask({ jsonrpc: '2.0', id: 3, method: 'ping', params: [1] });
  assert.equal(badParams.error.code, -32600);

  const batch = await server.ask([{ jsonrpc: '2.0', id: 4, method: 'ping' }]);
  assert.equal(batch.error.code, -32600);

  const unknown = await server.ask({ jsonrpc: '2.0', id: 5, method: 'kernels/explode' });
  assert.equal(unknown.error.code, -32601);
  assert.equal(unknown.id, 5);

  // Before initialize, a request other than ping is refused (the
  // specification's lifecycle): the client is told to initialize.
  const early = await server.ask({ jsonrpc: '2.0', id: 6, method: 'tools/list' });
  assert.equal(early.error.code, -32600);
  assert.match(early.error.message, /not initialized/);
  assert.equal(early.id, 6);
  await server.ask(initialize('2025-11-25', 7));
  const noName = await server.ask({ jsonrpc: '2.0', id: 8, method: 'tools/call', params: {} });
  assert.equal(noName.error.code, -32602);

  // The server is still there and answers.
  const ping = await server.ask({ jsonrpc: '2.0', id: 'p', method: 'ping' });
  assert.deepEqual(ping, { jsonrpc: '2.0', id: 'p', result: {} });
  server.child.stdin.end();
  assert.equal((await server.exited).code, 0);
});

test('initialize answers 2025-06-18 and 2025-11-25 as asked, an unknown version with the newest', async (t) => {
  for (const version of ['2025-06-18', '2025-11-25']) {
    const server = rawServer(t);
    const answer = await server.ask(initialize(version));
    assert.equal(answer.result.protocolVersion, version);
    assert.equal(answer.result.serverInfo.name, 'openai4s');
    assert.ok(answer.result.capabilities.tools);
    server.child.stdin.end();
    await server.exited;
  }
  const server = rawServer(t);
  const answer = await server.ask(initialize('1999-01-01'));
  assert.equal(answer.result.protocolVersion, '2025-11-25');
  const missing = await server.ask({ jsonrpc: '2.0', id: 2, method: 'initialize', params: {} });
  assert.equal(missing.error.code, -32602);
  server.child.stdin.end();
  await server.exited;
});

test('tools/list has the ten tools in a fixed order, each with both schemas', async (t) => {
  const server = rawServer(t);
  await server.ask(initialize('2025-06-18'));
  server.send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
  const listed = await server.ask({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
  const tools = listed.result.tools;
  assert.deepEqual(
    tools.map((tool) => tool.name),
    TOOLS,
  );
  for (const tool of tools) {
    assert.equal(tool.inputSchema.type, 'object', tool.name);
    assert.equal(tool.outputSchema.type, 'object', tool.name);
    assert.ok(tool.description.length < 200, `${tool.name}: a short description`);
  }
  const execute = tools.find((tool) => tool.name === 'execute');
  assert.deepEqual(Object.keys(execute.inputSchema.properties).sort(), [
    'code',
    'kernel_id',
    'max_output_chars',
    'timeout_s',
    'wait',
  ]);
  assert.deepEqual(execute.inputSchema.required, ['kernel_id', 'code']);
  assert.equal(execute.inputSchema.properties.max_output_chars.default, 20000);
  const again = await server.ask({ jsonrpc: '2.0', id: 3, method: 'tools/list' });
  assert.deepEqual(again.result.tools, tools);
  server.child.stdin.end();
  assert.equal((await server.exited).code, 0);
});

test('nothing but protocol messages reaches stdout; logs go to stderr', async (t) => {
  const server = rawServer(t);
  await server.ask(initialize('2025-11-25'));
  const created = await server.ask({
    jsonrpc: '2.0',
    id: 2,
    method: 'tools/call',
    params: { name: 'create_kernel', arguments: {} },
  });
  const kernelId = created.result.structuredContent.kernel_id;
  // A cell that writes to its own fd 1 and 2 and to the worker's inherited
  // descriptors: none of it may become a protocol line.
  const ran = await server.ask({
    jsonrpc: '2.0',
    id: 3,
    method: 'tools/call',
    params: {
      name: 'execute',
      arguments: { kernel_id: kernelId, code: "import os\nos.write(1, b'raw fd 1\\n')\nprint('hello')" },
    },
  });
  assert.equal(ran.result.structuredContent.status, 'ok');
  assert.match(ran.result.structuredContent.stdout, /hello/);
  server.child.stdin.end();
  assert.equal((await server.exited).code, 0);
  assert.match(server.stderr(), /connected/);
});
