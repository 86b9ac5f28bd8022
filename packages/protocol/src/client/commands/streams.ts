import { CommandCode } from '../command-code.js';
import { type Identifier, readIdentifier, writeIdentifier } from '../encodings/identifier.js';
import { readName, writeName } from '../encodings/name.js';
import { type OptionEntry, readOptionsToEnd, writeOptionsBlock } from '../encodings/options-block.js';
import { type BodyParts, EMPTY_BODY, type EmptyRequest, defineCommand, nullableWhenEmpty, sequenceToEnd } from './command-codec.js';
import { STREAM_DETAILS, STREAM_INFO, type StreamDetails, type StreamInfo } from './stream-response.js';

/** Stream commands (commands.mdx "Streams"). */
export interface StreamIdRequest {
  readonly streamId: Identifier;
}

export interface CreateStreamRequest {
  readonly name: string;
  readonly options: readonly OptionEntry[];
}

export interface UpdateStreamRequest {
  readonly streamId: Identifier;
  readonly name: string;
  readonly options: readonly OptionEntry[];
}

export const STREAM_ID_BODY: BodyParts<StreamIdRequest> = {
  write: (w, req) => writeIdentifier(w, req.streamId),
  read: (r) => ({ streamId: readIdentifier(r, 'stream_id') }),
};

export const getStreamCommand = defineCommand<StreamIdRequest, StreamDetails | null>(CommandCode.GetStream, STREAM_ID_BODY, nullableWhenEmpty(STREAM_DETAILS));

export const getStreamsCommand = defineCommand<EmptyRequest, StreamInfo[]>(CommandCode.GetStreams, EMPTY_BODY, sequenceToEnd(STREAM_INFO));

/** `[name:Name][options block to end]`; reply: the created stream (GetStream layout). */
export const createStreamCommand = defineCommand<CreateStreamRequest, StreamDetails>(
  CommandCode.CreateStream,
  {
    write: (w, req) => {
      writeName(w, req.name);
      writeOptionsBlock(w, req.options);
    },
    read: (r) => ({ name: readName(r, 'stream_name'), options: readOptionsToEnd(r) }),
  },
  STREAM_DETAILS,
);

export const deleteStreamCommand = defineCommand<StreamIdRequest, null>(CommandCode.DeleteStream, STREAM_ID_BODY, null);

/** `[stream_id][name:Name][options block to end]` (patch: absent keys unchanged). */
export const updateStreamCommand = defineCommand<UpdateStreamRequest, null>(
  CommandCode.UpdateStream,
  {
    write: (w, req) => {
      writeIdentifier(w, req.streamId);
      writeName(w, req.name);
      writeOptionsBlock(w, req.options);
    },
    read: (r) => ({ streamId: readIdentifier(r, 'stream_id'), name: readName(r, 'stream_name'), options: readOptionsToEnd(r) }),
  },
  null,
);

export const purgeStreamCommand = defineCommand<StreamIdRequest, null>(CommandCode.PurgeStream, STREAM_ID_BODY, null);
