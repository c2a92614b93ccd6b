// schedule (definition format: root fields): a cron string, a list of them, or {start, stop, restart}, each
// expression optionally prefixed `CRON_TZ=<zone> `. Expressions and zones are checked with croner,
// and compileCron gives the scheduler the same reading of an expression the check made.
import { Cron } from 'croner';
import type { Schedule, ScheduleEntry } from '../core/index.ts';
import { FieldReader, isPlainMap } from './field-reader.ts';
import type { Path } from './issues.ts';

const KINDS = ['start', 'stop', 'restart'] as const;
/** The nicknames croner reads; the interval form `@every <duration>` is not among them. */
const NICKNAMES = ['@yearly', '@annually', '@monthly', '@weekly', '@daily', '@midnight', '@hourly'];

export function readSchedule(reader: FieldReader, value: unknown, at: Path): Schedule {
  const schedule: Schedule = { start: [], stop: [], restart: [] };
  if (value === undefined || value === null || value === '') return schedule;
  if (isPlainMap(value)) {
    reader.knownKeys(value, KINDS, at);
    for (const kind of KINDS) schedule[kind] = readExpressions(reader, value[kind], [...at, kind]);
    return schedule;
  }
  schedule.start = readExpressions(reader, value, at);
  return schedule;
}

function readExpressions(reader: FieldReader, value: unknown, at: Path): ScheduleEntry[] {
  if (value === undefined || value === null) return [];
  const items = Array.isArray(value) ? value : [value];
  const entries: ScheduleEntry[] = [];
  items.forEach((item, index) => {
    const path = Array.isArray(value) ? [...at, index] : at;
    if (typeof item !== 'string' || item.trim() === '') {
      reader.report(path, 'must be a cron expression');
      return;
    }
    const problem = cronProblem(item);
    if (problem) reader.report(path, problem);
    else entries.push(scheduleEntry(item));
  });
  return entries;
}

/** Splits the `CRON_TZ=<zone> ` prefix from the expression. */
export function scheduleEntry(expression: string): ScheduleEntry {
  const text = expression.trim();
  const match = /^CRON_TZ=(\S+)\s+(.+)$/.exec(text);
  return match ? { expression: text, cron: match[2].trim(), timezone: match[1] } : { expression: text, cron: text };
}

function cronProblem(expression: string): string | undefined {
  const text = expression.trim();
  if (text.startsWith('CRON_TZ=') && !/^CRON_TZ=\S+\s+\S/.test(text)) return 'CRON_TZ=<zone> must be followed by a space and an expression';
  const entry = scheduleEntry(text);
  if (entry.timezone !== undefined && !isTimeZone(entry.timezone)) return `unknown time zone "${entry.timezone}"`;
  const fields = entry.cron.split(/\s+/).length;
  if (!entry.cron.startsWith('@') && fields !== 5) {
    return `invalid cron expression "${entry.cron}": ${fields} fields, 5 expected (minute hour day-of-month month day-of-week)`;
  }
  try {
    compileCron(entry);
  } catch (error) {
    if (entry.cron.startsWith('@')) return `invalid cron expression "${entry.cron}": not one of ${NICKNAMES.join(', ')}`;
    return `invalid cron expression "${entry.cron}": ${(error as Error).message}`;
  }
  return undefined;
}

export function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/**
 * An entry as croner reads it, in its own zone or else `defaultZone` (absent: the server's).
 * Five fields, as Dagu's parser: croner would also take seconds, which would let one line flood
 * the queues. Day-of-month and day-of-week combine with OR when both are restricted (Vixie cron,
 * Dagu). A fixed-time expression (no wildcard or step in its minute and hour) whose time falls in
 * a spring-forward gap ticks at the end of the gap, and once when its time occurs twice.
 */
export function compileCron(entry: ScheduleEntry, defaultZone?: string): Cron {
  const timezone = entry.timezone ?? defaultZone;
  return new Cron(entry.cron, { paused: true, mode: '5-part', fixedTimeRule: 'no-wildcard', ...(timezone ? { timezone } : {}) });
}
