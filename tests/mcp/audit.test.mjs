// One frame per client connection in the store's audit log, with every
// tool call and its outcome.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { call, connect, dataDir, newKernel, openai4s, run } from './helpers.mjs';

function auditRows(dir, limit = 100) {
  const out = execFileSync(openai4s, ['audit', '--data-dir', dir, '--limit', String(limit), '--json'], {
    encoding: 'utf8',
  });
  return out
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line));
}

test('every tool call is audited under its connection frame', async (t) => {
  const dir = dataDir(t);
  const first = await connect(t, { dir });
  const kernel = await newKernel(first.client);
  await run(first.client, kernel, '1 + 1');
  await call(first.client, 'execute', { kernel_id: 'nope', code: '1' });
  const second = await connect(t, { dir });
  await call(second.client, 'list_kernels');
  await first.client.close();
  await second.client.close();

  const rows = auditRows(dir).filter((row) => String(row.method ?? row.tool).startsWith('mcp.'));
  const methods = rows.map((row) => row.method ?? row.tool);
  assert.ok(methods.includes('mcp.create_kernel'), JSON.stringify(rows[0]));
  assert.ok(methods.includes('mcp.execute'));
  assert.ok(methods.includes('mcp.list_kernels'));
  const frames = new Set(rows.map((row) => row.frame_id ?? row.frame));
  assert.equal(frames.size, 2, 'one frame per connection');
  const failed = rows.find((row) => JSON.stringify(row).includes('nope'));
  assert.ok(failed, 'the failed call is recorded');
  assert.equal(failed.success ?? failed.ok, false, JSON.stringify(failed));
});

test('SIGTERM writes the queued audit rows before the process exits', async (t) => {
  const dir = dataDir(t);
  const { client, transport } = await connect(t, { dir });
  // Many quick calls, then SIGTERM at once: the rows still queued for the
  // writer thread must reach the store, not die with the process.
  // (In rounds: one client may run at most 64 calls at once.)
  for (let round = 0; round < 4; round++) {
    await Promise.all(Array.from({ length: 50 }, () => call(client, 'list_kernels')));
  }
  const exited = new Promise((resolve) => transport._process.once('exit', resolve));
  process.kill(transport.pid, 'SIGTERM');
  await exited;
  const listed = auditRows(dir, 1000).filter((row) => (row.method ?? row.tool) === 'mcp.list_kernels');
  assert.equal(listed.length, 200, 'every row');
});
