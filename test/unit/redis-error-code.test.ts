// The one classifier of Redis failures: by the protocol's error code (the reply's first word),
// by class, or by Node's system error code; never by free text.
import { ReplyError } from 'ioredis';
import { MaxRetriesPerRequestError } from 'ioredis/built/errors/index.js';
import { describe, expect, it } from 'vitest';
import { RedisUnavailableError } from '../../src/errors/redis-unavailable-error.js';
import { RedisCommandTimeoutError } from '../../src/lib/redis-command-timeout.js';
import { NO_ANSWER, classifyRedisFailure, redisErrorCode, redisRefusal } from '../../src/lib/redis-error-code.js';

const reply = (text: string): Error => new ReplyError(text) as Error;
// ioredis's EXEC failure: EXECABORT carrying the replies that refused the queued commands.
const execAbort = (...previous: Error[]) => Object.assign(reply('EXECABORT Transaction discarded because of previous errors.'), { previousErrors: previous });
const systemError = (code: string) => Object.assign(new Error(`connect ${code} 127.0.0.1:6379`), { code, syscall: 'connect' });

describe('redisErrorCode', () => {
  it("reads the protocol error code of a reply, including a write refused inside a script", () => {
    expect(redisErrorCode(reply("OOM command not allowed when used memory > 'maxmemory'."))).toBe('OOM');
    expect(redisErrorCode(reply("OOM command not allowed when used memory > 'maxmemory'. script: 5ab4, on @user_script:589."))).toBe('OOM');
    expect(redisErrorCode(reply("READONLY You can't write against a read only replica."))).toBe('READONLY');
    expect(redisErrorCode(reply('MISCONF Redis is configured to save RDB snapshots, but it is currently not able to persist on disk.'))).toBe('MISCONF');
    expect(redisErrorCode(reply('NOSCRIPT No matching script. Please use EVAL.'))).toBe('NOSCRIPT');
    expect(redisErrorCode(reply('ERR unknown command'))).toBe('ERR');
    expect(redisErrorCode(reply('LOADING'))).toBe('LOADING');
  });

  it('classifies a refused transaction by the reply that refused it', () => {
    const oom = reply("OOM command not allowed when used memory > 'maxmemory'.");
    expect(classifyRedisFailure(execAbort(oom))).toEqual({ code: 'OOM', error: oom });
    expect(redisErrorCode(execAbort())).toBe('EXECABORT');
  });

  it('classifies failures without a reply by class and by system error code', () => {
    expect(redisErrorCode(new MaxRetriesPerRequestError(1))).toBe(NO_ANSWER);
    expect(redisErrorCode(new RedisCommandTimeoutError('hgetall', 300))).toBe(NO_ANSWER);
    // ioredis's own bare timeout error is text only: not classified (the fleet's connections never raise it).
    expect(redisErrorCode(new Error('Command timed out'))).toBeNull();
    expect(redisErrorCode(systemError('ECONNREFUSED'))).toBe('ECONNREFUSED');
    expect(redisErrorCode(systemError('ETIMEDOUT'))).toBe('ETIMEDOUT');
  });

  it('never reads the text of other errors', () => {
    expect(redisErrorCode(new Error("OOM command not allowed when used memory > 'maxmemory'."))).toBeNull();
    expect(redisErrorCode(reply('lowercase reply without a code'))).toBeNull();
    expect(redisErrorCode(Object.assign(new Error('x'), { code: 'ENOENT' }))).toBeNull();
    expect(redisErrorCode('OOM')).toBeNull();
    expect(redisErrorCode(null)).toBeNull();
  });
});

describe('redisRefusal and RedisUnavailableError', () => {
  it('treats refusals and unreachability as retryable unavailability, bugs as not', () => {
    for (const code of ['OOM', 'READONLY', 'MISCONF', 'BUSY', 'LOADING', 'MASTERDOWN', 'NOREPLICAS']) expect(redisRefusal(reply(`${code} refused`))?.code, code).toBe(code);
    for (const code of ['ERR', 'WRONGTYPE', 'NOSCRIPT', 'NOPERM']) expect(redisRefusal(reply(`${code} bug`)), code).toBeNull();
    const typed = RedisUnavailableError.from(new MaxRetriesPerRequestError(1), '127.0.0.1:6390')!;
    expect(typed).toMatchObject({ code: 'RedisUnavailable', retryable: true, refusal: NO_ANSWER, address: '127.0.0.1:6390' });
    expect(typed.message).toMatch(/^Redis at 127\.0\.0\.1:6390 could not be reached \(NOANSWER\): /);
    const refused = RedisUnavailableError.from(execAbort(reply("OOM command not allowed when used memory > 'maxmemory'.")), 'r:1')!;
    expect(refused.message).toBe("Redis at r:1 refused the command (OOM): OOM command not allowed when used memory > 'maxmemory'.");
    expect(RedisUnavailableError.from(refused, 'elsewhere')).toBe(refused);
    expect(RedisUnavailableError.from(reply('ERR syntax error'), 'r:1')).toBeNull();
  });
});
