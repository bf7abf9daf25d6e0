// The server's end: stdin EOF, SIGTERM and SIGINT shut every kernel down
// and leave no process behind; --max-kernels and --idle-timeout.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { call, connect, processesIn, rawKernel, rawServer, until } from './helpers.mjs';

async function kernelIn(server) {
  const { kernel_id, workspace } = await rawKernel(server);
  // A child of the worker too: it must go with the kernel.
  await server.ask({
    jsonrpc: '2.0',
    id: 3,
    method: 'tools/call',
    params: {
      name: 'execute',
      arguments: { kernel_id, code: "import subprocess\np = subprocess.Popen(['sleep', '300'])" },
    },
  });
  assert.ok(processesIn(workspace).length >= 2, 'the worker and its child run in the workspace');
  return workspace;
}

for (const [name, stop] of [
  ['stdin EOF', (server) => server.child.stdin.end()],
  ['SIGTERM', (server) => server.child.kill('SIGTERM')],
  ['SIGINT', (server) => server.child.kill('SIGINT')],
]) {
  test(`${name} shuts every kernel down and leaves no process`, async (t) => {
    const server = rawServer(t);
    const workspace = await kernelIn(server);
    stop(server);
    const exited = await server.exited;
    assert.equal(exited.code, 0, server.stderr());
    assert.ok(await until(() => processesIn(workspace).length === 0), `left: ${processesIn(workspace)}`);
  });
}

test('--max-kernels bounds the kernels; --idle-timeout shuts idle ones down', async (t) => {
  const { client } = await connect(t, { extra: ['--max-kernels', '1'] });
  const first = await call(client, 'create_kernel', {});
  assert.equal(first.isError, undefined);
  const second = await call(client, 'create_kernel', {});
  assert.equal(second.isError, true);
  assert.match(second.content[0].text, /--max-kernels/);

  const idle = await connect(t, { extra: ['--idle-timeout', '1'] });
  const made = await call(idle.client, 'create_kernel', {});
  const { kernel_id, workspace } = made.structuredContent;
  assert.ok(
    await until(async () => {
      const listed = await call(idle.client, 'list_kernels');
      return listed.structuredContent.kernels.length === 0;
    }),
  );
  const gone = await call(idle.client, 'execute', { kernel_id, code: '1' });
  assert.equal(gone.isError, true);
  assert.ok(await until(() => processesIn(workspace).length === 0));
});

test('reading files and listing variables count as use: the kernel does not idle out', async (t) => {
  const { client } = await connect(t, { extra: ['--idle-timeout', '2'] });
  const kernel_id = (await call(client, 'create_kernel', {})).structuredContent.kernel_id;
  await call(client, 'write_file', { kernel_id, path: 'a.txt', content: 'x' });
  for (let i = 0; i < 8; i++) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    const read = await call(client, i % 2 ? 'read_file' : 'list_variables', i % 2 ? { kernel_id, path: 'a.txt' } : { kernel_id });
    assert.ok(!read.isError, `use ${i}: ${read.content[0].text}`);
  }
  const ran = await call(client, 'execute', { kernel_id, code: '1 + 1' });
  assert.equal(ran.structuredContent.result, '2');
});
