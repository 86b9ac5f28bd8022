import { CommandCode } from '../command-code.js';
import {
  LEGACY_LOGIN_USER_BODY, LEGACY_LOGIN_WITH_PAT_BODY, LOGIN_REGISTER_BODY, LOGIN_REGISTER_WITH_PAT_BODY, LOGIN_REPLY_BODY,
  type LegacyLoginUserRequest, type LegacyLoginWithPatRequest, type LoginRegisterRequest, type LoginRegisterWithPatRequest,
  type LoginReply,
} from '../login.js';
import { EMPTY_BODY, type EmptyRequest, defineCommand } from './command-codec.js';

/**
 * Authentication commands (connection-lifecycle.mdx; login.ts has the layouts). Both register
 * shapes ride operation 1 and answer with the login reply (after the result section); LOGOUT_USER
 * rides operation 3 with an empty body; the legacy shapes 38 and 44 decode but the server answers
 * them with a MalformedLogin eviction (no reply body).
 */
export const loginRegisterCommand = defineCommand<LoginRegisterRequest, LoginReply>(CommandCode.LoginRegister, LOGIN_REGISTER_BODY, LOGIN_REPLY_BODY);

export const loginRegisterWithPatCommand = defineCommand<LoginRegisterWithPatRequest, LoginReply>(
  CommandCode.LoginRegisterWithPat, LOGIN_REGISTER_WITH_PAT_BODY, LOGIN_REPLY_BODY,
);

export const logoutUserCommand = defineCommand<EmptyRequest, null>(CommandCode.LogoutUser, EMPTY_BODY, null);

export const loginUserCommand = defineCommand<LegacyLoginUserRequest, null>(CommandCode.LoginUser, LEGACY_LOGIN_USER_BODY, null);

export const loginWithPersonalAccessTokenCommand = defineCommand<LegacyLoginWithPatRequest, null>(
  CommandCode.LoginWithPersonalAccessToken, LEGACY_LOGIN_WITH_PAT_BODY, null,
);
