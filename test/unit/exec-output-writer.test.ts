// The serving host's side of a streamed exec, against a plain sink: chunks keep their order and
// numbering, big writes are split, a slow sink never holds the command up (chunks past the cap are
// dropped but numbered, so the reader sees the gap), a failing sink is reported, the end goes last.
import { describe, expect, it } from 'vitest';
import { execOutputWriter, type OutputSink } from '../../src/hostops/exec-output-writer.js';
import { CHUNK_BYTES, type OutputChunk } from '../../src/state/exec-output-store.js';

function recordingSink(gate?: Promise<void>) {
  const appended: { seq: number; chunk: OutputChunk }[] = [];
  let ended = 0;
  const sink: OutputSink = {
    async append(chunks, firstSeq) {
      await gate;
      chunks.forEach((chunk, i) => appended.push({ seq: firstSeq + i, chunk }));
    },
    async end() {
      ended += 1;
    },
  };
  return { sink, appended, ended: () => ended };
}

describe('execOutputWriter', () => {
  it('appends every chunk in order, numbered from 1, splitting big ones; the end comes after the last append', async () => {
    const { sink, appended, ended } = recordingSink();
    const writer = execOutputWriter(sink, { flushMs: 1 });
    writer.push('stdout', Buffer.from('a'));
    writer.push('stderr', Buffer.from('b'));
    writer.push('stdout', Buffer.alloc(CHUNK_BYTES * 2 + 5, 0x78));
    await writer.finish();
    expect(appended.map((a) => [a.seq, a.chunk.stream, a.chunk.data.length])).toEqual([
      [1, 'stdout', 1],
      [2, 'stderr', 1],
      [3, 'stdout', CHUNK_BYTES],
      [4, 'stdout', CHUNK_BYTES],
      [5, 'stdout', 5],
    ]);
    expect(ended()).toBe(1);
  });

  it('drops chunks past the queued cap while the sink is slow, numbering them so the gap shows', async () => {
    let open!: () => void;
    const { sink, appended } = recordingSink(new Promise<void>((resolve) => (open = resolve)));
    const writer = execOutputWriter(sink, { flushMs: 1, maxQueuedBytes: 10 });
    writer.push('stdout', Buffer.from('12345'));
    writer.push('stdout', Buffer.from('67890'));
    writer.push('stdout', Buffer.from('dropped'));
    open();
    await writer.finish();
    expect(appended.map((a) => [a.seq, a.chunk.data.toString()])).toEqual([
      [1, '12345'],
      [2, '67890'],
    ]);
    // The dropped chunk used number 3: a reader that sees 4 next knows one is missing.
    const again = recordingSink();
    const second = execOutputWriter(again.sink, { flushMs: 1, maxQueuedBytes: 4 });
    second.push('stdout', Buffer.from('abcdef'));
    second.push('stdout', Buffer.from('ok'));
    await second.finish();
    expect(again.appended.map((a) => [a.seq, a.chunk.data.toString()])).toEqual([[2, 'ok']]);
  });

  it('reports a failed append and still ends the stream', async () => {
    const errors: unknown[] = [];
    let ended = false;
    const writer = execOutputWriter(
      {
        append: async () => {
          throw new Error('redis down');
        },
        end: async () => {
          ended = true;
        },
      },
      { flushMs: 1, onError: (error) => errors.push(error) },
    );
    writer.push('stdout', Buffer.from('x'));
    await writer.finish();
    expect(errors.map(String)).toEqual(['Error: redis down']);
    expect(ended).toBe(true);
  });
});
