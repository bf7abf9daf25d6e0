// A kernel's workspace cannot be made to reach another kernel's files or
// the host: a requested workspace never is the root nor nests with
// another kernel's, and read_file/write_file refuse a workspace path that
// now leads to another directory than the one the kernel was created with.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { call, connect, dataDir, onCleanup } from './helpers.mjs';

test('a requested workspace is never the root, nor nests with another kernel\'s', async (t) => {
  const dir = dataDir(t);
  const root = path.join(dir, 'projects');
  mkdirSync(path.join(root, 'proj', 'sub'), { recursive: true });
  const { client } = await connect(t, { dir, extra: ['--workspace-root', root] });
  for (const workspace of [root, '.', '']) {
    const refused = await call(client, 'create_kernel', { workspace });
    assert.equal(refused.isError, true, `${workspace}: ${JSON.stringify(refused)}`);
  }
  const a = await call(client, 'create_kernel', { workspace: 'proj' });
  assert.ok(!a.isError, a.content?.[0]?.text);
  const inside = await call(client, 'create_kernel', { workspace: 'proj/sub' });
  assert.equal(inside.isError, true, 'inside another kernel\'s workspace');
});

test('the default root and agent-workspaces cannot be requested', async (t) => {
  const dir = dataDir(t);
  const { client } = await connect(t, { dir });
  const refused = await call(client, 'create_kernel', { workspace: path.join(dir, 'agent-workspaces') });
  assert.equal(refused.isError, true, JSON.stringify(refused));
});

test('a workspace swapped for a symlink after create is refused by the file tools', async (t) => {
  const dir = dataDir(t);
  const outside = mkdtempSync(path.join(tmpdir(), 'o4s-outside-'));
  onCleanup(t, () => rmSync(outside, { recursive: true, force: true }));
  writeFileSync(path.join(outside, 'secret'), 'host secret');
  const { client } = await connect(t, { dir });
  const created = await call(client, 'create_kernel', {});
  const { kernel_id: kernel, workspace } = created.structuredContent;
  renameSync(workspace, workspace + '-moved');
  symlinkSync(outside, workspace);
  const read = await call(client, 'read_file', { kernel_id: kernel, path: 'secret' });
  assert.equal(read.isError, true, JSON.stringify(read));
  assert.doesNotMatch(JSON.stringify(read), /host secret/);
  const wrote = await call(client, 'write_file', { kernel_id: kernel, path: 'pwned', content: 'x' });
  assert.equal(wrote.isError, true, JSON.stringify(wrote));
  assert.equal(existsSync(path.join(outside, 'pwned')), false);
});
