import { readFileSync, readdirSync } from 'node:fs';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';

/** One file of the console page, held in memory. */
export interface ConsoleAsset {
  body: string;
  type: string;
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};

const dir = fileURLToPath(new URL('./assets/', import.meta.url));

/**
 * The console's static files (`src/console/assets`), read once at start-up: a plain HTML page
 * and browser ES modules, nothing to build and nothing fetched from elsewhere.
 */
export function loadConsoleAssets(): Map<string, ConsoleAsset> {
  const assets = new Map<string, ConsoleAsset>();
  for (const name of readdirSync(dir)) {
    const type = TYPES[extname(name)];
    if (type) assets.set(name, { body: readFileSync(`${dir}${name}`, 'utf8'), type });
  }
  return assets;
}

/**
 * The page's Content-Security-Policy: only this origin's scripts, styles and connections, so a
 * value shown on the page (an agent id, an error text) can never run as script.
 */
export const CONSOLE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";
