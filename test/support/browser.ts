/**
 * A real headless browser for page tests: Debian's Chromium (installed by scripts/test-deps.sh,
 * never downloaded), driven by playwright-core. The flags keep Chromium off the network this
 * machine does not have (background networking, component updates, sync); playwright gives every
 * launch a fresh temporary profile. Close the browser in the test's teardown.
 */
import { chromium, type Browser } from 'playwright-core';

export const CHROMIUM_PATH = '/usr/bin/chromium';

const FLAGS = [
  '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
];

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: FLAGS });
}
