/**
 * Structured logs with pino, and an adapter so NestJS's own messages go through the same logger.
 */
import type { LoggerService } from '@nestjs/common';
import { pino, type Logger } from 'pino';
import { traceLogFields } from '@ormuz/tracing';

/**
 * A JSON logger named after the service. Writes to stderr so stdout stays free for CLI and demo output. A line
 * written while a span is active carries its `trace_id` and `span_id`.
 */
export function createLogger(service: string, level: string): Logger {
  return pino({ name: service, level, base: { service }, mixin: traceLogFields }, pino.destination(2));
}

/** Routes NestJS framework logs into pino. */
export class PinoNestLogger implements LoggerService {
  constructor(private readonly logger: Logger) {}
  log(message: unknown, context?: string) {
    this.logger.info({ context }, String(message));
  }
  error(message: unknown, trace?: string, context?: string) {
    this.logger.error({ context, trace }, String(message));
  }
  warn(message: unknown, context?: string) {
    this.logger.warn({ context }, String(message));
  }
  debug(message: unknown, context?: string) {
    this.logger.debug({ context }, String(message));
  }
  verbose(message: unknown, context?: string) {
    this.logger.trace({ context }, String(message));
  }
}
