// host.bash asks for approval; the server asks the client by elicitation
// (form mode). once / always (this kernel) / deny, and a client without
// the capability is denied with a one-line reason.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { connect, newKernel, run } from './helpers.mjs';

async function elicitingClient(t, answers) {
  const { client, dir } = await connect(t, { capabilities: { elicitation: {} } });
  const asked = [];
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    asked.push(request.params);
    const decision = answers.shift() ?? 'deny';
    if (decision === 'decline') return { action: 'decline' };
    return { action: 'accept', content: { decision } };
  });
  return { client, asked, dir };
}

test('once runs the command and asks again next time; the prompt shows it exactly', async (t) => {
  const answers = ['once', 'once'];
  const { client, asked } = await elicitingClient(t, answers);
  const kernel = await newKernel(client);
  const command = "printf 'a\\tb\\x1b[31m' ; echo approved-once";
  const cell = `r = host.bash(${JSON.stringify(command)})\nprint(r['stdout'])`;
  const first = await run(client, kernel, cell);
  assert.equal(first.structuredContent.status, 'ok', first.content[0].text);
  assert.match(first.structuredContent.stdout, /approved-once/);
  assert.equal(asked.length, 1);
  const prompt = asked[0];
  assert.ok(prompt.message.includes(command), prompt.message);
  assert.doesNotMatch(prompt.message, /[\x00-\x08\x0b-\x1f\x7f]/, 'no raw control characters');
  assert.deepEqual(prompt.requestedSchema.properties.decision.enum, ['once', 'always', 'deny']);
  const second = await run(client, kernel, cell);
  assert.equal(second.structuredContent.status, 'ok');
  assert.equal(asked.length, 2, 'once is for one call only');
});

test("a command's raw controls reach the prompt escaped, never raw", async (t) => {
  const { client, asked } = await elicitingClient(t, ['once']);
  const kernel = await newKernel(client);
  // A real ESC sequence that erases the line, a carriage return and a
  // right-to-left override: shown raw, they could make the prompt lie.
  const command = "echo 'x\x1b[2K\rrm -rf /\u202e' > /dev/null; echo ok-ctrl";
  assert.match(command, /\x1b/);
  const cell = `print(host.bash(${JSON.stringify(command)})['stdout'])`;
  const result = await run(client, kernel, cell);
  assert.match(result.structuredContent.stdout, /ok-ctrl/, result.content[0].text);
  assert.equal(asked.length, 1);
  const message = asked[0].message;
  assert.doesNotMatch(message, /[\x00-\x08\x0b-\x1f\x7f\u202a-\u202e\u2066-\u2069]/, message);
  assert.ok(message.includes('ok-ctrl'), message);
});

test('always allows the same command again in this kernel without asking', async (t) => {
  const { client, asked } = await elicitingClient(t, ['always']);
  const kernel = await newKernel(client);
  const cell = "print(host.bash('echo always-ok')['stdout'])";
  assert.match((await run(client, kernel, cell)).structuredContent.stdout, /always-ok/);
  assert.match((await run(client, kernel, cell)).structuredContent.stdout, /always-ok/);
  assert.equal(asked.length, 1);
  // Another kernel has its own conversation: it asks again.
  const other = await newKernel(client);
  await run(client, other, cell);
  assert.equal(asked.length, 2);
});

test('deny and decline refuse; the cell says so and the kernel goes on', async (t) => {
  const { client } = await elicitingClient(t, ['deny', 'decline']);
  const kernel = await newKernel(client);
  for (let i = 0; i < 2; i++) {
    const denied = await run(client, kernel, "host.bash('echo never')");
    assert.equal(denied.structuredContent.status, 'error');
    assert.match(denied.structuredContent.error.evalue, /denied/);
  }
  assert.equal((await run(client, kernel, '1 + 1')).structuredContent.result, '2');
});

test('a client without elicitation is denied, in one line that says why', async (t) => {
  const { client } = await connect(t);
  const kernel = await newKernel(client);
  const denied = await run(client, kernel, "host.bash('echo never')");
  assert.equal(denied.structuredContent.status, 'error');
  // Its own reason: the server ignores OPENAI4S_UNATTENDED_APPROVAL, so
  // the refusal must not advise it.
  assert.match(denied.structuredContent.error.evalue, /this client cannot show approval prompts/);
  assert.doesNotMatch(denied.structuredContent.error.evalue, /UNATTENDED/);
  assert.doesNotMatch(denied.structuredContent.error.evalue, /\n/);
});

test('the prompt is the shared rendering: bidi escaped, a long command cut and never "always"', async (t) => {
  const { client, asked } = await elicitingClient(t, ['deny', 'deny']);
  const kernel = await newKernel(client);
  const bidi = "host.bash('echo safe \\u202e; echo other #')";
  await run(client, kernel, bidi);
  assert.doesNotMatch(asked[0].message, /[\u202a-\u202e\u2066-\u2069\u200b\u2028]/, asked[0].message);
  assert.match(asked[0].message, /\\u\{?202[eE]/);
  const long = `host.bash('echo ' + 'x' * 6000)`;
  await run(client, kernel, long);
  assert.equal(asked.length, 2);
  assert.match(asked[1].message, /sha256/);
  assert.ok(asked[1].message.length < 6000, `cut: ${asked[1].message.length}`);
  assert.deepEqual(asked[1].requestedSchema.properties.decision.enum, ['once', 'deny']);
});

test('timeout_s ends a cell that waits for an approval nobody gives', async (t) => {
  const { client } = await connect(t, { capabilities: { elicitation: {} } });
  client.setRequestHandler(ElicitRequestSchema, () => new Promise(() => {}));
  const kernel = await newKernel(client);
  const waited = await run(client, kernel, "host.bash('echo never')", { timeout_s: 2 }, { timeout: 60000 });
  assert.notEqual(waited.structuredContent.status, 'ok', JSON.stringify(waited.structuredContent));
  assert.equal((await run(client, kernel, '1 + 1')).structuredContent.result, '2');
});
