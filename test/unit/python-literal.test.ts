import assert from 'node:assert/strict';
import { pyString, pyValue } from '../../src/modules/code-convert/python-literal';

describe('unit: JSON values as Python literals', () => {
  it('escapes what could end a string or hide in it, and keeps visible text as written', () => {
    assert.equal(pyString('a "q" \\ b'), String.raw`"a \"q\" \\ b"`);
    assert.equal(pyString('l1\nl2\r\tx'), String.raw`"l1\nl2\r\tx"`);
    assert.equal(pyString('nul\u0000 del\u007f nel\u0085'), String.raw`"nul\x00 del\x7f nel\x85"`);
    assert.equal(
      pyString('ls\u2028 ps\u2029 rlo\u202e bom\ufeff zwj\u200d'),
      String.raw`"ls\u2028 ps\u2029 rlo\u202e bom\ufeff zwj\u200d"`,
    );
    assert.equal(pyString('lone \ud800 and \udfff'), String.raw`"lone \ud800 and \udfff"`);
    assert.equal(pyString('é ß 中文 😀'), '"é ß 中文 😀"');
    assert.equal(pyString('"""\'\'\''), String.raw`"\"\"\"'''"`);
  });

  it('writes None, booleans, numbers, lists and dicts (keys escaped too)', () => {
    assert.equal(pyValue(null), 'None');
    assert.equal(pyValue([true, false, 1, -0.25, 1e21]), '[\n    True,\n    False,\n    1,\n    -0.25,\n    1e+21,\n]');
    assert.equal(pyValue([1, 'a']), '[1, "a"]');
    assert.equal(pyValue({}), '{}');
    assert.equal(pyValue({ 'k"\n': { x: [] } }), '{\n    "k\\"\\n": {\n        "x": [],\n    },\n}');
  });
});
