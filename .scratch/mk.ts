import { planTree, writeTree } from '../bench/lib/workspace-tree.js';
const files = Number(process.argv[2]); await writeTree(process.argv[3]!, planTree({ files, totalBytes: files * 13000 }));
