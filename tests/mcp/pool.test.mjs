// The warm pool and the standby restart through the real server and the
// SDK client (issue 28): create_kernel takes a started worker, a burst
// beyond the pool still gets kernels, a worker killed while pooled is not
// handed out, the pool counts against --max-kernels, restart_kernel swaps
// in the standby, and a server with a full pool leaves no process.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readlinkSync } from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { call, connect, newKernel, openai4s, rawKernel, rawServer, run, until } from './helpers.mjs';

// Processes whose working directory lies under `dir`.
function processesUnder(dir) {
  const found = [];
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const cwd = readlinkSync(`/proc/${pid}/cwd`);
      if (cwd === dir || cwd.startsWith(dir + path.sep)) found.push(Number(pid));
    } catch {
      // gone, or not ours to read
    }
  }
  return found;
}

function poolWorkspaces(dir) {
  const root = path.join(dir, 'agent-workspaces');
  return readdirSync(root)
    .filter((name) => name.startsWith('mcp-pool-'))
    .map((name) => path.join(root, name));
}

// Pooled workers run in their own workspaces before any kernel exists.
async function poolFull(dir, size) {
  return until(
    () => poolWorkspaces(dir).filter((ws) => processesUnder(ws).length > 0).length >= size,
    60000,
  );
}

function stdoutOf(result) {
  return result.structuredContent.stdout.trim();
}

test('create_kernel takes a pooled worker: a fresh workspace, a plain kernel', async (t) => {
  const { client, dir } = await connect(t, { extra: ['--pool', 'python=2'] });
  assert.ok(await poolFull(dir, 2), 'the pool fills to its size');
  const created = await call(client, 'create_kernel', {});
  assert.equal(created.isError, undefined, created.content?.[0]?.text);
  const { kernel_id, workspace } = created.structuredContent;
  assert.match(path.basename(workspace), /^mcp-pool-/);
  assert.equal(stdoutOf(await run(client, kernel_id, 'print(1 + 1)')), '2');
  const listing = await run(client, kernel_id, 'import os\nprint(sorted(os.listdir(".")))');
  assert.equal(stdoutOf(listing), '[]');
  // A burst past the pool: every kernel starts, none shares a worker.
  const burst = await Promise.all([0, 1, 2].map(() => newKernel(client)));
  const pids = new Set();
  for (const id of [kernel_id, ...burst]) {
    pids.add(stdoutOf(await run(client, id, 'import os\nprint(os.getpid(), os.getcwd())')));
  }
  assert.equal(pids.size, 4);
});

test('a worker killed while pooled is not handed out', async (t) => {
  const { client, dir } = await connect(t, { extra: ['--pool', 'python=1'] });
  assert.ok(await poolFull(dir, 1));
  const [pooled] = poolWorkspaces(dir);
  // Kill until none is left: a snapshot taken while bubblewrap was still
  // forking its sandbox can miss a process that appears a moment later.
  const killAll = () => {
    const left = processesUnder(pooled);
    for (const pid of left) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    return left.length === 0;
  };
  assert.ok(await until(killAll), `left: ${processesUnder(pooled)}`);
  const kernel_id = await newKernel(client);
  assert.equal(stdoutOf(await run(client, kernel_id, 'print(6 * 7)')), '42');
});

test('pooled workers count against --max-kernels; python=0 turns the pool off', async (t) => {
  const { client, dir } = await connect(t, { extra: ['--pool', 'python=3', '--max-kernels', '2'] });
  assert.ok(await poolFull(dir, 2));
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const running = poolWorkspaces(dir).filter((ws) => processesUnder(ws).length > 0);
  assert.equal(running.length, 2, 'never more workers than --max-kernels allows');
  await newKernel(client);
  await newKernel(client);
  const third = await call(client, 'create_kernel', {});
  assert.equal(third.isError, true);
  assert.match(third.content[0].text, /--max-kernels/);

  const off = await connect(t, { extra: ['--pool', 'python=0'] });
  await new Promise((resolve) => setTimeout(resolve, 500));
  assert.deepEqual(poolWorkspaces(off.dir), []);
  const made = await call(off.client, 'create_kernel', {});
  assert.match(path.basename(made.structuredContent.workspace), /^mcp-(?!pool-)/);
});

test('a python and an r pool together stay within --max-kernels', async (t) => {
  const { client, dir } = await connect(t, {
    extra: ['--pool', 'python=2,r=2', '--max-kernels', '3'],
  });
  assert.ok(await poolFull(dir, 3));
  await new Promise((resolve) => setTimeout(resolve, 1500));
  const running = poolWorkspaces(dir).filter((ws) => processesUnder(ws).length > 0);
  assert.equal(running.length, 3, 'never more pooled workers than --max-kernels allows');
});

