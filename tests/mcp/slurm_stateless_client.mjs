// The official 2.x client pinned to 2026-07-28, driving `openai4s mcp
// --slurm` over stdio for tests/python/slurm/test_slurm_mcp_stateless.py
// (which starts the one-node cluster and judges what this prints). A Slurm
// kernel's host.bash approvals come back as input_required; the client's
// elicitation handler answers them, and the client retries the call with
// inputResponses and the requestState.
//
// Cancelling the retry that carried an answer interrupts the cell.
//
// Usage: node slurm_stateless_client.mjs PYTHON DATA_DIR WORKSPACE_ROOT
// Prints one JSON object: each call's result and the questions asked.
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

const [python, dataDir, workspaceRoot] = process.argv.slice(2);
const client = new Client(
  { name: 'openai4s-slurm-v2-test', version: '1.0.0' },
  { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: { pin: '2026-07-28' } } },
);
const asked = [];
const answers = ['once', 'deny', 'once'];
client.setRequestHandler('elicitation/create', async (request) => {
  asked.push(request.params);
  return { action: 'accept', content: { decision: answers.shift() ?? 'deny' } };
});
const transport = new StdioClientTransport({
  command: python,
  args: ['-m', 'openai4s', 'mcp', '--data-dir', dataDir, '--workspace-root', workspaceRoot]
    .concat(['--idle-timeout', '0', '--slurm', '--pool', 'python=0', '--no-standby']),
  env: process.env,
  stderr: 'inherit',
});
await client.connect(transport);

const call = (name, args) => client.callTool({ name, arguments: args }, { timeout: 300000 });
const out = { version: client.getNegotiatedProtocolVersion() };
out.created = (await call('create_kernel', { engine: 'slurm' })).structuredContent;
const kernel_id = out.created.kernel_id;
const cell = "print(host.bash('echo approved-stateless-slurm')['stdout'])";
out.allowed = (await call('execute', { kernel_id, code: cell })).structuredContent;
out.denied = (await call('execute', { kernel_id, code: cell })).structuredContent;
// A cell started with wait: false asks through get_execution.
const started = (await call('execute', { kernel_id, code: cell, wait: false })).structuredContent;
out.polled = (await call('get_execution', { execution_id: started.execution_id, wait_s: 120 }))
  .structuredContent;
out.after = (await call('execute', { kernel_id, code: '6 * 7' })).structuredContent;

// Cancelling the retry that carried the answer interrupts the job's cell
// (by hand here: the client's own driver does not pass a signal on).
const slow = "print(host.bash('echo then-sleep')['stdout'], flush=True)\nimport time\ntime.sleep(600)";
const manual = { timeout: 300000, allowInputRequired: true };
const question = await client.callTool({ name: 'execute', arguments: { kernel_id, code: slow } }, manual);
out.question = { resultType: question.resultType, requestState: question.requestState };
const execution_id = question.requestState.split(':')[0];
const controller = new AbortController();
const retried = client
  .callTool(
    {
      name: 'execute',
      arguments: { kernel_id, code: slow },
      inputResponses: { approval: { action: 'accept', content: { decision: 'once' } } },
      requestState: question.requestState,
    },
    { ...manual, signal: controller.signal },
  )
  .then(
    () => 'answered',
    (error) => `rejected: ${error.message}`,
  );
// Polled by hand too: until the retry's answer reaches the cell, a poll
// is answered with the same question, which must not be answered twice.
for (let i = 0; i < 600; i++) {
  const now = await client.callTool({ name: 'get_execution', arguments: { execution_id } }, manual);
  if (/then-sleep/.test(now.structuredContent?.stdout ?? '')) break;
  await new Promise((resolve) => setTimeout(resolve, 200));
}
controller.abort('the user gave up');
out.retried = await retried;
out.cancelled = (await call('get_execution', { execution_id, wait_s: 120 })).structuredContent;
out.shut = (await call('shutdown_kernel', { kernel_id })).structuredContent;
out.asked = asked;
await client.close();
process.stdout.write(JSON.stringify(out) + '\n');
