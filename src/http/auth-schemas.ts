// Request body schemas of the sign-in, user and API key routes (docs/auth.md). Lengths and roles
// are checked by the accounts' rules, whose messages name the rule and never the value.
import { bodySchema } from './schemas.ts';

export const LoginBody = bodySchema((Type) => Type.Object({ username: Type.String(), password: Type.String() }));
export const ChangePasswordBody = bodySchema((Type) => Type.Object({ currentPassword: Type.String(), newPassword: Type.String({ description: 'At least 8 characters' }) }));
export const ResetPasswordBody = bodySchema((Type) => Type.Object({ newPassword: Type.String({ description: 'At least 8 characters' }) }));
export const CreateUserBody = bodySchema((Type) => Type.Object({
  username: Type.String({ description: '1 to 64 characters, no colon' }),
  password: Type.String({ description: 'At least 8 characters' }),
  role: Type.String({ description: 'admin, manager, operator or viewer' }),
}));
export const UpdateUserBody = bodySchema((Type) => Type.Object({
  username: Type.Optional(Type.String()),
  role: Type.Optional(Type.String({ description: 'admin, manager, operator or viewer' })),
}));
export const CreateApiKeyBody = bodySchema((Type) => Type.Object({
  name: Type.String({ description: '1 to 100 characters, unique' }),
  description: Type.Optional(Type.String({ description: 'At most 500 characters' })),
  role: Type.String({ description: 'admin, manager, operator or viewer' }),
}));
export const UpdateApiKeyBody = bodySchema((Type) => Type.Object({
  name: Type.Optional(Type.String()),
  description: Type.Optional(Type.String()),
  role: Type.Optional(Type.String()),
}));
