// Opens report pages in headless Chromium and checks what a reader would see: every plot rendered
// (its SVG present, laid out with a size, with the expected number of marks) and nothing fetched
// beyond the page itself. Usage: node browser.js PAGE.html EXPECT.json [SHOT.png]
//   EXPECT.json: {"<css selector>": <count>, ...}; SHOT.png: a screenshot of the top of the page (the first 1400 px, what a README can show)
'use strict';
const fs = require('fs');
const { chromium } = require('playwright-core');

const [page_path, expect_path, shot_path] = process.argv.slice(2);
const expected = JSON.parse(fs.readFileSync(expect_path, 'utf8'));
let failed = false;
function check(ok, what, detail) {
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}${!ok && detail !== undefined ? `: ${detail}` : ''}`);
  if (!ok) failed = true;
}

(async () => {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'],
  });
  try {
    const page = await browser.newPage({ viewport: { width: 1000, height: 900 } });
    const url = `file://${fs.realpathSync(page_path)}`;
    const requests = [];
    page.on('request', (r) => requests.push(r.url()));
    await page.goto(url, { waitUntil: 'load' });
    for (const [i, box] of (await page.locator('svg').evaluateAll((els) => els.map((e) => e.getBoundingClientRect().toJSON()))).entries()) {
      check(box.width > 100 && box.height > 50, `plot ${i + 1} is laid out (${Math.round(box.width)}×${Math.round(box.height)})`);
    }
    for (const [selector, n] of Object.entries(expected)) {
      const got = await page.locator(selector).count();
      // A mark that is present but not drawn (zero size, hidden) does not count.
      const drawn = await page.locator(selector).evaluateAll((els) => els.filter((e) => {
        const b = e.getBoundingClientRect();
        return b.width > 0 && b.height > 0 && getComputedStyle(e).visibility !== 'hidden';
      }).length);
      check(got === n && drawn === n, `${selector}: ${n} marks drawn`, `found ${got}, drawn ${drawn}`);
    }
    const foreign = requests.filter((u) => u !== url);
    check(foreign.length === 0, 'nothing fetched beyond the page', foreign.join(', '));
    if (shot_path) {
      await page.screenshot({ path: shot_path, fullPage: true, clip: { x: 0, y: 0, width: 1000, height: 1400 } });
      check(fs.statSync(shot_path).size > 10000, `screenshot written to ${shot_path}`);
    }
  } finally {
    await browser.close();
  }
  process.exit(failed ? 1 : 0);
})().catch((e) => {
  console.log(`FAIL ${e.stack || e}`);
  process.exit(1);
});
