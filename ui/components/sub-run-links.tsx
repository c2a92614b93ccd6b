// Links from a node that called a DAG (`call`, `parallel`) to the sub DAG runs it started,
// repeated executions' runs included.
import type { Node } from '../types';

export function SubRunLinks({ node, stepName, link }: { node: Node; stepName: string; link: (subDagRunId: string) => string }) {
  const subs = [...(node.subRuns ?? []), ...(node.subRunsRepeated ?? [])];
  if (subs.length === 0) return null;
  return (
    <ul class="plain small sub-runs" aria-label={`Sub DAG runs of step ${stepName}`}>
      {subs.map((sub, i) => (
        <li key={sub.dagRunId}>
          <a href={link(sub.dagRunId)} data-testid={`sub-run-link-${stepName}`} title={sub.params ? `params: ${sub.params}` : undefined}>
            {subs.length === 1 ? 'sub run' : `sub run ${i + 1}`}
          </a>
          {sub.params && <span class="muted mono"> {sub.params}</span>}
        </li>
      ))}
    </ul>
  );
}
