// The users (admins only): create one with a role, change a role, reset a password, delete.
import { useState } from 'preact/hooks';
import { api, path } from '../api';
import { reportError } from '../alerts';
import { useResource } from '../resource';
import { useCan, useSession } from '../session';
import { Time } from '../components/time';

export const ROLES = ['viewer', 'operator', 'manager', 'admin'] as const;

interface User { id: string; username: string; role: string; createdAt: string; updatedAt: string }

export function RoleSelect({ value, onChange, label, testId }: { value: string; onChange: (role: string) => void; label: string; testId: string }) {
  return (
    <select value={value} aria-label={label} data-testid={testId} onChange={(e) => onChange(e.currentTarget.value)}>
      {ROLES.map((r) => <option key={r} value={r}>{r}</option>)}
    </select>
  );
}

export function AdminsOnly({ what }: { what: string }) {
  return <p data-testid="admins-only">Only an admin manages {what}.</p>;
}

export function UsersPage() {
  const admin = useCan('admin');
  const session = useSession();
  const users = useResource(admin ? () => api<{ users: User[] }>('GET', '/users').then((a) => a.users) : null, [admin]);
  const [busy, setBusy] = useState(false);
  const [resetting, setResetting] = useState<{ id: string; password: string } | null>(null);
  const [note, setNote] = useState('');
  if (!admin) return <section><h1>Users</h1><AdminsOnly what="users" /></section>;

  const act = async (work: () => Promise<unknown>, done: string) => {
    setBusy(true);
    setNote('');
    try {
      await work();
      setNote(done);
      return true;
    } catch (error) {
      reportError(error);
      return false;
    } finally {
      setBusy(false);
      // After a refusal too: a role select the API did not change goes back to the stored role.
      users.reload();
    }
  };
  const me = session.state === 'signed-in' ? session.user.id : '';

  return (
    <section aria-labelledby="users-title">
      <h1 id="users-title">Users</h1>
      <CreateUser busy={busy} onCreate={(body) => act(() => api('POST', '/users', body), `User ${body.username} created.`)} />
      <p aria-live="polite" class="muted" data-testid="users-note">{note}</p>
      {users.data && (
        <div class="table-scroll">
          <table data-testid="users-table">
            <thead>
              <tr><th scope="col">User</th><th scope="col">Role</th><th scope="col">Created</th><th scope="col">Actions</th></tr>
            </thead>
            <tbody>
              {users.data.map((u) => (
                <tr key={u.id} data-testid={`user-row-${u.username}`}>
                  <th scope="row">{u.username}{u.id === me && <span class="muted small"> (you)</span>}</th>
                  <td>
                    <RoleSelect value={u.role} label={`Role of ${u.username}`} testId={`user-role-${u.username}`}
                      onChange={(role) => void act(() => api('PATCH', path`/users/${u.id}`, { role }), `${u.username} is now ${role}.`)} />
                  </td>
                  <td><Time iso={u.createdAt} /></td>
                  <td class="actions">
                    {resetting?.id === u.id ? (
                      <form class="actions" onSubmit={(e) => {
                        e.preventDefault();
                        void act(() => api('POST', path`/users/${u.id}/reset-password`, { newPassword: resetting.password }), `Password of ${u.username} reset; their sessions ended.`)
                          .then((ok) => ok && setResetting(null));
                      }}>
                        <input type="password" autocomplete="new-password" aria-label={`New password of ${u.username}`} placeholder="New password (8 or more)"
                          value={resetting.password} data-testid={`user-password-${u.username}`} onInput={(e) => setResetting({ id: u.id, password: e.currentTarget.value })} />
                        <button type="submit" disabled={busy} data-testid={`user-password-save-${u.username}`}>Set</button>
                        <button type="button" onClick={() => setResetting(null)}>Cancel</button>
                      </form>
                    ) : (
                      <button type="button" data-testid={`user-reset-${u.username}`} onClick={() => setResetting({ id: u.id, password: '' })}>Reset password</button>
                    )}
                    <button type="button" disabled={busy} data-testid={`user-delete-${u.username}`} onClick={() => {
                      if (confirm(`Delete the user ${u.username}? Their sessions end at once.`)) void act(() => api('DELETE', path`/users/${u.id}`), `User ${u.username} deleted.`);
                    }}>Delete</button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

interface NewUser { username: string; password: string; role: string }

function CreateUser({ busy, onCreate }: { busy: boolean; onCreate: (body: NewUser) => Promise<boolean> }) {
  const [form, setForm] = useState<NewUser>({ username: '', password: '', role: 'viewer' });
  return (
    <form class="filters" aria-label="New user" data-testid="user-create-form" onSubmit={(e) => {
      e.preventDefault();
      void onCreate(form).then((ok) => ok && setForm({ username: '', password: '', role: form.role }));
    }}>
      <label class="field"><span>Username</span>
        <input required autocomplete="off" value={form.username} data-testid="user-create-username" onInput={(e) => setForm({ ...form, username: e.currentTarget.value })} />
      </label>
      <label class="field"><span>Password (8 or more)</span>
        <input required type="password" autocomplete="new-password" value={form.password} data-testid="user-create-password" onInput={(e) => setForm({ ...form, password: e.currentTarget.value })} />
      </label>
      <label class="field"><span>Role</span>
        <RoleSelect value={form.role} label="Role" testId="user-create-role" onChange={(role) => setForm({ ...form, role })} />
      </label>
      <div class="actions"><button type="submit" class="primary" disabled={busy} data-testid="user-create-submit">Create user</button></div>
    </form>
  );
}
