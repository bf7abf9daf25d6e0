// What a hostile or broken client sends must never end the server: wrong
// JSON types where the server expects strings or objects, malformed
// elicitation answers, numbers out of range.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { httpServer, rawServer } from './helpers.mjs';

function initialize(params = {}) {
  return {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' }, ...params },
  };
}

async function alive(server, id = 99) {
  const pong = await server.ask({ jsonrpc: '2.0', id, method: 'ping' });
  assert.deepEqual(pong.result, {}, JSON.stringify(pong));
}

// Waits for the first message that matches; the others stay for later.
function inbox(server) {
  const kept = [];
  return async (predicate) => {
    for (;;) {
      const at = kept.findIndex(predicate);
      if (at >= 0) return kept.splice(at, 1)[0];
      kept.push(JSON.parse(await server.next()));
    }
  };
}

test('a non-string clientInfo.name is no crash (stdio)', async (t) => {
  const server = rawServer(t);
  const answer = await server.ask(initialize({ clientInfo: { name: 5, version: 0 } }));
  assert.ok(answer.result || answer.error, JSON.stringify(answer));
  await alive(server);
});

test('a non-string method over HTTP is an error, not a crash', async (t) => {
  const server = await httpServer(t);
  const auth = { Authorization: `Bearer ${server.token}`, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
  const post = (body, extra = {}) =>
    fetch(server.url, { method: 'POST', headers: { ...auth, ...extra }, body: JSON.stringify(body) });
  const bad = await post({ jsonrpc: '2.0', id: 2, method: 5 });
  assert.ok(bad.status >= 400, String(bad.status));
  const init = await post(initialize({ clientInfo: { name: [1], version: 0 } }));
  assert.equal(init.status, 200);
  const again = await post(initialize());
  assert.equal(again.status, 200, 'the server still answers');
});

test('a malformed elicitation answer denies; the server goes on', async (t) => {
  const server = rawServer(t);
  const init = await server.ask(initialize({ capabilities: { elicitation: {} } }));
  assert.ok(init.result);
  server.send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
  const created = await server.ask({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'create_kernel', arguments: {} } });
  const kernel = created.result.structuredContent.kernel_id;
  const take = inbox(server);
  const answers = [{ action: 'accept', content: 'x' }, { action: 7 }, { action: 'accept', content: { decision: 3 } }, 'nope'];
  for (const [i, bad] of answers.entries()) {
    const id = 10 + i;
    server.send(JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call',
      params: { name: 'execute', arguments: { kernel_id: kernel, code: "host.bash('echo never')", wait: false } } }));
    const ask = await take((m) => m.method === 'elicitation/create');
    server.send(JSON.stringify({ jsonrpc: '2.0', id: ask.id, result: bad }));
    const started = await take((m) => m.id === id);
    const execution = started.result.structuredContent.execution_id;
    server.send(JSON.stringify({ jsonrpc: '2.0', id: 100 + i, method: 'tools/call',
      params: { name: 'get_execution', arguments: { execution_id: execution, wait_s: 60 } } }));
    const done = await take((m) => m.id === 100 + i);
    assert.equal(done.result.structuredContent.status, 'error', JSON.stringify(done));
    assert.match(done.result.structuredContent.error.evalue, /denied/);
  }
  await alive(server);
});

test('numbers out of range are tool errors, not overflows', async (t) => {
  const server = rawServer(t);
  assert.ok((await server.ask(initialize())).result);
  const created = await server.ask({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'create_kernel', arguments: {} } });
  const kernel = created.result.structuredContent.kernel_id;
  const tool = (id, name, args) => `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"${name}","arguments":${args}}}`;
  const wrote = await server.ask(JSON.parse(tool(3, 'write_file', `{"kernel_id":"${kernel}","path":"a.txt","content":"hello"}`)));
  assert.ok(!wrote.result.isError, JSON.stringify(wrote));
  const cases = [
    tool(4, 'read_file', `{"kernel_id":"${kernel}","path":"a.txt","offset":9223372036854775808}`),
    tool(5, 'read_file', `{"kernel_id":"${kernel}","path":"a.txt","offset":1e300}`),
    tool(6, 'execute', `{"kernel_id":"${kernel}","code":"1","timeout_s":1e10}`),
    tool(7, 'execute', `{"kernel_id":"${kernel}","code":"1","max_output_chars":1e300}`),
  ];
  for (const [i, text] of cases.entries()) {
    server.send(text);
    const answer = JSON.parse(await server.next());
    assert.equal(answer.id, 4 + i);
    assert.ok(answer.result?.isError, text + ' -> ' + JSON.stringify(answer));
    assert.match(answer.result.content[0].text, /must be/);
  }
  const tail = await server.ask(JSON.parse(tool(8, 'read_file', `{"kernel_id":"${kernel}","path":"a.txt","offset":9007199254740992}`)));
  assert.equal(tail.result.structuredContent.length, 0, JSON.stringify(tail));
  await alive(server);
});

test('a tools/call with an invalid id over HTTP gets its error and the stream ends', async (t) => {
  const server = await httpServer(t);
  const headers = { Authorization: `Bearer ${server.token}`, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
  const init = await fetch(server.url, { method: 'POST', headers, body: JSON.stringify(initialize()) });
  const session = init.headers.get('mcp-session-id');
  await init.text();
  const bad = await fetch(server.url, {
    method: 'POST',
    headers: { ...headers, 'Mcp-Session-Id': session },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1.5, method: 'tools/call', params: { name: 'list_kernels', arguments: {} } }),
    signal: AbortSignal.timeout(30000),
  });
  const body = await bad.text();
  assert.match(body, /-32600/, body);
});
