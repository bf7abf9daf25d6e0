// An agent's session: write a CSV, fit a model with numpy, plot it (an
// image block holding a real PNG), save an artifact (a resource link read
// back with resources/read).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { call, connect, newKernel, run } from './helpers.mjs';

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

test('CSV in, fitted model, a plot as an image block, an artifact as a link', async (t) => {
  const { client } = await connect(t);
  const kernel = await newKernel(client);
  const rows = ['x,y'];
  for (let x = 0; x < 20; x++) rows.push(`${x},${3 * x + 2}`);
  const written = await call(client, 'write_file', {
    kernel_id: kernel,
    path: 'points.csv',
    content: rows.join('\n') + '\n',
  });
  assert.equal(written.isError, undefined);

  const fit = await run(
    client,
    kernel,
    [
      'import numpy as np',
      "data = np.loadtxt('points.csv', delimiter=',', skiprows=1)",
      'slope, intercept = np.polyfit(data[:, 0], data[:, 1], 1)',
      'print(f"slope={slope:.3f} intercept={intercept:.3f}")',
    ].join('\n'),
  );
  assert.equal(fit.structuredContent.status, 'ok', fit.content[0].text);
  assert.equal(fit.structuredContent.stdout, 'slope=3.000 intercept=2.000\n');
  assert.ok(fit.structuredContent.files_read.includes('points.csv'));

  const plot = await run(
    client,
    kernel,
    [
      'import matplotlib.pyplot as plt',
      'fig, ax = plt.subplots()',
      "ax.plot(data[:, 0], data[:, 1], 'o')",
      'ax.plot(data[:, 0], slope * data[:, 0] + intercept)',
      "fig.savefig('fit.png')",
      '# pyplot figures still open at the end of the cell are shown, as inline backends do',
      "host.save_artifact('fit.png')",
      "'done'",
    ].join('\n'),
  );
  assert.equal(plot.structuredContent.status, 'ok', plot.content[0].text);
  const images = plot.content.filter((block) => block.type === 'image');
  assert.equal(images.length, 1, JSON.stringify(plot.structuredContent.displays));
  assert.equal(images[0].mimeType, 'image/png');
  const png = Buffer.from(images[0].data, 'base64');
  assert.deepEqual(png.subarray(0, 8), PNG_SIGNATURE);
  assert.ok(png.length > 1000);

  const link = plot.content.find((block) => block.type === 'resource_link');
  assert.ok(link, JSON.stringify(plot.content.map((b) => b.type)));
  assert.match(link.uri, new RegExp(`^openai4s://kernels/${kernel}/artifacts/.+/fit\\.png$`));
  assert.equal(link.mimeType, 'image/png');
  const read = await client.readResource({ uri: link.uri });
  assert.deepEqual(Buffer.from(read.contents[0].blob, 'base64').subarray(0, 8), PNG_SIGNATURE);

  const variables = await call(client, 'list_variables', { kernel_id: kernel });
  const data = variables.structuredContent.variables.find((v) => v.name === 'data');
  assert.match(JSON.stringify(data), /20, 2|\(20, 2\)|\[20,2\]/);
});
