import { describe, expect, it } from 'vitest';
import { classifyFsError } from '../../src/providers/local/classify-fs-error.js';
import { ProviderBusyError, ProviderGoneError, ProviderPermanentError } from '../../src/providers/provider-errors.js';

const errno = (code: string) => Object.assign(new Error(`${code}: boom`), { code });

describe('local provider error classification (by errno, not by message)', () => {
  it.each([
    ['ENOENT', ProviderGoneError],
    ['ENOTDIR', ProviderGoneError],
    ['EIO', ProviderBusyError],
    ['ENOSPC', ProviderBusyError],
    ['EROFS', ProviderBusyError],
    ['EACCES', ProviderPermanentError],
    ['EPERM', ProviderPermanentError],
  ])('%s', (code, type) => {
    const classified = classifyFsError(errno(code), 'op');
    expect(classified).toBeInstanceOf(type);
    expect((classified as ProviderGoneError).classification).toBe(type === ProviderGoneError ? 'gone' : type === ProviderBusyError ? 'busy' : 'permanent');
  });
  it('a message that says "not found" without a code is not mistaken for gone', () => {
    expect(classifyFsError(new Error('ENOENT: not found'), 'op')).toBeInstanceOf(ProviderPermanentError);
  });
});
