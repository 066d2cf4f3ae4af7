// The import rule of docs/architecture.md: the folders under src/ are layers, and a module imports
// only its own layer and lower ones. The layer table is read from the document itself, so the
// document and the rule cannot drift apart; a folder or top-level file it does not list fails too.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');
const SRC = path.join(ROOT, 'src');

/** `folder/` or `file.ts` → layer number, from the document's table rows `| n | name | `a/`, `b.ts` | ... |`. */
export function layersFromDocument(markdown: string): Map<string, number> {
  const layers = new Map<string, number>();
  for (const line of markdown.split('\n')) {
    const row = /^\|\s*(\d+)\s*\|[^|]*\|([^|]*)\|/.exec(line);
    if (!row) continue;
    for (const name of row[2]!.matchAll(/`([^`]+)`/g)) layers.set(name[1]!, Number(row[1]));
  }
  return layers;
}

/** The unit of `src/`-relative path `rel`: its top folder (`archive/`) or, at the top, the file. */
function unitOf(rel: string): string {
  const parts = rel.split('/');
  return parts.length > 1 ? `${parts[0]}/` : parts[0]!;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    return entry.isDirectory() ? sourceFiles(full) : entry.name.endsWith('.ts') ? [full] : [];
  });
}

const IMPORT = /(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)'/g;

/** Every import that goes from a lower layer to a higher one, as `from → to (layer a → b)`. */
export function upwardImports(files: readonly { rel: string; text: string }[], layers: ReadonlyMap<string, number>): string[] {
  const found: string[] = [];
  for (const { rel, text } of files) {
    const from = layers.get(unitOf(rel))!;
    for (const match of text.matchAll(IMPORT)) {
      const target = path.posix.normalize(path.posix.join(path.posix.dirname(rel), match[1]!));
      const to = layers.get(unitOf(target));
      if (to !== undefined && to > from) found.push(`${rel} → ${target} (layer ${from} → ${to})`);
    }
  }
  return found;
}

describe('layers (docs/architecture.md)', () => {
  const layers = layersFromDocument(readFileSync(path.join(ROOT, 'docs/architecture.md'), 'utf8'));
  const files = sourceFiles(SRC).map((file) => ({ rel: path.relative(SRC, file).split(path.sep).join('/'), text: readFileSync(file, 'utf8') }));

  it('lists every folder and top-level file of src/ in exactly one layer', () => {
    const units = [...new Set(files.map((f) => unitOf(f.rel)))].sort();
    expect(units.filter((unit) => !layers.has(unit))).toEqual([]);
    expect([...layers.keys()].filter((unit) => !units.includes(unit))).toEqual([]);
  });

  it('no module imports a higher layer', () => {
    expect(upwardImports(files, layers)).toEqual([]);
  });

  it('no domain or lower folder imports the composition root', () => {
    const app = layers.get('app/')!;
    const offenders = files.filter((f) => layers.get(unitOf(f.rel))! < app && /from '[^']*\/app\//.test(f.text)).map((f) => f.rel);
    expect(offenders).toEqual([]);
  });

  it('catches an upward import (the rule can fail)', () => {
    const planted = [{ rel: 'archive/x.ts', text: "import { provisionWorkspace } from '../provision/provision-workspace.js';" }];
    expect(upwardImports(planted, layers)).toEqual(['archive/x.ts → provision/provision-workspace.js (layer 4 → 6)']);
    expect(layersFromDocument('| 1 | a | `lib/`, `x.ts` | y |')).toEqual(new Map([['lib/', 1], ['x.ts', 1]]));
  });
});
