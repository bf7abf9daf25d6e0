// host.exec_background through the MCP server (issue 30 point 4): the
// person approves by elicitation, the job runs in a worker of its own in
// the kernel's workspace, and shutting the kernel down ends every process
// of the job.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { call, connect, newKernel, processesIn, run, until } from './helpers.mjs';

const RUNAWAY = [
  'import subprocess, time',
  "child = subprocess.Popen(['sleep', '300'])",
  "print('child', child.pid, flush=True)",
  'while True:',
  '    time.sleep(0.05)',
].join('\n');

test('a background job is approved, peeked at, listed, and ends with its kernel', async (t) => {
  const { client } = await connect(t, { capabilities: { elicitation: {} } });
  const asked = [];
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    asked.push(request.params);
    return { action: 'accept', content: { decision: 'once' } };
  });
  const created = await call(client, 'create_kernel');
  const { kernel_id: kernel, workspace } = created.structuredContent;

  const started = await run(client, kernel, `print(host.exec_background(${JSON.stringify(RUNAWAY)})['exec_id'])`);
  assert.equal(started.structuredContent.status, 'ok', started.content[0].text);
  assert.equal(asked.length, 1, 'exec_background asks (the spec default)');
  const id = started.structuredContent.stdout.trim();

  const peek = `print(host.exec_peek(${JSON.stringify(id)})['output'])`;
  assert.ok(
    await until(async () => /child/.test((await run(client, kernel, peek)).structuredContent.stdout), 60000),
    'the job printed',
  );
  const listed = await run(client, kernel, "print([j['state'] for j in host.exec_list()])");
  assert.match(listed.structuredContent.stdout, /\['running'\]/);
  // The interactive worker, the job's worker and its child.
  assert.ok(processesIn(workspace).length >= 3, `in the workspace: ${processesIn(workspace)}`);

  const shut = await call(client, 'shutdown_kernel', { kernel_id: kernel });
  assert.ok(!shut.isError, shut.content[0]?.text);
  assert.ok(await until(() => processesIn(workspace).length === 0), `left: ${processesIn(workspace)}`);
});

test('background jobs count against --max-kernels: each is a worker', async (t) => {
  const { client } = await connect(t, {
    capabilities: { elicitation: {} },
    extra: ['--max-kernels', '2', '--pool', 'python=0'],
  });
  client.setRequestHandler(ElicitRequestSchema, async () => ({
    action: 'accept',
    content: { decision: 'once' },
  }));
  const kernel = await newKernel(client);
  const start = `print(host.exec_background(${JSON.stringify('import time\nwhile True: time.sleep(0.05)')})['exec_id'])`;
  const started = await run(client, kernel, start);
  assert.equal(started.structuredContent.status, 'ok', started.content[0].text);
  const id = started.structuredContent.stdout.trim();

  // One kernel and one job fill the limit of two: no kernel, no job more.
  const refused = await call(client, 'create_kernel');
  assert.ok(refused.isError, 'a kernel past the limit is refused');
  assert.match(refused.content[0].text, /--max-kernels, counting 1 background jobs' workers/);
  const second = await run(client, kernel, start);
  assert.equal(second.structuredContent.status, 'error');
  assert.match(second.structuredContent.error.evalue, /exec_background: .*--max-kernels/);

  // Once the job ended, its slot is free again.
  const stop = await run(client, kernel, `print(host.exec_interrupt(${JSON.stringify(id)})['delivered'])`);
  assert.equal(stop.structuredContent.status, 'ok', stop.content[0].text);
  const state = `print(host.exec_peek(${JSON.stringify(id)})['state'])`;
  assert.ok(
    await until(async () => /interrupted/.test((await run(client, kernel, state)).structuredContent.stdout), 60000),
    'the job ended',
  );
  assert.ok(
    await until(async () => !(await call(client, 'create_kernel')).isError, 30000),
    'a kernel fits again',
  );
});
