// DAG runs handed to workers, on BullMQ. The server picks the worker (core/worker-placement.ts) and puts the run
// on that worker's own queue; the worker takes its queue's jobs, at most its limit at once, each
// held under a lock BullMQ renews while the run goes on. The job's id is the attempt's key, so that
// handing the same attempt again (the server started again before it knew the job was added) adds
// nothing.
import { Queue, Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { workerIdProblem } from '../core/index.ts';

// The rule is core's (the command checks --id with it too); still exported here for this folder's index.

const queueName = (workerId: string) => `troupe-worker-${workerId}`;
/** BullMQ's own keys, under one prefix of ours. */
const PREFIX = 'troupe-bull';

/** The server's side: hands runs to workers' queues. */
export class RunJobs<Payload> {
  private readonly queues = new Map<string, Queue>();

  constructor(private readonly connection: Redis) {}

  /** Puts the run on the worker's queue; resolves once Redis holds it. A second call for the attempt adds nothing. */
  async hand(workerId: string, attempt: string, payload: Payload): Promise<void> {
    const problem = workerIdProblem(workerId);
    if (problem) throw new Error(problem);
    await this.queueOf(workerId).add('run', payload, { jobId: jobIdOf(attempt), removeOnComplete: true, removeOnFail: true, attempts: 1 });
  }

  /** Takes back a run the worker has not taken yet (it went away first); false when it had taken it, or it is gone. */
  async withdraw(workerId: string, attempt: string): Promise<boolean> {
    const job = await this.queueOf(workerId).getJob(jobIdOf(attempt));
    if (!job || !(await job.isWaiting())) return false;
    await job.remove();
    return true;
  }

  async close(): Promise<void> {
    await Promise.all([...this.queues.values()].map((queue) => queue.close()));
    this.queues.clear();
  }

  private queueOf(workerId: string): Queue {
    let queue = this.queues.get(workerId);
    if (!queue) {
      queue = new Queue(queueName(workerId), { connection: this.connection, prefix: PREFIX });
      // The connection's owner hears Redis's failures; a hand waits for it to come back.
      queue.on('error', () => undefined);
      this.queues.set(workerId, queue);
    }
    return queue;
  }
}

export interface TakerOptions<Payload> {
  workerId: string;
  /** The most runs at once. */
  maxActiveRuns: number;
  /** Runs the run; the job stays locked to this worker until it settles. */
  run(payload: Payload, attempt: string): Promise<void>;
  /** How long a lock lasts without renewal, ms: a worker gone for longer leaves its runs stalled. Default 30 s. */
  lockMs?: number;
  onError?(error: Error): void;
}

/** The worker's side: takes the runs handed to it. */
export class RunJobTaker<Payload> {
  private readonly worker: Worker;
  /** The worker's own queue, read for what waits in it (a drain takes what was handed before it was heard). */
  private readonly queue: Queue;

  constructor(connection: Redis, private readonly options: TakerOptions<Payload>) {
    const problem = workerIdProblem(options.workerId);
    if (problem) throw new Error(problem);
    this.worker = new Worker(queueName(options.workerId), (job: Job) => options.run(job.data as Payload, attemptOf(job.id!)), {
      connection, prefix: PREFIX, concurrency: options.maxActiveRuns, lockDuration: options.lockMs ?? 30_000, autorun: false,
    });
    this.worker.on('error', (error) => options.onError?.(error));
    this.queue = new Queue(queueName(options.workerId), { connection, prefix: PREFIX });
    this.queue.on('error', () => undefined);
  }

  /** How many runs wait in this worker's queue, not taken yet. */
  waiting(): Promise<number> {
    return this.queue.getWaitingCount();
  }

  start(): void {
    void this.worker.run().catch((error: Error) => this.options.onError?.(error));
  }

  /** Takes no new run; resolves once the runs under way have settled. */
  async drain(): Promise<void> {
    await this.worker.close();
    await this.queue.close();
  }
}

// BullMQ's job ids take no colon either: an attempt's key is carried in base64url.
const jobIdOf = (attempt: string) => Buffer.from(attempt).toString('base64url');
const attemptOf = (jobId: string) => Buffer.from(jobId, 'base64url').toString();
