import type { LoggerService } from '@nestjs/common';

/** Everything the application logs, by level and context. */
export class CapturingLogger implements LoggerService {
  readonly entries: Array<{ level: string; message: string; context: unknown }> = [];
  private add(level: string, message: unknown, rest: unknown[]): void {
    this.entries.push({ level, message: String(message), context: rest.at(-1) });
  }
  log(message: unknown, ...rest: unknown[]): void {
    this.add('log', message, rest);
  }
  error(message: unknown, ...rest: unknown[]): void {
    this.add('error', message, rest);
  }
  warn(message: unknown, ...rest: unknown[]): void {
    this.add('warn', message, rest);
  }
  debug(message: unknown, ...rest: unknown[]): void {
    this.add('debug', message, rest);
  }
  verbose(message: unknown, ...rest: unknown[]): void {
    this.add('verbose', message, rest);
  }
  fatal(message: unknown, ...rest: unknown[]): void {
    this.add('fatal', message, rest);
  }
  /** What Latch logged. */
  latch(): Array<{ level: string; message: string }> {
    return this.entries
      .filter((entry) => entry.context === 'Latch')
      .map(({ level, message }) => ({ level, message }));
  }
}
