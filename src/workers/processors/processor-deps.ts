/** Dependencies shared by the processors of one worker process. */
import type { Redis } from 'ioredis';
import type { Config } from '../../config.js';
import type { FleetKeys } from '../../keys.js';
import type { Logger } from '../../logger.js';

export interface ProcessorDeps {
  readonly config: Config;
  /** `client`-role connection for stores. */
  readonly redis: Redis;
  readonly keys: FleetKeys;
  readonly logger: Logger;
}
