// An attacker's pass over the MCP server's approvals by elicitation and the
// egress grants they make (issue 30 part 3): a grant stays in the kernel
// whose person answered it, and an answer that is not one of the offered
// choices, in the offered shape, is a deny (an "always" that was not
// offered is at most a "once").
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { connect, newKernel, run } from './helpers.mjs';

const ASK = (domain) =>
  `r = host.request_network_access('${domain}', reason='data')\nprint(r['granted'], r['asked'])`;
// Past the policy a fetch needs DNS (offline here: a network error); before
// it, the allowlist refuses.
const FETCH = (domain) =>
  `try:\n    host.web_fetch('http://${domain}/x', timeout=5)\nexcept RuntimeError as e:\n    print(e)`;

async function answering(t, answers) {
  const { client, dir } = await connect(t, { capabilities: { elicitation: {} } });
  const asked = [];
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    asked.push(request.params);
    return answers.shift() ?? { action: 'accept', content: { decision: 'deny' } };
  });
  return { client, asked, dir };
}

test('a domain granted in one kernel is not granted in another', async (t) => {
  const { client, asked } = await answering(t, [{ action: 'accept', content: { decision: 'once' } }]);
  const granted = await newKernel(client);
  const other = await newKernel(client);
  const yes = await run(client, granted, ASK('granted.test'));
  assert.match(yes.structuredContent.stdout, /True True/, JSON.stringify(yes.structuredContent));
  const past = await run(client, granted, FETCH('granted.test'));
  assert.doesNotMatch(past.structuredContent.stdout, /egress allowlist/);
  assert.match(past.structuredContent.stdout, /web_fetch: http:\/\/granted\.test\/x: /);
  const blocked = await run(client, other, FETCH('granted.test'));
  assert.match(blocked.structuredContent.stdout, /blocked by the egress allowlist/);
  const again = await run(client, other, ASK('granted.test'));
  assert.equal(again.structuredContent.status, 'error');
  assert.match(again.structuredContent.error.evalue, /denied/);
  assert.equal(asked.length, 2, 'the other kernel asked its own question');
});

const FORGED = [
  { action: 'accept', content: { decision: 'ONCE' } },
  { action: 'accept', content: { decision: 'yes' } },
  { action: 'accept', content: { decision: 'once ' } },
  { action: 'accept', content: { decision: 1 } },
  { action: 'accept', content: {} },
  { action: 'accept' },
  { action: 'decline', content: { decision: 'once' } },
  { action: 'cancel', content: { decision: 'always' } },
];

test('an answer outside the offered choices is a deny and grants nothing', async (t) => {
  const { client, asked } = await answering(t, FORGED.map((answer) => structuredClone(answer)));
  const kernel = await newKernel(client);
  for (const answer of FORGED) {
    const reply = await run(client, kernel, ASK('forged.test'));
    assert.equal(reply.structuredContent.status, 'error', JSON.stringify(answer));
  }
  assert.equal(asked.length, FORGED.length, 'every attempt was asked again: nothing was granted');
  const blocked = await run(client, kernel, FETCH('forged.test'));
  assert.match(blocked.structuredContent.stdout, /blocked by the egress allowlist/);
  assert.equal((await run(client, kernel, '1 + 1')).structuredContent.result, '2');
});

test('"always" answered to a prompt that did not offer it allows once only', async (t) => {
  const { client, asked } = await answering(t, [
    { action: 'accept', content: { decision: 'always' } },
  ]);
  const kernel = await newKernel(client);
  const long = "host.bash('echo ' + 'x' * 6000)";
  const first = await run(client, kernel, long);
  assert.equal(first.structuredContent.status, 'ok', JSON.stringify(first.structuredContent));
  assert.deepEqual(asked[0].requestedSchema.properties.decision.enum, ['once', 'deny']);
  const second = await run(client, kernel, long);
  assert.equal(asked.length, 2, 'asked again: no rule was kept');
  assert.equal(second.structuredContent.status, 'error');
});
