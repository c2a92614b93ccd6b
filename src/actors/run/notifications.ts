// The mail a run sends (workflow-format 2.1): on its end, by mailOn with errorMail or infoMail; and
// for a failed step with mailOnError, errorMail's. Each is a mail executor's config; the engine
// sends it on the pool with the DAG's smtp settings (run-services.ts). Pure.
import { RunStatus, nodeStatusLabel, runStatusLabel, type MailSpec, type RunRecord } from '../../core/index.ts';
import type { RunPlan } from './plan.ts';

/** The mail executor's config (workflow-format 5.5). */
export interface MailConfig {
  to: string[];
  from?: string;
  subject: string;
  message: string;
  attachments?: string[];
  contentType?: string;
}

/** The mail the run's end sends: errorMail when it failed and mailOn.failure, infoMail when it succeeded and mailOn.success. */
export function runMail(plan: RunPlan, record: RunRecord): MailConfig | undefined {
  const mail = plan.mail;
  if (!mail) return undefined;
  const failed = record.status === RunStatus.Failed;
  const succeeded = record.status === RunStatus.Succeeded || record.status === RunStatus.PartiallySucceeded;
  const spec = failed && mail.mailOn.failure ? mail.errorMail : succeeded && mail.mailOn.success ? mail.infoMail : undefined;
  if (!spec || spec.to.length === 0) return undefined;
  const subject = `${spec.prefix ?? ''}${record.name} ${runStatusLabel(record.status)}`.trim();
  const lines = [
    `DAG: ${record.name}`,
    `Run ID: ${record.dagRunId}`,
    `Status: ${runStatusLabel(record.status)}`,
    `Started: ${record.startedAt}`,
    `Finished: ${record.finishedAt}`,
    ...(record.error ? [`Error: ${record.error}`] : []),
    '',
    'Steps:',
    ...record.nodes.map((node) => `- ${node.step.name}: ${nodeStatusLabel(node.status)}${node.error ? ` (${node.error})` : ''}`),
  ];
  return { ...addressed(spec), subject, message: lines.join('\n'), ...logs(spec, record) };
}

/** The mail a failed step with mailOnError sends, through errorMail's addresses. */
export function stepErrorMail(plan: RunPlan, record: RunRecord, index: number): MailConfig | undefined {
  const spec = plan.mail?.errorMail;
  const node = record.nodes[index];
  if (!spec || spec.to.length === 0 || !node) return undefined;
  const subject = `${spec.prefix ?? ''}${record.name} step ${node.step.name} failed`.trim();
  const message = [`DAG: ${record.name}`, `Run ID: ${record.dagRunId}`, `Step: ${node.step.name}`, `Error: ${node.error}`].join('\n');
  return { ...addressed(spec), subject, message, ...(spec.attachLogs ? { attachments: [node.stdout, node.stderr].filter(Boolean) } : {}) };
}

function addressed(spec: MailSpec): Pick<MailConfig, 'to' | 'from'> {
  return { to: spec.to, ...(spec.from ? { from: spec.from } : {}) };
}

function logs(spec: MailSpec, record: RunRecord): Pick<MailConfig, 'attachments'> {
  if (!spec.attachLogs) return {};
  return { attachments: [record.log, ...record.nodes.flatMap((node) => [node.stdout, node.stderr])].filter(Boolean) };
}
