import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { askProblem, inputBoxFor, parseAskProblem } from '../askProblem';

const params = {
  uri: 'file:///p/scale_wrapper.py',
  entry: 'scale',
  missing: ['a value for the scalar `alpha` (no call site passes one)'],
  suggestion: 'alpha=<value>',
  line: 13,
  message: 'xeforge cannot run `scale` yet',
};

test('the input box starts from the suggestion and says what is missing and where it goes', () => {
  const box = inputBoxFor(parseAskProblem(params)!);
  assert.equal(box.value, 'alpha=<value>');
  assert.match(box.prompt, /scalar `alpha`/);
  assert.match(box.prompt, /above `def scale`/);
  assert.equal(box.validateInput('alpha=<value>'), 'replace <value> with a value');
  assert.equal(box.validateInput('  '), 'give NAME=VALUE pairs');
  assert.equal(box.validateInput('alpha=2.0'), undefined);
});

test('an answer goes back trimmed; a dismissed box or bad params answer null', async () => {
  assert.deepEqual(await askProblem(params, async () => ' alpha=2.0 '), { answer: 'alpha=2.0' });
  assert.equal(await askProblem(params, async () => undefined), null);
  assert.equal(await askProblem({ entry: 3 }, async () => 'x=1'), null);
  assert.equal(await askProblem(null, async () => 'x=1'), null);
});
