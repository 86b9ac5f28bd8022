// Client events and the logger hook: what the SDK does on its own when a node goes away.
//
//   SHOAL_URL=iggy://iggy:iggy@127.0.0.1:8090 node examples/events.mjs
//   (restart the server while it runs: the sends wait, the client reconnects, nothing is lost)
//
// Human-readable lines go to stderr through `logger`; every event is also counted through
// `client.on('*', ...)`. The last stdout line is a JSON summary.
import { ShoalClient } from '@shoal/client';

const base = process.env.SHOAL_URL ?? 'iggy://iggy:iggy@127.0.0.1:8090';
const url = `${base}${base.includes('?') ? '&' : '?'}reconnection_retries=unlimited&reconnection_interval=200ms`;
const count = Number(process.env.SHOAL_EXAMPLE_COUNT ?? 20);
const pauseMs = Number(process.env.SHOAL_EXAMPLE_PAUSE_MS ?? 150);

const client = new ShoalClient({
  url,
  // console works as is; for pino-style loggers wrap: { warn: (message, fields) => log.warn(fields, message), ... }
  logger: { info: console.error, warn: console.error, error: console.error },
  cluster: { retry: { budgetMs: 30_000, attemptsMax: 60 } },
});

const counts = {};
client.on('*', (event) => {
  counts[event.type] = (counts[event.type] ?? 0) + 1;
});
client.on('reconnecting', (event) => {
  if (event.attempt === 1) console.error(`(example) lost ${event.node}; the pending sends wait for it`);
});

await client.stream.create({ name: 'events-example' });
await client.topic.create({ streamId: 'events-example', name: 'ticks', partitionsCount: 1 });
const producer = client.producer({ streamId: 'events-example', topicId: 'ticks', maxInFlight: 1 });
for (let i = 0; i < count; i++) {
  await producer.send({ payload: `tick-${i}` });
  console.log(`sent ${i + 1}`);
  await new Promise((resolve) => setTimeout(resolve, pauseMs));
}
await producer.close();
await client.close();
console.log(JSON.stringify({ sent: count, events: counts }));
