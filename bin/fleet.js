#!/usr/bin/env node
// The compiled CLI lives in dist/ (built by `npm install` through the `prepare` script).
import { main } from '../dist/cli/main.js';

// A reader that went away (`fleet history | head`) ends the command quietly, as it does any Unix tool.
process.stdout.on('error', (error) => {
  if (error.code === 'EPIPE') process.exit(0);
  throw error;
});

const code = await main(process.argv.slice(2));
// Exit once stdout has drained, so piped JSON is never truncated and no stray handle keeps us alive.
process.stdout.write('', () => process.exit(code));
