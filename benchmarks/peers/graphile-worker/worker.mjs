// graphile-worker as the worker of `locksmith bench latency`: the bench's producers (the same
// Java threads that enqueue locksmith's jobs) add jobs with graphile_worker.add_job, one per
// transaction, and note when each commit returned on the JVM's clock; this process notes when
// each task starts on the same clock (CLOCK_MONOTONIC: process.hrtime here, System.nanoTime there)
// and writes "<job id> <nanos>" per task to stdout. "ready" once the worker runs; it stops when
// stdin closes.
//
// node worker.mjs <connection string> <concurrency>
import { Logger, run } from "graphile-worker";

const [connectionString, concurrencyArg] = process.argv.slice(2);
const runner = await run({
  connectionString,
  concurrency: Number(concurrencyArg ?? 4),
  noHandleSignals: true,
  logger: new Logger(() => () => {}),
  taskList: {
    latency: async (_payload, helpers) => {
      process.stdout.write(`${helpers.job.id} ${process.hrtime.bigint()}\n`);
    },
  },
});
process.stdout.write("ready\n");
process.stdin.resume();
process.stdin.on("end", async () => {
  await runner.stop();
  process.exit(0);
});
