// host.request_network_access asks the person through MCP elicitation, the
// same question the gate asks for host.bash (issue 30 part 3).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { connect, newKernel, run } from './helpers.mjs';

const ASK = "r = host.request_network_access('granted.test', reason='a dataset')\nprint(r['granted'], r['asked'])";

test('an accepted elicitation grants the domain for the kernel', async (t) => {
  const { client } = await connect(t, { capabilities: { elicitation: {} } });
  const asked = [];
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    asked.push(request.params);
    return { action: 'accept', content: { decision: 'once' } };
  });
  const kernel = await newKernel(client);
  const first = await run(client, kernel, ASK);
  assert.equal(first.structuredContent.status, 'ok', first.content[0].text);
  assert.match(first.structuredContent.stdout, /True True/);
  assert.equal(asked.length, 1);
  assert.ok(asked[0].message.includes('granted.test'), asked[0].message);
  assert.ok(asked[0].message.includes("reason (its own words, not checked):\n    | a dataset\n"), asked[0].message);
  // Granted for this conversation: asked again, nobody is prompted.
  const again = await run(client, kernel, ASK);
  assert.match(again.structuredContent.stdout, /True False/);
  assert.equal(asked.length, 1);
});

test('a client without elicitation is refused with how to allow the domain', async (t) => {
  const { client } = await connect(t);
  const kernel = await newKernel(client);
  const denied = await run(client, kernel, ASK);
  assert.equal(denied.structuredContent.status, 'error');
  const why = denied.structuredContent.error.evalue;
  assert.match(why, /this client cannot show approval prompts/);
  assert.match(why, /add it to OPENAI4S_EGRESS_ALLOW/);
  assert.doesNotMatch(why, /UNATTENDED/);
});
