// The mail a run sends (definition format: root fields), as Dagu sends it: on its end, by mailOn, errorMail's
// when it failed and infoMail's when it succeeded (or partially); and errorMail's for a failed step
// with mailOnError, when the step fails. Each is a mail executor's config; the engine sends it on
// the pool with the DAG's smtp settings (run-services.ts). Pure.
//
// Subject: "<prefix> <DAG name> (<run status>)" (for a step's error mail, the run's status then:
// running). Body: an HTML report of the run and its steps (mail-report.ts). With attachLogs, the
// run log and every step's stdout and stderr log are attached (those that exist when it is sent).
import { RunStatus, runStatusLabel, type MailSpec, type RunRecord } from '../../core/index.ts';
import { runReportHtml } from './mail-report.ts';
import type { RunPlan } from './plan.ts';

/** The mail executor's config (definition format: mail executor). */
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
  return spec ? report(spec, record) : undefined;
}

/** The mail a failed step with mailOnError sends, through errorMail (none without it, as in Dagu). */
export function stepErrorMail(plan: RunPlan, record: RunRecord, index: number): MailConfig | undefined {
  const spec = plan.mail?.errorMail;
  if (!spec || !record.nodes[index]) return undefined;
  return report(spec, record);
}

function report(spec: MailSpec, record: RunRecord): MailConfig | undefined {
  if (spec.to.length === 0) return undefined;
  return {
    to: spec.to,
    ...(spec.from ? { from: spec.from } : {}),
    subject: `${spec.prefix ?? ''} ${record.name} (${runStatusLabel(record.status)})`.trim(),
    message: runReportHtml(record),
    contentType: 'text/html',
    ...(spec.attachLogs ? { attachments: logFiles(record) } : {}),
  };
}

function logFiles(record: RunRecord): string[] {
  return [record.log, ...record.nodes.flatMap((node) => [node.stdout, node.stderr])].filter((path) => path !== '');
}
