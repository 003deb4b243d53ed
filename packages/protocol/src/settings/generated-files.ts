import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { pythonClientSettings, settingsMarkdown, withReadmeTable } from './doc.ts';

/** A file made (or partly made) from the settings tables. */
export interface GeneratedFile {
  /** Relative to the repository root. */
  readonly name: string;
  readonly path: string;
  /** The file as it is now ('' when missing). */
  read(): string;
  /** What it should hold, given what it holds now. */
  render(current: string): string;
}

function file(name: string, render: (current: string) => string): GeneratedFile {
  const path = fileURLToPath(new URL(`../../../../${name}`, import.meta.url));
  return {
    name,
    path,
    read: () => (existsSync(path) ? readFileSync(path, 'utf8') : ''),
    render,
  };
}

/** Every file the settings tables write. */
export const GENERATED_FILES: readonly GeneratedFile[] = [
  file('docs/SETTINGS.md', () => settingsMarkdown()),
  file('README.md', withReadmeTable),
  file('sdks/python/src/agent_reach/_settings_table.py', () => pythonClientSettings()),
];
