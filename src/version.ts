/** The fleet's own version, read once from package.json (part of every manifest hash). */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

// src/version.ts and dist/version.js both sit one level below the package root.
const packageJsonPath = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'package.json');

export const FLEET_VERSION: string = (JSON.parse(readFileSync(packageJsonPath, 'utf8')) as { version: string }).version;
