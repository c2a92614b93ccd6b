// schedule (workflow-format 2.1): a cron string, a list of them, or {start, stop, restart}, each
// expression optionally prefixed `CRON_TZ=<zone> `. Expressions and zones are checked with croner.
import { Cron } from 'croner';
import type { Schedule, ScheduleEntry } from '../core/index.ts';
import { FieldReader, isPlainMap } from './field-reader.ts';
import type { Path } from './issues.ts';

const KINDS = ['start', 'stop', 'restart'] as const;

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
  try {
    new Cron(entry.cron, { paused: true, timezone: entry.timezone });
  } catch (error) {
    return `invalid cron expression "${entry.cron}": ${(error as Error).message}`;
  }
  return undefined;
}

function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}
