import pino, { type Logger } from 'pino';
import type { Config } from './config/settings';

export type { Logger };

/** Structured JSON logs; secrets never reach them (request bodies are not logged). */
export function createLogger(config: Pick<Config, 'log'>, name: string): Logger {
  return pino({
    name,
    level: config.log.level,
    redact: {
      paths: ['*.value', '*.secret', 'req.headers.authorization', 'req.headers["x-api-key"]'],
      censor: '[redacted]',
    },
    ...(config.log.pretty ? { transport: { target: 'pino-pretty', options: { colorize: true } } } : {}),
  });
}
