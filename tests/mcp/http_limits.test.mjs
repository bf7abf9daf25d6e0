// An unauthenticated or silent HTTP client costs the server little: the
// token and Origin are checked from the headers alone, before any body is
// read, and a connection that sends nothing is closed after a deadline.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect as tcpConnect } from 'node:net';
import { httpServer } from './helpers.mjs';

// Sends `head` and no more; resolves with what came back before the close
// (or at `waitMs`, with closed = false).
function rawExchange(port, head, waitMs) {
  return new Promise((resolve) => {
    const socket = tcpConnect(port, '127.0.0.1');
    let got = '';
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ got, closed: false });
    }, waitMs);
    socket.on('data', (chunk) => {
      got += chunk;
    });
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ got, closed: true });
    });
    socket.on('error', () => {});
    socket.write(head);
  });
}

test('no token: 401 from the headers, the announced body never awaited', async (t) => {
  const server = await httpServer(t);
  const head =
    'POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n' +
    'Content-Length: 15000000\r\n\r\n';
  const { got } = await rawExchange(server.port, head, 20000);
  assert.match(got, /^HTTP\/1\.1 401/, got);
  const foreign =
    `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${server.token}\r\n` +
    'Origin: https://evil.example\r\nContent-Length: 15000000\r\n\r\n';
  assert.match((await rawExchange(server.port, foreign, 20000)).got, /^HTTP\/1\.1 403/);
});

test('a connection that sends nothing is closed after the read deadline', async (t) => {
  const server = await httpServer(t);
  const { closed } = await rawExchange(server.port, '', 45000);
  assert.ok(closed, 'the server closed the silent connection');
  const partial = await rawExchange(server.port, 'POST /mcp HTTP/1.1\r\nHost: x\r\n', 45000);
  assert.ok(partial.closed, 'and one that stops mid-header');
});

test('sessions never closed are evicted oldest first; a failed initialize makes none', async (t) => {
  const server = await httpServer(t);
  const headers = { Authorization: `Bearer ${server.token}`, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
  const init = (params = { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'n', version: '0' } }) =>
    fetch(server.url, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params }) });
  const failed = await init({});
  assert.equal(failed.headers.get('mcp-session-id'), null, 'no session for a failed initialize');
  await failed.text();
  const ids = [];
  for (let i = 0; i < 1030; i++) {
    const answer = await init();
    assert.equal(answer.status, 200, `initialize ${i}`);
    ids.push(answer.headers.get('mcp-session-id'));
    await answer.text();
  }
  const ping = (id) =>
    fetch(server.url, { method: 'POST', headers: { ...headers, 'Mcp-Session-Id': id }, body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' }) });
  assert.equal((await ping(ids[0])).status, 404, 'the oldest was evicted');
  assert.equal((await ping(ids[1029])).status, 200, 'the newest lives');
});
