import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { parseReport, reportArgument } from '../report';

test('the report reply is read as the server types it, anything else is an error', () => {
  assert.deepEqual(parseReport({ path: '/p/.xeforge/runs/r.html', html: '<html></html>' }), {
    path: '/p/.xeforge/runs/r.html',
    html: '<html></html>',
  });
  assert.throws(() => parseReport({ path: 3 }), /unexpected reply/);
  assert.throws(() => parseReport(null), /unexpected reply/);
});

test("the lens's record is reported, else the workspace's runs directory", () => {
  assert.deepEqual(reportArgument({ record: '/p/.xeforge/runs/r.json' }, '/ws'), { record: '/p/.xeforge/runs/r.json' });
  assert.deepEqual(reportArgument(undefined, '/ws'), { dir: '/ws/.xeforge/runs' });
  assert.equal(reportArgument(undefined, undefined), undefined);
});
