// Node streams: a consumer as a Readable, a Transform, and a producer as a Writable, joined by
// stream.pipeline (back-pressure end to end: the consumer polls only as fast as the sink writes).
//
//   SHOAL_URL=iggy://iggy:iggy@127.0.0.1:8090 node examples/stream-pipeline.mjs
//
// Copies the topic `raw` into `clean`, upper-casing every payload and keeping ids and headers.
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { ShoalClient } from '@shoal/client';

const url = process.env.SHOAL_URL ?? 'iggy://iggy:iggy@127.0.0.1:8090';
const client = new ShoalClient({ url });
await client.stream.create({ name: 'pipeline' });
await client.topic.create({ streamId: 'pipeline', name: 'raw', partitionsCount: 2 });
await client.topic.create({ streamId: 'pipeline', name: 'clean', partitionsCount: 2 });

const words = ['alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta', 'eta', 'theta'];
const source = client.producer({ streamId: 'pipeline', topicId: 'raw' });
await Promise.all(words.map((word, i) => source.send({ payload: word, headers: { n: { kind: 'uint32', value: i } } })));
await source.close();

const controller = new AbortController();
const consumer = client.consumer({ streamId: 'pipeline', topicId: 'raw', strategy: 'first', signal: controller.signal });
const sink = client.producer({ streamId: 'pipeline', topicId: 'clean' });
let copied = 0;
const upperCase = new Transform({
  objectMode: true,
  transform(message, _encoding, callback) {
    if (++copied === words.length) controller.abort(); // the readable ends after this one
    const payload = new TextDecoder().decode(message.payload).toUpperCase();
    callback(null, { id: message.id, payload, rawHeaders: message.rawHeaders });
  },
});
await pipeline(consumer.readable(), upperCase, sink.writable());
await sink.close();

const check = client.consumer({ streamId: 'pipeline', topicId: 'clean', strategy: 'first', consumer: 'checker' });
const clean = [];
for await (const message of check) {
  clean.push({ payload: new TextDecoder().decode(message.payload), n: message.headers.n?.value });
  if (clean.length === words.length) break;
}
await check.close();
await client.close();
console.log(JSON.stringify({ copied, clean: clean.sort((a, b) => a.n - b.n) }));
