// Debian's Chromium driven by playwright-core, for the browser parts (D41, and
// later the banner and console). .ci/run installs `chromium`; where it is
// absent the browser tests are skipped and say why.
import { existsSync } from "node:fs";
import { chromium, type Browser } from "playwright-core";

const CANDIDATES = [process.env.MERIDIAN_TEST_CHROMIUM, "/usr/bin/chromium", "/usr/bin/chromium-browser"].filter(Boolean) as string[];

export const CHROMIUM = CANDIDATES.find((p) => existsSync(p));
export const NO_CHROMIUM = CHROMIUM ? undefined : "browser tests skipped: no Chromium (apt-get install chromium, or set MERIDIAN_TEST_CHROMIUM)";

export function launchChromium(): Promise<Browser> {
  // --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start.
  return chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"], headless: true });
}
