// An attacker's pass over the MCP server's warm pool (issue 28): a kernel
// handed a pooled worker reaches neither another claimed kernel's workspace
// nor that of a pooled worker still waiting for its claimant (where a
// planted module would be imported by the next agent's first cell), by its
// own files or through the host's file methods.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, writeFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { call, connect, run, until } from './helpers.mjs';

function poolWorkspaces(dir) {
  return allWorkspaces(dir).filter((ws) => path.basename(ws).startsWith('mcp-pool-'));
}

// Every kernel's default workspace: pooled, claimed or started plainly.
function allWorkspaces(dir) {
  const root = path.join(dir, 'agent-workspaces');
  return readdirSync(root).map((name) => path.join(root, name));
}

const REACH = (others) => `
import json, os
reached, refusals = [], []
for other in ${JSON.stringify(others)}:
    for what, attempt in (
        ("list", lambda: os.listdir(other)),
        ("read", lambda: open(os.path.join(other, "secret.txt")).read()),
        ("plant", lambda: open(os.path.join(other, "numpy.py"), "w").write("x = 1")),
        ("host.save_artifact", lambda: host.save_artifact(os.path.join(other, "secret.txt"))),
        ("host.web_download", lambda: host.web_download("https://pypi.org/", os.path.join(other, "json.py"))),
    ):
        try:
            attempt()
            reached.append(what + " " + other)
        except (OSError, RuntimeError) as e:
            if what.startswith("host."):
                refusals.append(str(e)[:160])
print(json.dumps({"reached": reached, "refusals": refusals}))
`;

test('a pooled kernel reaches no other workspace, claimed or waiting', async (t) => {
  const { client, dir } = await connect(t, { extra: ['--pool', 'python=2'] });
  assert.ok(await until(() => poolWorkspaces(dir).length >= 2, 60000), 'the pool fills');
  const kernels = [];
  for (let i = 0; i < 2; i++) {
    const created = await call(client, 'create_kernel', {});
    assert.equal(created.isError, undefined, created.content?.[0]?.text);
    kernels.push(created.structuredContent);
  }
  const [mine, theirs] = kernels;
  assert.ok(await until(() => poolWorkspaces(dir).length >= 3, 60000), 'the pool refills');
  t.diagnostic(`sandbox: ${JSON.stringify(mine.sandbox)}`);
  // Without a sandbox nothing keeps one kernel from another.
  if (mine.sandbox?.state !== 'enabled') return t.skip('the kernels run without a sandbox here');
  const others = allWorkspaces(dir).filter((ws) => ws !== mine.workspace);
  assert.ok(others.includes(theirs.workspace) && others.length >= 2, JSON.stringify(others));
  for (const ws of others) writeFileSync(path.join(ws, 'secret.txt'), "someone else's");
  const reply = await run(client, mine.kernel_id, REACH(others));
  assert.equal(reply.structuredContent.status, 'ok', JSON.stringify(reply.structuredContent));
  const { reached, refusals } = JSON.parse(reply.structuredContent.stdout);
  assert.deepEqual(reached, []);
  // The host refused by path, not because nobody could approve the call.
  t.diagnostic(JSON.stringify(refusals));
  for (const refusal of refusals) assert.match(refusal, /path escapes the workspace/, refusal);
  for (const ws of others) {
    assert.ok(!existsSync(path.join(ws, 'numpy.py')) && !existsSync(path.join(ws, 'json.py')));
  }
});