test('list_kernels reports the memory of each kernel, its standby and the pool', async (t) => {
  const { client, dir } = await connect(t, { extra: ['--pool', 'python=1'] });
  assert.ok(await poolFull(dir, 1));
  const kernel_id = await newKernel(client);
  await run(client, kernel_id, 'x = 1');
  const megabyte = 1024 * 1024;
  let listed;
  // The claimed worker's replacement and the kernel's standby start in
  // the background.
  assert.ok(
    await until(async () => {
      listed = (await call(client, 'list_kernels')).structuredContent;
      return listed.kernels[0].standby_rss_bytes > 0 && listed.pool.python.ready === 1;
    }, 60000),
    JSON.stringify(listed),
  );
  const [row] = listed.kernels;
  assert.ok(row.rss_bytes > 4 * megabyte, JSON.stringify(row));
  assert.ok(row.standby_rss_bytes > 4 * megabyte, JSON.stringify(row));
  assert.equal(listed.pool.python.size, 1);
  assert.ok(listed.pool.python.rss_bytes > 4 * megabyte, JSON.stringify(listed.pool));
});

test('standbys count against --max-kernels and give way to a new kernel', async (t) => {
  const { client } = await connect(t, { extra: ['--pool', 'python=0', '--max-kernels', '2'] });
  const listed = async () => (await call(client, 'list_kernels')).structuredContent.kernels;
  const first = await newKernel(client);
  assert.ok(
    await until(async () => (await listed())[0].standby_rss_bytes > 0, 60000),
    "the first kernel's standby fills the second place",
  );
  // The limit is full (a kernel and its standby); a new kernel still fits,
  // by taking the standby's place, and gets no standby of its own.
  const second = await newKernel(client);
  await new Promise((resolve) => setTimeout(resolve, 1500));
  for (const row of await listed()) assert.equal(row.standby_rss_bytes, 0, JSON.stringify(row));
  const third = await call(client, 'create_kernel', {});
  assert.equal(third.isError, true);
  assert.match(third.content[0].text, /--max-kernels/);
  // Both still work (the standby went alone, not the sandbox it shared
  // with its kernel's worker), and a restart without one starts anew.
  assert.equal(stdoutOf(await run(client, first, 'x = 1\nprint(x)')), '1');
  assert.equal(stdoutOf(await run(client, second, 'print(2)')), '2');
  const restarted = await call(client, 'restart_kernel', { kernel_id: first });
  assert.equal(restarted.isError, undefined, restarted.content?.[0]?.text);
  assert.equal(stdoutOf(await run(client, first, 'print(1)')), '1');
});

test('a bad --pool value is refused with its reason', () => {
  const done = spawnSync(openai4s, ['mcp', '--pool', 'python=lots'], { encoding: 'utf8' });
  assert.notEqual(done.status, 0);
  assert.match(done.stderr, /--pool python=lots/);
});

test('restart_kernel swaps in the standby: files stay, the namespace goes', async (t) => {
  const { client } = await connect(t, { extra: ['--pool', 'python=0'] });
  const kernel_id = await newKernel(client);
  await run(client, kernel_id, "x = 1\nopen('kept.txt', 'w').write('here')");
  const generation = "import os\nprint(os.environ['OPENAI4S_KERNEL_GENERATION'])";
  const before = stdoutOf(await run(client, kernel_id, generation));
  const restarted = await call(client, 'restart_kernel', { kernel_id });
  assert.equal(restarted.isError, undefined, restarted.content?.[0]?.text);
  const gone = await run(client, kernel_id, 'x');
  assert.match(JSON.stringify(gone.structuredContent), /NameError/);
  assert.equal(stdoutOf(await run(client, kernel_id, "print(open('kept.txt').read())")), 'here');
  const after = stdoutOf(await run(client, kernel_id, generation));
  assert.notEqual(after, before);
});

test('a server with a full pool and standbys leaves no process when it stops', async (t) => {
  const server = rawServer(t);
  // rawServer uses the default pool (python=2) and standbys.
  const created = await rawKernel(server);
  const workspaces = path.dirname(created.workspace);
  assert.ok(
    await until(() => processesUnder(workspaces).length >= 3, 60000),
    'the kernel, its standby and a pooled worker run',
  );
  server.child.kill('SIGTERM');
  const exited = await server.exited;
  assert.equal(exited.code, 0, server.stderr());
  assert.ok(
    await until(() => processesUnder(workspaces).length === 0),
    `left: ${processesUnder(workspaces)}`,
  );
});
