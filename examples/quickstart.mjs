// Quick start: a stream, a topic, a producer, and a consumer group reading it all back.
//
//   SHOAL_URL=iggy://iggy:iggy@127.0.0.1:8090 node examples/quickstart.mjs
//
// Prints one JSON line: what was sent and what the group received.
import { ShoalClient } from '@shoal/client';

const url = process.env.SHOAL_URL ?? 'iggy://iggy:iggy@127.0.0.1:8090';
const stream = process.env.SHOAL_EXAMPLE_STREAM ?? 'quickstart';
const client = new ShoalClient({ url });

await client.stream.create({ name: stream });
await client.topic.create({ streamId: stream, name: 'orders', partitionsCount: 3 });

// Batched and pipelined; each send resolves once the server acknowledged (quorum-committed) it.
const producer = client.producer({ streamId: stream, topicId: 'orders' });
const sent = [];
for (let i = 0; i < 12; i++) {
  const { partitionId, offset } = await producer.send(
    { payload: JSON.stringify({ order: i, amount: 10 * i }), headers: { source: 'quickstart' } },
    { partitioning: { key: `customer-${i % 4}` } }, // one customer's orders stay in order on one partition
  );
  sent.push({ order: i, partitionId, offset: Number(offset) });
}
await producer.close();

// A consumer group: partitions are shared between members; offsets are committed after processing.
const controller = new AbortController();
const consumer = client.consumer({ streamId: stream, topicId: 'orders', group: { name: 'billing' }, strategy: 'first', signal: controller.signal });
const received = [];
for await (const message of consumer) {
  const order = JSON.parse(new TextDecoder().decode(message.payload));
  received.push({ order: order.order, partitionId: message.partitionId, offset: Number(message.offset), source: message.headers.source?.value });
  if (received.length === sent.length) controller.abort(); // ends the loop, commits, and the close below leaves the group
}
await consumer.close();
await client.close();

console.log(JSON.stringify({ sent, received }));
