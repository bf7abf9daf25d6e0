// Long cells: wait=false with polling, a busy kernel, progress while a
// cell runs, cancellation that keeps the namespace, timeouts, kernels in
// parallel.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { call, connect, newKernel, run } from './helpers.mjs';

test('wait=false answers at once; get_execution polls; a busy kernel names the running cell', async (t) => {
  const { client } = await connect(t);
  const kernel = await newKernel(client);
  const started = await run(
    client,
    kernel,
    'import time\nfor i in range(3):\n    print("tick", i, flush=True)\n    time.sleep(1)\n"finished"',
    { wait: false },
  );
  const id = started.structuredContent.execution_id;
  assert.equal(started.structuredContent.status, 'running');

  const busy = await run(client, kernel, '1');
  assert.equal(busy.isError, true);
  assert.match(busy.content[0].text, new RegExp(`busy running execution ${id}`));

  const listed = await call(client, 'list_kernels');
  assert.equal(listed.structuredContent.kernels[0].state, 'busy');

  const polled = await call(client, 'get_execution', { execution_id: id });
  assert.equal(polled.structuredContent.status, 'running');

  const done = await call(client, 'get_execution', { execution_id: id, wait_s: 30 });
  assert.equal(done.structuredContent.status, 'ok');
  assert.equal(done.structuredContent.result, "'finished'");
  assert.equal(done.structuredContent.stdout, 'tick 0\ntick 1\ntick 2\n');
});

test('progress notifications carry the newest output line while a cell runs', async (t) => {
  const { client } = await connect(t);
  const kernel = await newKernel(client);
  const progress = [];
  const result = await run(
    client,
    kernel,
    'import time\nfor i in range(7):\n    print("step", i, flush=True)\n    time.sleep(1)',
    {},
    { onprogress: (p) => progress.push(p), timeout: 5000, resetTimeoutOnProgress: true },
  );
  assert.equal(result.structuredContent.status, 'ok');
  assert.ok(progress.length >= 2, JSON.stringify(progress));
  assert.ok(progress.some((p) => /step \d/.test(p.message)), JSON.stringify(progress));
  for (let i = 1; i < progress.length; i++) assert.ok(progress[i].progress > progress[i - 1].progress);
});

test('cancelling execute interrupts the cell; the namespace survives', async (t) => {
  const { client } = await connect(t);
  const kernel = await newKernel(client);
  await run(client, kernel, 'kept = "still here"');
  const controller = new AbortController();
  const pending = run(client, kernel, 'import time\ntime.sleep(60)', {}, { signal: controller.signal });
  await new Promise((resolve) => setTimeout(resolve, 1500));
  controller.abort('the user changed their mind');
  await assert.rejects(pending);
  // The cell was interrupted: the kernel is idle again within moments.
  let listed;
  for (let i = 0; i < 50; i++) {
    listed = await call(client, 'list_kernels');
    if (listed.structuredContent.kernels[0].state === 'idle') break;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  assert.equal(listed.structuredContent.kernels[0].state, 'idle');
  const after = await run(client, kernel, 'kept');
  assert.equal(after.structuredContent.result, "'still here'");
});

test('interrupt and timeout_s end a cell as interrupted / timeout, variables kept', async (t) => {
  const { client } = await connect(t);
  const kernel = await newKernel(client);
  await run(client, kernel, 'n = 5');
  const timed = await run(client, kernel, 'import time\ntime.sleep(60)', { timeout_s: 1 });
  assert.equal(timed.structuredContent.status, 'timeout');
  assert.equal(timed.structuredContent.error.ename, 'KeyboardInterrupt');

  const started = await run(client, kernel, 'import time\ntime.sleep(60)', { wait: false });
  const stopped = await call(client, 'interrupt', { kernel_id: kernel });
  assert.equal(stopped.structuredContent.interrupted, true);
  assert.equal(stopped.structuredContent.execution_id, started.structuredContent.execution_id);
  const ended = await call(client, 'get_execution', {
    execution_id: started.structuredContent.execution_id,
    wait_s: 30,
  });
  assert.equal(ended.structuredContent.status, 'interrupted');
  const idle = await call(client, 'interrupt', { kernel_id: kernel });
  assert.equal(idle.structuredContent.interrupted, false);
  const after = await run(client, kernel, 'n + 1');
  assert.equal(after.structuredContent.result, '6');
});

test('cells on different kernels run in parallel', async (t) => {
  const { client } = await connect(t);
  const [a, b] = [await newKernel(client), await newKernel(client)];
  const cell = 'import time\nt0 = time.time()\ntime.sleep(2)\nt0';
  const [ra, rb] = await Promise.all([run(client, a, cell), run(client, b, cell)]);
  const [ta, tb] = [Number(ra.structuredContent.result), Number(rb.structuredContent.result)];
  // Both started before either finished: they overlapped.
  assert.ok(Math.abs(ta - tb) < 2, `${ta} ${tb}`);
});

test('one long cell does not keep every later execution: the oldest finished ones are trimmed', async (t) => {
  const { client } = await connect(t);
  const slow = await newKernel(client);
  const busy = await run(client, slow, 'import time\ntime.sleep(120)', { wait: false });
  const fast = await newKernel(client);
  const first = (await run(client, fast, '1')).structuredContent.execution_id;
  for (let i = 0; i < 260; i++) await run(client, fast, '1');
  const gone = await call(client, 'get_execution', { execution_id: first });
  assert.equal(gone.isError, true, 'the oldest finished execution was trimmed');
  const running = await call(client, 'get_execution', { execution_id: busy.structuredContent.execution_id });
  assert.equal(running.structuredContent.status, 'running', 'the running one is kept');
  await call(client, 'interrupt', { kernel_id: slow });
});

test('one client holds at most 64 calls at once; past it a call is refused, not queued', async (t) => {
  const { client } = await connect(t);
  const kernel = await newKernel(client);
  const busy = await run(client, kernel, 'import time\ntime.sleep(60)', { wait: false });
  const execution_id = busy.structuredContent.execution_id;
  const calls = Array.from({ length: 70 }, () => call(client, 'get_execution', { execution_id, wait_s: 3 }));
  const settled = await Promise.allSettled(calls);
  const refused = settled.filter((s) => s.status === 'rejected');
  assert.ok(refused.length >= 6, `refused ${refused.length}`);
  assert.match(String(refused[0].reason), /too many tool calls at once from this client/);
  assert.ok(settled.filter((s) => s.status === 'fulfilled').length <= 64);
  await call(client, 'interrupt', { kernel_id: kernel });
});
