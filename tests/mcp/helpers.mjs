// Starting the real server (through `openai4s mcp`, as an agent's config
// does) and connecting the official SDK client to it.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const openai4s = path.join(repoRoot, '.venv', 'bin', 'openai4s');

// Cleanups run last-registered first (node runs a test's after hooks in
// registration order): a server is stopped before its data directory is
// removed, and one cleanup that fails does not skip the others.
const cleanups = new WeakMap();
export function onCleanup(t, fn) {
  if (!cleanups.has(t)) {
    cleanups.set(t, []);
    t.after(async () => {
      const errors = [];
      for (const cleanup of cleanups.get(t).reverse()) {
        try {
          await cleanup();
        } catch (error) {
          errors.push(error);
        }
      }
      if (errors.length) throw errors[0];
    });
  }
  cleanups.get(t).push(fn);
}

// A data directory of the test's own, removed when the test ends.
export function dataDir(t) {
  const dir = mkdtempSync(path.join(tmpdir(), 'o4s-mcp-'));
  onCleanup(t, () => rmSync(dir, { recursive: true, force: true, maxRetries: 5 }));
  return dir;
}

export function serverArgs(dir, extra = []) {
  return ['mcp', '--data-dir', dir, '--idle-timeout', '0', ...extra];
}

// An SDK client over stdio; `capabilities` as the client declares them.
export async function connect(t, { dir = dataDir(t), capabilities = {}, extra = [] } = {}) {
  const transport = new StdioClientTransport({
    command: openai4s,
    args: serverArgs(dir, extra),
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk) => {
    stderr += chunk;
  });
  const client = new Client({ name: 'openai4s-test', version: '1.0.0' }, { capabilities });
  await client.connect(transport);
  // The SDK checks structuredContent against the outputSchema it listed.
  await client.listTools();
  onCleanup(t, () => client.close());
  return { client, transport, dir, stderr: () => stderr };
}

export async function call(client, name, args = {}, options = {}) {
  return client.callTool({ name, arguments: args }, undefined, { timeout: 120000, ...options });
}

export async function newKernel(client, args = {}) {
  const created = await call(client, 'create_kernel', args);
  if (created.isError) throw new Error(created.content[0].text);
  return created.structuredContent.kernel_id;
}

export async function run(client, kernelId, code, extra = {}, options = {}) {
  return call(client, 'execute', { kernel_id: kernelId, code, ...extra }, options);
}

// Processes whose working directory is `dir` (a kernel's worker and its
// children run in their workspace).
export function processesIn(dir) {
  const found = [];
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      if (readlinkSync(`/proc/${pid}/cwd`) === dir) found.push(Number(pid));
    } catch {
      // gone, or not ours to read
    }
  }
  return found;
}

export async function until(predicate, timeoutMs = 15000) {
  const start = Date.now();
  while (Date.now() - start < timeoutMs) {
    if (await predicate()) return true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return false;
}

// The raw server process, for what no SDK client sends (bad JSON, ...):
// write lines, read the answers line by line.
// On a rawServer: initialize, then create_kernel with `args`; its
// structuredContent (kernel_id, workspace, ...), or a failure saying why.
export async function rawKernel(server, args = {}) {
  await server.ask({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
  });
  const created = await server.ask({
    jsonrpc: '2.0',
    id: 2,
    method: 'tools/call',
    params: { name: 'create_kernel', arguments: args },
  });
  if (!created.result?.structuredContent) throw new Error(`create_kernel: ${JSON.stringify(created)}`);
  return created.result.structuredContent;
}

export function rawServer(t, dir = dataDir(t)) {
  const child = spawn(openai4s, serverArgs(dir), { stdio: ['pipe', 'pipe', 'pipe'] });
  const lines = [];
  const waiters = [];
  let buffer = '';
  child.stdout.on('data', (chunk) => {
    buffer += chunk;
    let newline;
    while ((newline = buffer.indexOf('\n')) >= 0) {
      lines.push(buffer.slice(0, newline));
      buffer = buffer.slice(newline + 1);
      while (waiters.length && lines.length) waiters.shift()(lines.shift());
    }
  });
  let stderr = '';
  child.stderr.on('data', (chunk) => {
    stderr += chunk;
  });
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  onCleanup(t, () => {
    child.kill('SIGKILL');
    return exited;
  });
  return {
    child,
    exited,
    stderr: () => stderr,
    send(text) {
      child.stdin.write(text + '\n');
    },
    next() {
      if (lines.length) return Promise.resolve(lines.shift());
      return new Promise((resolve) => waiters.push(resolve));
    },
    async ask(message) {
      this.send(JSON.stringify(message));
      return JSON.parse(await this.next());
    },
  };
}

// The server on Streamable HTTP (a free loopback port), and its token.
export async function httpServer(t) {
  const dir = dataDir(t);
  const child = spawn(openai4s, serverArgs(dir, ['--http', '127.0.0.1:0']), {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  const port = await new Promise((resolve, reject) => {
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
      const match = stderr.match(/http:\/\/127\.0\.0\.1:(\d+)\/mcp/);
      if (match) resolve(Number(match[1]));
    });
    child.on('exit', () => reject(new Error(`server exited: ${stderr}`)));
  });
  const exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
  onCleanup(t, async () => {
    child.kill('SIGTERM');
    await exited;
  });
  const tokenFile = path.join(dir, 'mcp-token');
  const token = readFileSync(tokenFile, 'utf8').trim();
  return { url: new URL(`http://127.0.0.1:${port}/mcp`), token, tokenFile, port, pid: child.pid };
}

