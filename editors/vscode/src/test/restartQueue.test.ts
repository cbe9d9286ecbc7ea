import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { RestartQueue } from '../restartQueue';

function gate() {
  let open!: () => void;
  const p = new Promise<void>((r) => (open = r));
  return { p, open };
}

test('restarts never overlap and requests during a restart coalesce into one more', async () => {
  let active = 0;
  let maxActive = 0;
  let runs = 0;
  const gates = [gate(), gate()];
  const q = new RestartQueue(async () => {
    active++;
    maxActive = Math.max(maxActive, active);
    await gates[runs++].p;
    active--;
  });
  const a = q.request();
  const b = q.request();
  const c = q.request();
  assert.equal(b, c, 'queued requests share one restart');
  gates[0].open();
  await a;
  await new Promise((r) => setImmediate(r));
  assert.equal(runs, 2, 'the queued restart starts after the first ends');
  gates[1].open();
  await Promise.all([b, c]);
  assert.equal(runs, 2);
  assert.equal(maxActive, 1);
  assert.equal(q.busy, false);
});

test('a failed restart does not block the queued one', async () => {
  let runs = 0;
  const q = new RestartQueue(async () => {
    runs++;
    await new Promise((r) => setImmediate(r));
    if (runs === 1) throw new Error('boom');
  });
  const a = q.request();
  const b = q.request();
  await assert.rejects(a, /boom/);
  await b;
  assert.equal(runs, 2);
  await q.request();
  assert.equal(runs, 3);
});
