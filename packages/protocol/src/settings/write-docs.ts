/**
 * Writes the files made from the settings tables (doc.ts): docs/SETTINGS.md, the README's short
 * table and sdks/python's copy of the client settings.
 *
 *   npm run docs:settings -w @agent-reach/protocol
 */
import { writeFileSync } from 'node:fs';
import { GENERATED_FILES } from './generated-files.ts';

for (const file of GENERATED_FILES) {
  const before = file.read();
  const after = file.render(before);
  if (after === before) continue;
  writeFileSync(file.path, after);
  process.stdout.write(`wrote ${file.name}\n`);
}
