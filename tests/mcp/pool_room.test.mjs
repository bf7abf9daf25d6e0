// The warm pool fills only the room --max-kernels leaves, and gets it back
// as soon as it is free again: a background job that ends lets the pool
// refill with no other call, and a pool whose starts fail gives back the
// room it was granted (else the other pools and the standbys stay short
// of room that nothing uses).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { call, connect, newKernel, run, until } from './helpers.mjs';

async function poolOf(client) {
  return (await call(client, 'list_kernels')).structuredContent.pool;
}

// Polls list_kernels only: no call that would wake the pools itself.
async function readyBecomes(client, language, count) {
  let pool;
  const reached = await until(async () => {
    pool = await poolOf(client);
    return pool[language].ready === count;
  }, 60000);
  return { reached, pool };
}

test('a background job that ends lets the pool refill at once', async (t) => {
  const { client } = await connect(t, {
    capabilities: { elicitation: {} },
    extra: ['--max-kernels', '3', '--pool', 'python=1', '--no-standby'],
  });
  client.setRequestHandler(ElicitRequestSchema, async () => ({
    action: 'accept',
    content: { decision: 'once' },
  }));
  let seen = await readyBecomes(client, 'python', 1);
  assert.ok(seen.reached, JSON.stringify(seen.pool));
  const first = await newKernel(client);
  seen = await readyBecomes(client, 'python', 1);
  assert.ok(seen.reached, `the claimed worker is replaced: ${JSON.stringify(seen.pool)}`);
  const loop = 'import time\nwhile True: time.sleep(0.05)';
  const started = await run(client, first, `print(host.exec_background(${JSON.stringify(loop)})['exec_id'])`);
  assert.equal(started.structuredContent.status, 'ok', started.content[0].text);
  const job = started.structuredContent.stdout.trim();

  // A second kernel takes the pooled worker: two kernels and the job fill
  // the limit of three, so the pool stays empty.
  await newKernel(client);
  await new Promise((resolve) => setTimeout(resolve, 1000));
  assert.equal((await poolOf(client)).python.ready, 0, 'the pool waits for room');

  const stop = await run(client, first, `print(host.exec_interrupt(${JSON.stringify(job)})['delivered'])`);
  assert.equal(stop.structuredContent.status, 'ok', stop.content[0].text);
  seen = await readyBecomes(client, 'python', 1);
  assert.ok(seen.reached, `the job's end freed its room for the pool: ${JSON.stringify(seen.pool)}`);
  const state = await run(client, first, `print(host.exec_peek(${JSON.stringify(job)})['state'])`);
  assert.match(state.structuredContent.stdout, /interrupted/);
});

test('a pool whose starts fail gives back the room it was granted', async (t) => {
  // The R pool's worker cannot start (its Rscript exits at once); the
  // python pool shares --max-kernels with it.
  const { client } = await connect(t, {
    extra: ['--max-kernels', '2', '--pool', 'python=1,r=1', '--no-standby', '--rscript', '/bin/false'],
  });
  let seen = await readyBecomes(client, 'python', 1);
  assert.ok(seen.reached, JSON.stringify(seen.pool));
  const kernel = await newKernel(client);
  // One kernel of two: the python pool has room for its replacement, as
  // nothing runs for the R pool.
  seen = await readyBecomes(client, 'python', 1);
  assert.ok(seen.reached, `the failed R start holds no room: ${JSON.stringify(seen.pool)}`);
  assert.equal(seen.pool.r.ready, 0);
  const refused = await call(client, 'create_kernel', { language: 'r' });
  assert.equal(refused.isError, true, 'an R kernel still fails, saying why');
  assert.equal((await run(client, kernel, 'print(6 * 7)')).structuredContent.stdout, '42\n');
});
