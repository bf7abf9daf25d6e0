// Opens a notebook in the classic Jupyter Notebook with Debian's chromium
// (driven by playwright-core; no bundled browser), runs every cell, waits for
// a PNG <img> in an output area, saves a full-page screenshot and prints
// {"images", "width", "height", "png" (base64 of the first image), "kernel"
// (the name the page shows), "kernelName", "outputs", "consoleErrors"} as
// JSON on stdout; on failure, a message with what the page shows on stderr
// and exit status 1.
//
//   node notebook_plot.mjs <notebook URL with ?token=...> <screenshot.png>
//
// Environment: CHROMIUM (default /usr/bin/chromium), NOTEBOOK_TIMEOUT_MS
// (default 45000): the bound for each wait below.
import { chromium } from "playwright-core";

const [url, screenshotPath] = process.argv.slice(2);
if (!url || !screenshotPath) {
  console.error("usage: node notebook_plot.mjs <notebook-url> <screenshot.png>");
  process.exit(2);
}
const executablePath = process.env.CHROMIUM || "/usr/bin/chromium";
const timeout = Number(process.env.NOTEBOOK_TIMEOUT_MS || 45000);
const pngInOutput = '.output_area img[src^="data:image/png"]';

// What the page shows when something went wrong: the kernel indicator, any
// modal dialog (e.g. "Kernel not found") and the text of every output area.
async function pageReport(page) {
  return page
    .evaluate(() => {
      const text = (selector) =>
        Array.from(document.querySelectorAll(selector), (e) => e.innerText.trim()).filter(Boolean);
      return {
        kernel: text("#kernel_indicator"),
        kernelIcon: document.querySelector("#kernel_indicator_icon")?.className ?? null,
        notification: text("#notification_kernel"),
        dialogs: text(".modal.in .modal-body"),
        outputs: text(".output_area"),
      };
    })
    .catch((error) => ({ unavailable: String(error) }));
}

async function step(page, what, action) {
  try {
    return await action();
  } catch (error) {
    const report = await pageReport(page);
    throw new Error(`${what}: ${error.message.split("\n")[0]}\npage: ${JSON.stringify(report, null, 2)}`);
  }
}

const browser = await chromium.launch({
  executablePath,
  headless: true,
  // Chromium's own sandbox needs user namespaces it cannot have as root.
  args: ["--no-sandbox"],
});
const consoleErrors = [];
try {
  const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
  page.on("console", (message) => {
    if (message.type() === "error") consoleErrors.push(message.text());
  });
  page.on("pageerror", (error) => consoleErrors.push(String(error)));

  await step(page, "opening the notebook", () =>
    page.goto(url, { waitUntil: "domcontentloaded", timeout }),
  );
  // The notebook has loaded and its kernel session is connected and idle
  // (the indicator turns idle only after kernel_info has been answered).
  await step(page, "waiting for the kernel to be idle", () =>
    page.waitForFunction(
      () => {
        const nb = window.Jupyter?.notebook;
        const icon = document.querySelector("#kernel_indicator_icon");
        return (
          nb?._fully_loaded &&
          nb.kernel?.is_connected() &&
          icon?.classList.contains("kernel_idle_icon")
        );
      },
      null,
      { timeout, polling: 100 },
    ),
  );
  await page.evaluate(() => window.Jupyter.notebook.execute_all_cells());
  await step(page, "waiting for a PNG image in an output area", () =>
    page.waitForSelector(pngInOutput, { state: "visible", timeout }),
  );
  // Every cell has finished (has its execution count) and the kernel is
  // idle again, so the screenshot shows the finished notebook.
  await step(page, "waiting for every cell to finish", () =>
    page.waitForFunction(
      () =>
        window.Jupyter.notebook
          .get_cells()
          .every((cell) => cell.cell_type !== "code" || Number.isInteger(cell.input_prompt_number)) &&
        document.querySelector("#kernel_indicator_icon")?.classList.contains("kernel_idle_icon"),
      null,
      { timeout, polling: 100 },
    ),
  );
  const result = await page.evaluate(async (selector) => {
    const images = Array.from(document.querySelectorAll(selector));
    await Promise.all(images.map((image) => image.decode()));
    return {
      images: images.length,
      width: images[0].naturalWidth,
      height: images[0].naturalHeight,
      png: images[0].src.slice(images[0].src.indexOf(",") + 1),
      kernel: document.querySelector("#kernel_indicator .kernel_indicator_name")?.innerText.trim() ?? null,
      kernelName: window.Jupyter.notebook.kernel.name,
      outputs: Array.from(document.querySelectorAll(".output_area"), (e) => e.innerText.trim()).filter(Boolean),
    };
  }, pngInOutput);
  await page.screenshot({ path: screenshotPath, fullPage: true });
  process.stdout.write(JSON.stringify({ ...result, consoleErrors }) + "\n");
} catch (error) {
  console.error(error.message);
  if (consoleErrors.length) console.error(`browser console errors: ${JSON.stringify(consoleErrors)}`);
  process.exitCode = 1;
} finally {
  await browser.close();
}
