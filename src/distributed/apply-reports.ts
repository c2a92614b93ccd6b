// What a worker reports of a run, applied on the server as a local run's reports are: its records
// (and its sub DAG runs'), its log lines, the bytes of its steps' output files, its end. Redis is
// the trust boundary: a report names only runs of the tree it was handed, and only files under the
// server's log folders; anything else is dropped and logged.
import { mkdirSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { RunFinishedEvent, RunReports } from '../actors/index.ts';
import type { NodeRecord, RunRecord } from '../core/index.ts';
import { log } from '../logging/index.ts';
import type { StreamItem } from '../workers/index.ts';
import { isUnder, type Report, type Roots } from './payload.ts';

/** How many log folders are remembered as made (one per DAG, usually). */
const KNOWN_FOLDERS = 1_000;

/** The attempt a report belongs to, as the server handed it. */
export interface HandedRun {
  name: string;
  dagRunId: string;
  /** The root of its tree (itself, unless it is a sub DAG run placed by its caller's call step). */
  root: { name: string; dagRunId: string };
  worker: string;
  /** The folder of the run's log as the server planned it (a DAG's own logDir may be outside the logs folder). */
  logFolder?: string;
}

export interface Applied {
  /** The run whose record was reported (the handed run, or one of its sub DAG runs). */
  run?: { name: string; dagRunId: string };
  /** The handed run ended: nothing more of its attempt is applied. */
  ended: boolean;
}

export interface ApplierPorts {
  reports: RunReports;
  /** Closes a sub DAG run's log once it ended (the handed run's is closed as its end is applied). */
  closeRunLog(path: string): Promise<void>;
}

export class ReportApplier {
  /** Log folders made. */
  private readonly folders = new Set<string>();

  constructor(private readonly roots: Roots, private readonly ports: ApplierPorts) {}

  async apply(item: StreamItem, run: HandedRun): Promise<Applied> {
    const report = parse(item);
    if (!report) return dropped(run, `an unreadable report (${item.kind})`);
    switch (report.kind) {
      case 'record': {
        const { record } = report;
        if (!inTree(record, run)) return dropped(run, `a record of ${record.name}/${record.dagRunId}, outside the run's tree`);
        const checked = this.withPathsChecked({ ...record, workerId: run.worker }, run);
        this.ports.reports.record(checked, report.changed.filter((index) => Number.isInteger(index) && index >= 0 && index < checked.nodes.length));
        return { run: { name: record.name, dagRunId: record.dagRunId }, ended: false };
      }
      case 'log':
        if (!this.allowed(report.path, run)) return dropped(run, 'a log line for a file outside the log folders');
        // A sub DAG run's log folder is made by nothing else here when its steps wrote nothing.
        try {
          this.folderOf(report.path);
        } catch {
          // One that cannot be made is the log's to report, as it writes.
        }
        this.ports.reports.logLine(report.path, report.line);
        return { ended: false };
      case 'output': {
        if (!this.allowed(report.path, run) || !Number.isSafeInteger(report.offset) || report.offset < 0) return dropped(run, 'output for a file outside the log folders');
        await this.writeOutput(report.path, report.offset, Buffer.from(report.data, 'base64'));
        return { ended: false };
      }
      case 'finished': {
        const { end } = report;
        if (end.name === run.name && end.dagRunId === run.dagRunId) {
          this.ports.reports.finished(end);
          return { ended: true };
        }
        if (this.allowed(end.log, run)) await this.ports.closeRunLog(end.log);
        return { ended: false };
      }
    }
  }

  /** Writes a step log's bytes at `offset`. */
  private async writeOutput(path: string, offset: number, bytes: Buffer): Promise<void> {
    const write = async () => {
      this.folderOf(path);
      await writeAt(path, offset, bytes);
    };
    try {
      await write();
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      // Its folder went since it was made (removed by hand): made again.
      this.folders.delete(dirname(path));
      await write();
    }
  }

  /** Makes the folder of a log file, once per folder as far as this process knows (one call, once per DAG usually). */
  private folderOf(path: string): void {
    const folder = dirname(path);
    if (this.folders.has(folder)) return;
    mkdirSync(folder, { recursive: true, mode: 0o700 });
    if (this.folders.size >= KNOWN_FOLDERS) this.folders.clear();
    this.folders.add(folder);
  }

  private allowed(path: string, run: HandedRun): boolean {
    return typeof path === 'string' && (isUnder(this.roots.logs, path) || (run.logFolder !== undefined && isUnder(run.logFolder, path)));
  }

  /** A path that is not the server's own is blanked: the API would read that file for the run's logs. */
  private withPathsChecked(record: RunRecord, run: HandedRun): RunRecord {
    const path = (value: string) => (value === '' || this.allowed(value, run) ? value : '');
    const node = (item: NodeRecord): NodeRecord => ({ ...item, stdout: path(item.stdout), stderr: path(item.stderr) });
    return {
      ...record, log: path(record.log), nodes: record.nodes.map(node),
      ...(record.handlers ? { handlers: Object.fromEntries(Object.entries(record.handlers).map(([name, item]) => [name, node(item)])) } : {}),
    };
  }
}

function parse(item: StreamItem): Report | undefined {
  try {
    const payload = JSON.parse(item.payload) as Record<string, unknown>;
    const report = { kind: item.kind, ...payload } as Report;
    switch (report.kind) {
      case 'record': return isRecord(report.record) && Array.isArray(report.changed) ? report : undefined;
      case 'log': return typeof report.path === 'string' && typeof report.line === 'string' ? report : undefined;
      case 'output': return typeof report.path === 'string' && typeof report.data === 'string' && typeof report.offset === 'number' ? report : undefined;
      case 'finished': return isEnd(report.end) ? report : undefined;
      default: return undefined;
    }
  } catch {
    return undefined;
  }
}

function isRecord(value: unknown): value is RunRecord {
  const record = value as RunRecord | undefined;
  return typeof record?.name === 'string' && typeof record.dagRunId === 'string' && Array.isArray(record.nodes) && typeof record.log === 'string';
}

function isEnd(value: unknown): value is RunFinishedEvent {
  const end = value as RunFinishedEvent | undefined;
  return typeof end?.name === 'string' && typeof end.dagRunId === 'string' && typeof end.status === 'number' && typeof end.log === 'string';
}

/** The handed run, or a run of its tree (a sub DAG run under it has its root). */
function inTree(record: RunRecord, run: HandedRun): boolean {
  if (record.name === run.name && record.dagRunId === run.dagRunId) return true;
  return record.rootDAGRunName === run.root.name && record.rootDAGRunId === run.root.dagRunId;
}

function dropped(run: HandedRun, what: string): Applied {
  log.warn({ dag: run.name, dagRunId: run.dagRunId, worker: run.worker }, `dropped ${what} from the worker`);
  return { ended: false };
}

/** Writes the bytes at `offset` (a chunk applied twice writes the same bytes again); its folder is made. */
async function writeAt(path: string, offset: number, bytes: Buffer): Promise<void> {
  const file = await open(path, 'a+', 0o600).then(async (probe) => {
    await probe.close();
    return open(path, 'r+');
  });
  try {
    await file.write(bytes, 0, bytes.length, offset);
  } finally {
    await file.close();
  }
}
