// An R kernel beside a Python one in the same server, with a plot.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { call, connect, newKernel, run } from './helpers.mjs';

function haveR() {
  try {
    execFileSync('Rscript', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

test('an R kernel keeps its variables, plots, and lists its variables', { skip: !haveR() && 'no Rscript on PATH' }, async (t) => {
  const { client } = await connect(t);
  const r = await newKernel(client, { language: 'r' });
  const py = await newKernel(client);
  const listed = await call(client, 'list_kernels');
  assert.deepEqual(listed.structuredContent.kernels.map((k) => k.language).sort(), ['python', 'r']);

  const first = await run(client, r, 'm <- matrix(1:6, nrow = 2)\nx <- c(1, 2, 3)\nprint(sum(x))');
  assert.equal(first.structuredContent.status, 'ok', first.content[0].text);
  assert.match(first.structuredContent.stdout, /\[1\] 6/);

  const failed = await run(client, r, 'stop("custom failure")');
  assert.equal(failed.structuredContent.status, 'error');
  assert.match(failed.content[0].text, /custom failure/);

  const plot = await run(client, r, 'png("p.png"); plot(x, x^2); invisible(dev.off())\ncat(file.exists("p.png"))');
  assert.match(plot.structuredContent.stdout, /TRUE/);
  const png = await call(client, 'read_file', { kernel_id: r, path: 'p.png' });
  assert.equal(png.structuredContent.encoding, 'base64');
  assert.equal(Buffer.from(png.structuredContent.content, 'base64').subarray(1, 4).toString(), 'PNG');

  // A plot on R's default device comes back as an image block holding a real PNG.
  const shown = await run(client, r, 'plot(x, x^2, main = "squares")');
  assert.equal(shown.structuredContent.status, 'ok', shown.content[0].text);
  const images = shown.content.filter((block) => block.type === 'image');
  assert.equal(images.length, 1, JSON.stringify(shown.structuredContent.displays));
  assert.equal(images[0].mimeType, 'image/png');
  assert.equal(Buffer.from(images[0].data, 'base64').subarray(0, 8).toString('hex'), '89504e470d0a1a0a');

  const variables = await call(client, 'list_variables', { kernel_id: r });
  const m = variables.structuredContent.variables.find((v) => v.name === 'm');
  assert.ok(m, JSON.stringify(variables.structuredContent));
  // The R worker's inspector reports what R users see: class and dims.
  assert.equal(m.length, 6);
  assert.equal(m.type, 'matrix');
  assert.deepEqual(m.shape, [2, 3]);

  assert.equal((await run(client, py, '2 ** 5')).structuredContent.result, '32');
});
