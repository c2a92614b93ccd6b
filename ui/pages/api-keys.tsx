// API keys (admins only): create one with a role (its key is shown this once), revoke.
import { useState } from 'preact/hooks';
import { api, path } from '../api';
import { reportError } from '../alerts';
import { useResource } from '../resource';
import { useCan } from '../session';
import { Time } from '../components/time';
import { AdminsOnly, RoleSelect } from './users';

interface ApiKey { id: string; name: string; description: string; role: string; keyPrefix: string; createdAt: string; lastUsedAt?: string }

export function ApiKeysPage() {
  const admin = useCan('admin');
  const keys = useResource(admin ? () => api<{ apiKeys: ApiKey[] }>('GET', '/api-keys').then((a) => a.apiKeys) : null, [admin]);
  const [form, setForm] = useState({ name: '', description: '', role: 'viewer' });
  const [created, setCreated] = useState<{ name: string; key: string } | null>(null);
  const [busy, setBusy] = useState(false);
  if (!admin) return <section><h1>API keys</h1><AdminsOnly what="API keys" /></section>;

  const create = async () => {
    setBusy(true);
    setCreated(null);
    try {
      const body = form.description ? form : { name: form.name, role: form.role };
      const answer = await api<{ apiKey: ApiKey; key: string }>('POST', '/api-keys', body);
      setCreated({ name: answer.apiKey.name, key: answer.key });
      setForm({ name: '', description: '', role: form.role });
      keys.reload();
    } catch (error) {
      reportError(error);
    } finally {
      setBusy(false);
    }
  };
  const revoke = async (key: ApiKey) => {
    if (!confirm(`Revoke the API key ${key.name}? Whatever uses it is refused from now on.`)) return;
    setBusy(true);
    try {
      await api('DELETE', path`/api-keys/${key.id}`);
      keys.reload();
    } catch (error) {
      reportError(error);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section aria-labelledby="keys-title">
      <h1 id="keys-title">API keys</h1>
      <form class="filters" aria-label="New API key" data-testid="api-key-create-form" onSubmit={(e) => { e.preventDefault(); void create(); }}>
        <label class="field"><span>Name</span>
          <input required autocomplete="off" value={form.name} data-testid="api-key-create-name" onInput={(e) => setForm({ ...form, name: e.currentTarget.value })} />
        </label>
        <label class="field"><span>Description</span>
          <input autocomplete="off" value={form.description} data-testid="api-key-create-description" onInput={(e) => setForm({ ...form, description: e.currentTarget.value })} />
        </label>
        <label class="field"><span>Role</span>
          <RoleSelect value={form.role} label="Role" testId="api-key-create-role" onChange={(role) => setForm({ ...form, role })} />
        </label>
        <div class="actions"><button type="submit" class="primary" disabled={busy} data-testid="api-key-create-submit">Create key</button></div>
      </form>
      {created && (
        <div class="new-key" role="status" data-testid="api-key-created">
          <p>The key <strong>{created.name}</strong>, shown this once: copy it now (send it as <code>Authorization: Bearer &lt;key&gt;</code>).</p>
          <input readOnly class="mono" value={created.key} aria-label={`The new key ${created.name}`} data-testid="api-key-new" onFocus={(e) => e.currentTarget.select()} />
          <button type="button" onClick={() => setCreated(null)}>Done</button>
        </div>
      )}
      {keys.data && keys.data.length === 0 && <p data-testid="api-keys-empty">No API keys.</p>}
      {keys.data && keys.data.length > 0 && (
        <div class="table-scroll">
          <table data-testid="api-keys-table">
            <thead>
              <tr><th scope="col">Name</th><th scope="col">Role</th><th scope="col">Key</th><th scope="col">Description</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col"><span class="skip">Actions</span></th></tr>
            </thead>
            <tbody>
              {keys.data.map((k) => (
                <tr key={k.id} data-testid={`api-key-row-${k.name}`}>
                  <th scope="row">{k.name}</th>
                  <td>{k.role}</td>
                  <td class="mono">{k.keyPrefix}…</td>
                  <td>{k.description || '—'}</td>
                  <td><Time iso={k.createdAt} /></td>
                  <td><Time iso={k.lastUsedAt ?? ''} /></td>
                  <td><button type="button" disabled={busy} data-testid={`api-key-revoke-${k.name}`} onClick={() => void revoke(k)}>Revoke</button></td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
