import { planTree, writeTree, CONTENT_SEED } from '../bench/lib/workspace-tree.js';
import { rng } from '../test/helpers/rng.js';
const files = Number(process.argv[2]); await writeTree(process.argv[3]!, planTree({ files, totalBytes: files * 13000 }), rng(CONTENT_SEED));
