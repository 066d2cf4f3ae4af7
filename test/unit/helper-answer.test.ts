// The framing of a shell helper's answer (src/lib/helper-answer.ts), without I/O: records and a
// trailer cut at every byte, in two chunks and in three, give back the same output and answer.
import { describe, expect, it } from 'vitest';
import { AnswerReader, MalformedAnswer, type HelperAnswer } from '../../src/lib/helper-answer.js';
import { rng } from '../helpers/rng.js';

// Everything `chunks` give: the output joined, and the answer (which must come with the last chunk, not before).
function read(chunks: readonly Buffer[]): { output: Buffer; answer: HelperAnswer | null } {
  const reader = new AnswerReader();
  const output: Buffer[] = [];
  let answer: HelperAnswer | null = null;
  chunks.forEach((chunk, i) => {
    const step = reader.push(chunk);
    output.push(step.output);
    if (step.answer) {
      expect(i).toBe(chunks.length - 1);
      answer = step.answer;
    }
  });
  return { output: Buffer.concat(output), answer };
}

const frame = (records: readonly string[], status: number, said: string) =>
  Buffer.concat([Buffer.from(records.map((r) => `${r}\0`).join(''), 'latin1'), Buffer.from(`\0${status} ${Buffer.byteLength(said)}\n${said}`)]);

const CASES: [string, string[], number, string][] = [
  ['no output, success', [], 0, ''],
  ['one record', ['d '], 0, ''],
  ['records with line breaks, tabs and NUL-adjacent bytes', ['f a\nb', 'd ', 'f \t', 'l x\0'.slice(0, 3), 'f 0 0\n'], 0, ''],
  ['a failure with words on several lines', ['f kept'], 1, "find: 'gone': No such file or directory\nfind: again\n"],
  ['stderr that looks like a trailer', [], 2, '\u00000 0\n'],
];

describe('AnswerReader', () => {
  it.each(CASES)('%s: the same output and answer however the bytes are cut', (_, records, status, said) => {
    const bytes = frame(records, status, said);
    const output = Buffer.from(records.map((r) => `${r}\0`).join(''), 'latin1');
    const whole = read([bytes]);
    expect(whole.output.equals(output)).toBe(true);
    expect(whole.answer).toEqual({ status, said });
    for (let a = 1; a < bytes.length; a++) {
      const two = read([bytes.subarray(0, a), bytes.subarray(a)]);
      expect(two.output.equals(output), `cut at ${a}`).toBe(true);
      expect(two.answer).toEqual({ status, said });
      for (let b = a + 1; b < bytes.length; b++) {
        const three = read([bytes.subarray(0, a), bytes.subarray(a, b), bytes.subarray(b)]);
        expect(three.output.equals(output), `cut at ${a} and ${b}`).toBe(true);
        expect(three.answer).toEqual({ status, said });
      }
    }
  });

  it('random records cut at random places', () => {
    const random = rng(7);
    for (let round = 0; round < 200; round++) {
      const records = Array.from({ length: Math.floor(random() * 20) }, () => `f ${String.fromCharCode(...Array.from({ length: Math.floor(random() * 6) }, () => 1 + Math.floor(random() * 255)))}`);
      const bytes = frame(records, 0, '');
      const chunks: Buffer[] = [];
      for (let at = 0; at < bytes.length; ) {
        const next = Math.min(bytes.length, at + 1 + Math.floor(random() * 8));
        chunks.push(bytes.subarray(at, next));
        at = next;
      }
      const got = read(chunks);
      expect(got.output.equals(Buffer.from(records.map((r) => `${r}\0`).join(''), 'latin1'))).toBe(true);
      expect(got.answer).toEqual({ status: 0, said: '' });
    }
  });

  it('refuses what is not an answer: a bad status line, bytes past the answer, a trailer with no line', () => {
    expect(() => new AnswerReader().push(Buffer.from('\0zero 0\n'))).toThrow(MalformedAnswer);
    expect(() => new AnswerReader().push(Buffer.from('\x000 1\nab'))).toThrow(MalformedAnswer);
    expect(() => new AnswerReader().push(Buffer.from(`\0${'9'.repeat(100)}`))).toThrow(MalformedAnswer);
    const done = new AnswerReader();
    expect(done.push(Buffer.from('\x000 0\n')).answer).toEqual({ status: 0, said: '' });
    expect(() => done.push(Buffer.from('x'))).toThrow(MalformedAnswer);
  });
});
