// Streamable HTTP at /mcp: the SDK's StreamableHTTPClientTransport, the
// bearer token, Origin validation, the body bound, many clients at once,
// and a client that hangs up mid-execute.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { readFileSync, statSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { call, httpServer, newKernel, onCleanup, run, until } from './helpers.mjs';

async function httpClient(t, server, capabilities = {}) {
  const transport = new StreamableHTTPClientTransport(server.url, {
    requestInit: { headers: { Authorization: `Bearer ${server.token}` } },
  });
  const client = new Client({ name: 'openai4s-http-test', version: '1.0.0' }, { capabilities });
  await client.connect(transport);
  await client.listTools();
  onCleanup(t, () => client.close());
  return client;
}

function post(server, body, headers = {}) {
  return fetch(server.url, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      ...headers,
    },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

const INIT = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
};

test('the token file is made 0600; no token is 401, a foreign Origin 403, a big body 413', async (t) => {
  const server = await httpServer(t);
  assert.equal(statSync(server.tokenFile).mode & 0o777, 0o600);
  assert.ok(server.token.length >= 32);

  assert.equal((await post(server, INIT)).status, 401);
  assert.equal((await post(server, INIT, { Authorization: 'Bearer wrong-token-wrong-token' })).status, 401);
  const auth = { Authorization: `Bearer ${server.token}` };
  assert.equal((await post(server, INIT, { ...auth, Origin: 'https://evil.example' })).status, 403);
  const local = await post(server, INIT, { ...auth, Origin: `http://localhost:${server.port}` });
  assert.equal(local.status, 200);
  assert.ok(local.headers.get('mcp-session-id'));
  assert.equal((await post(server, INIT, auth)).status, 200);
  const noSession = await post(server, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, auth);
  assert.equal(noSession.status, 400);
  // No server-initiated stream: GET is 405 and says what the endpoint takes.
  const session = local.headers.get('mcp-session-id');
  const get = await fetch(server.url, { headers: { ...auth, Accept: 'text/event-stream', 'Mcp-Session-Id': session } });
  assert.equal(get.status, 405);
  assert.equal(get.headers.get('allow'), 'POST, DELETE');
  const badJson = await post(server, '{"jsonrpc":', auth);
  assert.equal((await badJson.json()).error.code, -32700);

  // 17 MB announced, none sent: refused from the header alone.
  const status = await new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port: server.port,
        path: '/mcp',
        method: 'POST',
        headers: { ...auth, 'Content-Type': 'application/json', 'Content-Length': 17 * 1024 * 1024 },
      },
      (res) => resolve(res.statusCode),
    );
    req.on('error', reject);
    req.flushHeaders();
  });
  assert.equal(status, 413);
});

test('the SDK client over HTTP: a kernel, a cell with progress, the same kernel from a second client', async (t) => {
  const server = await httpServer(t);
  const client = await httpClient(t, server);
  const kernel = await newKernel(client);
  const progress = [];
  const result = await run(
    client,
    kernel,
    'import time\nfor i in range(4):\n    print("step", i, flush=True)\n    time.sleep(1)\nv = 7',
    {},
    { onprogress: (p) => progress.push(p) },
  );
  assert.equal(result.structuredContent.status, 'ok');
  assert.ok(progress.length >= 1);
  // The kernel is the state, not the connection.
  const other = await httpClient(t, server);
  const again = await run(other, kernel, 'v * 6');
  assert.equal(again.structuredContent.result, '42');
});

test('20 HTTP clients at once on one kernel: each gets an answer, none is queued silently', async (t) => {
  const server = await httpServer(t);
  const clients = await Promise.all(Array.from({ length: 20 }, () => httpClient(t, server)));
  const kernel = await newKernel(clients[0]);
  const results = await Promise.all(clients.map((client, i) => run(client, kernel, `${i} * 2`).catch((e) => e)));
  // One kernel, twenty callers: one runs at a time, the others are told
  // it is busy (no silent queue); every caller gets an answer.
  for (const result of results) {
    assert.ok(result.structuredContent?.result !== undefined || result.isError, String(result));
  }
  assert.ok(results.some((r) => r.structuredContent?.status === 'ok'));
  const listed = await call(clients[5], 'list_kernels');
  assert.equal(listed.structuredContent.kernels.length, 1);
});

test('a client that hangs up mid-execute interrupts the cell; the kernel goes on', async (t) => {
  const server = await httpServer(t);
  const client = await httpClient(t, server);
  const kernel = await newKernel(client);
  await run(client, kernel, 'kept = 1');
  const auth = { Authorization: `Bearer ${server.token}` };
  const init = await post(server, INIT, auth);
  const session = init.headers.get('mcp-session-id');
  const controller = new AbortController();
  const hanging = fetch(server.url, {
    method: 'POST',
    signal: controller.signal,
    headers: { ...auth, 'Mcp-Session-Id': session, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 9,
      method: 'tools/call',
      params: { name: 'execute', arguments: { kernel_id: kernel, code: 'import time\ntime.sleep(120)' } },
    }),
  });
  const response = await hanging;
  assert.equal(response.headers.get('content-type'), 'text/event-stream');
  await new Promise((resolve) => setTimeout(resolve, 1000));
  controller.abort();
  assert.ok(
    await until(async () => {
      const listed = await call(client, 'list_kernels');
      return listed.structuredContent.kernels[0].state === 'idle';
    }),
  );
  const after = await run(client, kernel, 'kept + 1');
  assert.equal(after.structuredContent.result, '2');
});

function rssKb(pid) {
  return Number(readFileSync(`/proc/${pid}/status`, 'utf8').match(/VmRSS:\s+(\d+)/)[1]);
}

test('1,000 requests at once are answered or refused, and the server does not grow unbounded', async (t) => {
  const server = await httpServer(t);
  const auth = { Authorization: `Bearer ${server.token}` };
  const init = await post(server, INIT, auth);
  const session = init.headers.get('mcp-session-id');
  const before = rssKb(server.pid);
  const statuses = await Promise.all(
    Array.from({ length: 1000 }, (_, i) =>
      post(server, { jsonrpc: '2.0', id: i + 10, method: 'tools/list' }, { ...auth, 'Mcp-Session-Id': session })
        .then(async (response) => {
          await response.arrayBuffer();
          return response.status;
        })
        .catch(() => 'reset'),
    ),
  );
  const counts = {};
  for (const status of statuses) counts[status] = (counts[status] ?? 0) + 1;
  assert.ok(counts[200] > 0, JSON.stringify(counts));
  for (const status of Object.keys(counts)) assert.ok(['200', '503', 'reset'].includes(status), JSON.stringify(counts));
  const after = rssKb(server.pid);
  assert.ok(after - before < 200 * 1024, `grew ${after - before} kB`);
  const ping = await post(server, { jsonrpc: '2.0', id: 1, method: 'ping' }, { ...auth, 'Mcp-Session-Id': session });
  assert.equal(ping.status, 200);
});
