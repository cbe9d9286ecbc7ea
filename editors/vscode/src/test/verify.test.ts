import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { VERIFY_COMPILED_COMMAND, VERIFY_PALETTE_COMMAND, verifyArgument } from '../verify';

test('the palette verifies the document as the server has it, under an id of its own', () => {
  assert.deepEqual(verifyArgument('file:///w/mm.py'), { uri: 'file:///w/mm.py' });
  assert.notEqual(VERIFY_PALETTE_COMMAND, VERIFY_COMPILED_COMMAND);
});
