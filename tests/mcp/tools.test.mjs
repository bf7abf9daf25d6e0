// Every tool through the official SDK client over stdio, and each bad
// input as a tool error the agent can act on.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { call, connect, newKernel, run } from './helpers.mjs';

test('a kernel keeps its variables; results carry the value, output and errors', async (t) => {
  const { client } = await connect(t);
  const created = await call(client, 'create_kernel', {});
  assert.equal(created.isError, undefined);
  const kernel = created.structuredContent;
  assert.match(kernel.kernel_id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.equal(kernel.language, 'python');
  assert.ok(kernel.sandbox.state);

  const first = await run(client, kernel.kernel_id, 'x = 41\nprint("side", x)\nx + 1');
  const s = first.structuredContent;
  assert.equal(s.status, 'ok');
  assert.equal(s.result, '42');
  assert.equal(s.stdout, 'side 41\n');
  assert.equal(s.error, null);
  assert.equal(s.execution_count, 1);
  assert.ok(s.usage.wall_s >= 0 && s.usage.peak_rss_bytes > 0);
  assert.match(first.content[0].text, /side 41\n42/);

  const second = await run(client, kernel.kernel_id, 'import sys\nprint("err", file=sys.stderr)\nx * 2');
  assert.equal(second.structuredContent.result, '82');
  assert.equal(second.structuredContent.stderr, 'err\n');
  assert.equal(second.structuredContent.execution_count, 2);

  const failed = await run(client, kernel.kernel_id, 'def f():\n    return 1 / 0\nf()');
  assert.equal(failed.isError, undefined, 'a failing cell is a result, not a tool error');
  assert.equal(failed.structuredContent.status, 'error');
  assert.equal(failed.structuredContent.error.ename, 'ZeroDivisionError');
  assert.match(failed.content[0].text, /ZeroDivisionError/);
  assert.doesNotMatch(failed.content[0].text, /openai4s\/kernel/, 'no worker internals');

  const listed = await call(client, 'list_kernels');
  const row = listed.structuredContent.kernels.find((k) => k.kernel_id === kernel.kernel_id);
  assert.equal(row.state, 'idle');
  assert.equal(row.cells_run, 3);
  assert.equal(row.workspace, kernel.workspace);

  const variables = await call(client, 'list_variables', { kernel_id: kernel.kernel_id });
  const names = variables.structuredContent.variables.map((v) => v.name);
  assert.ok(names.includes('x') && names.includes('f'), names.join(','));

  const restarted = await call(client, 'restart_kernel', { kernel_id: kernel.kernel_id });
  assert.equal(restarted.structuredContent.restarted, true);
  const gone = await run(client, kernel.kernel_id, 'x');
  assert.equal(gone.structuredContent.error.ename, 'NameError');

  const down = await call(client, 'shutdown_kernel', { kernel_id: kernel.kernel_id });
  assert.equal(down.structuredContent.shut_down, true);
  const after = await run(client, kernel.kernel_id, '1');
  assert.equal(after.isError, true);
  assert.match(after.content[0].text, /unknown kernel_id/);
});

test('long output keeps its head and tail, says what was cut, and links the whole', async (t) => {
  const { client } = await connect(t);
  const kernel = await newKernel(client);
  const result = await run(
    client,
    kernel,
    'for i in range(5000):\n    print(f"line {i:05d}")',
    { max_output_chars: 1000 },
  );
  const text = result.content[0].text;
  assert.match(text, /^line 00000/);
  assert.match(text, /line 04999\n$/);
  const marker = text.match(/\[\.\.\. (\d+) characters cut here; the whole output is at (\S+) \.\.\.\]/);
  assert.ok(marker, text.slice(0, 700));
  assert.equal(Number(marker[1]), 5000 * 11 - 1000);
  assert.equal(result.structuredContent.truncated.stdout_chars, 5000 * 11 - 1000);
  const link = result.content.find((block) => block.type === 'resource_link');
  assert.equal(link.uri, marker[2]);
  assert.match(link.uri, new RegExp(`^openai4s://kernels/${kernel}/outputs/`));
  const whole = await client.readResource({ uri: link.uri });
  assert.equal(whole.contents[0].text.length, 5000 * 11);
  const listed = await client.listResources();
  assert.ok(listed.resources.some((r) => r.uri === link.uri));
  await assert.rejects(client.readResource({ uri: `openai4s://kernels/${kernel}/outputs/../../etc/passwd` }));
});

test('write_file and read_file stay inside the workspace', async (t) => {
  const { client } = await connect(t);
  const created = await call(client, 'create_kernel', {});
  const { kernel_id: kernel, workspace } = created.structuredContent;
  const written = await call(client, 'write_file', {
    kernel_id: kernel,
    path: 'data/table.csv',
    content: 'a,b\n1,2\n',
  });
  assert.equal(written.structuredContent.bytes_written, 8);
  assert.equal(readFileSync(path.join(workspace, 'data/table.csv'), 'utf8'), 'a,b\n1,2\n');
  const seen = await run(client, kernel, 'open("data/table.csv").read()');
  assert.equal(seen.structuredContent.result, "'a,b\\n1,2\\n'");

  const read = await call(client, 'read_file', { kernel_id: kernel, path: 'data/table.csv', offset: 4 });
  assert.equal(read.structuredContent.content, '1,2\n');
  assert.equal(read.structuredContent.encoding, 'utf-8');
  assert.equal(read.structuredContent.eof, true);

  const bytes = Buffer.from([0, 255, 1, 128, 10]);
  await call(client, 'write_file', {
    kernel_id: kernel,
    path: 'blob.bin',
    content: bytes.toString('base64'),
    encoding: 'base64',
  });
  const blob = await call(client, 'read_file', { kernel_id: kernel, path: 'blob.bin' });
  assert.equal(blob.structuredContent.encoding, 'base64');
  assert.deepEqual(Buffer.from(blob.structuredContent.content, 'base64'), bytes);

  // Escapes: "..", an absolute path outside, a symlink out, a symlinked directory.
  const outside = path.join(path.dirname(workspace), 'outside-' + kernel);
  mkdirSync(outside);
  writeFileSync(path.join(outside, 'secret'), 'secret');
  symlinkSync(path.join(outside, 'secret'), path.join(workspace, 'link'));
  symlinkSync(outside, path.join(workspace, 'dirlink'));
  for (const [tool, args] of [
    ['read_file', { path: '../outside-' + kernel + '/secret' }],
    ['read_file', { path: path.join(outside, 'secret') }],
    ['read_file', { path: 'link' }],
    ['read_file', { path: 'dirlink/secret' }],
    ['write_file', { path: '../escape.txt', content: 'x' }],
    ['write_file', { path: 'link', content: 'x' }],
    ['write_file', { path: 'dirlink/new.txt', content: 'x' }],
    ['write_file', { path: '/etc/passwd', content: 'x' }],
  ]) {
    const result = await call(client, tool, { kernel_id: kernel, ...args });
    assert.equal(result.isError, true, `${tool} ${JSON.stringify(args)}`);
  }
  assert.equal(readFileSync(path.join(outside, 'secret'), 'utf8'), 'secret');
  const bad64 = await call(client, 'write_file', { kernel_id: kernel, path: 'x', content: '@@@', encoding: 'base64' });
  assert.equal(bad64.isError, true);
  assert.match(bad64.content[0].text, /base64/);
});

test('bad arguments and unknown handles are tool errors that say what to fix', async (t) => {
  const { client } = await connect(t);
  const kernel = await newKernel(client);
  const cases = [
    ['execute', { kernel_id: kernel }, /missing required argument 'code'/],
    ['execute', { kernel_id: kernel, code: 1 }, /'code' must be a string/],
    ['execute', { kernel_id: kernel, code: '1', max_output_chars: -5 }, /at least/],
    ['execute', { kernel_id: kernel, code: '1', bogus: true }, /unknown argument 'bogus'/],
    ['execute', { kernel_id: 'no-such-kernel', code: '1' }, /unknown kernel_id 'no-such-kernel'/],
    ['create_kernel', { language: 'cobol' }, /must be one of/],
    ['create_kernel', { workspace: '/etc' }, /not under the server's --workspace-root/],
    ['get_execution', { execution_id: 'nope' }, /unknown execution_id/],
    ['interrupt', { kernel_id: 'nope' }, /unknown kernel_id/],
    ['list_variables', { kernel_id: 'nope' }, /unknown kernel_id/],
    ['read_file', { kernel_id: kernel, path: 'missing.txt' }, /no such file/],
    ['shutdown_kernel', {}, /missing required argument 'kernel_id'/],
  ];
  for (const [tool, args, expected] of cases) {
    const result = await call(client, tool, args);
    assert.equal(result.isError, true, `${tool} ${JSON.stringify(args)}`);
    assert.match(result.content[0].text, expected);
  }
  // The kernel is still usable after all that.
  const ok = await run(client, kernel, '6 * 7');
  assert.equal(ok.structuredContent.result, '42');
});

test('max_output_chars also cuts the last value and the error, and says how much', async (t) => {
  const { client } = await connect(t);
  const kernel = await newKernel(client);
  const value = await run(client, kernel, "'v' * 50000", { max_output_chars: 1000 });
  const s = value.structuredContent;
  assert.ok(s.result.length < 2000, `result is ${s.result.length} chars`);
  assert.ok(value.content[0].text.length < 3000, `text is ${value.content[0].text.length} chars`);
  assert.ok(s.truncated.result_chars > 40000, JSON.stringify(s.truncated));
  const failed = await run(client, kernel, "raise ValueError('e' * 50000)", { max_output_chars: 1000 });
  const f = failed.structuredContent;
  assert.equal(f.status, 'error');
  assert.ok(f.error.evalue.length < 2000, `evalue is ${f.error.evalue.length} chars`);
  assert.ok(JSON.stringify(f.error.traceback).length < 3000, 'traceback cut');
  assert.ok(failed.content[0].text.length < 3000, `text is ${failed.content[0].text.length} chars`);
  assert.ok(f.truncated.error_chars > 40000, JSON.stringify(f.truncated));
});

test('an artifact whose name holds URI characters gets an escaped URI that reads back', async (t) => {
  const { client } = await connect(t);
  const kernel = await newKernel(client);
  const saved = await run(client, kernel, "open('a b#c?d%.txt', 'w').write('hi')\nhost.save_artifact('a b#c?d%.txt')\n'ok'");
  assert.equal(saved.structuredContent.status, 'ok', saved.content[0].text);
  const link = saved.content.find((block) => block.type === 'resource_link');
  assert.ok(link, JSON.stringify(saved.content));
  assert.match(link.uri, /\/a%20b%23c%3Fd%25\.txt$/, link.uri);
  assert.doesNotThrow(() => new URL(link.uri));
  const read = await client.readResource({ uri: link.uri });
  assert.ok(read.contents.length === 1, JSON.stringify(read));
});
