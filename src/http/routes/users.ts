// User management (admin): /users and /users/{userId}, and an admin's password reset.
import { CreateUserBody, ResetPasswordBody, UpdateUserBody } from '../auth-schemas.ts';
import { SuccessResponse, UserResponse, UsersResponse } from '../response-schemas.ts';
import type { Router } from '../router.ts';
import { parseBody } from '../schemas.ts';
import { empty, json, type ApiDeps, type HttpRequest } from '../types.ts';
import { authOf } from './auth.ts';
import { userView } from '../../auth/index.ts';

function listUsers(_request: HttpRequest, deps: ApiDeps) {
  return json({ users: authOf(deps).accounts.listUsers() });
}

async function createUser(request: HttpRequest, deps: ApiDeps) {
  const body = await parseBody(CreateUserBody, request.body);
  return json({ user: await authOf(deps).accounts.createUser(body) }, 201);
}

function getUser(request: HttpRequest, deps: ApiDeps) {
  return json({ user: userView(authOf(deps).accounts.user(request.params.userId)) });
}

async function updateUser(request: HttpRequest, deps: ApiDeps) {
  const body = await parseBody(UpdateUserBody, request.body);
  return json({ user: await authOf(deps).accounts.updateUser(request.identity, request.params.userId, body) });
}

async function deleteUser(request: HttpRequest, deps: ApiDeps) {
  await authOf(deps).accounts.deleteUser(request.identity, request.params.userId);
  return empty(204);
}

async function resetPassword(request: HttpRequest, deps: ApiDeps) {
  const body = await parseBody(ResetPasswordBody, request.body);
  await authOf(deps).accounts.setPassword(request.params.userId, body.newPassword);
  return json({ message: 'Password reset; the user\'s session tokens no longer work' });
}

export function userRoutes(router: Router): void {
  router
    .add('GET', '/users', listUsers, {
      permission: 'admin',
      operationId: 'listUsers', summary: 'Every user', tag: 'users',
      responses: { 200: { description: 'The users, oldest first', body: UsersResponse } },
      errors: ['not_found'],
    })
    .add('POST', '/users', createUser, {
      permission: 'admin',
      operationId: 'createUser', summary: 'Create a user with a password and a role', tag: 'users',
      body: CreateUserBody,
      responses: { 201: { description: 'Created', body: UserResponse } },
      errors: ['bad_request', 'already_exists', 'not_found', 'insufficient_storage'],
    })
    .add('GET', '/users/:userId', getUser, {
      permission: 'admin',
      operationId: 'getUser', summary: 'A user', tag: 'users',
      responses: { 200: { description: 'The user', body: UserResponse } },
      errors: ['not_found'],
    })
    .add('PATCH', '/users/:userId', updateUser, {
      permission: 'admin',
      operationId: 'updateUser', summary: 'Rename a user or change their role', tag: 'users',
      description: 'A role change applies to the user\'s next request. The last admin, and the caller, cannot be demoted (403).',
      body: UpdateUserBody,
      responses: { 200: { description: 'Updated', body: UserResponse } },
      errors: ['bad_request', 'not_found', 'already_exists', 'insufficient_storage'],
    })
    .add('DELETE', '/users/:userId', deleteUser, {
      permission: 'admin',
      operationId: 'deleteUser', summary: 'Delete a user; their session tokens stop working', tag: 'users',
      description: 'The caller cannot delete themselves, nor the last admin (403).',
      responses: { 204: { description: 'Deleted; no body' } },
      errors: ['not_found', 'insufficient_storage'],
    })
    .add('POST', '/users/:userId/reset-password', resetPassword, {
      permission: 'admin',
      operationId: 'resetUserPassword', summary: 'Set a user\'s password; their session tokens stop working', tag: 'users',
      body: ResetPasswordBody,
      responses: { 200: { description: 'Reset', body: SuccessResponse } },
      errors: ['bad_request', 'not_found', 'insufficient_storage'],
    });
}
