// CI typechecks every TypeScript file of the repository, tests, benchmarks and chaos included,
// and the JavaScript fixtures (checkJs, against dist/'s declarations), under the same strict
// options as the product code: `.ci/run` runs `npm test`, which builds, then runs `tsc --noEmit`
// on tsconfig.json before vitest.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/processes.js';

const json = (file: string) => JSON.parse(readFileSync(path.join(ROOT, file), 'utf8')) as Record<string, unknown>;

describe('CI typecheck', () => {
  it('the test stage runs npm test, which typechecks before the suite', () => {
    expect(readFileSync(path.join(ROOT, '.ci', 'run'), 'utf8')).toMatch(/^stage test \S+ npm test$/m);
    const scripts = json('package.json').scripts as Record<string, string>;
    expect(scripts.test).toMatch(/^npm run -s typecheck && /);
    expect(scripts.typecheck).toBe('tsc -p tsconfig.json --noEmit');
  });

  it('tsconfig.json covers src, tests, benchmarks, chaos and scripts, JavaScript too, and the build adds no strictness of its own', () => {
    const base = json('tsconfig.json');
    expect(base.include).toEqual(expect.arrayContaining(['src', 'test', 'bench', 'chaos', 'scripts']));
    expect(base.exclude).toBeUndefined();
    expect(base.compilerOptions).toMatchObject({ strict: true, noUncheckedIndexedAccess: true, noImplicitOverride: true, noFallthroughCasesInSwitch: true, allowJs: true, checkJs: true });
    const build = json('tsconfig.build.json');
    expect(build.extends).toBe('./tsconfig.json');
    expect(Object.keys(build.compilerOptions as object).sort()).toEqual(['incremental', 'outDir', 'rootDir', 'tsBuildInfoFile']);
  });
});
