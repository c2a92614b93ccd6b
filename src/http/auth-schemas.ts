// Request body schemas of the sign-in, user and API key routes (docs/auth.md). Each string has the
// accounts' own maximum length, so that nothing longer is looked up, hashed or counted; the other
// rules (characters, minimum lengths, roles) are the accounts', whose messages name the rule and
// never the value.
import { MAX_KEY_DESCRIPTION_LENGTH, MAX_KEY_NAME_LENGTH, MAX_PASSWORD_LENGTH, MAX_USERNAME_LENGTH } from '../auth/index.ts';
import { bodySchema } from './schemas.ts';

const USERNAME = { maxLength: MAX_USERNAME_LENGTH };
const PASSWORD = { maxLength: MAX_PASSWORD_LENGTH };
const NEW_PASSWORD = { ...PASSWORD, description: `8 to ${MAX_PASSWORD_LENGTH} characters` };
/** admin, manager, operator or viewer: longer is none of them. */
const ROLE = { maxLength: 16, description: 'admin, manager, operator or viewer' };
const KEY_NAME = { maxLength: MAX_KEY_NAME_LENGTH };
const KEY_DESCRIPTION = { maxLength: MAX_KEY_DESCRIPTION_LENGTH };

export const LoginBody = bodySchema((Type) => Type.Object({ username: Type.String(USERNAME), password: Type.String(PASSWORD) }));
export const ChangePasswordBody = bodySchema((Type) => Type.Object({ currentPassword: Type.String(PASSWORD), newPassword: Type.String(NEW_PASSWORD) }));
export const ResetPasswordBody = bodySchema((Type) => Type.Object({ newPassword: Type.String(NEW_PASSWORD) }));
export const CreateUserBody = bodySchema((Type) => Type.Object({
  username: Type.String({ ...USERNAME, description: `1 to ${MAX_USERNAME_LENGTH} characters, no colon` }),
  password: Type.String(NEW_PASSWORD),
  role: Type.String(ROLE),
}));
export const UpdateUserBody = bodySchema((Type) => Type.Object({
  username: Type.Optional(Type.String(USERNAME)),
  role: Type.Optional(Type.String(ROLE)),
}));
export const CreateApiKeyBody = bodySchema((Type) => Type.Object({
  name: Type.String({ ...KEY_NAME, description: `1 to ${MAX_KEY_NAME_LENGTH} characters, unique` }),
  description: Type.Optional(Type.String({ ...KEY_DESCRIPTION, description: `At most ${MAX_KEY_DESCRIPTION_LENGTH} characters` })),
  role: Type.String(ROLE),
}));
export const UpdateApiKeyBody = bodySchema((Type) => Type.Object({
  name: Type.Optional(Type.String(KEY_NAME)),
  description: Type.Optional(Type.String(KEY_DESCRIPTION)),
  role: Type.Optional(Type.String(ROLE)),
}));
