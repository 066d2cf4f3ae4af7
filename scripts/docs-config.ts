// `npm run -s docs:config`: rewrites README.md's configuration tables from the config records
// (src/config/config-shape.ts); test/unit/readme.test.ts fails while the two differ.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { withConfigTables } from '../src/config/config-docs.js';

const readme = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'README.md');
const before = readFileSync(readme, 'utf8');
const after = withConfigTables(before);
if (after !== before) writeFileSync(readme, after);
process.stdout.write(`README.md: configuration tables ${after === before ? 'up to date' : 'rewritten'}\n`);
