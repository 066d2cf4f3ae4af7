// Guards the suite against tests that cannot fail (issue 19.13): an assertion on something that
// is always there, a retention test with the retention switched off, a provider test that only
// exercises the SDK.
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/processes.js';

interface TestFile {
  readonly rel: string;
  readonly text: string;
}

// Every test file of the suite.
function testFiles(): TestFile[] {
  const out: TestFile[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name.endsWith('.test.ts')) out.push({ rel: path.relative(ROOT, full), text: readFileSync(full, 'utf8') });
    }
  };
  walk(path.join(ROOT, 'test'));
  return out;
}

// Names a file imports (`import { a, b as c }`, `import d`, `import * as e`).
function importedNames(text: string): Set<string> {
  const names = new Set<string>();
  for (const match of text.matchAll(/^import\s+(?:type\s+)?([^'"]+?)\s+from\s+['"]/gm)) {
    const clause = match[1]!;
    for (const part of clause.replace(/[{}]/g, ',').split(',')) {
      const name = part.trim().split(/\s+as\s+/).pop()?.replace(/^\*\s*as\s+/, '').replace(/^type\s+/, '').trim();
      if (name) names.add(name);
    }
  }
  return names;
}

// The `it(...)` blocks of a file: title and text up to the next test.
function blocks(text: string): { title: string; body: string; line: number }[] {
  const starts = [...text.matchAll(/^\s*it\(\s*(['"`])(.+?)\1/gm)];
  return starts.map((match, i) => ({
    title: match[2]!,
    body: text.slice(match.index, starts[i + 1]?.index ?? text.length),
    line: text.slice(0, match.index).split('\n').length,
  }));
}

const lineOf = (text: string, index: number) => text.slice(0, index).split('\n').length;

describe('the test suite', () => {
  it('19.13: no test asserts what cannot fail (a defined import or services bag, retention switched off, the SDK instead of the provider)', () => {
    const findings: string[] = [];
    for (const { rel, text } of testFiles()) {
      if (rel.endsWith('tests-can-fail.test.ts')) continue;
      const imported = importedNames(text);
      for (const match of text.matchAll(/expect\(\s*([A-Za-z_$][\w$]*)\s*\)\.toBeDefined\(\)/g)) {
        if (imported.has(match[1]!)) findings.push(`${rel}:${lineOf(text, match.index)}: expect(${match[1]}).toBeDefined() on an import can never fail`);
      }
      for (const match of text.matchAll(/expect\(\s*[\w$.]+\.services\s*\)\.toBeDefined\(\)/g)) {
        findings.push(`${rel}:${lineOf(text, match.index)}: a services bag is always defined`);
      }
      for (const block of blocks(text)) {
        if (/retention|retire/i.test(block.title) && /(RETENTION_MS|MIN_AGE_MS): '0'/.test(block.body)) {
          findings.push(`${rel}:${block.line}: "${block.title}" switches off the retention it tests`);
        }
        if (/integration\/vercel-provider/.test(rel) && !/\b(provider|standinProvider)\b/.test(block.body)) {
          findings.push(`${rel}:${block.line}: "${block.title}" never calls the provider (it tests the SDK)`);
        }
      }
    }
    expect(findings).toEqual([]);
  });
});
