// `fleet bake <manifest.json>`: template and overlay files may name a `source` next to the
// manifest, inlined into the job payload; a source outside the manifest's directory is refused.
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readManifestFile } from '../../src/bake/read-manifest-file.js';
import { PayloadInvalidError } from '../../src/errors/payload-invalid-error.js';
import { tempDir } from '../helpers/fleet-env.js';

describe('readManifestFile', () => {
  it('inlines the sources of template and overlay files', async () => {
    const dir = await tempDir('manifest');
    await mkdir(path.join(dir, 'tpl'));
    await writeFile(path.join(dir, 'tpl', 'readme.md'), 'from the base\n');
    await writeFile(path.join(dir, 'tpl', 'app.json'), '{"port":3000}\n');
    const file = path.join(dir, 'm.json');
    await writeFile(file, JSON.stringify({ schemaVersion: 1, name: 'm', runtime: 'node22', files: [{ path: 'README.md', source: 'tpl/readme.md' }], overlay: [{ path: 'config/app.json', source: 'tpl/app.json', mode: 0o600 }] }));
    const manifest = await readManifestFile(file);
    expect(manifest.files).toEqual([{ path: 'README.md', content: 'from the base\n', mode: 0o644 }]);
    expect(manifest.overlay).toEqual([{ path: 'config/app.json', content: '{"port":3000}\n', mode: 0o600 }]);
  });

  it('refuses an overlay source outside the manifest directory, naming the field', async () => {
    const dir = await tempDir('manifest');
    const file = path.join(dir, 'm.json');
    await writeFile(file, JSON.stringify({ schemaVersion: 1, name: 'm', runtime: 'node22', overlay: [{ path: 'x', source: '../../etc/passwd' }] }));
    const error = await readManifestFile(file).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PayloadInvalidError);
    expect((error as PayloadInvalidError).issues).toEqual([expect.objectContaining({ field: 'overlay.0.source', value: '../../etc/passwd' })]);
  });
});
