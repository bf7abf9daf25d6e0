// Opens a notebook whose first cell asks getpass() in the classic Jupyter
// Notebook (Debian's chromium, driven by playwright-core), types the
// secret into the input box the page shows, waits for every cell to finish
// and prints {"inputType" (the box's type attribute), "outputs" (the text
// of every output area)} as JSON on stdout; on failure, a message on
// stderr and exit status 1.
//
//   node notebook_password.mjs <notebook URL with ?token=...> <secret>
//
// Environment: CHROMIUM (default /usr/bin/chromium), NOTEBOOK_TIMEOUT_MS
// (default 45000): the bound for each wait below.
import { chromium } from "playwright-core";

const [url, secret] = process.argv.slice(2);
if (!url || !secret) {
  console.error("usage: node notebook_password.mjs <notebook-url> <secret>");
  process.exit(2);
}
const executablePath = process.env.CHROMIUM || "/usr/bin/chromium";
const timeout = Number(process.env.NOTEBOOK_TIMEOUT_MS || 45000);
const outputs = () =>
  Array.from(document.querySelectorAll(".output_area"), (e) => e.innerText.trim()).filter(Boolean);

const browser = await chromium.launch({ executablePath, headless: true, args: ["--no-sandbox"] });
try {
  const page = await browser.newPage();
  await page.goto(url, { waitUntil: "domcontentloaded", timeout });
  await page.waitForFunction(
    () => {
      const nb = window.Jupyter?.notebook;
      const icon = document.querySelector("#kernel_indicator_icon");
      return nb?._fully_loaded && nb.kernel?.is_connected() && icon?.classList.contains("kernel_idle_icon");
    },
    null,
    { timeout, polling: 100 },
  );
  await page.evaluate(() => window.Jupyter.notebook.execute_all_cells());
  const box = await page.waitForSelector("input.raw_input", { state: "visible", timeout });
  const inputType = await box.getAttribute("type");
  await box.fill(secret);
  await box.press("Enter");
  await page.waitForFunction(
    () =>
      window.Jupyter.notebook
        .get_cells()
        .every((cell) => cell.cell_type !== "code" || Number.isInteger(cell.input_prompt_number)) &&
      document.querySelector("#kernel_indicator_icon")?.classList.contains("kernel_idle_icon"),
    null,
    { timeout, polling: 100 },
  );
  process.stdout.write(JSON.stringify({ inputType, outputs: await page.evaluate(outputs) }) + "\n");
} catch (error) {
  console.error(error.message);
  process.exitCode = 1;
} finally {
  await browser.close();
}
