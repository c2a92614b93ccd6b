// A run's outputs (GET .../outputs): name and value, secrets already masked by the API. Nothing
// is shown for a run without outputs.
import { api, path } from '../api';
import { useResource } from '../resource';

/** `version` changes when the run does (a new attempt, its end), so the outputs are read again. */
export function OutputsTable({ name, dagRunId, version }: { name: string; dagRunId: string; version: string }) {
  const outputs = useResource(() => api<{ outputs?: Record<string, string> }>('GET', path`/dag-runs/${name}/${dagRunId}/outputs`), [name, dagRunId, version]);
  const entries = Object.entries(outputs.data?.outputs ?? {});
  if (entries.length === 0) return null;
  return (
    <section aria-labelledby="outputs-title">
      <h2 id="outputs-title">Outputs</h2>
      <div class="table-scroll">
        <table data-testid="outputs-table">
          <thead>
            <tr><th scope="col">Name</th><th scope="col">Value</th></tr>
          </thead>
          <tbody>
            {entries.map(([key, value]) => (
              <tr key={key}>
                <th scope="row" class="mono">{key}</th>
                <td class="mono" data-testid={`output-${key}`}>{value}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}
