// `npm run -s docs:config`: rewrites the configuration tables of README.md and
// docs/operator-surfaces.md from the config records (src/config/config-shape.ts);
// test/unit/readme.test.ts fails while they differ.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CONFIG_TABLE_DOCUMENTS, withConfigTables } from '../src/config/config-docs.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
for (const [file, ids] of Object.entries(CONFIG_TABLE_DOCUMENTS)) {
  const before = readFileSync(path.join(root, file), 'utf8');
  const after = withConfigTables(before, ids);
  if (after !== before) writeFileSync(path.join(root, file), after);
  process.stdout.write(`${file}: configuration tables ${after === before ? 'up to date' : 'rewritten'}\n`);
}
