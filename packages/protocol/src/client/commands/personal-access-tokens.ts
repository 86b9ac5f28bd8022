import { CommandCode } from '../command-code.js';
import { readName, writeName } from '../encodings/name.js';
import { EMPTY_BODY, type EmptyRequest, defineCommand, sequenceToEnd } from './command-codec.js';
import {
  PERSONAL_ACCESS_TOKEN_INFO, RAW_PERSONAL_ACCESS_TOKEN, type PersonalAccessTokenInfo, type RawPersonalAccessToken,
} from './user-response.js';

/** Personal access token commands (commands.mdx "Personal access tokens"). */
export interface CreatePersonalAccessTokenRequest {
  readonly name: string;
  /** Duration in µs; 0 = server default (no expiry today), u64::MAX = never expires. */
  readonly expiry: bigint;
}

export interface DeletePersonalAccessTokenRequest {
  readonly name: string;
}

export const PAT_EXPIRY_SERVER_DEFAULT = 0n;
export const PAT_EXPIRY_NEVER = 0xffff_ffff_ffff_ffffn;

export const getPersonalAccessTokensCommand = defineCommand<EmptyRequest, PersonalAccessTokenInfo[]>(
  CommandCode.GetPersonalAccessTokens, EMPTY_BODY, sequenceToEnd(PERSONAL_ACCESS_TOKEN_INFO),
);

/** `[name:Name][expiry:u64]`; reply: the raw token `[token_len:u8][token]`. */
export const createPersonalAccessTokenCommand = defineCommand<CreatePersonalAccessTokenRequest, RawPersonalAccessToken>(
  CommandCode.CreatePersonalAccessToken,
  {
    write: (w, req) => {
      writeName(w, req.name);
      w.u64(req.expiry);
    },
    read: (r) => ({ name: readName(r, 'token_name'), expiry: r.u64('expiry') }),
  },
  RAW_PERSONAL_ACCESS_TOKEN,
);

/** `[name:Name]`. */
export const deletePersonalAccessTokenCommand = defineCommand<DeletePersonalAccessTokenRequest, null>(
  CommandCode.DeletePersonalAccessToken,
  { write: (w, req) => writeName(w, req.name), read: (r) => ({ name: readName(r, 'token_name') }) },
  null,
);
