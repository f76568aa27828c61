import assert from 'node:assert/strict';
import { safeFileName, uploadStamp } from '../../src/modules/files/safe-file-name';

describe('safeFileName', () => {
  const cases: [string, string][] = [
    ['report.pdf', 'report.pdf'],
    ['../../etc/passwd', 'passwd'],
    ['..\\..\\windows\\win.ini', 'win.ini'],
    ['/absolute/path.txt', 'path.txt'],
    ['..', 'file'],
    ['', 'file'],
    ['.hidden', 'hidden'],
    ['a\u0000b\u001fc.txt', 'abc.txt'],
    ['dir/', 'file'],
  ];
  for (const [input, expected] of cases) {
    it(`${JSON.stringify(input)} → ${JSON.stringify(expected)}`, () => assert.equal(safeFileName(input), expected));
  }
  it('caps the length at 200 characters, keeping the extension end', () => {
    const name = `${'x'.repeat(500)}.txt`;
    assert.equal(safeFileName(name).length, 200);
    assert.ok(safeFileName(name).endsWith('.txt'));
  });
  it('stamps uploads as YYYYMMDD_HHMMSS in local time', () => {
    assert.equal(uploadStamp(new Date(2025, 0, 2, 3, 4, 5)), '20250102_030405');
  });
});
